package ml.juno.engine.lora;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The training loop: AdamW over the LoRA factors (decoupled weight decay), linear warm-up then cosine decay of the
 * learning rate, gradient clipping by global norm, sequences visited in a seeded order each epoch. Single-threaded
 * and deterministic: the same data, options and seed give the same adapter bit for bit.
 */
public final class LoraTraining {

    private LoraTraining() {}

    /**
     * @param lr          peak learning rate
     * @param weightDecay AdamW decoupled decay
     * @param warmup      warm-up steps (linear from 0)
     * @param maxSteps    optimizer steps in all
     * @param clip        largest global gradient norm (0: no clipping)
     * @param seed        the order of the sequences
     */
    public record Options(float lr, float weightDecay, int warmup, int maxSteps, float clip, long seed) {
        public Options {
            if (!(lr > 0) || weightDecay < 0 || warmup < 0 || maxSteps < 1 || clip < 0) {
                throw new IllegalArgumentException("bad training options: lr " + lr + ", weight decay " + weightDecay
                        + ", warm-up " + warmup + ", steps " + maxSteps + ", clip " + clip);
            }
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

    /** Hears each step. */
    @FunctionalInterface
    public interface Listener {
        void step(int step, int tokens, double loss, float lr, long nanos);
    }

    /** Trains {@code adapter} in place (its A and B arrays) on {@code examples}; returns the loss of each step. */
    public static double[] train(LoraTrainer trainer, LoraAdapter adapter, List<Example> examples, Options o, Listener listener) {
        if (examples.isEmpty()) {
            throw new IllegalArgumentException("no training examples");
        }
        Map<LoraPair, float[][]> m = new IdentityHashMap<>();
        Map<LoraPair, float[][]> v = new IdentityHashMap<>();
        for (LoraPair p : adapter.pairs()) {
            m.put(p, new float[][] {new float[p.a().length], new float[p.b().length]});
            v.put(p, new float[][] {new float[p.a().length], new float[p.b().length]});
        }
        SplittableRandom rnd = new SplittableRandom(o.seed());
        List<Example> order = new ArrayList<>();
        double[] losses = new double[o.maxSteps()];
        final float b1 = 0.9f;
        final float b2 = 0.999f;
        final float eps = 1e-8f;
        for (int step = 0; step < o.maxSteps(); step++) {
            long t0 = System.nanoTime();
            if (order.isEmpty()) {
                order.addAll(examples);
                for (int i = order.size() - 1; i > 0; i--) {
                    java.util.Collections.swap(order, i, rnd.nextInt(i + 1));
                }
            }
            Example ex = order.remove(order.size() - 1);
            LoraTrainer.Gradients g = LoraTrainer.gradients(adapter);
            losses[step] = trainer.run(adapter, ex.tokens(), ex.mask(), g, 1f);
            double norm = 0;
            for (LoraPair p : adapter.pairs()) {
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
            float c1 = 1f - (float) Math.pow(b1, step + 1);
            float c2 = 1f - (float) Math.pow(b2, step + 1);
            for (LoraPair p : adapter.pairs()) {
                for (int which = 0; which < 2; which++) {
                    float[] w = which == 0 ? p.a() : p.b();
                    float[] gr = which == 0 ? g.a(p) : g.b(p);
                    float[] mm = m.get(p)[which];
                    float[] vv = v.get(p)[which];
                    for (int i = 0; i < w.length; i++) {
                        float gi = gr[i] * clipScale;
                        mm[i] = b1 * mm[i] + (1 - b1) * gi;
                        vv[i] = b2 * vv[i] + (1 - b2) * gi * gi;
                        float update = (mm[i] / c1) / ((float) Math.sqrt(vv[i] / c2) + eps);
                        w[i] -= lr * (update + o.weightDecay() * w[i]);
                    }
                }
            }
            if (listener != null) {
                listener.step(step, ex.tokens().length, losses[step], lr, System.nanoTime() - t0);
            }
        }
        return losses;
    }

    /** Mean loss of {@code examples} (no gradients). */
    public static double evaluate(LoraTrainer trainer, LoraAdapter adapter, List<Example> examples) {
        double sum = 0;
        for (Example e : examples) {
            sum += trainer.run(adapter, e.tokens(), e.mask(), null, 1f);
        }
        return sum / examples.size();
    }
}
