package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.kvcache.KvCacheManager;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.Scheduler;
import ml.juno.coordinator.scheduler.SchedulerConfig;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
import org.junit.jupiter.api.Test;

/**
 * What a request's output hands its listener when it asked for log-probabilities: with a stop string, exactly the
 * tokens that show in the text (one the stop string cuts through included, the ones wholly inside it not), their texts
 * adding up to the content; and the prompt's scores (echo) before anything else. Tokens are two letters each here
 * ("dd", "ee", "ff" …), so a stop string can start inside one.
 */
class StopLogprobsTest {
    private static final int V = 26;

    /** TEST DOUBLE for a model: predicts "previous token + 1", for sampling rows and scored prompt rows alike. */
    static final class Successor implements Executor {
        final SamplingStage sampling = new SamplingStage(V);

        @Override
        public StepResult execute(StepPlan plan) {
            float[] out = new float[plan.logitRowCount() * V];
            int r = 0;
            for (var row : plan.rows()) {
                int[] ids = row.chunk().tokenIds();
                for (int i = 0; i < row.chunk().scored().length; i++, r++) {
                    out[r * V + (ids[i] + 1) % V] = 5f;
                }
                if (row.needsLogits()) {
                    out[r * V + (ids[ids.length - 1] + 1) % V] = 5f;
                    r++;
                }
            }
            return sampling.sample(plan, out, plan.logitRowCount());
        }
    }

    /** Token i is its letter twice. */
    static final class DoubleLetters implements PieceDecoder {
        @Override
        public String decode(int tokenId) {
            String c = String.valueOf((char) ('a' + tokenId));
            return c + c;
        }

        @Override
        public String flush() {
            return "";
        }
    }

    static final class Sink implements GenerationListener {
        final List<Integer> tokens = new ArrayList<>();
        final List<String> texts = new ArrayList<>();
        final StringBuilder text = new StringBuilder();
        final List<TokenLogprobs> logprobs = new ArrayList<>();
        volatile List<TokenLogprobs> prompt;
        volatile boolean promptFirst = true;
        volatile FinishReason reason;
        final CountDownLatch done = new CountDownLatch(1);

        @Override
        public void onPromptLogprobs(int choice, List<TokenLogprobs> lp) {
            promptFirst = tokens.isEmpty() && text.isEmpty();
            prompt = lp;
        }

        @Override
        public void onToken(int choice, int tokenId, String piece, TokenLogprobs lp) {
            tokens.add(tokenId);
            texts.add(piece);
            text.append(piece);
            logprobs.add(lp);
        }

        @Override
        public void onText(int choice, String piece) {
            text.append(piece);
        }

        @Override
        public void onChoiceFinished(int choice, FinishReason r, Usage usage, String message) {
            reason = r;
            done.countDown();
        }

        Sink finished() throws InterruptedException {
            assertTrue(done.await(10, TimeUnit.SECONDS), "timed out");
            return this;
        }
    }

    private final GenerationLoop loop = new GenerationLoop(new Scheduler(new SchedulerConfig(32, 8, 16, 256, Duration.ofSeconds(1)),
            new KvCacheManager(new KvCacheConfig(4, 64)), V), new Successor());

    private Sink run(GenerationRequest request) throws InterruptedException {
        Sink sink = new Sink();
        RequestOutput out = new RequestOutput(loop, DoubleLetters::new, sink, RequestMetrics.NONE, () -> false);
        assertInstanceOf(SubmitResult.Accepted.class, out.submit(List.of(request)));
        for (int i = 0; i < 200 && loop.runOnce(); i++) {
            // step
        }
        return sink.finished();
    }

    private Sink withStop(String stop) throws InterruptedException {
        return run(new GenerationRequest(new int[] {0, 1, 2}, SamplingParams.greedy(), new StopCondition(8, 0, new int[0], List.of(stop)), 0, 0));
    }

    private static void assertConsistent(Sink s) {
        assertTrue(s.text.toString().startsWith(String.join("", s.texts)), "the texts handed with the tokens are the content's start");
        for (int i = 0; i < s.tokens.size(); i++) {
            assertEquals(s.tokens.get(i), s.logprobs.get(i).tokenId(), "each token with its own logprobs");
        }
    }

    @Test
    void stopAtATokenBoundary_reportsOnlyTheTokensBeforeIt() throws InterruptedException {
        Sink s = withStop("ee"); // dd | ee …
        assertEquals("dd", s.text.toString());
        assertEquals(List.of(3), s.tokens);
        assertEquals(FinishReason.STOP, s.reason);
        assertConsistent(s);
    }

    @Test
    void stopStartingInsideAToken_reportsThatTokenButNotTheOnesInsideTheStop() throws InterruptedException {
        Sink s = withStop("ef"); // dd e|e f|f: "ee" shows half, "ff" only inside or after the stop string
        assertEquals("dde", s.text.toString());
        assertEquals(List.of(3, 4), s.tokens);
        assertEquals(List.of("dd", "e"), s.texts);
        assertConsistent(s);
    }

    @Test
    void stopSpanningWholeTokens_dropsAllOfThem() throws InterruptedException {
        Sink s = withStop("eeffg"); // dd | ee ff g|g
        assertEquals("dd", s.text.toString());
        assertEquals(List.of(3), s.tokens);
        assertConsistent(s);
    }

    @Test
    void heldBackTextThatIsNoStop_reportsEveryTokenOnce_textAddingUp() throws InterruptedException {
        Sink s = withStop("ex"); // "e" is held back after "ee", then released with "ff"
        assertEquals("ddeeffgghhiijjkk", s.text.toString());
        assertEquals(List.of(3, 4, 5, 6, 7, 8, 9, 10), s.tokens);
        assertEquals(FinishReason.LENGTH, s.reason);
        assertEquals(s.text.toString(), String.join("", s.texts), "no text outside a token");
        assertConsistent(s);
    }

    @Test
    void promptLogprobs_comeFirst_oneEntryPerPromptToken_theFirstNaN() throws InterruptedException {
        int[] prompt = {0, 1, 2, 3, 4};
        Sink s = run(new GenerationRequest(prompt, SamplingParams.greedy(), StopCondition.of(3), 0, 1, 0, true));
        assertTrue(s.promptFirst, "before the first token");
        assertEquals(prompt.length, s.prompt.size());
        assertTrue(Float.isNaN(s.prompt.getFirst().logprob()));
        for (int i = 0; i < prompt.length; i++) {
            assertEquals(prompt[i], s.prompt.get(i).tokenId());
        }
        double predicted = 5 - Math.log(Math.exp(5) + (V - 1)); // the successor model's favourite, as each prompt token is
        for (int i = 1; i < prompt.length; i++) {
            assertEquals(predicted, s.prompt.get(i).logprob(), 1e-5, "token " + i);
            assertEquals(1, s.prompt.get(i).topIds().length);
        }
        assertEquals(List.of(5, 6, 7), s.tokens);
    }
}
