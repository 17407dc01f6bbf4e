package ml.juno.engine.lora;

import java.util.Objects;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.kernel.LowRank;
import ml.juno.engine.model.block.Projection;

/**
 * The factors of one adapted projection of one layer (whole, as in the base model, before any tensor-parallel
 * slicing): {@code a} is {@code [rank][in]}, {@code b} is {@code [out][rank]}, row-major F32; the delta is
 * {@code scale·B·A}.
 */
public record LoraPair(int layer, Projection target, int rank, int in, int out, float[] a, float[] b) {

    public LoraPair {
        Objects.requireNonNull(target, "target");
        if (layer < 0) {
            throw new IllegalArgumentException("negative LoRA layer " + layer);
        }
        if (rank <= 0) {
            throw new IllegalArgumentException("LoRA rank must be positive, layer " + layer + " " + target.shortName + " has rank " + rank);
        }
        new LowRank(name(layer, target), a, b, rank, in, out); // checks the shapes
    }

    /** {@code blk.N.<target>} for messages. */
    static String name(int layer, Projection target) {
        return "blk." + layer + "." + target.shortName;
    }

    /** The pair as the kernels take it. */
    public LowRank lowRank() {
        return new LowRank(name(layer, target), a, b, rank, in, out);
    }

    /** The input and output widths {@code target} has in a base of {@code shapes}. */
    public static int[] dims(Projection target, BaseFingerprint.Shapes shapes) {
        return switch (target) {
            case Q -> new int[] {shapes.embedding(), shapes.qDim()};
            case K, V -> new int[] {shapes.embedding(), shapes.kvDim()};
            case O -> new int[] {shapes.qDim(), shapes.embedding()};
            case GATE, UP -> new int[] {shapes.embedding(), shapes.ffn()};
            case DOWN -> new int[] {shapes.ffn(), shapes.embedding()};
        };
    }

    /** The base tensor (without {@code blk.N.} and {@code .weight}) that holds {@code target}, unfused. */
    static String tensor(Projection target) {
        return switch (target) {
            case Q -> TensorNames.ATTN_Q;
            case K -> TensorNames.ATTN_K;
            case V -> TensorNames.ATTN_V;
            case O -> TensorNames.ATTN_OUT;
            case GATE -> TensorNames.FFN_GATE;
            case UP -> TensorNames.FFN_UP;
            case DOWN -> TensorNames.FFN_DOWN;
        };
    }
}
