package ml.juno.engine.lora;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import ml.juno.engine.jfr.LoraTrainStepEvent;

/**
 * The training loop: AdamW over the LoRA factors (decoupled weight decay), linear warm-up then cosine decay of the
 * learning rate, gradient clipping by global norm, sequences visited in a seeded order each epoch, optionally several
 * sequences per optimizer step (gradients averaged, up to {@code batchTokens} tokens) and LoRA dropout. With
 * validation sequences the validation loss is taken at the end of every epoch and at the last step, and the adapter of
 * the lowest one is kept. A run can write {@link LoraCheckpoint}s and go on from one exactly. Single-threaded and
 * deterministic: the same data, options and seed give the same adapter bit for bit, interrupted and resumed or not.
 * Each step is a JFR {@code juno.LoraTrainStep} event.
 */
public final class LoraTraining {

    private LoraTraining() {}

    /**
     * @param lr          peak learning rate
     * @param weightDecay AdamW decoupled decay
     * @param warmup      warm-up steps (linear from 0)
     * @param maxSteps    optimizer steps in all
     * @param clip        largest global gradient norm (0: no clipping)
     * @param seed        the order of the sequences and the dropout masks
     * @param dropout     LoRA dropout probability on the adapters' inputs during training (0: none)
     * @param batchTokens sequences per step: as many as fit in this many tokens, at least one (0: one a step)
     */
    public record Options(float lr, float weightDecay, int warmup, int maxSteps, float clip, long seed, float dropout,
                          int batchTokens) {
        public Options {
            if (!(lr > 0) || weightDecay < 0 || warmup < 0 || maxSteps < 1 || clip < 0 || !(dropout >= 0 && dropout < 1)
                    || batchTokens < 0) {
                throw new IllegalArgumentException("bad training options: lr " + lr + ", weight decay " + weightDecay
                        + ", warm-up " + warmup + ", steps " + maxSteps + ", clip " + clip + ", dropout " + dropout
                        + ", batch tokens " + batchTokens);
            }
        }

        /** One sequence a step, no dropout. */
        public Options(float lr, float weightDecay, int warmup, int maxSteps, float clip, long seed) {
            this(lr, weightDecay, warmup, maxSteps, clip, seed, 0f, 0);
        }

        /** The learning rate of step {@code step} (0-based). */
        public float rate(int step) {
            if (step < warmup) {
                return lr * (step + 1) / warmup;
            }
            double progress = maxSteps == warmup ? 1 : (double) (step - warmup) / (maxSteps - warmup);
            return (float) (lr * 0.5 * (1 + Math.cos(Math.PI * progress)));
        }
    }

    /** One training sequence and which of its positions are trained (see {@link LoraTrainer#run}). */
    public record Example(int[] tokens, boolean[] mask) {
        public Example {
            if (tokens.length < 2 || mask.length != tokens.length) {
                throw new IllegalArgumentException("an example needs at least 2 tokens and a mask of the same length");
            }
        }

        /** Every next token trained. */
        public static Example text(int[] tokens) {
            boolean[] m = new boolean[tokens.length];
            java.util.Arrays.fill(m, 0, tokens.length - 1, true);
            return new Example(tokens, m);
        }
    }

    /**
     * What one optimizer step did: its index (0-based), sequences and tokens, mean loss, learning rate, gradient norm
     * before clipping, the time of its forward passes, backward passes and update, and the validation loss when the
     * step ended an epoch or the run ({@code NaN} otherwise).
     */
    public record Step(int step, int sequences, int tokens, double loss, float lr, double gradNorm, long forwardNanos,
                       long backwardNanos, long optimizerNanos, double valLoss) {}

    /** Hears each step. */
    @FunctionalInterface
    public interface Listener {
        void step(Step step);
    }

    /** Takes each checkpoint the run writes. */
    @FunctionalInterface
    public interface CheckpointSink {
        void write(LoraCheckpoint checkpoint) throws IOException;
    }

    /**
     * The outcome: the adapter to keep (the best by validation loss when there is validation data, else the last),
     * the loss of every step, and the best validation loss and its step (1-based; {@code NaN} and 0 without
     * validation data).
     */
    public record Result(LoraAdapter adapter, double[] losses, double bestValLoss, int bestStep) {}

    /** Trains {@code adapter} in place (its A and B arrays) on {@code examples}; returns the loss of each step. */
    public static double[] train(LoraTrainer trainer, LoraAdapter adapter, List<Example> examples, Options o, Listener listener) {
        try {
            return new Run(trainer, adapter, examples, List.of(), o).train(listener, 0, null).losses();
        } catch (IOException e) {
            throw new IllegalStateException("no checkpoints are written", e);
        }
    }

