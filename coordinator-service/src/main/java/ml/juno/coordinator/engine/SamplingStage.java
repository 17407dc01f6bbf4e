package ml.juno.coordinator.engine;

import ml.juno.coordinator.sampling.Sampler;
import ml.juno.coordinator.sampling.SamplerState;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.SampledToken;
import ml.juno.coordinator.scheduler.ScheduledRow;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;

/**
 * Turns the logits of one step into tokens, next to where the logits were computed (an executor's last stage), so only
 * token ids travel up to the scheduler. Each row that needs logits is drawn with its sequence's {@link SamplerState}
 * (carried by the row); a row whose draw fails (a NaN logit, say) gets {@link StepResult#NO_TOKEN} and the reason, and
 * the other rows go on.
 *
 * <p>One instance per executor, used from the generation loop's thread only: it owns the {@link Sampler}'s
 * vocabulary-sized buffers and the result arrays, which are reused from step to step.
 */
public final class SamplingStage {
    private final Sampler sampler;
    private final int vocab;
    private int[] tokens = new int[0];                       // [rows] of the last step
    private TokenLogprobs[] logprobs = new TokenLogprobs[0]; // [rows]
    private String[] failures = new String[0];               // [rows]
    private volatile LogitsObserver observer;

    public SamplingStage(int vocabSize) {
        this.sampler = new Sampler(vocabSize);
        this.vocab = vocabSize;
    }

    public int vocabSize() {
        return vocab;
    }

    /** Raw logits of each token-producing row go to {@code o} too ({@code null}: none; the default). */
    public void observeLogits(LogitsObserver o) {
        this.observer = o;
    }

    /**
     * Samples the rows of {@code plan} that need logits.
     *
     * @param logits {@code [rows][vocab]} row-major: row k is the k-th plan row with {@code needsLogits}
     * @param rows   logit rows; must equal the plan's {@link StepPlan#logitRowCount()}
     */
    public StepResult.Tokens sample(StepPlan plan, float[] logits, int rows) {
        if (rows != plan.logitRowCount() || (long) rows * vocab > logits.length) {
            throw new IllegalArgumentException("step " + plan.stepId() + ": " + rows + " logit rows in " + logits.length
                    + " floats for " + plan.logitRowCount() + " rows of " + vocab);
        }
        if (tokens.length < rows) {
            tokens = new int[rows];
            logprobs = new TokenLogprobs[rows];
            failures = new String[rows];
        }
        LogitsObserver o = observer;
        int k = 0;
        for (ScheduledRow row : plan.rows()) {
            if (!row.needsLogits()) {
                continue;
            }
            int offset = k * vocab;
            if (o != null) {
                o.onLogits(row.sequenceId(), logits, offset, vocab);
            }
            SamplerState state = row.sampler();
            try {
                int token = sampler.sample(logits, offset, state);
                logprobs[k] = state.topLogprobs() >= 0 ? sampler.logprobs(logits, offset, token, state.topLogprobs(), state)
                        : SampledToken.NO_LOGPROBS;
                tokens[k] = token;
                failures[k] = "";
            } catch (RuntimeException e) {
                tokens[k] = StepResult.NO_TOKEN;
                logprobs[k] = SampledToken.NO_LOGPROBS;
                failures[k] = "sampling failed: " + e.getMessage();
            }
            k++;
        }
        return new StepResult.Tokens(tokens, logprobs, failures, rows);
    }
}
