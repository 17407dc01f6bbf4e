package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.nio.file.Path;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A row's logits never depend on what else shares its batch, nor on the number of compute threads. */
class BatchInvarianceTest {
    private static final int[] PROMPT = {1, 403, 407, 261, 378};
    private static final int[] OTHER = {1, 450, 260, 299, 311, 402, 275};

    private static float[] alone(Path model, int threads) throws Exception {
        try (GgufFile f = GgufFile.open(model);
             Model m = Model.load(f, new EngineOptions(threads, 64, KvType.F32, 32, 1), Backends::select);
             InferenceSession s = m.newSession()) {
            StepBatch.Builder b = new StepBatch.Builder(32);
            b.addPrompt(0, 0, PROMPT, 0, PROMPT.length, true);
            s.forward(b.build());
            b.clear();
            b.add(0, PROMPT.length, 42, true);
            return s.forward(b.build()).copyRow(0);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"stories260K.gguf", "stories260K-Q4_0.gguf", "tiny-llama-random-Q4_K_M.gguf", "tiny-llama-random-F16.gguf",
            "tiny-qwen3moe-random-Q8_0.gguf", "tiny-qwen3moe-random-F16.gguf", "tiny-gemma3-random-Q4_K_M.gguf",
            "tiny-gemma3-random-F16.gguf", "tiny-qwen2-random-Q8_0.gguf", "tiny-phi3-random-F16.gguf"})
    void logits_areBitIdentical_aloneOrBatchedWithOtherSequences(String file) throws Exception {
        Path model = ReferenceCase.modelFile(file);
        float[] ref = alone(model, 2);
        try (GgufFile f = GgufFile.open(model);
             Model m = Model.load(f, new EngineOptions(2, 64, KvType.F32, 32, 3), Backends::select);
             InferenceSession s = m.newSession()) {
            StepBatch.Builder b = new StepBatch.Builder(32);
            // step 1: the other sequence's prompt, then ours, then a third sequence's first token, all in one batch
            b.addPrompt(1, 0, OTHER, 0, OTHER.length, true);
            b.addPrompt(0, 0, PROMPT, 0, PROMPT.length, true);
            b.add(2, 0, 1, true);
            s.forward(b.build());
            // step 2: next tokens of all three, ours in the middle
            b.clear();
            b.add(1, OTHER.length, 17, true);
            int ours = b.add(0, PROMPT.length, 42, true);
            b.add(2, 1, 99, true);
            Logits l = s.forward(b.build());
            assertArrayEquals(ref, l.copyRow(ours), file + ": batched decode row differs from the same row alone");
        }
        assertArrayEquals(ref, alone(model, 1), file + ": 1 thread differs from 2 threads");
    }
}
