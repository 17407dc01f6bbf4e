package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.GgufWriter;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * phi3 LongRoPE: with both factor sets in the file, a context per sequence beyond
 * {@code rope.scaling.original_context_length} runs on {@code rope_factors_long}, a context within it on
 * {@code rope_factors_short} (llama.cpp's rule). Checked on the tiny random phi3 with factor tensors added: the same
 * file gives different logits at the two context sizes, and each equals the other context size of a copy whose short
 * and long factors are swapped.
 */
class Phi3LongRopeTest {
    private static final int ORIGINAL = 64;
    @TempDir
    Path tmp;

    private static Path source() {
        return ReferenceCase.modelFile("tiny-phi3-random-F16.gguf");
    }

    private static float[] factors(int n, float step) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = 1f + step * i;
        }
        return f;
    }

    /** A copy of the tiny phi3 with the given factor tensors and an original context of {@link #ORIGINAL}. */
    private Path withFactors(String name, float[] shortFactors, float[] longFactors) throws Exception {
        Path out = tmp.resolve(name + ".gguf");
        try (GgufFile f = GgufFile.open(source())) {
            GgufWriter w = new GgufWriter().putAll(f.metadata()).putUInt32("phi3.rope.scaling.original_context_length", ORIGINAL);
            for (GgufTensorInfo t : f.tensors()) {
                w.addTensor(f, t);
            }
            w.addTensor("rope_factors_short.weight", GgmlType.F32, new long[] {shortFactors.length}, MemorySegment.ofArray(shortFactors));
            w.addTensor("rope_factors_long.weight", GgmlType.F32, new long[] {longFactors.length}, MemorySegment.ofArray(longFactors));
            w.write(out);
        }
        return out;
    }

    /** The logits after a 12-token prompt, with a KV cache of {@code context} positions per sequence. */
    private static float[] lastLogits(Path file, int context) throws Exception {
        int[] prompt = {1, 403, 407, 261, 378, 426, 287, 306, 290, 414, 353, 272};
        try (GgufFile f = GgufFile.open(file); Model m = Model.load(f, new EngineOptions(1, context, KvType.F32, 16, 1), Backends::select);
             InferenceSession s = m.newSession()) {
            StepBatch.Builder b = new StepBatch.Builder(16);
            b.addPrompt(0, 0, prompt, 0, prompt.length, true);
            return s.forward(b.build()).copyRow(0);
        }
    }

    @Test
    void contextBeyondTheOriginal_usesTheLongFactors() throws Exception {
        int half = 32; // head_dim 64: one factor per rotated pair
        float[] shortF = factors(half, 0f);
        float[] longF = factors(half, 0.5f);
        Path file = withFactors("phi3-longrope", shortF, longF);
        Path swapped = withFactors("phi3-longrope-swapped", longF, shortF);

        float[] within = lastLogits(file, ORIGINAL);
        float[] beyond = lastLogits(file, 2 * ORIGINAL);
        float maxDiff = 0;
        for (int i = 0; i < within.length; i++) {
            maxDiff = Math.max(maxDiff, Math.abs(within[i] - beyond[i]));
        }
        assertTrue(maxDiff > 1e-3f, "the long factors (up to 16.5) move the logits: " + maxDiff);
        assertArrayEquals(beyond, lastLogits(swapped, ORIGINAL), "beyond the original context: the long factors");
        assertArrayEquals(within, lastLogits(swapped, 2 * ORIGINAL), "within the original context: the short factors");
    }
}
