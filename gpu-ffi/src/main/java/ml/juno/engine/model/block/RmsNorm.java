package ml.juno.engine.model.block;

import ml.juno.engine.kernel.Backend;

/** RMS normalization with a learned per-channel weight. */
public final class RmsNorm {
    private final float[] weight;
    private final float eps;

    public RmsNorm(float[] weight, float eps) {
        this.weight = weight;
        this.eps = eps;
    }

    public int width() {
        return weight.length;
    }

    /** A copy of the per-channel weight. */
    public float[] weight() {
        return weight.clone();
    }

    public float eps() {
        return eps;
    }

    /** {@code out[b] = norm(x[b]) · weight} for {@code b < batch}. */
    public void apply(Backend backend, float[] x, float[] out, int batch) {
        backend.rmsNorm(x, weight, eps, out, batch, weight.length);
    }
}
