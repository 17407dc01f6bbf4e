package ml.juno.engine.lora;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufFormatException;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.model.block.Projection;
import ml.juno.engine.quantize.GgufStreamWriter;
import ml.juno.engine.tensor.GgmlType;

/**
 * llama.cpp's GGUF LoRA format ({@code convert_lora_to_gguf.py}, read by {@code llama-adapter.cpp}): metadata
 * {@code general.type = adapter}, {@code adapter.type = lora}, {@code adapter.lora.alpha} (f32) and the base's
 * {@code general.architecture}; for each adapted base tensor {@code T} (e.g. {@code blk.0.attn_q.weight}) the pair
 * {@code T.lora_a} of ggml shape {@code [in, rank]} (row-major {@code [rank][in]}, A) and {@code T.lora_b} of shape
 * {@code [rank, out]} ({@code [out][rank]}, B). llama.cpp scales a pair by {@code alpha/rank} with {@code rank} read
 * from that pair's B ({@code 1} when alpha is 0), times the user's scale.
 *
 * <p>Fused bases (phi3's {@code attn_qkv} and gate-up {@code ffn_up}) carry one pair per fused tensor. Exporting
 * joins Juno's per-projection pairs into it (A rows stacked, B block-diagonal; pairs with the same A share its rows),
 * importing splits B's rows back per projection and drops the A rows whose B columns are all zero there, so a
 * round trip gives back the same pairs. rsLoRA and per-pair ranks are folded into B where llama.cpp's one-alpha rule
 * would scale differently, so the played delta is always the same.
 */
public final class GgufLora {
    static final String LORA_A = ".lora_a";
    static final String LORA_B = ".lora_b";

    private GgufLora() {}

    /** Whether {@code path} is a GGUF file (magic {@code GGUF}). */
    public static boolean isGguf(Path path) throws IOException {
        try (var in = Files.newInputStream(path)) {
            return Arrays.equals(in.readNBytes(4), new byte[] {'G', 'G', 'U', 'F'});
        }
    }

    // ----- reading

