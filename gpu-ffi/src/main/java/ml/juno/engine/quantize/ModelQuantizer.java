package ml.juno.engine.quantize;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufMetadata;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.GgufValueType;
import ml.juno.engine.tensor.GgmlType;

/**
 * {@code juno quantize}: rewrites a GGUF file with its tensors in another type, the way llama.cpp's
 * {@code llama-quantize} does without an importance matrix, so the tensor data comes out byte for byte the same.
 * <ul>
 *   <li>tensor order: llama.cpp's (non-block tensors first, then by block number, by name within);</li>
 *   <li>tensor types: {@link TensorTypeRules} (norms and 1-D tensors stay as they are);</li>
 *   <li>metadata: every input key in order, except {@code general.quantization_version} and
 *       {@code general.file_type}, which are appended (2 and the llama_ftype), and the {@code split.*} keys,
 *       which are dropped.</li>
 * </ul>
 * Source tensors that need converting must be F32, F16 or BF16 (requantizing is refused, as llama-quantize does
 * without {@code --allow-requantize}).
 */
public final class ModelQuantizer {
    /** ggml's GGML_QNT_VERSION. */
    static final int QUANTIZATION_VERSION = 2;

    private ModelQuantizer() {
    }

    /** Runs one quantization; see the class comment. */
    public static QuantizeReport run(QuantizeOptions options, ProgressListener progress) throws IOException {
        QuantType ftype = QuantType.parse(options.type());
        List<TensorTypeRules.Override> overrides = new ArrayList<>();
        for (String spec : options.tensorTypeOverrides()) {
            overrides.add(TensorTypeRules.Override.parse(spec));
        }
        if (Files.exists(options.out()) && Files.isSameFile(options.in(), options.out())) {
            throw new IllegalArgumentException("input and output are the same file: " + options.in());
        }
        try (GgufFile in = GgufFile.open(options.in())) {
            List<GgufTensorInfo> ordered = TensorTypeRules.order(in.tensors(), GgufTensorInfo::name);
            List<TensorTypeRules.Tensor> ruleTensors = new ArrayList<>();
            for (GgufTensorInfo t : ordered) {
                ruleTensors.add(new TensorTypeRules.Tensor(t.name(), t.type(), t.shape()));
            }
            TensorTypeRules rules = new TensorTypeRules(ftype, options.pure(), overrides, facts(in.metadata()), ruleTensors);

            List<GgufStreamWriter.TensorSpec> specs = new ArrayList<>();
            List<QuantizeReport.TensorType> types = new ArrayList<>();
            long inputBytes = 0;
            long outputBytes = 0;
            for (int i = 0; i < ordered.size(); i++) {
                GgufTensorInfo t = ordered.get(i);
                GgmlType to = rules.typeFor(ruleTensors.get(i));
                if (to != t.type()) {
                    if (!SourceRows.isSupported(t.type())) {
                        throw new IllegalArgumentException("tensor " + t.name() + " is " + t.type()
                                + "; requantizing is not supported, quantize from an F32, F16 or BF16 file");
                    }
                    if (!RowQuantizers.supports(to)) {
                        throw new IllegalArgumentException("tensor " + t.name() + ": no quantizer for " + to);
                    }
                }
                GgufStreamWriter.TensorSpec spec = new GgufStreamWriter.TensorSpec(t.name(), to, t.shape());
                specs.add(spec);
                types.add(new QuantizeReport.TensorType(t.name(), t.type(), to));
                inputBytes += t.byteSize();
                outputBytes += spec.byteSize();
            }

            List<TensorWriteJob> jobs = new ArrayList<>();
            for (int i = 0; i < ordered.size(); i++) {
                GgufTensorInfo t = ordered.get(i);
                GgufStreamWriter.TensorSpec spec = specs.get(i);
                TensorWriteJob.Source source = spec.type() == t.type()
                        ? new TensorWriteJob.Source.Raw(in.data(t))
                        : new TensorWriteJob.Source.Floats(new SourceRows(in.data(t), t.type(), t.rowLength()));
                jobs.add(new TensorWriteJob(i, spec, source));
            }
            boolean ok = false;
            try (GgufStreamWriter out = GgufStreamWriter.create(options.out(), metadata(in.metadata(), ftype), specs)) {
                ParallelTensorWriter.run(out, jobs, options.effectiveThreads(), "quantize", progress);
                ok = true;
            } finally {
                if (!ok) {
                    Files.deleteIfExists(options.out());
                }
            }
            return new QuantizeReport(ftype, types, inputBytes, outputBytes, rules.fallbacks());
        }
    }

    static TensorTypeRules.ModelFacts facts(GgufMetadata md) {
        String arch = md.getString(GgufKeys.GENERAL_ARCHITECTURE, "");
        int layers = intOrFirst(md, GgufKeys.arch(arch, GgufKeys.BLOCK_COUNT));
        int heads = intOrFirst(md, GgufKeys.arch(arch, GgufKeys.ATTENTION_HEAD_COUNT));
        String kvKey = GgufKeys.arch(arch, GgufKeys.ATTENTION_HEAD_COUNT_KV);
        int headsKv = md.has(kvKey) ? intOrFirst(md, kvKey) : heads;
        int experts = intOrFirst(md, GgufKeys.arch(arch, GgufKeys.EXPERT_COUNT));
        return new TensorTypeRules.ModelFacts(arch, layers, heads, headsKv, experts);
    }

    /** An integer key, or the first element of an integer array (per-layer head counts), or 0 when absent. */
    private static int intOrFirst(GgufMetadata md, String key) {
        if (!md.has(key)) {
            return 0;
        }
        if (md.type(key) == GgufValueType.ARRAY) {
            int[] a = md.getIntArray(key);
            return a.length == 0 ? 0 : a[0];
        }
        return md.getInt(key);
    }

    /** The input's metadata with the quantization keys moved to the end, as llama.cpp's gguf_set_val does. */
    static List<GgufStreamWriter.Entry> metadata(GgufMetadata md, QuantType ftype) {
        List<GgufStreamWriter.Entry> entries = new ArrayList<>();
        for (String key : md.keys()) {
            if (key.equals(GgufKeys.GENERAL_QUANTIZATION_VERSION) || key.equals(GgufKeys.GENERAL_FILE_TYPE)
                    || key.startsWith("split.")) {
                continue;
            }
            entries.add(new GgufStreamWriter.Entry(key, md.type(key), md.getRaw(key)));
        }
        entries.add(GgufStreamWriter.Entry.u32(GgufKeys.GENERAL_QUANTIZATION_VERSION, QUANTIZATION_VERSION));
        entries.add(GgufStreamWriter.Entry.u32(GgufKeys.GENERAL_FILE_TYPE, ftype.fileType));
        return entries;
    }
}
