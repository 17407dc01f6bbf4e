package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A prompt's logits do not depend on how many rows of other sequences share its batch, including batch sizes where
 * {@code rows × ffn} is or is not a multiple of the vector length (stories260K has ffn 172).
 */
class BatchSizeInvarianceTest {
    private static final int[] OTHER = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 305};
    private static final int[] PROMPT = {1, 403, 407, 261, 378, 432, 383, 286, 300, 301, 302, 303, 304};

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 8, 11})
    void promptLogits_areBitIdentical_whateverTheRowsBeforeIt(int otherRows) throws Exception {
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile("stories260K.gguf"));
             Model m = Model.load(f, new EngineOptions(1, 64, KvType.F32, 32, 2), Backends::select);
             InferenceSession s = m.newSession()) {
            StepBatch.Builder b = new StepBatch.Builder(32);
            b.addPrompt(0, 0, PROMPT, 0, PROMPT.length, true);
            float[] alone = s.forward(b.build()).copyRow(0);
            b.clear();
            b.addPrompt(1, 0, OTHER, 0, otherRows, false);
            b.addPrompt(0, 0, PROMPT, 0, PROMPT.length, true);
            if (otherRows > 0) {
                b.add(1, otherRows, OTHER[otherRows % OTHER.length], false); // and a row after it
            }
            assertArrayEquals(alone, s.forward(b.build()).copyRow(0), "after " + otherRows + " rows of another sequence");
        }
    }
}