    /** Reads the GGUF LoRA {@code path} for the base model {@code base}, checked against its tensors. */
    public static LoraAdapter read(Path path, GgufFile base) throws IOException {
        try (GgufFile f = GgufFile.open(path)) {
            return read(f, base, path.getFileName().toString());
        } catch (GgufFormatException e) {
            throw new IOException(path + ": not a readable GGUF LoRA: " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new IOException(path + ": " + e.getMessage(), e);
        }
    }

    static LoraAdapter read(GgufFile f, GgufFile base, String what) {
        var md = f.metadata();
        String type = md.getString(GgufKeys.GENERAL_TYPE, "");
        if (!type.equals("adapter")) {
            throw new IllegalArgumentException("general.type is '" + type + "', not 'adapter': this is not a LoRA adapter");
        }
        String adapterType = md.getString(GgufKeys.ADAPTER_TYPE, "");
        if (!adapterType.equals("lora")) {
            throw new IllegalArgumentException("adapter.type is '" + adapterType + "', not 'lora'");
        }
        BaseFingerprint fp = BaseFingerprint.of(base);
        String arch = md.getString(GgufKeys.GENERAL_ARCHITECTURE, "");
        if (!arch.equals(fp.architecture())) {
            throw new IllegalArgumentException("LoRA adapter " + what + " is for architecture '" + arch
                    + "', not for this model " + fp.describe());
        }
        float alphaG = md.has(GgufKeys.ADAPTER_LORA_ALPHA) ? md.getFloat(GgufKeys.ADAPTER_LORA_ALPHA) : 0f;
        if (!Float.isFinite(alphaG) || alphaG < 0f) {
            throw new IllegalArgumentException("adapter.lora.alpha is " + alphaG);
        }
        Map<String, GgufTensorInfo[]> byBase = new LinkedHashMap<>();
        for (GgufTensorInfo t : f.tensors()) {
            String n = t.name();
            int half = n.endsWith(LORA_A) ? 0 : n.endsWith(LORA_B) ? 1 : -1;
            if (half < 0) {
                throw new IllegalArgumentException("tensor " + n + " is neither a .lora_a nor a .lora_b");
            }
            byBase.computeIfAbsent(n.substring(0, n.length() - LORA_A.length()), k -> new GgufTensorInfo[2])[half] = t;
        }
        var shapes = fp.shapes();
        List<Raw> raws = new ArrayList<>();
        int maxRank = 0;
        for (var e : byBase.entrySet()) {
            String name = e.getKey();
            GgufTensorInfo ta = e.getValue()[0];
            GgufTensorInfo tb = e.getValue()[1];
            if (ta == null || tb == null) {
                throw new IllegalArgumentException("LoRA pair for " + name + " is missing its " + (ta == null ? "lora_a" : "lora_b"));
            }
            GgufTensorInfo bt = base.findTensor(name).orElseThrow(() -> new IllegalArgumentException(
                    "LoRA tensor " + name + " does not exist in the base model " + fp.describe()));
            int layer = TensorNames.layerOf(name);
            String inner = layer < 0 ? name : name.substring(("blk." + layer + ".").length());
            List<Projection> targets = targetsOf(inner, fp);
            if (layer < 0 || targets.isEmpty()) {
                throw new IllegalArgumentException("LoRA tensor " + name + " adapts no projection Juno plays (attention q/k/v/o and"
                        + " FFN gate/up/down of a layer; not embeddings, output or norms)");
            }
            if (ta.dims() != 2 || tb.dims() != 2 || bt.dims() != 2) {
                throw new IllegalArgumentException("LoRA pair for " + name + " is not two matrices");
            }
            long in = bt.dim(0);
            long out = bt.dim(1);
            if (ta.dim(0) != in || tb.dim(1) != out) {
                throw new IllegalArgumentException("LoRA pair for " + name + " has shapes " + Arrays.toString(ta.shape()) + " and "
                        + Arrays.toString(tb.shape()) + ", the base tensor is " + Arrays.toString(bt.shape()));
            }
            if (ta.dim(1) != tb.dim(0)) {
                throw new IllegalArgumentException("LoRA pair for " + name + ": lora_a " + Arrays.toString(ta.shape())
                        + " and lora_b " + Arrays.toString(tb.shape()) + " disagree on the rank (lora_a must be [in, rank])");
            }
            int r = Math.toIntExact(ta.dim(1));
            if (r <= 0) {
                throw new IllegalArgumentException("LoRA pair for " + name + " has rank 0");
            }
            raws.add(new Raw(layer, targets, r, (int) in, (int) out, decode(f, ta), decode(f, tb)));
            maxRank = Math.max(maxRank, r);
        }
        if (raws.isEmpty()) {
            throw new IllegalArgumentException("the adapter holds no LoRA pairs");
        }
        float alpha = alphaG > 0f ? alphaG : maxRank;
        List<LoraPair> pairs = new ArrayList<>();
        Set<Projection> present = EnumSet.noneOf(Projection.class);
        for (Raw raw : raws) {
            float llamaScale = alphaG > 0f ? alphaG / raw.rank : 1f;
            int rowFrom = 0;
            for (Projection t : raw.targets) {
                int rows = LoraPair.dims(t, shapes)[1];
                LoraPair p = split(raw, t, rowFrom, rows, alpha, llamaScale);
                rowFrom += rows;
                if (p != null) {
                    pairs.add(p);
                    present.add(t);
                }
            }
            if (rowFrom != raw.out) {
                throw new IllegalArgumentException("LoRA pair for layer " + raw.layer + " " + raw.targets + " has " + raw.out
                        + " output rows, the projections hold " + rowFrom);
            }
        }
        if (present.isEmpty()) {
            throw new IllegalArgumentException("every LoRA pair is zero");
        }
        int rank = 0;
        for (LoraPair p : pairs) {
            rank = Math.max(rank, p.rank());
        }
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("source", "llama.cpp GGUF LoRA " + what);
        settings.put("gguf.alpha", Float.toString(alphaG));
        return new LoraAdapter(new LoraAdapter.Header(LoraAdapter.FORMAT_VERSION, fp, present, rank, alpha, false, settings), pairs);
    }

    /** The unfused A/B of one GGUF pair. */
    private record Raw(int layer, List<Projection> targets, int rank, int in, int out, float[] a, float[] b) {}

    /**
     * The pair of projection {@code t}: rows {@code [from, from+rows)} of B, and the A rows (B columns) those rows use;
     * B rescaled so that Juno's {@code alpha/rank} on the kept rank gives llama.cpp's scale. {@code null} when all
     * of those B rows are zero.
     */
    private static LoraPair split(Raw raw, Projection t, int from, int rows, float alpha, float llamaScale) {
        int r = raw.rank;
        boolean[] used = new boolean[r];
        int kept = 0;
        for (int i = from; i < from + rows; i++) {
            for (int j = 0; j < r; j++) {
                if (raw.b[i * r + j] != 0f && !used[j]) {
                    used[j] = true;
                    kept++;
                }
            }
        }
        if (kept == 0) {
            return null;
        }
        float[] a = new float[kept * raw.in];
        float[] b = new float[rows * kept];
        float factor = llamaScale / (alpha / kept);
        int c = 0;
        for (int j = 0; j < r; j++) {
            if (!used[j]) {
                continue;
            }
            System.arraycopy(raw.a, j * raw.in, a, c * raw.in, raw.in);
            for (int i = 0; i < rows; i++) {
                float v = raw.b[(from + i) * r + j];
                b[i * kept + c] = factor == 1f ? v : v * factor;
            }
            c++;
        }
        return new LoraPair(raw.layer, t, kept, raw.in, rows, a, b);
    }

    /** The projections a base tensor name ({@code attn_qkv.weight}, …) holds, in row order; empty: none Juno adapts. */
    private static List<Projection> targetsOf(String inner, BaseFingerprint fp) {
        String w = "." + TensorNames.WEIGHT;
        if (inner.equals(TensorNames.ATTN_QKV + w)) {
            return List.of(Projection.Q, Projection.K, Projection.V);
        }
        if (inner.equals(TensorNames.FFN_UP + w) && fp.fusedGateUp()) {
            return List.of(Projection.GATE, Projection.UP);
        }
        for (Projection p : Projection.values()) {
            if (inner.equals(LoraPair.tensor(p) + w)) {
                return List.of(p);
            }
        }
        return List.of();
    }

    private static float[] decode(GgufFile f, GgufTensorInfo t) {
        GgmlType type = t.type();
        if (type == null || !Backends.supports(type)) {
            throw new IllegalArgumentException("LoRA tensor " + t.name() + " has block type " + type + ", which Juno cannot read");
        }
        long n = t.elementCount();
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("LoRA tensor " + t.name() + " is too large");
        }
        float[] out = new float[(int) n];
        Backends.decode(type, f.data(t), 0, out, 0, (int) n);
        return out;
    }

