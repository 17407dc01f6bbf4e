package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.stream.Stream;
import ml.juno.engine.embedding.Embedder;
import ml.juno.engine.embedding.Pooling;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.kernel.cpu.NativeKernels;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Embeddings from the final hidden states (after the output norm, before the LM head): pooled as the pooling says and
 * L2-normalised, equal to the same pooling done by hand over the per-token hidden states, deterministic, the same in a
 * batch of several sequences as one at a time, the same on the Java and the native backend, and without disturbing
 * the logits of rows that ask for them in the same step. One model per architecture.
 */
class FinalHiddenEmbeddingTest {
    static Stream<String> models() {
        return Stream.of("stories260K.gguf", "tiny-llama-random-Q4_K_M.gguf", "tiny-qwen2-random-F16.gguf",
                "tiny-qwen3-random-Q8_0.gguf", "tiny-qwen3moe-random-F16.gguf", "tiny-phi3-random-F16.gguf",
                "tiny-gemma3-random-F16.gguf");
    }

    private static final EngineOptions OPTIONS = new EngineOptions(2, 128, KvType.F32, 16, 4);

    private static int[] prompt(int length, int vocab, int seed) {
        int[] p = new int[length];
        for (int i = 0; i < length; i++) {
            p[i] = 1 + (seed * 31 + i * 7919) % (vocab - 1);
        }
        return p;
    }

    private interface Body {
        void run(InferenceSession session, int vocab) throws Exception;
    }

    private static void withSession(String file, Backend.Factory backends, Body body) throws Exception {
        Path path = ReferenceCase.modelFile(file);
        try (GgufFile f = GgufFile.open(path);
             Model m = Model.load(f, OPTIONS, backends);
             InferenceSession s = m.newSession()) {
            body.run(s, m.config().dims().vocab());
        }
    }

    private static Backend.Factory java() {
        return t -> new CpuBackend(2, null);
    }

    private static double norm(float[] v) {
        double ss = 0;
        for (float x : v) {
            ss += (double) x * x;
        }
        return Math.sqrt(ss);
    }

