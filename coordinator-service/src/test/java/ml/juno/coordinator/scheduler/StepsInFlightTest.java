package ml.juno.coordinator.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import org.junit.jupiter.api.Test;

/**
 * The scheduler with several steps in flight (planned, their updates not applied yet), as a pipelined generation loop
 * drives it: a step holds its sequences until its update, so the next step is planned from the others; the
 * {@link FakeEngine} checks, step by step in the order they are begun, that every row reads the KV its sequence wrote
 * (so no block is freed or handed on while a step in flight still uses it), and the tokens equal the one-step-at-a-time
 * run's, under KV pressure (preemptions) and cancels.
 */
class StepsInFlightTest {
    private static final int V = 32;

    @Test
    void aStepHoldsItsSequencesUntilItsUpdate() {
        Harness h = new Harness(V, 32, 8, 64, new KvCacheConfig(4, 64));
        for (int i = 0; i < 4; i++) {
            h.submit(Harness.prompt(i + 1, 5, V), SamplingParams.greedy(), StopCondition.of(20), 0);
        }
        h.step(); // the prompts
        StepPlan a = h.scheduler.schedule(2);
        StepPlan b = h.scheduler.schedule(2);
        assertEquals(2, a.rows().size());
        assertEquals(2, b.rows().size());
        Set<Long> inA = ids(a);
        for (long id : ids(b)) {
            assertFalse(inA.contains(id), "a sequence in two steps at once: " + id);
        }
        assertFalse(h.scheduler.hasIdleWork(), "every running sequence is in a step in flight");
        assertTrue(h.scheduler.schedule(2).isEmpty());
        assertEquals(0, h.scheduler.preemptions(), "an empty step with steps in flight preempts nobody");
        assertEquals(4, h.scheduler.runningCount());

        long gone = a.rows().get(0).sequenceId();
        int used = h.kv.stats().blocks().used();
        assertTrue(h.scheduler.cancel(gone));
        assertTrue(h.scheduler.schedule(2).isEmpty());
        assertEquals(used, h.kv.stats().blocks().used(), "a cancelled sequence keeps its blocks while its step is in flight");
        StepOutcome oa = h.scheduler.update(a, h.execute(a));
        h.engine.observe(oa);
        assertEquals(1, oa.tokens().size(), "the cancelled row's token is dropped");
        StepPlan a2 = h.scheduler.schedule(2); // releases the cancelled one: its step has landed
        Set<Long> rest = new HashSet<>(inA);
        rest.remove(gone);
        assertEquals(rest, ids(a2), "only the sequences of the step that landed are free to run");
        assertTrue(h.kv.stats().blocks().used() < used, "its blocks are released once its step landed");

        StepOutcome ob = h.scheduler.update(b, new StepResult.Failure("stage 1 lost step " + b.stepId()));
        Map<Long, FinishReason> ends = new HashMap<>();
        ob.finished().forEach(f -> ends.put(f.sequenceId(), f.reason()));
        Map<Long, FinishReason> want = new HashMap<>();
        want.put(gone, FinishReason.CANCELLED);
        ids(b).forEach(id -> want.put(id, FinishReason.ERROR));
        assertEquals(want, ends, "the failed step fails its own sequences, no other step's");
        StepOutcome oa2 = h.scheduler.update(a2, h.execute(a2));
        assertEquals(1, oa2.tokens().size(), "the other step's sequence runs on");
        assertEquals(1, h.scheduler.runningCount());
    }

    private static Set<Long> ids(StepPlan p) {
        Set<Long> s = new HashSet<>();
        p.rows().forEach(r -> s.add(r.sequenceId()));
        return s;
    }

    /** What a run gave: tokens and finishes by submission, preemptions, most steps in flight. */
    record Run(List<List<Integer>> tokens, List<FinishReason> reasons, long preemptions, int most) {}

    static final int REQUESTS = 12;

