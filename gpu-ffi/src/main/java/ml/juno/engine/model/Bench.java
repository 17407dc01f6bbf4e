package ml.juno.engine.model;

import java.util.SplittableRandom;
import java.util.function.IntConsumer;
import ml.juno.engine.step.StepBatch;

/**
 * llama-bench style speed measurement on one {@link InferenceSession}: {@code pp<n>} processes an n-token prompt in
 * one batch (chunks of the session's max batch if larger), {@code tg<n>} generates n tokens one forward step at a
 * time from an empty context. Random token ids; one untimed warm-up run; mean ± sample stddev of tokens/s over
 * {@code reps} runs. Decode GB/s = weight bytes per step × tokens/s.
 */
public final class Bench {
    private final InferenceSession session;
    private final StepBatch.Builder batch;
    private final SplittableRandom random = new SplittableRandom(1234);
    private final boolean warmUp;
    private final IntConsumer beforeTimed;

    public Bench(InferenceSession session) {
        this(session, true, rep -> { });
    }

    /**
     * {@code warmUp == false}: each measurement's first run is timed too (after {@link #warmUp(int, int)} and a cold
     * start: page cache dropped, expert cache empty); {@code beforeTimed} is called with the repetition's index before
     * each timed run.
     */
    public Bench(InferenceSession session, boolean warmUp, IntConsumer beforeTimed) {
        this.session = session;
        this.batch = new StepBatch.Builder(session.maxBatch());
        this.warmUp = warmUp;
        this.beforeTimed = java.util.Objects.requireNonNull(beforeTimed, "beforeTimed");
    }

    private int token() {
        return random.nextInt(session.model().config().dims().vocab());
    }

    private void prompt(int n) {
        for (int start = 0; start < n; start += batch.capacity()) {
            int end = Math.min(n, start + batch.capacity());
            batch.clear();
            for (int p = start; p < end; p++) {
                batch.add(0, p, token(), p == n - 1);
            }
            session.forward(batch.build());
        }
    }

    private void generate(int n) {
        for (int p = 0; p < n; p++) {
            batch.clear();
            batch.add(0, p, token(), true);
            session.forward(batch.build());
        }
    }

    /**
     * Tokens a {@link #warmUp} runs each way at least. One short run was not enough for the JIT: qwen3moe-mini with
     * every expert cached, after one prompt of 16 and one generation of 32, generated 46-47 tok/s; after 256 of each
     * 81-84, as fast as a warm process.
     */
    public static final int WARM_UP_TOKENS = 256;

    /**
     * Untimed prompts of {@code promptTokens} and untimed generations of {@code genTokens}, each until
     * {@link #WARM_UP_TOKENS} have run (at least once): the code compiled before a cold start that then times both
     * without their own warm-ups ({@code warmUp == false}).
     */
    public void warmUp(int promptTokens, int genTokens) {
        if (promptTokens <= 0 || genTokens <= 0) {
            throw new IllegalArgumentException("warm-up needs tokens both ways, got " + promptTokens + " and " + genTokens);
        }
        for (int done = 0; done < WARM_UP_TOKENS; done += promptTokens) {
            run(promptTokens, false);
        }
        for (int done = 0; done < WARM_UP_TOKENS; done += genTokens) {
            run(genTokens, true);
        }
    }

    /** Prompt processing: {@code tokens} in one batch per repetition. */
    public BenchResult pp(int tokens, int reps) {
        return measure("pp" + tokens, tokens, reps, false);
    }

    /** Token generation: {@code tokens} single-row steps per repetition. */
    public BenchResult tg(int tokens, int reps) {
        return measure("tg" + tokens, tokens, reps, true);
    }

    private BenchResult measure(String name, int tokens, int reps, boolean decode) {
        if (tokens <= 0 || reps <= 0 || tokens > session.contextLength()) {
            throw new IllegalArgumentException(name + ": need 0 < tokens <= context " + session.contextLength() + " and reps > 0");
        }
        if (warmUp) {
            run(tokens, decode);
        }
        double[] rates = new double[reps];
        for (int r = 0; r < reps; r++) {
            beforeTimed.accept(r);
            long t0 = System.nanoTime();
            run(tokens, decode);
            rates[r] = tokens / ((System.nanoTime() - t0) / 1e9);
        }
        double mean = 0;
        for (double x : rates) {
            mean += x;
        }
        mean /= reps;
        double var = 0;
        for (double x : rates) {
            var += (x - mean) * (x - mean);
        }
        double sd = reps > 1 ? Math.sqrt(var / (reps - 1)) : 0;
        double gb = decode ? session.model().weightBytes() * mean / 1e9 : 0;
        return new BenchResult(name, tokens, reps, mean, sd, gb);
    }

    private void run(int tokens, boolean decode) {
        if (decode) {
            generate(tokens);
        } else {
            prompt(tokens);
        }
    }
}