    /** The optimizer steps of {@code epochs} passes over {@code train} in the order {@code seed} and {@code batchTokens} give. */
    public static int stepsOf(List<Example> train, int epochs, long seed, int batchTokens) {
        if (train.isEmpty()) {
            throw new IllegalArgumentException("no training examples");
        }
        Order order = new Order(train, seed, batchTokens);
        int steps = 0;
        for (int e = 0; e < epochs; e++) {
            do {
                order.next();
                steps++;
            } while (!order.epochEnded());
        }
        return steps;
    }

    /** Mean loss of {@code examples} (no gradients, no dropout). */
    public static double evaluate(LoraTrainer trainer, LoraAdapter adapter, List<Example> examples) {
        double sum = 0;
        for (Example e : examples) {
            sum += trainer.run(adapter, e.tokens(), e.mask(), null, 1f);
        }
        return sum / examples.size();
    }

    /**
     * AdamW's state over one adapter: per pair the first and second moments of A and B, and the updates made so far
     * (their count drives the bias correction). A run makes a fresh one, or carries one on from an earlier run on the
     * same adapter (the interactive trainer's commands).
     */
    public static final class AdamState {
        private final float[][][] moments; // per pair: m(A), m(B), v(A), v(B)
        private int updates;

        private AdamState(float[][][] moments) {
            this.moments = moments;
        }

        /** Zero moments, no updates, for {@code adapter}. */
        public static AdamState fresh(LoraAdapter adapter) {
            List<LoraPair> pairs = adapter.pairs();
            float[][][] m = new float[pairs.size()][][];
            for (int i = 0; i < pairs.size(); i++) {
                LoraPair p = pairs.get(i);
                m[i] = new float[][] {new float[p.a().length], new float[p.b().length], new float[p.a().length], new float[p.b().length]};
            }
            return new AdamState(m);
        }

        /** The optimizer updates this state has seen. */
        public int updates() {
            return updates;
        }

        void requireFits(LoraAdapter adapter) {
            List<LoraPair> pairs = adapter.pairs();
            boolean fits = pairs.size() == moments.length;
            for (int i = 0; fits && i < pairs.size(); i++) {
                fits = moments[i][0].length == pairs.get(i).a().length && moments[i][1].length == pairs.get(i).b().length;
            }
            if (!fits) {
                throw new IllegalArgumentException("the optimizer state was made for another adapter shape");
            }
        }
    }

    /** A training run: the adapter being trained, its optimizer state and how far it got. */
    public static final class Run {
        private static final float B1 = 0.9f;
        private static final float B2 = 0.999f;
        private static final float EPS = 1e-8f;

        private final LoraTrainer trainer;
        private final LoraAdapter adapter;
        private final List<Example> train;
        private final List<Example> val;
        private final Options o;
        private final Map<String, String> settings;
        private final AdamState state;
        private final float[][][] moments; // the state's
        private final double[] losses;
        private int done;
        private double bestVal = Double.NaN;
        private int bestStep;
        private LoraAdapter best;

        /** A fresh run of {@code adapter} (trained in place). */
        public Run(LoraTrainer trainer, LoraAdapter adapter, List<Example> train, List<Example> val, Options o) {
            this(trainer, adapter, train, val, o, AdamState.fresh(adapter));
        }

        /**
         * A run of {@code adapter} (trained in place) whose AdamW goes on from {@code state} (updated as it runs): its
         * moments and update count, not its steps, schedule or data order, which are this run's.
         */
        public Run(LoraTrainer trainer, LoraAdapter adapter, List<Example> train, List<Example> val, Options o, AdamState state) {
            state.requireFits(adapter);
            if (train.isEmpty()) {
                throw new IllegalArgumentException("no training examples");
            }
            this.trainer = trainer;
            this.adapter = adapter;
            this.train = List.copyOf(train);
            this.val = List.copyOf(val);
            this.o = o;
            this.settings = settings(o, this.train, this.val);
            this.losses = new double[o.maxSteps()];
            this.state = state;
            this.moments = state.moments;
        }

