package ml.juno.engine.model.block;

import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.WeightMatrix;

/**
 * The gated FFN {@code down(act(gate(x)) · up(x))}: SiLU (SwiGLU: llama, qwen, phi3) or GELU (gemma). Also one expert
 * of a mixture of experts.
 */
public final class GatedFfn implements FeedForward {
    private final WeightMatrix gate;
    private final WeightMatrix up;
    private final WeightMatrix down;
    private final Activation activation;

    /** The gate's activation. */
    public enum Activation { SILU, GELU }

    public GatedFfn(WeightMatrix gate, WeightMatrix up, WeightMatrix down, Activation activation) {
        if (gate.rows() != up.rows() || down.cols() != gate.rows() || gate.cols() != up.cols()) {
            throw new IllegalArgumentException("FFN shapes disagree: gate " + gate.cols() + "x" + gate.rows() + ", up "
                    + up.cols() + "x" + up.rows() + ", down " + down.cols() + "x" + down.rows());
        }
        this.gate = gate;
        this.up = up;
        this.down = down;
        this.activation = activation;
    }

    public WeightMatrix gate() {
        return gate;
    }

    public WeightMatrix up() {
        return up;
    }

    public WeightMatrix down() {
        return down;
    }

    public Activation activation() {
        return activation;
    }

    /** Hidden width (this shard's slice). */
    public int width() {
        return gate.rows();
    }

    @Override
    public long weightBytes() {
        return gate.byteSize() + up.byteSize() + down.byteSize();
    }

    @Override
    public void streamedMatrices(java.util.function.Consumer<WeightMatrix> to) {
        to.accept(gate);
        to.accept(up);
        to.accept(down);
    }

    @Override
    public void forward(Backend backend, ForwardState s, int batch) {
        forward(backend, s.xb, s, batch, s.proj, null);
    }

    @Override
    public void forward(Backend backend, ForwardState s, int batch, LayerLora lora) {
        forward(backend, s.xb, s, batch, s.proj, lora);
    }

    @Override
    public void checkLora(LayerLora lora, String where) {
        lora.check(Projection.GATE, gate.cols(), gate.rows(), where);
        lora.check(Projection.UP, up.cols(), up.rows(), where);
        lora.check(Projection.DOWN, down.cols(), down.rows(), where);
    }

    /** FFN of the first {@code batch} rows of {@code in} into {@code out}, through {@code s.gate}/{@code s.up}. */
    void forward(Backend backend, float[] in, ForwardState s, int batch, float[] out) {
        forward(backend, in, s, batch, out, null);
    }

    private void forward(Backend backend, float[] in, ForwardState s, int batch, float[] out, LayerLora lora) {
        backend.matmul(gate, s.gate, up, s.up, null, null, in, batch);
        if (lora != null) {
            lora.apply(backend, Projection.GATE, in, s.gate, batch, s);
            lora.apply(backend, Projection.UP, in, s.up, batch, s);
        }
        if (activation == Activation.SILU) {
            backend.swiglu(s.gate, s.up, batch, gate.rows());
        } else {
            backend.geglu(s.gate, s.up, batch, gate.rows());
        }
        backend.matmul(down, s.gate, out, batch);
        LayerLora.apply(lora, backend, Projection.DOWN, s.gate, out, batch, s);
    }
}
