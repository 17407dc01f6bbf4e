package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.sampling.Greedy;
import ml.juno.coordinator.sampling.SamplerState;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.scheduler.KvPlacement;
import ml.juno.coordinator.scheduler.ScheduledRow;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.coordinator.scheduler.TokenChunk;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvPaging;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Step plans on a real paged session: logits in plan order, sampled there, and every malformed plan a failure, never an
 * exception.
 */
class LocalExecutorTest {
    private static final int BS = 4;
    private static final int[] PROMPT = {1, 403, 407, 261, 378, 432};
    private static final SamplerState GREEDY = new SamplerState(SamplingParams.greedy(), 512);

    private GgufFile file;
    private Model model;
    private InferenceSession session;
    private LocalExecutor executor;

    @BeforeEach
    void open() throws Exception {
        file = GgufFile.open(InferenceEngineTest.model("stories260K.gguf"));
        model = Model.load(file, new EngineOptions(1, 32, KvType.F32, 16, 3), Backends::select);
        session = model.newPagedSession(new KvPaging(BS, 12));
        executor = new LocalExecutor(session, BS);
    }

    @AfterEach
    void close() {
        session.close();
        model.close();
        file.close();
    }

    static ScheduledRow row(long seq, int slot, int start, int[] tokens, boolean logits, int[] blocks) {
        return new ScheduledRow(seq, slot, new TokenChunk(start, tokens, logits), new KvPlacement(BS, blocks), GREEDY);
    }

    static StepPlan plan(long step, ScheduledRow... rows) {
        return new StepPlan(step, List.of(rows));
    }

    @Test
    void logitsComeBackInPlanOrder_forTheRowsThatAskOnly_andDecodeRowsAreCountedApart() {
        List<long[]> seen = new ArrayList<>();
        int[] vocab = new int[1];
        float[] seven = new float[512];
        executor.observeLogits((seq, logits, offset, v) -> {
            seen.add(new long[] {seq, offset});
            vocab[0] = v;
            if (seq == 7 || seq == 10) {
                System.arraycopy(logits, offset, seven, 0, v);
            }
        });
        StepResult r = executor.execute(plan(1,
                row(7, 0, 0, PROMPT, true, new int[] {3, 5}),
                row(8, 1, 0, new int[] {1, 403}, false, new int[] {0}),
                row(9, 2, 0, new int[] {1}, true, new int[] {1})));
        StepResult.Tokens t = assertInstanceOf(StepResult.Tokens.class, r);
        assertEquals(2, t.rows());
        assertEquals(512, vocab[0]);
        int seventh = t.tokenIds()[0];
        assertEquals(Greedy.argmax(seven, 0, 512), seventh, "greedy rows are sampled next to the logits");
        assertEquals(PROMPT.length + 3, executor.prefillTokens());
        assertEquals(0, executor.decodeTokens());
        assertEquals(2, seen.size());
        assertArrayEquals(new long[] {7, 0}, seen.get(0));
        assertArrayEquals(new long[] {9, 512}, seen.get(1));

        // the same prompt alone, in other blocks and another slot, gives the same logits
        float[] first = seven.clone();
        StepResult again = executor.execute(plan(2, row(10, 1, 0, PROMPT, true, new int[] {8, 9})));
        assertArrayEquals(first, seven);
        assertEquals(seventh, ((StepResult.Tokens) again).tokenIds()[0]);

        // sequence 7 decodes its next token; 9 continues too
        StepResult d = executor.execute(plan(3,
                row(7, 0, PROMPT.length, new int[] {300}, true, new int[] {3, 5}),
                row(9, 2, 1, new int[] {403}, true, new int[] {1})));
        assertEquals(2, ((StepResult.Tokens) d).rows());
        assertEquals(2, executor.decodeTokens());
        assertEquals(3, executor.steps());
    }

    @Test
    void malformedPlans_becomeFailures_andTheSessionStaysUsable() {
        int[] two = {0, 1};
        List<StepPlan> bad = List.of(
                plan(1, row(1, 0, 0, PROMPT, true, two), row(2, 0, 0, PROMPT, true, new int[] {2, 3})), // one slot twice
                plan(2, row(1, 5, 0, PROMPT, true, two)),                                             // no such slot
                plan(3, row(1, 0, 0, PROMPT, true, new int[] {0, 12})),                               // block outside the pool
                plan(4, row(1, 0, 0, new int[20], true, new int[] {0, 1, 2, 3, 4})),                  // 20 tokens > 16 per step
                plan(5, new ScheduledRow(1, 0, new TokenChunk(0, PROMPT, true),
                        new KvPlacement(8, new int[] {0}), GREEDY)),                                           // other block size
                plan(7, row(1, 0, 0, new int[] {1, 9999}, true, two)));                               // token outside the vocabulary
        for (StepPlan p : bad) {
            StepResult r = executor.execute(p);
            StepResult.Failure f = assertInstanceOf(StepResult.Failure.class, r, "plan " + p.stepId());
            assertTrue(f.message().startsWith("step " + p.stepId()), f.message());
        }
        assertEquals(0, executor.steps());
        assertInstanceOf(StepResult.Tokens.class, executor.execute(plan(8, row(1, 0, 0, PROMPT, true, two))));
    }

    @Test
    void aBlockTableThatDoesNotCoverTheChunk_isRefusedWhenTheRowIsMade() {
        assertThrows(IllegalArgumentException.class, () -> row(1, 0, 0, PROMPT, true, new int[] {0}));
    }

    @Test
    void aFlatSession_isRefused() {
        try (InferenceSession flat = model.newSession()) {
            assertThrows(IllegalArgumentException.class, () -> new LocalExecutor(flat, BS));
        }
    }
}
