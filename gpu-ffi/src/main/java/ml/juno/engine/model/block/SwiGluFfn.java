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
        int ffn = gate.rows();
        if (batch == 1) {
            backend.swiglu(s.gate, s.up, ffn);
        } else {
            // Row by row through a one-row buffer: a vector kernel over the whole [batch][ffn] block would send the
            // last (batch·ffn mod lanes) elements down its scalar tail, so a row's values would depend on the batch
            // size whenever ffn is not a multiple of the vector length (stories260K: ffn 172). Copying costs
            // 3·ffn floats per row, nothing next to the three matmuls.
            for (int b = 0; b < batch; b++) {
                System.arraycopy(s.gate, b * ffn, s.rowGate, 0, ffn);
                System.arraycopy(s.up, b * ffn, s.rowUp, 0, ffn);
                backend.swiglu(s.rowGate, s.rowUp, ffn);
                System.arraycopy(s.rowGate, 0, s.gate, b * ffn, ffn);
            }
        }
        backend.matmul(down, s.gate, s.proj, batch);
    }
}
