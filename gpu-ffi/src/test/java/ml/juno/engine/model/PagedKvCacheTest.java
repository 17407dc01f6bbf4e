package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvPaging;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A paged KV cache computes exactly what the flat one does: block tables in any physical order, blocks shared between
 * sequences (a common prefix computed once), F32 and F16 elements.
 */
class PagedKvCacheTest {
    private static final int BLOCK = 4;
    /** 11 tokens: two full blocks of 4 and a partial third. */
    private static final int[] A = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298};
    /** Shares A's first 8 tokens (two full blocks), then differs. */
    private static final int[] B = {1, 403, 407, 261, 378, 432, 383, 286, 300, 301, 302, 303, 304};

    private static Model load(GgufFile f, KvType kv, int sequences) {
        return Model.load(f, new EngineOptions(2, 64, kv, 32, sequences), Backends::select);
    }

    /** Last-row logits of {@code prompt} then one decode token, alone in a flat session. */
    private static float[][] flatAlone(GgufFile f, KvType kv, int[] prompt) {
        try (Model m = load(f, kv, 1); InferenceSession s = m.newSession()) {
            StepBatch.Builder b = new StepBatch.Builder(32);
            b.addPrompt(0, 0, prompt, 0, prompt.length, true);
            float[] prefill = s.forward(b.build()).copyRow(0);
            b.clear();
            b.add(0, prompt.length, 42, true);
            return new float[][] {prefill, s.forward(b.build()).copyRow(0)};
        }
    }

    @ParameterizedTest
    @CsvSource({"stories260K.gguf, F32", "stories260K.gguf, F16", "tiny-llama-random-Q8_0.gguf, F32", "tiny-llama-random-Q8_0.gguf, F16"})
    void scatteredBlocks_giveBitIdenticalLogitsToTheFlatCache(String file, KvType kv) throws Exception {
        Path model = ReferenceCase.modelFile(file);
        try (GgufFile f = GgufFile.open(model)) {
            float[][] refA = flatAlone(f, kv, A);
            float[][] refB = flatAlone(f, kv, B);
            try (Model m = load(f, kv, 2); InferenceSession s = m.newPagedSession(new KvPaging(BLOCK, 12))) {
                assertTrue(s.isPaged());
                // physical blocks out of order and interleaved between the two sequences
                s.setBlockTable(0, new int[] {9, 2, 6}, 3);
                s.setBlockTable(1, new int[] {0, 11, 3, 7}, 4);
                StepBatch.Builder b = new StepBatch.Builder(32);
                b.addPrompt(1, 0, B, 0, B.length, true);
                b.addPrompt(0, 0, A, 0, A.length, true);
                Logits l = s.forward(b.build());
                assertArrayEquals(refB[0], l.copyRow(0), file + " " + kv + ": B's prefill");
                assertArrayEquals(refA[0], l.copyRow(1), file + " " + kv + ": A's prefill");
                s.setBlockTable(1, new int[] {0, 11, 3, 7, 5}, 5); // B's next token starts a new block
                b.clear();
                b.add(0, A.length, 42, true);
                b.add(1, B.length, 42, true);
                l = s.forward(b.build());
                assertArrayEquals(refA[1], l.copyRow(0), file + " " + kv + ": A's decode");
                assertArrayEquals(refB[1], l.copyRow(1), file + " " + kv + ": B's decode");
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"stories260K.gguf, F32", "tiny-llama-random-Q8_0.gguf, F16"})
    void sharedPrefixBlocks_areReadNotRecomputed_andGiveTheSameLogits(String file, KvType kv) throws Exception {
        Path model = ReferenceCase.modelFile(file);
        try (GgufFile f = GgufFile.open(model)) {
            float[][] refB = flatAlone(f, kv, B);
            try (Model m = load(f, kv, 2); InferenceSession s = m.newPagedSession(new KvPaging(BLOCK, 8))) {
                StepBatch.Builder b = new StepBatch.Builder(32);
                s.setBlockTable(0, new int[] {4, 1, 6}, 3);
                b.addPrompt(0, 0, A, 0, A.length, true);
                s.forward(b.build());
                // B reuses A's two full blocks (4, 1) and computes only tokens 8.. into its own blocks
                s.setBlockTable(1, new int[] {4, 1, 3, 0}, 4);
                b.clear();
                b.addPrompt(1, 8, B, 8, B.length, true);
                float[] prefill = s.forward(b.build()).copyRow(0);
                assertArrayEquals(refB[0], prefill, file + " " + kv + ": B's prefill over the shared prefix");
                // A's own continuation is untouched by B's writes
                s.setBlockTable(1, new int[] {4, 1, 3, 0, 2}, 5);
                b.clear();
                b.add(1, B.length, 42, true);
                assertArrayEquals(refB[1], s.forward(b.build()).copyRow(0), file + " " + kv + ": B's decode");
            }
            float[][] refA = flatAlone(f, kv, A);
            try (Model m = load(f, kv, 2); InferenceSession s = m.newPagedSession(new KvPaging(BLOCK, 8))) {
                StepBatch.Builder b = new StepBatch.Builder(32);
                s.setBlockTable(0, new int[] {4, 1, 6}, 3);
                b.addPrompt(0, 0, A, 0, A.length, true);
                s.forward(b.build());
                s.setBlockTable(1, new int[] {4, 1, 3, 0}, 4);
                b.clear();
                b.addPrompt(1, 8, B, 8, B.length, true);
                s.forward(b.build());
                b.clear();
                b.add(0, A.length, 42, true);
                assertArrayEquals(refA[1], s.forward(b.build()).copyRow(0), file + " " + kv + ": A after B shared its blocks");
            }
        }
    }

    @Test
    void rowsOutsideTheirBlockTable_andBadBlockIds_areRejectedBeforeCompute() throws Exception {
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile("stories260K.gguf"));
             Model m = load(f, KvType.F32, 2);
             InferenceSession s = m.newPagedSession(new KvPaging(BLOCK, 4))) {
            StepBatch.Builder b = new StepBatch.Builder(32);
            b.add(0, 0, 1, true);
            var noTable = assertThrows(IllegalArgumentException.class, () -> s.forward(b.build()));
            assertTrue(noTable.getMessage().contains("not covered by its block table"), noTable.getMessage());
            s.setBlockTable(0, new int[] {3}, 1);
            b.clear();
            b.addPrompt(0, 0, A, 0, 5, true); // position 4 needs a second block
            assertThrows(IllegalArgumentException.class, () -> s.forward(b.build()));
            var badId = assertThrows(IllegalArgumentException.class, () -> s.setBlockTable(1, new int[] {0, 4}, 2));
            assertTrue(badId.getMessage().contains("outside the pool of 4 blocks"), badId.getMessage());
            assertThrows(IllegalArgumentException.class, () -> s.setBlockTable(2, new int[] {0}, 1));
            int[] tooMany = new int[17];
            Arrays.fill(tooMany, 1);
            assertThrows(IllegalArgumentException.class, () -> s.setBlockTable(0, tooMany, 17)); // 64 / 4 = 16 at most
        }
    }

    @Test
    void greedyGenerate_worksOnAPagedSession_likeOnAFlatOne() throws Exception {
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile("stories260K.gguf"))) {
            int[] flat;
            try (Model m = load(f, KvType.F32, 1); InferenceSession s = m.newSession()) {
                flat = s.generate(A, 12, 1).tokens();
            }
            try (Model m = load(f, KvType.F32, 1); InferenceSession s = m.newPagedSession(new KvPaging(BLOCK, 8))) {
                assertArrayEquals(flat, s.generate(A, 12, 1).tokens());
            }
        }
    }
}