    /** The requests through a loop of {@code depth} steps in flight; {@code cancel}: cancels requests 2, 5 and 9 mid-way. */
    static Run run(int depth, boolean cancel) {
        Harness h = new Harness(V, 16, 8, 64, new KvCacheConfig(4, 24)); // 96 tokens of KV for up to 8 x 29: preemptions
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            SamplingParams p = i % 3 == 0 ? SamplingParams.greedy() : SamplingParams.defaults(31 + i);
            ids.add(h.submit(Harness.prompt(i + 3, 5 + i % 5, V), p, StopCondition.of(10 + 2 * (i % 6)), 0));
        }
        Map<Long, Integer> cancelAt = new HashMap<>();
        if (cancel) {
            cancelAt.put(ids.get(2), 3);
            cancelAt.put(ids.get(5), 6);
            cancelAt.put(ids.get(9), 4);
        }
        record Flight(StepPlan plan, float[] logits) {}
        ArrayDeque<Flight> flight = new ArrayDeque<>();
        int most = 0;
        for (int steps = 0; h.scheduler.hasWork() || !flight.isEmpty(); steps++) {
            assertTrue(steps < 5000, "runaway");
            while (flight.size() < depth && h.scheduler.hasIdleWork()) {
                int share = Math.max(1, (h.scheduler.runningCount() + depth - 1) / depth);
                StepPlan p = h.scheduler.schedule(share);
                if (p.isEmpty()) {
                    record(h, h.scheduler.update(p, StepResult.empty()));
                    break;
                }
                for (Flight f : flight) {
                    for (long id : ids(p)) {
                        assertFalse(ids(f.plan()).contains(id), "sequence " + id + " in two steps at once");
                    }
                }
                flight.addLast(new Flight(p, h.engine.execute(p))); // the KV is written in the order steps begin
                most = Math.max(most, flight.size());
            }
            Flight f = flight.pollFirst();
            if (f != null) {
                StepOutcome out = h.scheduler.update(f.plan(), h.sampling.sample(f.plan(), f.logits(), f.plan().logitRowCount()));
                record(h, out);
            }
            for (var e : cancelAt.entrySet()) {
                List<Integer> got = h.tokens.get(e.getKey());
                if (got.size() >= e.getValue() && !h.finished.containsKey(e.getKey())) {
                    h.scheduler.cancel(e.getKey());
                }
            }
            var u = h.kv.stats().blocks();
            assertEquals(24, u.used() + u.cached() + u.free(), "blocks balance at step " + steps);
        }
        assertEquals(0, h.kv.stats().blocks().used());
        List<List<Integer>> tokens = new ArrayList<>();
        List<FinishReason> reasons = new ArrayList<>();
        for (long id : ids) {
            tokens.add(List.copyOf(h.tokens.get(id)));
            reasons.add(h.finished.get(id).reason());
        }
        return new Run(tokens, reasons, h.scheduler.preemptions(), most);
    }

    private static void record(Harness h, StepOutcome out) {
        h.engine.observe(out);
        out.tokens().forEach(t -> h.tokens.get(t.sequenceId()).add(t.tokenId()));
        for (FinishedSequence f : out.finished()) {
            if (h.finished.put(f.sequenceId(), f) != null) {
                throw new AssertionError("finished twice: " + f);
            }
            if (f.reason() == FinishReason.STOP) {
                // never here: no stop tokens
                throw new AssertionError(f.toString());
            }
        }
    }

    @Test
    void twoAndThreeStepsInFlight_underKvPressure_giveTheSerialTokens() {
        Run serial = run(1, false);
        assertTrue(serial.preemptions() > 0, "the pool is small enough to preempt: " + serial.preemptions());
        for (int depth : new int[] {2, 3}) {
            Run r = run(depth, false);
            assertEquals(depth, r.most(), "steps in flight at once");
            assertTrue(r.preemptions() > 0, "preempted with steps in flight too: " + r.preemptions());
            assertEquals(serial.tokens(), r.tokens(), depth + " steps in flight: every sequence's tokens");
            assertEquals(serial.reasons(), r.reasons());
        }
    }

    @Test
    void cancelsWithStepsInFlight_endTheirSequences_andLeaveTheOthersTokensAlone() {
        Run serial = run(1, false);
        Run r = run(2, true);
        for (int i = 0; i < REQUESTS; i++) {
            if (i == 2 || i == 5 || i == 9) {
                assertEquals(FinishReason.CANCELLED, r.reasons().get(i));
                List<Integer> got = r.tokens().get(i);
                assertEquals(serial.tokens().get(i).subList(0, got.size()), got, "a cancelled sequence's tokens so far");
            } else {
                assertEquals(serial.tokens().get(i), r.tokens().get(i), "request " + i);
                assertEquals(FinishReason.LENGTH, r.reasons().get(i));
            }
        }
    }
}