    // ----- writing

    /** Writes {@code adapter} as a llama.cpp GGUF LoRA (F32 factors) to {@code path}, atomically. */
    public static void write(Path path, LoraAdapter adapter) throws IOException {
        var h = adapter.header();
        var fp = h.base();
        List<Fused> fused = new ArrayList<>();
        for (int l = 0; l < fp.shapes().layers(); l++) {
            List<LoraPair> pairs = adapter.layer(l);
            if (pairs.isEmpty()) {
                continue;
            }
            List<List<Projection>> groups = new ArrayList<>();
            groups.add(fp.fusedQkv() ? List.of(Projection.Q, Projection.K, Projection.V) : List.of(Projection.Q));
            if (!fp.fusedQkv()) {
                groups.add(List.of(Projection.K));
                groups.add(List.of(Projection.V));
            }
            groups.add(List.of(Projection.O));
            groups.add(fp.fusedGateUp() ? List.of(Projection.GATE, Projection.UP) : List.of(Projection.GATE));
            if (!fp.fusedGateUp()) {
                groups.add(List.of(Projection.UP));
            }
            groups.add(List.of(Projection.DOWN));
            for (List<Projection> g : groups) {
                Fused x = fuse(adapter, l, g);
                if (x != null) {
                    fused.add(x);
                }
            }
        }
        List<GgufStreamWriter.Entry> md = List.of(
                GgufStreamWriter.Entry.string(GgufKeys.GENERAL_ARCHITECTURE, fp.architecture()),
                GgufStreamWriter.Entry.string(GgufKeys.GENERAL_TYPE, "adapter"),
                GgufStreamWriter.Entry.string(GgufKeys.GENERAL_NAME, fp.name() + " LoRA"),
                GgufStreamWriter.Entry.string(GgufKeys.ADAPTER_TYPE, "lora"),
                GgufStreamWriter.Entry.f32(GgufKeys.ADAPTER_LORA_ALPHA, h.alpha()));
        List<GgufStreamWriter.TensorSpec> specs = new ArrayList<>();
        for (Fused x : fused) {
            specs.add(new GgufStreamWriter.TensorSpec(x.name + LORA_A, GgmlType.F32, new long[] {x.in, x.rank}));
            specs.add(new GgufStreamWriter.TensorSpec(x.name + LORA_B, GgmlType.F32, new long[] {x.rank, x.out}));
        }
        AtomicWrite.to(path, tmp -> {
            try (GgufStreamWriter w = GgufStreamWriter.create(tmp, md, specs)) {
                for (int i = 0; i < fused.size(); i++) {
                    w.write(w.dataPosition(2 * i), floats(fused.get(i).a));
                    w.write(w.dataPosition(2 * i + 1), floats(fused.get(i).b));
                }
            }
        });
    }

