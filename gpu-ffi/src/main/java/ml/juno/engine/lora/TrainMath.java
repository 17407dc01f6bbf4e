package ml.juno.engine.lora;

import ml.juno.engine.kernel.AttentionShape;

/**
 * The element-wise and attention pieces of {@link LoraTrainer}'s forward and backward passes that the {@code Backend}
 * has no operation for: the RMSNorm and activation derivatives and the probabilities and backward pass of causal
 * (optionally windowed) grouped-query attention over one sequence. Plain loops over {@code [rows][width]} arrays.
 */
final class TrainMath {
    private static final double SQRT_2_OVER_PI = Math.sqrt(2.0 / Math.PI);
    private static final double GELU_COEF_A = 0.044715;

    private TrainMath() {}

    /**
     * {@code dx += ∂/∂x} of {@code y = x·r·w}, {@code r = (mean(x²)+eps)^-½}, for {@code rows} rows of {@code width}
     * ({@code x}, {@code dy}, {@code dx}: {@code [rows][width]}; {@code w}: {@code [width]}).
     */
    static void rmsBack(float[] x, float[] w, float eps, float[] dy, float[] dx, int rows, int width) {
        for (int i = 0; i < rows; i++) {
            int o = i * width;
            double ss = 0;
            double dot = 0;
            for (int j = 0; j < width; j++) {
                ss += (double) x[o + j] * x[o + j];
                dot += (double) dy[o + j] * w[j] * x[o + j];
            }
            double r = 1.0 / Math.sqrt(ss / width + eps);
            double c = r * r * r * dot / width;
            for (int j = 0; j < width; j++) {
                dx[o + j] += (float) (r * w[j] * dy[o + j] - c * x[o + j]);
            }
        }
    }

    /** The tanh approximation of GELU (what ggml tabulates in F16), in double. */
    static double gelu(double g) {
        return 0.5 * g * (1 + Math.tanh(SQRT_2_OVER_PI * g * (1 + GELU_COEF_A * g * g)));
    }

    /** The derivative of {@link #gelu}. */
    static double geluGrad(double g) {
        double t = Math.tanh(SQRT_2_OVER_PI * g * (1 + GELU_COEF_A * g * g));
        return 0.5 * (1 + t) + 0.5 * g * (1 - t * t) * SQRT_2_OVER_PI * (1 + 3 * GELU_COEF_A * g * g);
    }

    /** {@code gate[i] = gelu(gate[i])·up[i]} with the smooth {@link #gelu} (no F16 table). */
    static void smoothGeglu(float[] gate, float[] up, int n) {
        for (int i = 0; i < n; i++) {
            gate[i] = (float) (gelu(gate[i]) * up[i]);
        }
    }

    /**
     * The backward pass of {@code act = f(g)·u} ({@code f} SiLU, or GELU when {@code gelu}): {@code dg} and {@code du}
     * (overwritten) from {@code dact}, all {@code [n]}.
     */
    static void gatedBack(boolean gelu, float[] g, float[] u, float[] dact, float[] dg, float[] du, int n) {
        for (int i = 0; i < n; i++) {
            double x = g[i];
            if (gelu) {
                du[i] = (float) (dact[i] * gelu(x));
                dg[i] = (float) (dact[i] * u[i] * geluGrad(x));
            } else {
                double sg = 1.0 / (1.0 + Math.exp(-x));
                du[i] = (float) (dact[i] * x * sg);
                dg[i] = (float) (dact[i] * u[i] * sg * (1 + x * (1 - sg)));
            }
        }
    }

    /** The first position row {@code t} attends to: {@code t - window + 1} within a sliding window, else 0. */
    static int first(int t, int window) {
        return window > 0 ? Math.max(0, t - window + 1) : 0;
    }

    /**
     * The attention probabilities of causal grouped-query attention over one sequence of {@code n} positions
     * ({@code q}: {@code [n][qDim]}, {@code k}: {@code [n][kvDim]}), keys at distance {@code >= window} masked when
     * {@code window > 0}, into {@code probs} ({@code [heads][n][n]}, zero where masked). The forward pass takes the
     * engine's attention output; these (in double, where the engine uses ggml's exp) are for the backward pass.
     */
    static void probabilities(AttentionShape att, int window, float[] q, float[] k, float[] probs, int n) {
        int hd = att.headDim();
        int qd = att.qDim();
        int kvd = att.kvDim();
        int group = att.heads() / att.kvHeads();
        for (int h = 0; h < att.heads(); h++) {
            int kh = h / group;
            for (int t = 0; t < n; t++) {
                int po = (h * n + t) * n;
                int lo = first(t, window);
                double max = Double.NEGATIVE_INFINITY;
                for (int u = lo; u <= t; u++) {
                    float sc = 0;
                    for (int d = 0; d < hd; d++) {
                        sc += q[t * qd + h * hd + d] * k[u * kvd + kh * hd + d];
                    }
                    probs[po + u] = sc * att.scale();
                    max = Math.max(max, probs[po + u]);
                }
                double sum = 0;
                for (int u = lo; u <= t; u++) {
                    double e = Math.exp(probs[po + u] - max);
                    probs[po + u] = (float) e;
                    sum += e;
                }
                for (int u = lo; u <= t; u++) {
                    probs[po + u] = (float) (probs[po + u] / sum);
                }
            }
        }
    }

    /**
     * The backward pass of attention with the {@link #probabilities} {@code probs}: {@code dq}, {@code dk}, {@code dv}
     * accumulated from {@code dout}.
     */
    static void attentionBack(AttentionShape att, int window, float[] q, float[] k, float[] v, float[] probs, float[] dout,
                              float[] dq, float[] dk, float[] dv, int n) {
        int hd = att.headDim();
        int qd = att.qDim();
        int kvd = att.kvDim();
        int group = att.heads() / att.kvHeads();
        float[] dp = new float[n];
        for (int h = 0; h < att.heads(); h++) {
            int kh = h / group;
            for (int t = 0; t < n; t++) {
                int po = (h * n + t) * n;
                int lo = first(t, window);
                double dot = 0;
                for (int u = lo; u <= t; u++) {
                    float sum = 0;
                    for (int d = 0; d < hd; d++) {
                        sum += dout[t * qd + h * hd + d] * v[u * kvd + kh * hd + d];
                    }
                    dp[u] = sum;
                    dot += (double) probs[po + u] * sum;
                    float p = probs[po + u];
                    for (int d = 0; d < hd; d++) {
                        dv[u * kvd + kh * hd + d] += p * dout[t * qd + h * hd + d];
                    }
                }
                for (int u = lo; u <= t; u++) {
                    float ds = (float) (probs[po + u] * (dp[u] - dot)) * att.scale();
                    for (int d = 0; d < hd; d++) {
                        dq[t * qd + h * hd + d] += ds * k[u * kvd + kh * hd + d];
                        dk[u * kvd + kh * hd + d] += ds * q[t * qd + h * hd + d];
                    }
                }
            }
        }
    }
}
