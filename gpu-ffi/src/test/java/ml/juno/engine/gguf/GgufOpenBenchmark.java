package ml.juno.engine.gguf;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import ml.juno.engine.tensor.GgmlType;

/**
 * Manual check (not a test): how long {@link GgufFile#open} takes on a ~1 GB model, i.e. parsing the header,
 * a 32000-token vocabulary and ~200 tensor infos and mapping the data. Writes a TinyLlama-shaped Q8_0 file (sparse:
 * the data pages are never touched) with the llama-spm vocabulary, then times cold and warm opens.
 *
 * <pre>
 * ./mvnw -q -o -pl gpu-ffi test-compile
 * java --enable-native-access=ALL-UNNAMED -cp gpu-ffi/target/classes:gpu-ffi/target/test-classes \
 *     ml.juno.engine.gguf.GgufOpenBenchmark /tmp models/testdata/vocab/ggml-vocab-llama-spm.gguf
 * </pre>
 */
public final class GgufOpenBenchmark {

    private GgufOpenBenchmark() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir"));
        Path vocab = Path.of(args.length > 1 ? args[1] : "models/testdata/vocab/ggml-vocab-llama-spm.gguf");
        Path model = dir.resolve("juno-open-benchmark-1g.gguf");
        if (!Files.exists(model)) {
            write(model, vocab);
        }
        // CPU time of this thread as well as wall time: on a shared machine the wall time mostly measures the queue
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long t0 = System.nanoTime();
        long c0 = mx.getCurrentThreadCpuTime();
        try (GgufFile f = GgufFile.open(model)) {
            System.out.printf("%s: %.2f GB, %d keys, %d tensors%n", model, f.fileSize() / 1e9, f.metadata().size(), f.tensors().size());
            System.out.printf("first open (cold JVM): wall %.1f ms, cpu %.1f ms%n", (System.nanoTime() - t0) / 1e6,
                    (mx.getCurrentThreadCpuTime() - c0) / 1e6);
        }
        long[] wall = new long[30];
        long[] cpu = new long[30];
        for (int i = 0; i < wall.length; i++) {
            long t = System.nanoTime();
            long c = mx.getCurrentThreadCpuTime();
            try (GgufFile f = GgufFile.open(model)) {
                wall[i] = System.nanoTime() - t;
                cpu[i] = mx.getCurrentThreadCpuTime() - c;
            }
        }
        Arrays.sort(wall);
        Arrays.sort(cpu);
        System.out.printf("open, 30 runs: wall min %.1f / median %.1f / max %.1f ms; cpu min %.1f / median %.1f / max %.1f ms%n",
                wall[0] / 1e6, wall[15] / 1e6, wall[29] / 1e6, cpu[0] / 1e6, cpu[15] / 1e6, cpu[29] / 1e6);
    }

    /** TinyLlama 1.1B shapes (22 layers, 2048 wide, ffn 5632, 4 KV heads) in Q8_0: about 1.2 GB. */
    private static void write(Path model, Path vocab) throws Exception {
        int layers = 22;
        int embd = 2048;
        int ffn = 5632;
        int kvDim = 256;
        GgufWriter w = new GgufWriter();
        try (GgufFile v = GgufFile.open(vocab)) {
            w.putAll(v.metadata());
        }
        w.putString(GgufKeys.GENERAL_ARCHITECTURE, "llama")
                .putUInt32("llama.context_length", 2048).putUInt32("llama.embedding_length", embd)
                .putUInt32("llama.block_count", layers).putUInt32("llama.feed_forward_length", ffn)
                .putUInt32("llama.attention.head_count", 32).putUInt32("llama.attention.head_count_kv", 4)
                .putFloat32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
        GgufWriter.TensorSource untouched = dst -> { };
        w.addTensor("token_embd.weight", GgmlType.Q8_0, new long[] {embd, 32000}, untouched);
        for (int l = 0; l < layers; l++) {
            w.addTensor(TensorNames.block(l, TensorNames.ATTN_NORM), GgmlType.F32, new long[] {embd}, untouched);
            w.addTensor(TensorNames.block(l, TensorNames.ATTN_Q), GgmlType.Q8_0, new long[] {embd, embd}, untouched);
            w.addTensor(TensorNames.block(l, TensorNames.ATTN_K), GgmlType.Q8_0, new long[] {embd, kvDim}, untouched);
            w.addTensor(TensorNames.block(l, TensorNames.ATTN_V), GgmlType.Q8_0, new long[] {embd, kvDim}, untouched);
            w.addTensor(TensorNames.block(l, TensorNames.ATTN_OUT), GgmlType.Q8_0, new long[] {embd, embd}, untouched);
            w.addTensor(TensorNames.block(l, TensorNames.FFN_NORM), GgmlType.F32, new long[] {embd}, untouched);
            w.addTensor(TensorNames.block(l, TensorNames.FFN_GATE), GgmlType.Q8_0, new long[] {embd, ffn}, untouched);
            w.addTensor(TensorNames.block(l, TensorNames.FFN_UP), GgmlType.Q8_0, new long[] {embd, ffn}, untouched);
            w.addTensor(TensorNames.block(l, TensorNames.FFN_DOWN), GgmlType.Q8_0, new long[] {ffn, embd}, untouched);
        }
        w.addTensor("output_norm.weight", GgmlType.F32, new long[] {embd}, untouched);
        w.addTensor("output.weight", GgmlType.Q8_0, new long[] {embd, 32000}, untouched);
        w.write(model);
    }
}