        /**
         * A run that goes on from {@code c} as if it had never stopped; the options and data must be those it was made
         * with (refused otherwise, naming the first difference).
         */
        public static Run resume(LoraTrainer trainer, LoraCheckpoint c, List<Example> train, List<Example> val, Options o) {
            Run r = new Run(trainer, c.adapter(), train, val, o);
            for (var e : r.settings.entrySet()) {
                String had = c.settings().get(e.getKey());
                if (!e.getValue().equals(had)) {
                    throw new IllegalArgumentException("the checkpoint was made with " + e.getKey() + " " + had + ", this run has "
                            + e.getValue() + " (resume with the options and data it was made with)");
                }
            }
            if (!c.settings().keySet().equals(r.settings.keySet())) {
                throw new IllegalArgumentException("the checkpoint's settings " + c.settings().keySet() + " are not this run's "
                        + r.settings.keySet());
            }
            if (c.steps() > o.maxSteps()) {
                throw new IllegalArgumentException("the checkpoint is at step " + c.steps() + ", past this run's " + o.maxSteps());
            }
            for (int i = 0; i < r.moments.length; i++) {
                for (int k = 0; k < 4; k++) {
                    System.arraycopy(c.moments()[i][k], 0, r.moments[i][k], 0, r.moments[i][k].length);
                }
            }
            System.arraycopy(c.losses(), 0, r.losses, 0, c.steps());
            r.done = c.steps();
            r.state.updates = c.steps();
            r.bestVal = c.bestValLoss();
            r.bestStep = c.bestStep();
            r.best = c.best();
            return r;
        }

        /** Steps done so far. */
        public int stepsDone() {
            return done;
        }

        /** The options and a hash of the data, as a checkpoint records them. */
        static Map<String, String> settings(Options o, List<Example> train, List<Example> val) {
            Map<String, String> s = new LinkedHashMap<>();
            s.put("lr", Float.toString(o.lr()));
            s.put("weight-decay", Float.toString(o.weightDecay()));
            s.put("warmup", Integer.toString(o.warmup()));
            s.put("steps", Integer.toString(o.maxSteps()));
            s.put("clip", Float.toString(o.clip()));
            s.put("seed", Long.toString(o.seed()));
            s.put("dropout", Float.toString(o.dropout()));
            s.put("batch-tokens", Integer.toString(o.batchTokens()));
            s.put("train-data", hash(train));
            s.put("validation-data", hash(val));
            return s;
        }

