package ml.juno.engine.model.block;

import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.WeightMatrix;

/** The gated FFN of Llama-family models: {@code down(silu(gate(x)) · up(x))}. */
public final class SwiGluFfn {
    private final WeightMatrix gate;
    private final WeightMatrix up;
    private final WeightMatrix down;

    public SwiGluFfn(WeightMatrix gate, WeightMatrix up, WeightMatrix down) {
        this.gate = gate;
        this.up = up;
        this.down = down;
    }

    public long weightBytes() {
        return gate.byteSize() + up.byteSize() + down.byteSize();
    }

    /** FFN of {@code s.xb} for the first {@code batch} rows into {@code s.proj}. */
    public void forward(Backend backend, ForwardState s, int batch) {
        backend.matmul(gate, s.xb, s.gate, batch);
        backend.matmul(up, s.xb, s.up, batch);
        backend.swiglu(s.gate, s.up, batch, gate.rows());
        backend.matmul(down, s.gate, s.proj, batch);
    }
}