    private record Fused(String name, int rank, int in, int out, float[] a, float[] b) {}

    /**
     * One GGUF pair for the base tensor holding {@code group} (one projection, or phi3's fused ones): A rows of the
     * distinct A's stacked, B block-diagonal, each block scaled so that llama.cpp's {@code alpha/R} (R the fused
     * rank) gives the pair's own scale.
     */
    private static Fused fuse(LoraAdapter adapter, int layer, List<Projection> group) {
        var h = adapter.header();
        var shapes = h.base().shapes();
        List<float[]> as = new ArrayList<>();
        List<Integer> aRank = new ArrayList<>();
        int[] col = new int[group.size()];
        LoraPair[] ps = new LoraPair[group.size()];
        int totalRank = 0;
        int out = 0;
        boolean any = false;
        for (int i = 0; i < group.size(); i++) {
            LoraPair p = adapter.pair(layer, group.get(i));
            out += LoraPair.dims(group.get(i), shapes)[1];
            ps[i] = p;
            if (p == null) {
                continue;
            }
            any = true;
            int found = -1;
            int offset = 0;
            for (int k = 0; k < as.size(); k++) {
                if (aRank.get(k) == p.rank() && Arrays.equals(as.get(k), p.a())) {
                    found = offset;
                    break;
                }
                offset += aRank.get(k);
            }
            if (found < 0) {
                found = totalRank;
                as.add(p.a());
                aRank.add(p.rank());
                totalRank += p.rank();
            }
            col[i] = found;
        }
        if (!any) {
            return null;
        }
        int in = LoraPair.dims(group.get(0), shapes)[0];
        float[] a = new float[totalRank * in];
        int at = 0;
        for (float[] x : as) {
            System.arraycopy(x, 0, a, at, x.length);
            at += x.length;
        }
        float[] b = new float[out * totalRank];
        int row = 0;
        for (int i = 0; i < group.size(); i++) {
            int rows = LoraPair.dims(group.get(i), shapes)[1];
            LoraPair p = ps[i];
            if (p != null) {
                float factor = h.scale(p.rank()) / (h.alpha() / totalRank);
                for (int r = 0; r < rows; r++) {
                    for (int j = 0; j < p.rank(); j++) {
                        float v = p.b()[r * p.rank() + j];
                        b[(row + r) * totalRank + col[i] + j] = factor == 1f ? v : v * factor;
                    }
                }
            }
            row += rows;
        }
        String tensor = group.size() == 3 ? TensorNames.ATTN_QKV : group.size() == 2 ? TensorNames.FFN_UP : LoraPair.tensor(group.get(0));
        return new Fused(TensorNames.block(layer, tensor), totalRank, in, out, a, b);
    }

    private static ByteBuffer floats(float[] v) {
        ByteBuffer buf = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        buf.asFloatBuffer().put(v);
        return buf;
    }
}
