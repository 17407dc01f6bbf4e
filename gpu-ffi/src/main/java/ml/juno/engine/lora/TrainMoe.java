package ml.juno.engine.lora;

import ml.juno.engine.kernel.Backend;
import ml.juno.engine.model.block.GatedFfn;
import ml.juno.engine.model.block.MoeFfn;
import ml.juno.engine.model.block.MoeRouting;

/**
 * The forward and backward pass of a mixture-of-experts FFN ({@link MoeFfn}, qwen3moe) over one sequence for
 * {@link LoraTrainer}: computed as the engine computes it (router product, {@link MoeRouting#route}, each chosen
 * expert's gated FFN over the rows that chose it, the weighted outputs summed in rank order), with what the backward
 * pass needs kept. The experts carry no LoRA factors (their gate/up/down are not trainable targets); the backward pass
 * gives the gradient with respect to the FFN's input, through the experts and through the router's softmax and
 * top-k weights (the choice itself is piecewise constant).
 */
final class TrainMoe {
    private final MoeFfn moe;
    private final GatedFfn[] experts;
    private final int count;
    private final int used;
    private final int dim;

    // kept by forward: [n][experts] probabilities, [n][used] choices and weights, the choices grouped by expert
    private float[] probs;
    private int[] chosen;
    private float[] weights;
    private int[] start;
    private int[] order;
    private float[][] g; // per expert [its rows][width]: gate and up pre-activation, gated activation, output [rows][dim]
    private float[][] u;
    private float[][] act;
    private float[][] out;
    private int n;

    TrainMoe(MoeFfn moe) {
        this.moe = moe;
        this.experts = moe.experts();
        this.count = experts.length;
        this.used = moe.used();
        this.dim = moe.router().cols();
    }

    /** The FFN of {@code h} ({@code [n][dim]}), {@code [n][dim]}; keeps what {@link #backward} needs. */
    float[] forward(Backend backend, float[] h, int n) {
        this.n = n;
        probs = new float[n * count];
        chosen = new int[n * used];
        weights = new float[n * used];
        backend.matmul(moe.router(), h, probs, n);
        for (int b = 0; b < n; b++) {
            MoeRouting.route(probs, b * count, count, used, moe.normalize(), chosen, weights, b * used);
        }
        start = new int[count + 1];
        order = new int[n * used];
        MoeRouting.groupByExpert(chosen, n, used, count, start, order);
        g = new float[count][];
        u = new float[count][];
        act = new float[count][];
        out = new float[count][];
        float[] mixed = new float[n * used * dim];
        for (int e = 0; e < count; e++) {
            int rows = start[e + 1] - start[e];
            if (rows == 0) {
                continue;
            }
            GatedFfn f = experts[e];
            int w = f.width();
            float[] in = new float[rows * dim];
            for (int i = 0; i < rows; i++) {
                System.arraycopy(h, order[start[e] + i] / used * dim, in, i * dim, dim);
            }
            g[e] = new float[rows * w];
            u[e] = new float[rows * w];
            backend.matmul(f.gate(), g[e], f.up(), u[e], null, null, in, rows);
            act[e] = g[e].clone();
            if (f.activation() == GatedFfn.Activation.SILU) {
                backend.swiglu(act[e], u[e], rows, w);
            } else {
                backend.geglu(act[e], u[e], rows, w);
            }
            out[e] = new float[rows * dim];
            backend.matmul(f.down(), act[e], out[e], rows);
            for (int i = 0; i < rows; i++) {
                int choice = order[start[e] + i];
                float wt = weights[choice];
                for (int j = 0; j < dim; j++) {
                    mixed[choice * dim + j] = wt * out[e][i * dim + j];
                }
            }
        }
        float[] y = new float[n * dim];
        for (int b = 0; b < n; b++) { // rank order, best expert first, as the engine adds them
            System.arraycopy(mixed, b * used * dim, y, b * dim, dim);
            for (int k = 1; k < used; k++) {
                int m = (b * used + k) * dim;
                for (int j = 0; j < dim; j++) {
                    y[b * dim + j] += mixed[m + j];
                }
            }
        }
        return y;
    }

    /** {@code dh += ∂/∂h} of the last {@link #forward} given {@code dy} ({@code [n][dim]}). */
    void backward(Backend backend, float[] dy, float[] dh) {
        float[] dw = new float[n * used];
        for (int e = 0; e < count; e++) {
            int rows = start[e + 1] - start[e];
            if (rows == 0) {
                continue;
            }
            GatedFfn f = experts[e];
            int w = f.width();
            float[] dOut = new float[rows * dim];
            for (int i = 0; i < rows; i++) {
                int choice = order[start[e] + i];
                int row = choice / used;
                float wt = weights[choice];
                double dot = 0;
                for (int j = 0; j < dim; j++) {
                    float d = dy[row * dim + j];
                    dOut[i * dim + j] = wt * d;
                    dot += (double) d * out[e][i * dim + j];
                }
                dw[choice] = (float) dot;
            }
            float[] dact = new float[rows * w];
            backend.matmulTransposedAdd(f.down(), dOut, dact, rows);
            float[] dg = new float[rows * w];
            float[] du = new float[rows * w];
            TrainMath.gatedBack(f.activation() == GatedFfn.Activation.GELU, g[e], u[e], dact, dg, du, rows * w);
            float[] din = new float[rows * dim];
            backend.matmulTransposedAdd(f.gate(), dg, din, rows);
            backend.matmulTransposedAdd(f.up(), du, din, rows);
            for (int i = 0; i < rows; i++) {
                int row = order[start[e] + i] / used;
                for (int j = 0; j < dim; j++) {
                    dh[row * dim + j] += din[i * dim + j];
                }
            }
        }
        // the weights: p_k (optionally / Σ_kept p), p = softmax(router logits)
        float[] dz = new float[n * count];
        float[] dp = new float[count];
        for (int b = 0; b < n; b++) {
            java.util.Arrays.fill(dp, 0f);
            int co = b * used;
            int po = b * count;
            if (moe.normalize()) {
                double sum = 0;
                double wdw = 0;
                for (int k = 0; k < used; k++) {
                    sum += probs[po + chosen[co + k]];
                    wdw += (double) weights[co + k] * dw[co + k];
                }
                float total = Math.max((float) sum, MoeRouting.MIN_WEIGHT_SUM);
                boolean clamped = (float) sum < MoeRouting.MIN_WEIGHT_SUM;
                for (int k = 0; k < used; k++) { // w_k = p_k / Σ p: ∂/∂p_j = (dw_j − Σ w_k dw_k) / Σ p
                    dp[chosen[co + k]] = (float) ((dw[co + k] - (clamped ? 0 : wdw)) / total);
                }
            } else {
                for (int k = 0; k < used; k++) {
                    dp[chosen[co + k]] = dw[co + k];
                }
            }
            double dot = 0;
            for (int i = 0; i < count; i++) {
                dot += (double) probs[po + i] * dp[i];
            }
            for (int i = 0; i < count; i++) {
                dz[po + i] = (float) (probs[po + i] * (dp[i] - dot));
            }
        }
        backend.matmulTransposedAdd(moe.router(), dz, dh, n);
    }
}