        private static String hash(List<Example> examples) {
            try {
                var md = java.security.MessageDigest.getInstance("SHA-256");
                ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
                for (Example e : examples) {
                    md.update(b.clear().putInt(e.tokens().length).array(), 0, 4);
                    for (int i = 0; i < e.tokens().length; i++) {
                        md.update(b.clear().putInt(e.tokens()[i]).put((byte) (e.mask()[i] ? 1 : 0)).array(), 0, 5);
                    }
                }
                return examples.size() + " sequences, sha256 " + java.util.HexFormat.of().formatHex(md.digest()).substring(0, 16);
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }

        /**
         * Runs the remaining steps; every {@code checkpointEvery} steps (0: never) hands {@code sink} a checkpoint.
         */
        public Result train(Listener listener, int checkpointEvery, CheckpointSink sink) throws IOException {
            Order order = new Order(train, o.seed(), o.batchTokens());
            for (int s = 0; s < done; s++) {
                order.next(); // the sequences the steps before the checkpoint took
            }
            List<LoraPair> pairs = adapter.pairs();
            while (done < o.maxSteps()) {
                int step = done;
                LoraTrainStepEvent event = LoraTrainStepEvent.enabled() ? LoraTrainStepEvent.start() : null;
                List<Example> batch = order.next();
                LoraTrainer.Gradients g = LoraTrainer.gradients(adapter);
                long[] times = new long[2];
                double loss = accumulate(batch, step, g, times);
                long fwd = times[0];
                long bwd = times[1];
                int tokens = 0;
                for (Example ex : batch) {
                    tokens += ex.tokens().length;
                }
                long t0 = System.nanoTime();
                double norm = 0;
                for (LoraPair p : pairs) {
                    for (float x : g.a(p)) {
                        norm += (double) x * x;
                    }
                    for (float x : g.b(p)) {
                        norm += (double) x * x;
                    }
                }
                norm = Math.sqrt(norm);
                float clipScale = o.clip() > 0 && norm > o.clip() ? (float) (o.clip() / norm) : 1f;
                float lr = o.rate(step);
                int t = state.updates + 1;
                float c1 = 1f - (float) Math.pow(B1, t);
                float c2 = 1f - (float) Math.pow(B2, t);
                for (int pi = 0; pi < pairs.size(); pi++) {
                    LoraPair p = pairs.get(pi);
                    for (int which = 0; which < 2; which++) {
                        float[] w = which == 0 ? p.a() : p.b();
                        float[] gr = which == 0 ? g.a(p) : g.b(p);
                        float[] mm = moments[pi][which];
                        float[] vv = moments[pi][2 + which];
                        for (int i = 0; i < w.length; i++) {
                            float gi = gr[i] * clipScale;
                            mm[i] = B1 * mm[i] + (1 - B1) * gi;
                            vv[i] = B2 * vv[i] + (1 - B2) * gi * gi;
                            float update = (mm[i] / c1) / ((float) Math.sqrt(vv[i] / c2) + EPS);
                            w[i] -= lr * (update + o.weightDecay() * w[i]);
                        }
                    }
                }
                state.updates = t;
                long opt = System.nanoTime() - t0;
                losses[step] = loss;
                done = step + 1;
                double valLoss = Double.NaN;
                if (!val.isEmpty() && (order.epochEnded() || done == o.maxSteps())) {
                    valLoss = evaluate(trainer, adapter, val);
                    if (Double.isNaN(bestVal) || valLoss < bestVal) {
                        bestVal = valLoss;
                        bestStep = done;
                        best = copy(adapter);
                    }
                }
                if (event != null) {
                    event.finish(done, batch.size(), tokens, loss, lr, norm, fwd, bwd, opt, valLoss);
                }
                if (listener != null) {
                    listener.step(new Step(step, batch.size(), tokens, loss, lr, norm, fwd, bwd, opt, valLoss));
                }
                if (checkpointEvery > 0 && done % checkpointEvery == 0 && sink != null) {
                    sink.write(checkpoint());
                }
            }
            return new Result(best != null ? best : adapter, losses.clone(), bestVal, bestStep);
        }

        /**
         * Adds the mean gradient of {@code batch} (step {@code step}'s dropout) to {@code g}; returns the mean loss and adds
         * the forward and backward time to {@code times[0]} and {@code times[1]}.
         */
        double accumulate(List<Example> batch, int step, LoraTrainer.Gradients g, long[] times) {
            float scale = 1f / batch.size();
            double loss = 0;
            for (int i = 0; i < batch.size(); i++) {
                Example ex = batch.get(i);
                LoraTrainer.Dropout d = o.dropout() > 0 ? new LoraTrainer.Dropout(o.dropout(), mix(o.seed(), step, i)) : null;
                loss += trainer.run(adapter, ex.tokens(), ex.mask(), g, scale, d);
                times[0] += trainer.forwardNanos();
                times[1] += trainer.backwardNanos();
            }
            return loss / batch.size();
        }

        /** The state now, as a checkpoint (copies). */
        public LoraCheckpoint checkpoint() {
            float[][][] m = new float[moments.length][][];
            for (int i = 0; i < m.length; i++) {
                m[i] = new float[4][];
                for (int k = 0; k < 4; k++) {
                    m[i][k] = moments[i][k].clone();
                }
            }
            return new LoraCheckpoint(done, settings, java.util.Arrays.copyOf(losses, done), bestVal, bestStep, copy(adapter),
                    best == null ? null : copy(best), m);
        }

        private static LoraAdapter copy(LoraAdapter a) {
            List<LoraPair> ps = new ArrayList<>();
            for (LoraPair p : a.pairs()) {
                ps.add(new LoraPair(p.layer(), p.target(), p.rank(), p.in(), p.out(), p.a().clone(), p.b().clone()));
            }
            return new LoraAdapter(a.header(), ps);
        }

        private static long mix(long seed, int step, int i) {
            long z = seed + 0x9E3779B97F4A7C15L * (step + 1) + 0xBF58476D1CE4E5B9L * (i + 1);
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }
    }

    /**
     * The sequences of each step: each epoch a seeded shuffle of the training sequences, taken one a step, or as many
     * as fit in {@code batchTokens} (at least one); a step never spans two epochs.
     */
    static final class Order {
        private final List<Example> examples;
        private final int batchTokens;
        private final SplittableRandom rnd;
        private final List<Example> left = new ArrayList<>();

        Order(List<Example> examples, long seed, int batchTokens) {
            this.examples = examples;
            this.batchTokens = batchTokens;
            this.rnd = new SplittableRandom(seed);
        }

        List<Example> next() {
            if (left.isEmpty()) {
                left.addAll(examples);
                for (int i = left.size() - 1; i > 0; i--) {
                    java.util.Collections.swap(left, i, rnd.nextInt(i + 1));
                }
            }
            List<Example> batch = new ArrayList<>();
            int tokens = 0;
            do {
                Example e = left.remove(left.size() - 1);
                batch.add(e);
                tokens += e.tokens().length;
            } while (!left.isEmpty() && tokens + left.get(left.size() - 1).tokens().length <= batchTokens);
            return batch;
        }

        /** Whether the last {@link #next} took the epoch's last sequence. */
        boolean epochEnded() {
            return left.isEmpty();
        }
    }
}
