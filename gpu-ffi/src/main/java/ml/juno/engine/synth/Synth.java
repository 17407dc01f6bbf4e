package ml.juno.engine.synth;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.gguf.GgufArray;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufMetadata;
import ml.juno.engine.gguf.GgufValueType;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.quantize.GgufStreamWriter;
import ml.juno.engine.quantize.ParallelTensorWriter;
import ml.juno.engine.quantize.ProgressListener;
import ml.juno.engine.quantize.QuantType;
import ml.juno.engine.quantize.TensorTypeRules;
import ml.juno.engine.quantize.TensorWriteJob;
import ml.juno.engine.tensor.GgmlType;

/**
 * {@code juno synth}: writes a llama-architecture GGUF (or, for a preset with experts, a {@code qwen3moe} one:
 * {@code attn_q_norm/attn_k_norm}, {@code ffn_gate_inp}, {@code ffn_gate_exps/ffn_up_exps/ffn_down_exps} in place of
 * the dense FFN, the {@code expert_*} keys) with random weights and the exact shapes of a real model.
 * <ul>
 *   <li>tensors: the names and shapes {@code convert_hf_to_gguf} gives a llama model ({@code token_embd},
 *       {@code output_norm}, {@code output}, {@code blk.N.attn_norm/attn_q/attn_k/attn_v/attn_output/ffn_norm/
 *       ffn_gate/ffn_up/ffn_down}), in llama-quantize's order, with its per-tensor types for the chosen mix;</li>
 *   <li>weights: N(0, 1/fan_in) with fan_in the row length; norm weights 1 + N(0, 0.01²); each row seeded from
 *       (seed, tensor, row), so the file does not depend on the thread count;</li>
 *   <li>metadata: {@code general.*}, {@code llama.*} (as convert_hf_to_gguf writes them), the {@code tokenizer.*}
 *       keys copied from {@code --vocab-from}, then {@code general.quantization_version} and
 *       {@code general.file_type};</li>
 *   <li>without {@code --vocab-from}, a synthetic SentencePiece-style vocabulary: {@code <unk>}, {@code <s>},
 *       {@code </s>}, the 256 byte tokens {@code <0x00>..<0xFF>}, then {@code ▁tok<N>} fillers (score -N), with
 *       bos 1, eos 2, unk 0. It loads, but does not tokenize real text sensibly.</li>
 * </ul>
 * Rows are generated and quantized by a fixed pool of threads and streamed to the file
 * ({@link ParallelTensorWriter}); memory use is a few chunks per thread.
 */
public final class Synth {
    private static final float NORM_STD = 0.01f;

    private Synth() {
    }

    /** What was written. */
    public record SynthReport(SynthPreset preset, QuantType type, long tensorBytes, int tensorCount) {
    }

    /** Writes the model; see the class comment. */
    public static SynthReport run(SynthOptions options, ProgressListener progress) throws IOException {
        QuantType ftype = QuantType.parse(options.type());
        SynthPreset preset = options.preset();
        List<GgufStreamWriter.Entry> vocab;
        if (options.vocabFrom() != null) {
            try (GgufFile v = GgufFile.open(options.vocabFrom())) {
                vocab = vocabFrom(v.metadata(), options.vocabFrom().toString());
            }
            preset = preset.withVocabSize(vocabSize(vocab));
        } else {
            vocab = syntheticVocab(preset.vocabSize());
        }

        List<TensorTypeRules.Tensor> shapes = TensorTypeRules.order(tensors(preset));
        TensorTypeRules rules = new TensorTypeRules(ftype, false, List.of(),
                new TensorTypeRules.ModelFacts(preset.architecture(), preset.layers(), preset.heads(), preset.kvHeads(),
                        preset.moe().experts()), shapes);
        List<GgufStreamWriter.TensorSpec> specs = new ArrayList<>();
        List<TensorWriteJob> jobs = new ArrayList<>();
        long bytes = 0;
        for (int i = 0; i < shapes.size(); i++) {
            TensorTypeRules.Tensor t = shapes.get(i);
            GgufStreamWriter.TensorSpec spec = new GgufStreamWriter.TensorSpec(t.name(), rules.typeFor(t), t.shape());
            specs.add(spec);
            bytes += spec.byteSize();
            jobs.add(new TensorWriteJob(i, spec, new TensorWriteJob.Source.Floats(rows(options.seed(), i, t))));
        }

        boolean ok = false;
        try (GgufStreamWriter out = GgufStreamWriter.create(options.out(), metadata(preset, ftype, options.seed(), vocab), specs)) {
            ParallelTensorWriter.run(out, jobs, options.effectiveThreads(), "synth", progress);
            ok = true;
        } finally {
            if (!ok) {
                Files.deleteIfExists(options.out());
            }
        }
        return new SynthReport(preset, ftype, bytes, specs.size());
    }