    private static float[] normalized(double[] v) {
        double ss = 0;
        for (double x : v) {
            ss += x * x;
        }
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) (v[i] / Math.sqrt(ss));
        }
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void pooledEmbeddings_equalPoolingByHand_andAreUnitLength(String file) throws Exception {
        withSession(file, java(), (s, vocab) -> {
            Embedder e = new Embedder(s);
            int[] tokens = prompt(37, vocab, 1); // more than two batches of 16: pooled across chunks
            float[][] hidden = e.hiddenStates(tokens);
            int dim = hidden[0].length;
            assertEquals(s.model().config().dims().embedding(), dim);
            double[] mean = new double[dim];
            for (float[] h : hidden) {
                for (int i = 0; i < dim; i++) {
                    mean[i] += h[i];
                }
            }
            for (int i = 0; i < dim; i++) {
                mean[i] /= tokens.length;
            }
            double[] first = new double[dim];
            double[] last = new double[dim];
            for (int i = 0; i < dim; i++) {
                first[i] = hidden[0][i];
                last[i] = hidden[tokens.length - 1][i];
            }
            float[] byMean = e.embed(tokens, Pooling.MEAN);
            assertArrayEquals(normalized(mean), byMean, 1e-6f, file + " mean");
            assertArrayEquals(normalized(first), e.embed(tokens, Pooling.CLS), 1e-6f, file + " cls");
            assertArrayEquals(normalized(last), e.embed(tokens, Pooling.LAST), 1e-6f, file + " last");
            assertEquals(1.0, norm(byMean), 1e-5, file + " |mean|");
            float[][] perToken = e.tokenEmbeddings(tokens);
            assertEquals(tokens.length, perToken.length);
            assertEquals(1.0, norm(perToken[5]), 1e-5, file + " |token 5|");
            // a different input gives a different vector (the check above cannot pass on a constant)
            float[] other = e.embed(prompt(37, vocab, 2), Pooling.MEAN);
            assertTrue(Math.abs(other[0] - byMean[0]) + Math.abs(other[1] - byMean[1]) > 0, file + ": two inputs, one vector");
            assertArrayEquals(byMean, e.embed(tokens, Pooling.MEAN), 0f, file + ": not deterministic");
        });
    }

    /** The hidden state is the head's input: the logits of a row are the same whether it also asked for it or not. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void askingForHiddenStates_leavesTheLogitsBitForBit(String file) throws Exception {
        withSession(file, java(), (s, vocab) -> {
            int[] tokens = prompt(9, vocab, 3);
            StepBatch.Builder b = new StepBatch.Builder(16);
            b.addPrompt(0, 0, tokens, 0, tokens.length, true);
            float[] plain = s.forward(b.build()).copyRow(0);
            assertEquals(0, s.finalHidden().count());
            b.clear();
            b.addPrompt(0, 0, tokens, 0, tokens.length, true);
            b.wantHidden(tokens.length - 1);
            b.wantHidden(2);
            Logits both = s.forward(b.build());
            assertArrayEquals(plain, both.copyRow(0), 0f);
            HiddenRows h = s.finalHidden();
            assertEquals(2, h.count());
            assertEquals(2, h.batchRow(0));
            assertEquals(tokens.length - 1, h.batchRow(1));
            float[][] alone = new Embedder(s).hiddenStates(tokens);
            // the first step's hidden rows, before the Embedder overwrote them, equal the Embedder's
            b.clear();
            b.addPrompt(0, 0, tokens, 0, tokens.length, true);
            b.wantHidden(2);
            s.forward(b.build());
            assertArrayEquals(alone[2], s.finalHidden().copyRow(0), 0f);
        });
    }

    /** Several sequences in one step (four slots, chunks of different lengths) give what each gives alone. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void batchedSequences_equalOneAtATime(String file) throws Exception {
        withSession(file, java(), (s, vocab) -> {
            int[][] inputs = {prompt(5, vocab, 11), prompt(3, vocab, 12), prompt(7, vocab, 13), prompt(1, vocab, 14)};
            StepBatch.Builder b = new StepBatch.Builder(16);
            for (int slot = 0; slot < inputs.length; slot++) {
                b.addHiddenPrompt(slot, 0, inputs[slot], 0, inputs[slot].length);
            }
            s.forward(b.build());
            HiddenRows h = s.finalHidden();
            assertEquals(16, h.count());
            double[][] sums = new double[inputs.length][h.dim()];
            int k = 0;
            for (int slot = 0; slot < inputs.length; slot++) {
                for (int t = 0; t < inputs[slot].length; t++, k++) {
                    for (int i = 0; i < h.dim(); i++) {
                        sums[slot][i] += h.data()[k * h.dim() + i];
                    }
                }
            }
            Embedder e = new Embedder(s);
            for (int slot = 0; slot < inputs.length; slot++) {
                for (int i = 0; i < h.dim(); i++) {
                    sums[slot][i] /= inputs[slot].length;
                }
                assertArrayEquals(e.embed(inputs[slot], Pooling.MEAN), normalized(sums[slot]), 0f, file + " input " + slot);
            }
        });
    }

    /** The native kernels (stored-layout weights) give the Java backend's embeddings bit for bit. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void nativeAndJavaBackends_giveTheSameEmbeddings(String file) throws Exception {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            return; // no native library (NativeKernelsTest asserts that this only happens without a C compiler)
        }
        float[][] out = new float[2][];
        Backend.Factory[] backends = {java(), t -> new CpuBackend(2, l.kernels(), false)};
        for (int i = 0; i < 2; i++) {
            int idx = i;
            withSession(file, backends[i], (s, vocab) -> out[idx] = new Embedder(s).embed(prompt(21, vocab, 5), Pooling.MEAN));
        }
        assertArrayEquals(out[0], out[1], 0f, file);
    }

    @Test
    void pooling_followsTheFile_meanWhenAbsent_rankRefused() throws Exception {
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile("stories260K.gguf"))) {
            assertEquals(Pooling.MEAN, Pooling.of(f)); // the bundled model declares none
        }
        assertEquals(Pooling.CLS, Pooling.ofGguf(2));
        assertEquals(Pooling.LAST, Pooling.ofGguf(3));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Pooling.ofGguf(4)).getMessage().contains("rank"));
        assertThrows(IllegalArgumentException.class, () -> new ml.juno.engine.embedding.EmbeddingPool(Pooling.NONE, 3, 8));
    }

    @Test
    void hiddenStatesOfANonLastPipelineShard_areRefused() throws Exception {
        Path path = ReferenceCase.modelFile("stories260K.gguf");
        try (GgufFile f = GgufFile.open(path);
             Model m = Model.load(f, OPTIONS, new ShardSpec(0, 2, 0, 1), java());
             InferenceSession s = m.newSession()) {
            StepBatch.Builder b = new StepBatch.Builder(16);
            b.addHiddenPrompt(0, 0, new int[] {1, 2}, 0, 2);
            assertThrows(IllegalStateException.class, () -> s.forward(b.build()));
        }
    }
}
