package ml.juno.coordinator.engine;

import java.util.Arrays;
import ml.juno.coordinator.scheduler.KvPlacement;
import ml.juno.coordinator.scheduler.ScheduledRow;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.coordinator.scheduler.TokenChunk;
import ml.juno.engine.model.ForwardBatch;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Logits;

/**
 * Runs step plans on an in-process {@link InferenceSession} with a paged KV cache: every row's block table goes to
 * the session, then all rows (prefill chunks and decode rows) go through as one batched forward step, and the rows
 * that asked are sampled straight from the session's logits buffer ({@link SamplingStage}): the step answers tokens.
 *
 * <p>Anything wrong (a plan that does not fit the session, an engine exception) becomes a {@link StepResult.Failure};
 * nothing is thrown and nothing hangs. Used from the generation loop's thread only; the counters may be read from any
 * thread.
 */
public final class LocalExecutor implements ManagedExecutor {
    private final InferenceSession session;
    private final int blockSize;
    private final ForwardBatch batch;
    private final SamplingStage sampling;
    private final long[] slotSequence;   // [slots] sequence whose last row in this slot asked for logits
    private final int[] slotDecodeAt;    // [slots] position its decode row will have
    private final long[] slotStep;       // [slots] step that last used the slot (one row per slot per step)
    private volatile long prefillTokens;
    private volatile long decodeTokens;
    private volatile long steps;

    /**
     * @param session   a paged session whose pool has the block ids the scheduler hands out
     * @param blockSize the KV bookkeeping's block size, equal to the session's
     */
    public LocalExecutor(InferenceSession session, int blockSize) {
        if (!session.isPaged()) {
            throw new IllegalArgumentException("LocalExecutor needs a session with a paged KV cache");
        }
        this.session = session;
        this.blockSize = blockSize;
        this.batch = new ForwardBatch(session.maxBatch());
        this.sampling = new SamplingStage(session.model().config().dims().vocab());
        this.slotSequence = new long[session.slots()];
        this.slotDecodeAt = new int[session.slots()];
        this.slotStep = new long[session.slots()];
        Arrays.fill(slotStep, -1);
    }

    /** The session's backend: native or java kernels, and their instruction set. */
    @Override
    public BackendInfo backend() {
        return BackendInfo.of(session.backend());
    }

    /** Raw logits of each token-producing row go to {@code o} too ({@code null}: none; the default). */
    @Override
    public void observeLogits(LogitsObserver o) {
        sampling.observeLogits(o);
    }

    /** Tokens computed as prefill (anything but a sequence's next-token row). */
    @Override
    public long prefillTokens() {
        return prefillTokens;
    }

    /** Decode rows computed (one token each). */
    public long decodeTokens() {
        return decodeTokens;
    }

    /** Forward steps that succeeded. */
    @Override
    public long steps() {
        return steps;
    }

    /** Nothing to free: the session belongs to whoever made it. */
    @Override
    public void close() {
    }

    @Override
    public StepResult execute(StepPlan plan) {
        try {
            return run(plan);
        } catch (RuntimeException | Error e) { // an engine failure fails the step, never the loop thread
            return new StepResult.Failure("step " + plan.stepId() + " failed: " + e);
        }
    }

    private StepResult run(StepPlan plan) {
        int tokens = plan.totalTokens();
        if (tokens > batch.capacity()) {
            return new StepResult.Failure("step " + plan.stepId() + " has " + tokens + " tokens; the engine takes "
                    + batch.capacity() + " per step");
        }
        batch.clear();
        int logitRows = 0;
        long prefill = 0;
        long decode = 0;
        for (ScheduledRow row : plan.rows()) {
            String bad = check(row, plan.stepId());
            if (bad != null) {
                return new StepResult.Failure("step " + plan.stepId() + ", sequence " + row.sequenceId() + ": " + bad);
            }
            int slot = row.slot();
            KvPlacement kv = row.kv();
            session.setBlockTable(slot, kv.blockTable(), kv.blockTable().length);
            TokenChunk chunk = row.chunk();
            int[] ids = chunk.tokenIds();
            int last = ids.length - 1;
            for (int i = 0; i <= last; i++) {
                batch.add(slot, chunk.position(i), ids[i], chunk.needsLogits() && i == last);
            }
            boolean isDecode = ids.length == 1 && slotSequence[slot] == row.sequenceId()
                    && slotDecodeAt[slot] == chunk.startPosition();
            if (isDecode) {
                decode++;
            } else {
                prefill += ids.length;
            }
            if (chunk.needsLogits()) {
                logitRows++;
                slotSequence[slot] = row.sequenceId();
                slotDecodeAt[slot] = chunk.startPosition() + ids.length;
            } else {
                slotSequence[slot] = 0;
            }
        }
        Logits logits = session.forward(batch);
        if (logits == null || logits.count() != logitRows) {
            return new StepResult.Failure("step " + plan.stepId() + ": engine returned "
                    + (logits == null ? "no logits" : logits.count() + " logit rows") + " for " + logitRows + " requested");
        }
        prefillTokens += prefill;
        decodeTokens += decode;
        steps++;
        return sampling.sample(plan, logits.data(), logitRows);
    }

    /** Why a row cannot run as planned, or null. Checks the slot and the block size. */
    private String check(ScheduledRow row, long step) {
        int slot = row.slot();
        if (slot < 0 || slot >= slotStep.length) {
            return "slot " + slot + " is outside 0.." + (slotStep.length - 1);
        }
        if (slotStep[slot] == step) {
            return "slot " + slot + " has two rows in one step";
        }
        slotStep[slot] = step;
        if (row.kv().blockSize() != blockSize) {
            return "block size " + row.kv().blockSize() + ", the engine's is " + blockSize;
        }
        return null;
    }
}
