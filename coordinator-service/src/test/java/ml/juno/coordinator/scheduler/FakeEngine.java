package ml.juno.coordinator.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * TEST DOUBLE standing in for a model: a Markov chain whose logits depend only on (previous token,
 * position), so outputs do not depend on batching. It also plays the KV memory: it writes each token
 * into its slot and, before every row, checks that all earlier positions of the sequence (including
 * prefix-cache hits) hold that sequence's true tokens, that no two
 * rows write one slot and that the budget holds.
 */
final class FakeEngine {
    final int vocab;
    final int budget;
    private final int[] slotToken;  // [numBlocks * blockSize] token written in each KV slot, -1 = never
    private final Map<Long, int[]> known = new HashMap<>(); // seq → prompt + generated so far
    private final Map<Long, Integer> knownLength = new HashMap<>();
    boolean peaked = true; // one clear favourite per row (greedy-friendly) or a flat-ish spread

    FakeEngine(int vocab, int budget, int numBlocks, int blockSize) {
        this.vocab = vocab;
        this.budget = budget;
        this.slotToken = new int[numBlocks * blockSize];
        java.util.Arrays.fill(slotToken, -1);
    }

    /** Tells the fake what the sequence's tokens are (its prompt); generated tokens come from {@link #observe}. */
    void expect(long seqId, int[] prompt, int maxTokens) {
        int[] all = java.util.Arrays.copyOf(prompt, prompt.length + maxTokens);
        known.put(seqId, all);
        knownLength.put(seqId, prompt.length);
    }

    void observe(StepOutcome outcome) {
        for (SampledToken t : outcome.tokens()) {
            append(t.sequenceId(), t.tokenId());
        }
    }

    /** For end-of-generation tokens, which are not streamed but still occupy a position. */
    void append(long seqId, int token) {
        int n = knownLength.get(seqId);
        known.get(seqId)[n] = token;
        knownLength.put(seqId, n + 1);
    }

    static float logit(int prev, int pos, int v, boolean peaked) {
        long h = (prev * 0x9E3779B97F4A7C15L) ^ (pos * 0xC2B2AE3D27D4EB4FL) ^ (v * 0x165667B19E3779F9L);
        h ^= h >>> 29;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 32;
        float base = (h & 0xFFFF) / 65536f * 4f - 2f;
        return peaked && (h >>> 40) % 7 == 0 ? base + 6f : base;
    }

    /** The logits of the plan's rows that need them (scored prompt tokens first, then the sampling row), {@code [rows][vocab]}. */
    float[] execute(StepPlan plan) {
        assertTrue(plan.totalTokens() <= budget, "step of " + plan.totalTokens() + " tokens over budget " + budget);
        Set<Integer> written = new HashSet<>();
        Set<Long> seqs = new HashSet<>();
        int rows = plan.logitRowCount();
        float[] out = new float[rows * vocab];
        int r = 0;
        for (ScheduledRow row : plan.rows()) {
            assertTrue(seqs.add(row.sequenceId()), "one row per sequence");
            int[] truth = known.get(row.sequenceId());
            KvPlacement kv = row.kv();
            int bs = kv.blockSize();
            int start = row.chunk().startPosition();
            for (int p = 0; p < start; p++) {
                int slot = kv.blockTable()[p / bs] * bs + p % bs;
                assertEquals(truth[p], slotToken[slot], "seq " + row.sequenceId() + " KV at position " + p);
            }
            for (int i = 0; i < row.tokenCount(); i++) {
                int p = start + i;
                assertEquals(truth[p], row.chunk().tokenIds()[i], "token fed at position " + p);
                int slot = kv.blockTable()[p / bs] * bs + p % bs;
                assertTrue(written.add(slot), "slot " + slot + " written twice in one step");
                slotToken[slot] = truth[p];
            }
            int[] scored = row.chunk().scored();
            for (int i = 0; i < scored.length; i++) { // a scored prompt token: the logits after token i
                assertEquals(truth[start + i + 1], scored[i], "scored token after position " + (start + i));
                for (int v = 0; v < vocab; v++) {
                    out[r * vocab + v] = logit(row.chunk().tokenIds()[i], start + i + 1, v, peaked);
                }
                r++;
            }
            if (row.needsLogits()) {
                int last = row.chunk().tokenIds()[row.tokenCount() - 1];
                int pos = start + row.tokenCount();
                for (int v = 0; v < vocab; v++) {
                    out[r * vocab + v] = logit(last, pos, v, peaked);
                }
                r++;
            }
        }
        return out;
    }
}