    /** The llama tensors of {@code p}, all F32 before the type rules run (ggml shapes: row length first). */
    static List<TensorTypeRules.Tensor> tensors(SynthPreset p) {
        List<TensorTypeRules.Tensor> t = new ArrayList<>();
        t.add(tensor(TensorNames.global(TensorNames.TOKEN_EMBD), p.dim(), p.vocabSize()));
        t.add(tensor(TensorNames.global(TensorNames.OUTPUT_NORM), p.dim()));
        t.add(tensor(TensorNames.global(TensorNames.OUTPUT), p.dim(), p.vocabSize()));
        for (int l = 0; l < p.layers(); l++) {
            t.add(tensor(block(l, TensorNames.ATTN_NORM), p.dim()));
            t.add(tensor(block(l, TensorNames.ATTN_Q), p.dim(), p.dim()));
            t.add(tensor(block(l, TensorNames.ATTN_K), p.dim(), p.kvDim()));
            t.add(tensor(block(l, TensorNames.ATTN_V), p.dim(), p.kvDim()));
            t.add(tensor(block(l, TensorNames.ATTN_OUT), p.dim(), p.dim()));
            t.add(tensor(block(l, TensorNames.FFN_NORM), p.dim()));
            if (p.moe().present()) {
                SynthPreset.Moe m = p.moe();
                t.add(tensor(block(l, TensorNames.ATTN_Q_NORM), p.headDim()));
                t.add(tensor(block(l, TensorNames.ATTN_K_NORM), p.headDim()));
                t.add(tensor(block(l, TensorNames.FFN_GATE_INP), p.dim(), m.experts()));
                t.add(tensor(block(l, TensorNames.FFN_GATE_EXP), p.dim(), m.expertFfn(), m.experts()));
                t.add(tensor(block(l, TensorNames.FFN_UP_EXP), p.dim(), m.expertFfn(), m.experts()));
                t.add(tensor(block(l, TensorNames.FFN_DOWN_EXP), m.expertFfn(), p.dim(), m.experts()));
            } else {
                t.add(tensor(block(l, TensorNames.FFN_GATE), p.dim(), p.ffn()));
                t.add(tensor(block(l, TensorNames.FFN_UP), p.dim(), p.ffn()));
                t.add(tensor(block(l, TensorNames.FFN_DOWN), p.ffn(), p.dim()));
            }
        }
        return t;
    }

    private static String block(int layer, String name) {
        return TensorNames.block(layer, name, TensorNames.WEIGHT);
    }

    private static TensorTypeRules.Tensor tensor(String name, long... shape) {
        return new TensorTypeRules.Tensor(name, GgmlType.F32, shape);
    }

    /** Random rows of tensor {@code index}: each row from its own stream, so chunking never changes the values. */
    private static TensorWriteJob.FloatRows rows(long seed, int index, TensorTypeRules.Tensor t) {
        int rowLength = Math.toIntExact(t.shape()[0]);
        boolean norm = t.shape().length == 1;
        float mean = norm ? 1f : 0f;
        float std = norm ? NORM_STD : (float) (1 / Math.sqrt(rowLength));
        long tensorSeed = GaussianTable.mix(seed ^ GaussianTable.mix(0x5EED_0000L + index));
        return (firstRow, rowCount, dst) -> {
            for (int r = 0; r < rowCount; r++) {
                long state = GaussianTable.mix(tensorSeed + (firstRow + r) * 0x9e3779b97f4a7c15L);
                GaussianTable.fill(state, dst, r * rowLength, rowLength, mean, std);
            }
        };
    }

