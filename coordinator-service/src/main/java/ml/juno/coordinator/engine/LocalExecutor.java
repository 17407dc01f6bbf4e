package ml.juno.coordinator.engine;

import ml.juno.coordinator.scheduler.ScheduledRow;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.coordinator.scheduler.TokenChunk;
import ml.juno.engine.model.HiddenRows;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Logits;
import ml.juno.engine.step.StepBatch;

/**
 * Runs step plans on an in-process {@link InferenceSession} with a paged KV cache: the plan's {@link StepBatch} (prefill
 * chunks and decode rows together) goes to the session as it is, and the rows that asked are sampled straight from the
 * session's logits buffer ({@link SamplingStage}): the step answers tokens.
 *
 * <p>Anything wrong (a plan that does not fit the session, an engine exception) becomes a {@link StepResult.Failure};
 * nothing is thrown and nothing hangs. Used from the generation loop's thread only; the counters may be read from any
 * thread.
 */
public final class LocalExecutor implements ManagedExecutor {
    private final InferenceSession session;
    private final int blockSize;
    private final SamplingStage sampling;
    private final long[] slotSequence;   // [slots] sequence whose last row in this slot asked for logits
    private final int[] slotDecodeAt;    // [slots] position its decode row will have
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
        this.sampling = new SamplingStage(session.model().config().dims().vocab());
        this.slotSequence = new long[session.slots()];
        this.slotDecodeAt = new int[session.slots()];
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
        if (tokens > session.maxBatch()) {
            return new StepResult.Failure("step " + plan.stepId() + " has " + tokens + " tokens; the engine takes "
                    + session.maxBatch() + " per step");
        }
        long prefill = 0;
        long decode = 0;
        for (ScheduledRow row : plan.rows()) {
            if (row.kv().blockSize() != blockSize) {
                return new StepResult.Failure("step " + plan.stepId() + ", sequence " + row.sequenceId() + ": block size "
                        + row.kv().blockSize() + ", the engine's is " + blockSize);
            }
            int slot = row.slot();
            if (slot < 0 || slot >= slotSequence.length) {
                return new StepResult.Failure("step " + plan.stepId() + ", sequence " + row.sequenceId() + ": slot " + slot
                        + " is outside 0.." + (slotSequence.length - 1));
            }
            TokenChunk chunk = row.chunk();
            boolean isDecode = chunk.size() == 1 && slotSequence[slot] == row.sequenceId()
                    && slotDecodeAt[slot] == chunk.startPosition();
            if (isDecode) {
                decode++;
            } else {
                prefill += chunk.size();
            }
        }
        StepBatch step = plan.batch(); // one block table per slot, or it throws: the step fails
        Logits logits = session.forward(step);
        int logitRows = plan.logitRowCount();
        if (logits == null || logits.count() != logitRows) {
            return new StepResult.Failure("step " + plan.stepId() + ": engine returned "
                    + (logits == null ? "no logits" : logits.count() + " logit rows") + " for " + logitRows + " requested");
        }
        for (ScheduledRow row : plan.rows()) { // what the next step's rows of these slots will be
            int slot = row.slot();
            TokenChunk chunk = row.chunk();
            slotSequence[slot] = chunk.needsLogits() ? row.sequenceId() : 0;
            slotDecodeAt[slot] = chunk.startPosition() + chunk.size();
        }
        prefillTokens += prefill;
        decodeTokens += decode;
        steps++;
        StepResult.Tokens tokensOut = sampling.sample(plan, logits.data(), logitRows);
        int hiddenRows = plan.hiddenRowCount();
        if (hiddenRows == 0) {
            return tokensOut;
        }
        HiddenRows h = session.finalHidden();
        if (h.count() != hiddenRows) {
            return new StepResult.Failure("step " + plan.stepId() + ": engine returned " + h.count()
                    + " hidden states for " + hiddenRows + " requested");
        }
        return tokensOut.withHidden(new StepResult.Hidden(h.data(), h.count(), h.dim()));
    }
}
