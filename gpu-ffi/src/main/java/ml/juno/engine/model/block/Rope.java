package ml.juno.engine.model.block;

import ml.juno.engine.kernel.BatchRows;

/**
 * Rotary position embedding angles, computed as ggml does ({@code ggml_rope_cache_init}): the angle of pair {@code i}
 * at position {@code p} is {@code freqScale · p · base^(-2i/dims) / factor[i]}, with the power built by repeated float
 * multiplication. {@code factors} are the optional per-pair frequency factors (Llama-3 scaling, the
 * {@code rope_freqs.weight} tensor); {@code null} means all 1.
 */
public final class Rope {
    private final int dims;
    private final float thetaScale;
    private final float freqScale;
    private final float[] factors;
    private final boolean neox;
    private final float attnFactor;

    public Rope(int dims, float freqBase, float freqScale, float[] factors, boolean neox) {
        this(dims, freqBase, freqScale, factors, neox, 1f);
    }

    /** {@code attnFactor} scales cos and sin (ggml's {@code attn_factor}, LongRoPE's magnitude correction). */
    public Rope(int dims, float freqBase, float freqScale, float[] factors, boolean neox, float attnFactor) {
        if (factors != null && factors.length != dims / 2) {
            throw new IllegalArgumentException("rope frequency factors have " + factors.length + " entries, expected " + dims / 2);
        }
        this.dims = dims;
        this.thetaScale = (float) Math.pow(freqBase, -2.0f / dims);
        this.freqScale = freqScale;
        this.factors = factors;
        this.neox = neox;
        this.attnFactor = attnFactor;
    }

    public int dims() {
        return dims;
    }

    public boolean neox() {
        return neox;
    }

    /** Fills {@code cos}/{@code sin} ({@code [row][dims/2]}) for the positions of the first {@code batch} rows. */
    public void angles(BatchRows rows, int batch, float[] cos, float[] sin) {
        int half = dims / 2;
        for (int b = 0; b < batch; b++) {
            float theta = rows.position(b);
            for (int i = 0; i < half; i++) {
                float ff = factors == null ? 1f : factors[i];
                float t = freqScale * (theta / ff);
                cos[b * half + i] = (float) Math.cos(t) * attnFactor;
                sin[b * half + i] = (float) Math.sin(t) * attnFactor;
                theta *= thetaScale;
            }
        }
    }
}
