package ml.juno.coordinator.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import org.junit.jupiter.api.Test;

/**
 * Scoring a prompt (echo with logprobs) through the scheduler and the {@link FakeEngine}: every prompt token from the
 * second on is scored exactly once, in order, with the log-softmax of the logits after the token before it, across
 * chunked prefill, a warm prefix cache and preemption, and before the sequence's first token.
 */
class PromptScoringTest {
    static final int V = 32;

    static GenerationRequest scoring(int[] prompt, int maxTokens) {
        return new GenerationRequest(prompt, SamplingParams.greedy(), StopCondition.of(maxTokens), 0, 2, 0, true);
    }

    /** What the fake model gives prompt token {@code p}: log-softmax of its logits after token {@code p - 1}. */
    static double expected(int[] prompt, int p, boolean peaked) {
        double max = Double.NEGATIVE_INFINITY;
        for (int v = 0; v < V; v++) {
            max = Math.max(max, FakeEngine.logit(prompt[p - 1], p, v, peaked));
        }
        double sum = 0;
        for (int v = 0; v < V; v++) {
            sum += Math.exp(FakeEngine.logit(prompt[p - 1], p, v, peaked) - max);
        }
        return FakeEngine.logit(prompt[p - 1], p, prompt[p], peaked) - max - Math.log(sum);
    }

    static List<TokenLogprobs> scoresOf(Harness h, long id, int[] prompt) {
        List<TokenLogprobs> all = new ArrayList<>();
        int next = 1;
        for (PromptScores s : h.scores.getOrDefault(id, List.of())) {
            assertEquals(next, s.firstToken(), "scores arrive in order, each token once");
            all.addAll(s.logprobs());
            next += s.logprobs().size();
        }
        assertEquals(prompt.length - 1, all.size(), "every prompt token but the first is scored");
        for (int i = 0; i < all.size(); i++) {
            TokenLogprobs t = all.get(i);
            assertEquals(prompt[i + 1], t.tokenId(), "entry " + i + " scores prompt token " + (i + 1));
            assertEquals(expected(prompt, i + 1, h.engine.peaked), t.logprob(), 1e-4, "prompt token " + (i + 1));
            assertEquals(2, t.topIds().length, "the asked alternatives");
        }
        return all;
    }

    @Test
    void longPrompt_isScoredAcrossChunks_beforeTheFirstToken() {
        Harness h = new Harness(V, 16, 4, 64, new KvCacheConfig(4, 64));
        int[] prompt = Harness.prompt(3, 41, V);
        long id = h.submit(scoring(prompt, 5));
        h.runToEnd(50);
        scoresOf(h, id, prompt);
        assertTrue(h.scores.get(id).size() >= 3, "41 tokens in steps of 16 are three chunks");
        assertEquals(5, h.tokens.get(id).size());
    }

    @Test
    void warmPrefixCache_isNotUsedForTheTokensStillToScore_andTheOutputIsTheSame() {
        Harness h = new Harness(V, 64, 4, 64, new KvCacheConfig(4, 64));
        int[] prompt = Harness.prompt(9, 30, V);
        long plain = h.submit(GenerationRequest.of(prompt, SamplingParams.greedy(), StopCondition.of(6)));
        h.runToEnd(20);
        long scored = h.submit(scoring(prompt, 6));
        h.runToEnd(20);
        scoresOf(h, scored, prompt);
        assertEquals(0, h.finished.get(scored).usage().cachedTokens(), "the scored prompt was computed, not taken from the cache");
        assertEquals(h.tokens.get(plain), h.tokens.get(scored), "scoring changes nothing in the answer");
        long again = h.submit(GenerationRequest.of(prompt, SamplingParams.greedy(), StopCondition.of(6)));
        h.runToEnd(20);
        assertTrue(h.finished.get(again).usage().cachedTokens() > 0, "a request that does not score still uses the cache");
        assertEquals(h.tokens.get(plain), h.tokens.get(again));
    }

    @Test
    void underKvPressure_preemptedSequencesScoreEachPromptTokenOnce() {
        Harness tight = new Harness(V, 32, 4, 64, new KvCacheConfig(4, 14));
        Harness roomy = new Harness(V, 32, 4, 64, new KvCacheConfig(4, 256));
        long[] ids = new long[4];
        long[] ref = new long[4];
        int[][] prompts = new int[4][];
        for (int i = 0; i < 4; i++) {
            prompts[i] = Harness.prompt(20 + i, 9, V);
            ids[i] = tight.submit(scoring(prompts[i], 12));
            ref[i] = roomy.submit(GenerationRequest.of(prompts[i], SamplingParams.greedy(), StopCondition.of(12)));
        }
        tight.runToEnd(500);
        roomy.runToEnd(500);
        assertTrue(tight.scheduler.preemptions() > 0, "the tight pool had to preempt");
        for (int i = 0; i < 4; i++) {
            scoresOf(tight, ids[i], prompts[i]);
            assertEquals(roomy.tokens.get(ref[i]), tight.tokens.get(ids[i]), "sequence " + i);
        }
        assertEquals(0, tight.kv.stats().blocks().used());
    }

    @Test
    void oneTokenPrompt_hasNothingToScore() {
        Harness h = Harness.small();
        int[] prompt = {5};
        long id = h.submit(scoring(prompt, 3));
        h.runToEnd(10);
        assertTrue(h.scores.getOrDefault(id, List.of()).isEmpty());
        assertEquals(3, h.tokens.get(id).size());
    }
}
