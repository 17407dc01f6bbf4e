package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.kernel.cpu.NativeKernels;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Whole models on the native and the Java backend: every test model (every architecture and weight type the project
 * has), a prompt and greedy decode steps, every logit bit for bit (Q4_0 in its stored layout; repacked, within
 * rounding). The other tests (reference logits, batch invariance, tensor parallel) run on the default backend, native
 * where it loads; this makes their results hold for the Java backend too. {@link #main} is what
 * NativeKernelsSanitizerTest runs under AddressSanitizer.
 */
class NativeBackendModelsTest {

    static Stream<String> models() throws IOException {
        List<String> out = new ArrayList<>(List.of("stories260K.gguf", "stories260K-F16.gguf", "stories260K-Q4_0.gguf",
                "stories260K-Q8_0.gguf", "llama-2-tiny-random.gguf"));
        try (Stream<Path> s = Files.list(ReferenceCase.modelsDir().resolve("testdata/tiny-random"))) {
            s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".gguf")).sorted().forEach(out::add);
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void nativeAndJavaBackends_giveTheSameLogitsBitForBit(String file) throws Exception {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            // no native library here (NativeKernelsTest asserts that this only happens without a C compiler): the
            // comparison would be Java against Java
            assertEquals("java", Backends.select(1).kind());
            return;
        }
        int compared = compare(ReferenceCase.modelFile(file), l.kernels());
        assertTrue(compared > 1000, file + ": only " + compared + " logits compared");
    }

    /**
     * A model whose weight blocks are garbage (random bytes, so scales that are NaN, infinite or huge and every quant
     * pattern): the native kernels read no byte outside the rows Java checked and compute what the Java kernels do,
     * NaNs included. Nothing in a block steers an address, so a corrupt file cannot crash the process.
     */
    @Test
    void corruptWeightBlocks_giveTheJavaBackendsResults_neverACrash(@TempDir Path tmp) throws Exception {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            assertEquals("java", Backends.select(1).kind());
            return;
        }
        for (String name : List.of("tiny-llama-random-Q4_K_M.gguf", "stories260K-Q4_0.gguf", "tiny-llama-random-Q2_K-pure.gguf",
                "tiny-llama-random-Q5_K-pure.gguf", "stories260K-F16.gguf")) {
            Path src = ReferenceCase.modelFile(name);
            byte[] bytes = Files.readAllBytes(src);
            List<long[]> ranges = new ArrayList<>();
            try (GgufFile f = GgufFile.open(src)) {
                for (GgufTensorInfo t : f.tensors()) {
                    if (t.dims() >= 2 && !t.name().startsWith("token_embd")) {
                        ranges.add(new long[] {f.dataOffset() + t.offset(), t.byteSize()});
                    }
                }
            }
            Random r = new Random(name.hashCode());
            for (long[] range : ranges) {
                for (long i = 0; i < range[1]; i++) {
                    bytes[(int) (range[0] + i)] = (byte) r.nextInt(256);
                }
            }
            Path bad = tmp.resolve("corrupt-" + name);
            Files.write(bad, bytes);
            assertTrue(compare(bad, l.kernels()) > 1000, name);
            packedDifference(bad, l.kernels()); // the packed kernels (Q4_0, AVX-512 Q4_K) on garbage: values, no crash
        }
    }

    /**
     * Weights repacked for the native kernels (the default: Q4_0 in groups of 16 rows, Q8_0 and Q4_K too in the AVX-512
     * variant) sum each block's integers whole, then multiply once, where the Java backend multiplies partial
     * sums: the logits agree to rounding, not bit for bit. Every model (most have no packed type: then bit for bit).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void packedWeights_stayWithinRoundingOfTheJavaBackend(String file) throws Exception {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            assertEquals("java", Backends.select(1).kind());
            return;
        }
        double worst = packedDifference(ReferenceCase.modelFile(file), l.kernels());
        assertTrue(worst < 1e-3, file + ": logits differ by up to " + worst);
    }

    /** Q4_0 and (AVX-512) Q8_0 and Q4_K models: packing changes some bits, or it is not packing at all. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("packedModels")
    void packedWeights_areUsed(String file) throws Exception {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok() || ((file.contains("Q4_K") || file.contains("Q8_0")) && !l.kernels().isa().equals("avx512vnni"))) {
            return;
        }
        assertTrue(packedDifference(ReferenceCase.modelFile(file), l.kernels()) > 0, file + ": packed gave Java's bits exactly");
    }

    static Stream<String> packedModels() {
        return Stream.of("stories260K-Q4_0.gguf", "tiny-llama-random-Q4_0-pure.gguf", "tiny-llama-random-Q4_K-pure.gguf",
                "tiny-llama-random-Q8_0.gguf");
    }

    /**
     * The largest difference between the Java backend's prompt logits and the native backend's with packed weights, on
     * a prompt of seven tokens: from eight rows the Java backend multiplies Q8_0 weights as float products, not as
     * integer block sums (as llama.cpp and the packed kernels do), and on tiny-qwen2-random-Q8_0 a 13-token prompt
     * then crosses a Q8 rounding boundary that the random model amplifies to 0.1 on the logits.
     */
    static double packedDifference(Path model, NativeKernels kernels) throws Exception {
        return onBoth(model, kernels, KvType.F32, true, 7, (a, b, batch, pos) -> {
            float[] la = a.forward(batch.build()).copyRow(0);
            float[] lb = b.forward(batch.build()).copyRow(0);
            double worst = 0;
            for (int i = 0; i < la.length; i++) {
                worst = Math.max(worst, Math.abs(la[i] - lb[i]));
            }
            return worst;
        });
    }

    /**
     * The native backend copies what every step reads out of the mapping at load (each layer's attention and FFN, the
     * head), where huge pages are available, and nothing with the switch off; the logits stay those of the Java backend
     * (the test above, which runs with the copies).
     */
    @Test
    void theNativeBackend_copiesTheStreamedMatricesIntoHugePages_atLoad() throws Exception {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            assertEquals("java", Backends.select(1).kind());
            return;
        }
        // F16: kept as stored by every variant (the AVX-512 one packs each K-quant of a Q4_K_M file: copies of their own)
        Path model = ReferenceCase.modelFile("tiny-llama-random-F16.gguf");
        EngineOptions o = new EngineOptions(2, 64, KvType.F32, 32, 1);
        String before = System.getProperty("juno.weights.resident");
        try (GgufFile f = GgufFile.open(model)) {
            int layers = Architectures.forName(f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(f).dims().layers();
            long expected = 0;
            try (Model m = Model.load(f, o, ShardSpec.whole(layers), t -> new CpuBackend(2, l.kernels()))) {
                for (var w : m.decoder().streamedMatrices()) {
                    if (NativeKernels.supports(w.type(), w.cols()) && l.kernels().packedBytes(w) < 0) { // packed ones: copies of their own
                        expected += w.byteSize();
                    }
                }
                assertTrue(expected > 0);
                assertTrue(m.decoder().streamedMatrices().size() >= 7 * layers + 1, "q, k, v, o, gate, up, down of each layer and the head");
                long copied = ((CpuBackend) m.backend()).residentBytes();
                assertEquals(ml.juno.engine.kernel.HugeMemory.available() ? expected : 0, copied, "copied at load");
            }
            System.setProperty("juno.weights.resident", "0");
            try (Model m = Model.load(f, o, ShardSpec.whole(layers), t -> new CpuBackend(2, l.kernels()))) {
                assertEquals(0, ((CpuBackend) m.backend()).residentBytes(), "switched off");
            }
        } finally {
            if (before == null) {
                System.clearProperty("juno.weights.resident");
            } else {
                System.setProperty("juno.weights.resident", before);
            }
        }
    }

    /**
     * Runs a prompt and four greedy steps on both backends, with an F32 and an F16 KV cache (the native attention
     * kernels take F16); returns how many logits were compared (all equal).
     */
    static int compare(Path model, NativeKernels kernels) throws Exception {
        return compare(model, kernels, KvType.F32) + compare(model, kernels, KvType.F16);
    }

    static int compare(Path model, NativeKernels kernels, KvType kv) throws Exception {
        return onBoth(model, kernels, kv, false, (a, b, batch, pos) -> {
            int compared = 0;
            for (int step = 0; step < 5; step++) {
                float[] la = a.forward(batch.build()).copyRow(0);
                float[] lb = b.forward(batch.build()).copyRow(0);
                int best = 0;
                for (int i = 0; i < la.length; i++) {
                    if (Float.floatToIntBits(la[i]) != Float.floatToIntBits(lb[i])) {
                        throw new AssertionError(model.getFileName() + " " + kv + " KV, step " + step + " logit " + i + ": java " + la[i]
                                + ", native " + lb[i]);
                    }
                    if (la[i] > la[best]) {
                        best = i;
                    }
                }
                compared += la.length;
                batch.clear();
                batch.add(0, pos++, best, true);
            }
            return compared;
        });
    }

    /** What runs on a Java and a native session of one model, the batch holding a 13-token prompt at positions 0..12. */
    interface OnBoth<T> {
        T run(InferenceSession java, InferenceSession nat, StepBatch.Builder batch, int nextPosition) throws Exception;
    }

    /** The model on the Java backend and on the native one ({@code repack}: packed weights), the same prompt queued. */
    static <T> T onBoth(Path model, NativeKernels kernels, KvType kv, boolean repack, OnBoth<T> body) throws Exception {
        return onBoth(model, kernels, kv, repack, 13, body);
    }

    /** As {@link #onBoth(Path, NativeKernels, KvType, boolean, OnBoth)} with a prompt of {@code promptLength} tokens. */
    static <T> T onBoth(Path model, NativeKernels kernels, KvType kv, boolean repack, int promptLength, OnBoth<T> body)
            throws Exception {
        EngineOptions o = new EngineOptions(2, 64, kv, 32, 1);
        try (GgufFile f = GgufFile.open(model)) {
            int layers = Architectures.forName(f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(f).dims().layers();
            try (Model java = Model.load(f, o, ShardSpec.whole(layers), t -> new CpuBackend(2, null));
                 Model nat = Model.load(f, o, ShardSpec.whole(layers), t -> new CpuBackend(2, kernels, repack));
                 InferenceSession a = java.newSession();
                 InferenceSession b = nat.newSession()) {
                int vocab = java.config().dims().vocab();
                int[] prompt = new int[promptLength];
                for (int i = 0; i < prompt.length; i++) {
                    prompt[i] = 1 + (i * 7919) % (vocab - 1);
                }
                StepBatch.Builder batch = new StepBatch.Builder(32);
                batch.addPrompt(0, 0, prompt, 0, prompt.length, true);
                return body.run(a, b, batch, prompt.length);
            }
        }
    }

    /** {@code main(modelsDir)}: every test model compared, for the sanitizer run; prints one line per model. */
    public static void main(String[] args) throws Exception {
        System.setProperty("juno.models.dir", args[0]);
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            throw new IllegalStateException("native kernels did not load: " + l.problem());
        }
        int models = 0;
        for (String file : models().toList()) {
            int n = compare(ReferenceCase.modelFile(file), l.kernels());
            double packed = packedDifference(ReferenceCase.modelFile(file), l.kernels()); // the packed kernels under ASan too
            System.out.println("sanitized " + l.kernels().isa() + (l.kernels().amx() ? "+amx" : "") + " " + file + ": " + n
                    + " logits equal, packed within " + packed);
            models++;
        }
        System.out.println("models compared: " + models);
    }
}
