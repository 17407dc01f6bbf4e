package ml.juno.engine.quantize;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import ml.juno.engine.tensor.GgmlType;

/**
 * Chooses each tensor's output type the way llama.cpp's {@code llama_tensor_get_type} does (llama-quant.cpp):
 * which tensors may be quantized at all, {@code --tensor-type} overrides, the K-quant mix rules (more bits for
 * {@code output}, some {@code attn_v} and {@code ffn_down} layers), and the fallback to a smaller block when a
 * row does not divide. The rules count attn_v/ffn_* tensors as they go, so tensors must be planned in
 * {@link #order(List) llama.cpp's order}; one instance plans one file.
 */
public final class TensorTypeRules {

    /** A tensor as the rules see it: name, current type and ggml-order shape. */
    public record Tensor(String name, GgmlType type, long[] shape) {
        public Tensor {
            if (name == null || type == null || shape == null || shape.length == 0) {
                throw new IllegalArgumentException("tensor needs a name, a type and a shape");
            }
            shape = shape.clone();
        }

        int dims() {
            int n = shape.length;
            while (n > 1 && shape[n - 1] == 1) {
                n--;
            }
            return n;
        }
    }

    /** The model facts the rules read (llama.cpp hparams). */
    public record ModelFacts(String arch, int layerCount, int headCount, int headCountKv, int expertCount) {
        public ModelFacts {
            if (arch == null || layerCount < 0 || headCount < 0 || headCountKv < 0 || expertCount < 0) {
                throw new IllegalArgumentException("bad model facts");
            }
        }

        int gqa() {
            return headCountKv == 0 ? 0 : headCount / headCountKv;
        }

        boolean is70B() {
            return arch.equals("llama") && layerCount == 80 && headCount != headCountKv;
        }
    }

    /** One {@code --tensor-type PATTERN=TYPE}: the first pattern found in a tensor name wins. */
    public record Override(Pattern pattern, GgmlType type) {
        /** Parses {@code PATTERN=TYPE} as llama-quantize does (pattern lower-cased, type name case-insensitive). */
        public static Override parse(String spec) {
            int eq = spec.indexOf('=');
            if (eq <= 0 || eq == spec.length() - 1) {
                throw new IllegalArgumentException("bad --tensor-type '" + spec + "', expected PATTERN=TYPE");
            }
            String pattern = spec.substring(0, eq).toLowerCase(java.util.Locale.ROOT);
            String typeName = spec.substring(eq + 1).trim();
            GgmlType type = null;
            for (GgmlType t : GgmlType.values()) {
                if (t.name().equalsIgnoreCase(typeName)) {
                    type = t;
                }
            }
            if (type == null || !RowQuantizers.supports(type)) {
                throw new IllegalArgumentException("bad --tensor-type '" + spec + "': unsupported type '" + typeName + "'");
            }
            return new Override(Pattern.compile(pattern), type);
        }
    }

    private enum Category { TOKEN_EMBD, ATTENTION_Q, ATTENTION_V, ATTENTION_K, ATTENTION_QKV, ATTENTION_KV_B,
        ATTENTION_OUTPUT, FFN_UP, FFN_GATE, FFN_DOWN, OUTPUT, OTHER }

    private static final Pattern LAYER = Pattern.compile("^blk\\.(-?\\d+)\\.");

    private final QuantType ftype;
    private final boolean pure;
    private final List<Override> overrides;
    private final ModelFacts facts;
    private int nAttentionWv;
    private int iAttentionWv;
    private int iFfnDown;
    private boolean tiedEmbeddings = true;
    private int fallbacks;

    /**
     * @param tensors every tensor of the file (counts of attn_v and the presence of {@code output.weight} feed
     *                the mix rules)
     */
    public TensorTypeRules(QuantType ftype, boolean pure, List<Override> overrides, ModelFacts facts, List<Tensor> tensors) {
        this.ftype = ftype;
        this.pure = pure;
        this.overrides = List.copyOf(overrides);
        this.facts = facts;
        for (Tensor t : tensors) {
            Category c = category(t.name());
            if (isAttnV(c)) {
                nAttentionWv++;
            }
            if (c == Category.OUTPUT) {
                tiedEmbeddings = false;
            }
        }
    }

    /**
     * llama.cpp's tensor order (its loader's weight map): tensors outside any block first, then by block
     * number, by name within each.
     */
    public static <T> List<T> order(List<T> tensors, java.util.function.Function<T, String> name) {
        List<T> sorted = new ArrayList<>(tensors);
        sorted.sort(Comparator.<T>comparingInt(t -> layerOf(name.apply(t))).thenComparing(name));
        return sorted;
    }

