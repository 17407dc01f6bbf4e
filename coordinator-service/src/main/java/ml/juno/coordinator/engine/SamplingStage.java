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
     * Samples the rows of {@code plan} that need logits, and scores the prompt tokens of the rows that score some
     * ({@link ml.juno.coordinator.scheduler.TokenChunk#scored()}, echo with logprobs).
     *
     * @param logits {@code [rows][vocab]} row-major, in token order: per plan row first its scored tokens' logits,
     *               then its sampling row's
     * @param rows   logit rows; must equal the plan's {@link StepPlan#logitRowCount()}
     */
    public StepResult.Tokens sample(StepPlan plan, float[] logits, int rows) {
        return sample(plan, logits, rows, null);
    }

    /** True when raw logits must reach this stage (an observer watches them): no row may be drawn elsewhere. */
    public boolean observed() {
        return observer != null;
    }

    /**
     * {@link #sample(StepPlan, float[], int)} where some rows were drawn already, by the node that computed their
     * logits: {@code drawn[s]} is the s-th sampling row's draw, or null for a row drawn here from {@code logits}. A
     * row drawn elsewhere moves its sequence's generator on as the draw did there ({@link SamplerState#drawnElsewhere}).
     *
     * @param logits the logit rows left to this stage, in token order (scored tokens' and the sampling rows not drawn)
     * @param rows   how many there are
     * @param drawn  [sampled rows] or null: none drawn elsewhere
     */
    public StepResult.Tokens sample(StepPlan plan, float[] logits, int rows, ml.juno.engine.sampling.DrawResult[] drawn) {
        int elsewhere = 0;
        if (drawn != null) {
            if (drawn.length != plan.sampledRowCount()) {
                throw new IllegalArgumentException("step " + plan.stepId() + ": " + drawn.length + " draws for "
                        + plan.sampledRowCount() + " sampling rows");
            }
            for (var d : drawn) {
                elsewhere += d != null ? 1 : 0;
            }
        }
        if (rows != plan.logitRowCount() - elsewhere || (long) rows * vocab > logits.length) {
            throw new IllegalArgumentException("step " + plan.stepId() + ": " + rows + " logit rows in " + logits.length
                    + " floats for " + (plan.logitRowCount() - elsewhere) + " rows of " + vocab);
        }
        int sampledRows = plan.sampledRowCount();
        if (tokens.length < sampledRows) {
            tokens = new int[sampledRows];
            logprobs = new TokenLogprobs[sampledRows];
            failures = new String[sampledRows];
        }
        TokenLogprobs[][] scores = null; // only steps that score a prompt allocate
        LogitsObserver o = observer;
        int k = 0; // logit row
        int s = 0; // sampled row
        for (int r = 0; r < plan.rows().size(); r++) {
            ScheduledRow row = plan.rows().get(r);
            int[] scored = row.chunk().scored();
            if (scored.length > 0) {
                if (scores == null) {
                    scores = new TokenLogprobs[plan.rows().size()][];
                }
                scores[r] = score(logits, k, scored, Math.max(0, row.sampler().topLogprobs()));
                k += scored.length;
            }
            if (!row.needsLogits()) {
                continue;
            }
            var d = drawn == null ? null : drawn[s];
            if (d != null) {
                SamplerState state = row.sampler();
                boolean ok = d.token() >= 0 && d.token() < vocab;
                tokens[s] = ok ? d.token() : StepResult.NO_TOKEN;
                logprobs[s] = ok && state.topLogprobs() >= 0 && d.hasLogprobs()
                        ? new TokenLogprobs(d.token(), d.logprob(), d.topIds(), d.topLogprobs()) : SampledToken.NO_LOGPROBS;
                failures[s] = ok ? "" : d.error().isEmpty() ? "the node drew token " + d.token() + " outside the vocabulary" : d.error();
                if (ok) {
                    state.drawnElsewhere();
                }
                s++;
                continue;
            }
            int offset = k * vocab;
            if (o != null) {
                o.onLogits(row.sequenceId(), logits, offset, vocab);
            }
            SamplerState state = row.sampler();
            try {
                int token = sampler.sample(logits, offset, state);
                logprobs[s] = state.topLogprobs() >= 0 ? sampler.logprobs(logits, offset, token, state.topLogprobs(), state)
                        : SampledToken.NO_LOGPROBS;
                tokens[s] = token;
                failures[s] = "";
            } catch (RuntimeException e) {
                tokens[s] = StepResult.NO_TOKEN;
                logprobs[s] = SampledToken.NO_LOGPROBS;
                failures[s] = "sampling failed: " + e.getMessage();
            }
            k++;
            s++;
        }
        return new StepResult.Tokens(tokens, logprobs, failures, sampledRows, scores);
    }

    /** Log-probabilities of {@code targets[i]} under logit row {@code first + i}; null if one cannot be scored. */
    private TokenLogprobs[] score(float[] logits, int first, int[] targets, int top) {
        TokenLogprobs[] out = new TokenLogprobs[targets.length];
        try {
            for (int i = 0; i < targets.length; i++) {
                out[i] = sampler.logprobs(logits, (first + i) * vocab, targets[i], top);
            }
            return out;
        } catch (RuntimeException e) { // a token outside the vocabulary: the scheduler fails the sequence
            return null;
        }
    }
}