    static List<GgufStreamWriter.Entry> metadata(SynthPreset p, QuantType ftype, long seed, List<GgufStreamWriter.Entry> vocab) {
        List<GgufStreamWriter.Entry> md = new ArrayList<>();
        String arch = p.architecture();
        md.add(GgufStreamWriter.Entry.string(GgufKeys.GENERAL_ARCHITECTURE, arch));
        md.add(GgufStreamWriter.Entry.string(GgufKeys.GENERAL_TYPE, "model"));
        md.add(GgufStreamWriter.Entry.string(GgufKeys.GENERAL_NAME, p.name()));
        md.add(GgufStreamWriter.Entry.string(GgufKeys.GENERAL_DESCRIPTION,
                "synthetic: random weights (seed " + seed + ") with the shapes of " + p.name() + "; not a trained model"));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.BLOCK_COUNT), p.layers()));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.CONTEXT_LENGTH), p.contextLength()));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.EMBEDDING_LENGTH), p.dim()));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.FEED_FORWARD_LENGTH), p.ffn()));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.ATTENTION_HEAD_COUNT), p.heads()));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.ATTENTION_HEAD_COUNT_KV), p.kvHeads()));
        md.add(GgufStreamWriter.Entry.f32(GgufKeys.arch(arch, GgufKeys.ROPE_FREQ_BASE), p.ropeBase()));
        md.add(GgufStreamWriter.Entry.f32(GgufKeys.arch(arch, GgufKeys.ATTENTION_LAYERNORM_RMS_EPS), p.rmsEps()));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.VOCAB_SIZE), p.vocabSize()));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.ROPE_DIMENSION_COUNT), p.headDim()));
        if (p.moe().present()) {
            md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.ATTENTION_KEY_LENGTH), p.headDim()));
            md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.ATTENTION_VALUE_LENGTH), p.headDim()));
            md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.EXPERT_COUNT), p.moe().experts()));
            md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.EXPERT_USED_COUNT), p.moe().used()));
            md.add(GgufStreamWriter.Entry.u32(GgufKeys.arch(arch, GgufKeys.EXPERT_FEED_FORWARD_LENGTH), p.moe().expertFfn()));
        }
        md.addAll(vocab);
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.GENERAL_QUANTIZATION_VERSION, 2));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.GENERAL_FILE_TYPE, ftype.fileType));
        return md;
    }

    /** The {@code tokenizer.*} entries of a vocabulary file, in its order. */
    static List<GgufStreamWriter.Entry> vocabFrom(GgufMetadata md, String source) {
        if (!md.has(GgufKeys.TOKENIZER_LIST) || !md.has(GgufKeys.TOKENIZER_MODEL)) {
            throw new IllegalArgumentException(source + " has no vocabulary (" + GgufKeys.TOKENIZER_MODEL + " and "
                    + GgufKeys.TOKENIZER_LIST + " are needed)");
        }
        List<GgufStreamWriter.Entry> out = new ArrayList<>();
        for (String key : md.keys()) {
            if (key.startsWith("tokenizer.")) {
                out.add(new GgufStreamWriter.Entry(key, md.type(key), md.getRaw(key)));
            }
        }
        return out;
    }

    private static int vocabSize(List<GgufStreamWriter.Entry> vocab) {
        for (GgufStreamWriter.Entry e : vocab) {
            if (e.key().equals(GgufKeys.TOKENIZER_LIST)) {
                return ((GgufArray) e.value()).size();
            }
        }
        throw new IllegalStateException("vocabulary without tokens");
    }

    /** The documented synthetic vocabulary (see the class comment). */
    static List<GgufStreamWriter.Entry> syntheticVocab(int size) {
        if (size < 259) {
            throw new IllegalArgumentException("the synthetic vocabulary needs at least 259 tokens, preset has " + size);
        }
        List<String> tokens = new ArrayList<>(size);
        float[] scores = new float[size];
        int[] types = new int[size];
        tokens.add("<unk>");
        types[0] = 2;   // UNKNOWN
        tokens.add("<s>");
        types[1] = 3;   // CONTROL
        tokens.add("</s>");
        types[2] = 3;
        for (int b = 0; b < 256; b++) {
            tokens.add(String.format("<0x%02X>", b));
            types[3 + b] = 6;   // BYTE
        }
        for (int i = tokens.size(); i < size; i++) {
            tokens.add("\u2581tok" + i);
            scores[i] = -i;
            types[i] = 1;   // NORMAL
        }
        List<GgufStreamWriter.Entry> md = new ArrayList<>();
        md.add(GgufStreamWriter.Entry.string(GgufKeys.TOKENIZER_MODEL, "llama"));
        md.add(GgufStreamWriter.Entry.string(GgufKeys.TOKENIZER_PRE, "default"));
        md.add(new GgufStreamWriter.Entry(GgufKeys.TOKENIZER_LIST, GgufValueType.ARRAY, GgufArray.ofStrings(tokens)));
        md.add(new GgufStreamWriter.Entry(GgufKeys.TOKENIZER_SCORES, GgufValueType.ARRAY, GgufArray.ofFloats(scores)));
        md.add(new GgufStreamWriter.Entry(GgufKeys.TOKENIZER_TOKEN_TYPE, GgufValueType.ARRAY, GgufArray.ofInts(types)));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.TOKENIZER_BOS_ID, 1));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.TOKENIZER_EOS_ID, 2));
        md.add(GgufStreamWriter.Entry.u32(GgufKeys.TOKENIZER_UNK_ID, 0));
        md.add(GgufStreamWriter.Entry.bool(GgufKeys.TOKENIZER_ADD_BOS, true));
        md.add(GgufStreamWriter.Entry.bool(GgufKeys.TOKENIZER_ADD_EOS, false));
        return md;
    }
}