    /** Same as {@link #order(List, java.util.function.Function)} for rule tensors. */
    public static List<Tensor> order(List<Tensor> tensors) {
        return order(tensors, Tensor::name);
    }

    static int layerOf(String name) {
        Matcher m = LAYER.matcher(name);
        if (m.find()) {
            try {
                return Integer.parseInt(m.group(1));
            } catch (NumberFormatException e) {
                return -1;
            }
        }
        return -1;
    }

    /** How many tensors fell back to another type because their rows did not divide into blocks. */
    public int fallbacks() {
        return fallbacks;
    }

    /** The output type of {@code t}; call once per tensor, in {@link #order(List)} order. */
    public GgmlType typeFor(Tensor t) {
        if (!allowsQuantization(t)) {
            return t.type();
        }
        GgmlType newType = ftype.defaultType;
        if (newType.isQuantized()) {
            boolean manual = false;
            for (Override o : overrides) {
                if (o.pattern().matcher(t.name()).find()) {
                    newType = o.type();
                    manual = true;
                    break;
                }
            }
            if (!manual && !pure) {
                newType = mixType(newType, t, category(t.name()));
            }
            newType = fallback(t, newType);
        }
        return newType;
    }

    /** Name fragments of tensors llama.cpp never quantizes (tensor_allows_quantization). */
    private static final List<String> KEEP = List.of("_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight",
            "altup", "laurel", "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
            "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
            "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
            "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight",
            "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
            "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.",
            "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd");

    private static boolean allowsQuantization(Tensor t) {
        if (t.dims() < 2) {
            return false;
        }
        String name = t.name();
        if (!name.endsWith("weight") || name.equals("position_embd.weight") || name.equals("token_types.weight")) {
            return false;
        }
        for (String keep : KEEP) {
            if (name.contains(keep)) {
                return false;
            }
        }
        return true;
    }

    private GgmlType fallback(Tensor t, GgmlType target) {
        long ncols = t.shape()[0];
        if (ncols % target.blockSize == 0) {
            return target;
        }
        fallbacks++;
        GgmlType ret = switch (target) {
            case Q2_K, Q3_K -> GgmlType.Q4_0;
            case Q4_K -> GgmlType.Q5_0;
            case Q5_K -> GgmlType.Q5_1;
            case Q6_K -> GgmlType.Q8_0;
            default -> throw new IllegalArgumentException("tensor " + t.name() + ": rows of " + ncols
                    + " do not divide into " + target + " blocks of " + target.blockSize + " and there is no fallback");
        };
        if (ncols % ret.blockSize != 0) {
            ret = GgmlType.F16;
        }
        return ret;
    }

    private static Category category(String name) {
        if (name.equals("output.weight")) {
            return Category.OUTPUT;
        }
        if (name.equals("token_embd.weight") || name.equals("per_layer_token_embd.weight")) {
            return Category.TOKEN_EMBD;
        }
        if (name.contains("attn_qkv.weight")) {
            return Category.ATTENTION_QKV;
        }
        if (name.contains("attn_kv_b.weight")) {
            return Category.ATTENTION_KV_B;
        }
        if (name.contains("attn_v.weight")) {
            return Category.ATTENTION_V;
        }
        if (name.contains("attn_k.weight")) {
            return Category.ATTENTION_K;
        }
        if (name.contains("attn_q.weight")) {
            return Category.ATTENTION_Q;
        }
        if (name.contains("attn_output.weight")) {
            return Category.ATTENTION_OUTPUT;
        }
        if (name.contains("ffn_up")) {
            return Category.FFN_UP;
        }
        if (name.contains("ffn_gate")) {
            return Category.FFN_GATE;
        }
        if (name.contains("ffn_down")) {
            return Category.FFN_DOWN;
        }
        return Category.OTHER;
    }

    private static boolean isAttnV(Category c) {
        return c == Category.ATTENTION_V || c == Category.ATTENTION_QKV || c == Category.ATTENTION_KV_B;
    }

    private static boolean useMoreBits(int iLayer, int nLayers) {
        return iLayer < nLayers / 8 || iLayer >= 7 * nLayers / 8 || (iLayer - nLayers / 8) % 3 == 2;
    }

    /** With experts, ffn tensors are not one per layer in order, so the layer comes from the name. */
    private int layer(int counter, String name) {
        if (facts.expertCount() > 1) {
            int l = layerOf(name);
            if (l < 0 || l >= facts.layerCount()) {
                throw new IllegalArgumentException("cannot find a valid layer in tensor name " + name);
            }
            return l;
        }
        return counter;
    }

    private GgmlType mixType(GgmlType newType, Tensor t, Category c) {
        QuantType f = ftype;
        int nLayer = facts.layerCount();
        boolean falcon = facts.arch().equals("falcon");
        if (c == Category.OUTPUT || (tiedEmbeddings && c == Category.TOKEN_EMBD)) {
            long nx = t.shape()[0];
            if (falcon || nx % newType.blockSize != 0) {
                newType = GgmlType.Q8_0;
            } else if (newType != GgmlType.Q8_0) {
                newType = GgmlType.Q6_K;
            }
        } else if (c == Category.TOKEN_EMBD) {
            // no rule for the types supported here
            return newType;
        } else if (isAttnV(c)) {
            if (f == QuantType.Q2_K) {
                newType = facts.gqa() >= 4 ? GgmlType.Q4_K : GgmlType.Q3_K;
            } else if (f == QuantType.Q3_K_M) {
                newType = iAttentionWv < 2 ? GgmlType.Q5_K : GgmlType.Q4_K;
            } else if (f == QuantType.Q3_K_L) {
                newType = GgmlType.Q5_K;
            } else if ((f == QuantType.Q4_K_M || f == QuantType.Q5_K_M) && useMoreBits(iAttentionWv, nAttentionWv)) {
                newType = GgmlType.Q6_K;
            } else if (f == QuantType.Q4_K_S && iAttentionWv < 4) {
                newType = GgmlType.Q5_K;
            }
            if (facts.is70B() && (newType == GgmlType.Q3_K || newType == GgmlType.Q4_K)) {
                newType = GgmlType.Q5_K;
            }
            if (facts.expertCount() == 8) {
                newType = GgmlType.Q8_0;
            }
            ++iAttentionWv;
        } else if (c == Category.ATTENTION_K) {
            if (facts.expertCount() == 8) {
                newType = GgmlType.Q8_0;
            }
        } else if (c == Category.ATTENTION_Q) {
            return newType;
        } else if (c == Category.FFN_DOWN) {
            int iLayer = layer(iFfnDown, t.name());
            if (f == QuantType.Q2_K) {
                newType = GgmlType.Q3_K;
            } else if (f == QuantType.Q3_K_M) {
                newType = iLayer < nLayer / 16 ? GgmlType.Q5_K
                        : !falcon || useMoreBits(iLayer, nLayer) ? GgmlType.Q4_K : GgmlType.Q3_K;
            } else if (f == QuantType.Q3_K_L) {
                newType = falcon ? GgmlType.Q4_K : GgmlType.Q5_K;
            } else if (f == QuantType.Q4_K_M) {
                if (falcon) {
                    newType = iLayer < nLayer / 16 ? GgmlType.Q6_K : useMoreBits(iLayer, nLayer) ? GgmlType.Q5_K : GgmlType.Q4_K;
                } else if (useMoreBits(iLayer, nLayer)) {
                    newType = GgmlType.Q6_K;
                }
            } else if (f == QuantType.Q5_K_M && useMoreBits(iLayer, nLayer)) {
                newType = GgmlType.Q6_K;
            } else if (f == QuantType.Q4_K_S && !falcon && iLayer < nLayer / 8) {
                newType = GgmlType.Q5_K;
            }
            ++iFfnDown;
        } else if (c == Category.ATTENTION_OUTPUT) {
            if (!falcon) {
                if (facts.expertCount() == 8) {
                    if (f == QuantType.Q2_K || f == QuantType.Q3_K_S || f == QuantType.Q3_K_M
                            || f == QuantType.Q4_K_S || f == QuantType.Q4_K_M) {
                        newType = GgmlType.Q5_K;
                    }
                } else if (f == QuantType.Q2_K) {
                    newType = GgmlType.Q3_K;
                } else if (f == QuantType.Q3_K_M) {
                    newType = GgmlType.Q4_K;
                } else if (f == QuantType.Q3_K_L) {
                    newType = GgmlType.Q5_K;
                }
            } else if (f == QuantType.Q3_K_L) {
                newType = GgmlType.Q4_K;
            }
        }
        return newType;
    }
}
