package ml.juno.engine.model.block;

import ml.juno.engine.kernel.BatchRows;
import ml.juno.engine.kernel.ExpertBatch;

/**
 * Preallocated activation buffers for one forward step of up to {@code capacity} rows, all row-major
 * {@code [row][width]}. Created once per session; the per-token path allocates nothing.
 */
public final class ForwardState {
    public final int capacity;
    /** Residual stream, {@code [capacity][embedding]}: input hidden states, output hidden states. */
    public final float[] x;
    /** Normalized input of the current block, {@code [capacity][embedding]}. */
    public final float[] xb;
    /** Block output before the residual add, {@code [capacity][embedding]}. */
    public final float[] proj;
    /** Queries and attention output, {@code [capacity][heads·headDim]} (this shard's heads). */
    public final float[] q;
    public final float[] att;
    /** Keys and values of the rows, {@code [capacity][kvHeads·headDim]}. */
    public final float[] k;
    public final float[] v;
    /** FFN gate and up projections, {@code [capacity][ffn]} (this shard's slice). */
    public final float[] gate;
    public final float[] up;
    /** RoPE cos/sin of each row's position, {@code [capacity][ropeDims/2]}. */
    public final float[] cos;
    public final float[] sin;
    /** Sequence slot and position of each row. */
    public final BatchRows rows;
    /** Token of each row (first shard only). */
    public final int[] tokens;
    /** MoE router probabilities, {@code [capacity][experts]}; empty for dense models. */
    public final float[] routerProbs;
    /** MoE: the experts each row chose and their weights, {@code [capacity][used]}, best first. */
    public final int[] chosenExperts;
    public final float[] expertWeights;
    /** MoE: rows grouped by expert ({@code [capacity·used]}, expert {@code e} at {@code expertStart[e] ..}). */
    public final int[] expertRows;
    public final int[] expertStart;
    /** MoE: one expert's input rows gathered, and its output, {@code [capacity][embedding]} (scratch of {@link #experts}). */
    public final float[] expertIn;
    public final float[] expertOut;
    /** MoE: each row's weighted expert outputs by rank, {@code [capacity][used][embedding]}, summed in rank order. */
    public final float[] expertMixed;
    /** MoE: the experts of a layer step run together, over the buffers above ({@code null} for dense models). */
    public final ExpertBatch experts;
    /** MoE: a layer step's experts in ascending id and whether each has run, {@code [experts]}. */
    public final int[] expertOrder;
    public final boolean[] expertRan;
    /** LoRA: the named adapter of each row (0: none; adapters played for every row apply regardless), {@code [capacity]}. */
    public final int[] adapter;
    /** LoRA: one term's scale per row, {@code [capacity]}, and the rank-wide scratch {@code [capacity][rank]} (sized on first use). */
    final float[] loraScale;
    float[] loraTmp = new float[0];

    public ForwardState(int capacity, BufferSizes sizes) {
        this(capacity, sizes, Routing.NONE);
    }

    public ForwardState(int capacity, BufferSizes sizes, Routing routing) {
        this.capacity = capacity;
        this.x = new float[capacity * sizes.embedding()];
        this.xb = new float[capacity * sizes.embedding()];
        this.proj = new float[capacity * sizes.embedding()];
        this.q = new float[capacity * sizes.qDim()];
        this.att = new float[capacity * sizes.qDim()];
        this.k = new float[capacity * sizes.kvDim()];
        this.v = new float[capacity * sizes.kvDim()];
        this.gate = new float[capacity * sizes.ffn()];
        this.up = new float[capacity * sizes.ffn()];
        this.cos = new float[capacity * sizes.ropeHalf()];
        this.sin = new float[capacity * sizes.ropeHalf()];
        this.rows = new BatchRows(capacity);
        this.tokens = new int[capacity];
        boolean moe = routing.experts() > 0;
        this.routerProbs = new float[capacity * routing.experts()];
        this.chosenExperts = new int[capacity * routing.used()];
        this.expertWeights = new float[capacity * routing.used()];
        this.expertRows = new int[capacity * routing.used()];
        this.expertStart = new int[routing.experts() + 1];
        this.expertIn = new float[moe ? capacity * sizes.embedding() : 0];
        this.expertOut = new float[moe ? capacity * sizes.embedding() : 0];
        this.expertMixed = new float[moe ? capacity * routing.used() * sizes.embedding() : 0];
        this.experts = moe ? new ExpertBatch(routing.experts(), sizes.embedding(), routing.used(), new ExpertBatch.Buffers(
                xb, expertRows, expertWeights, expertMixed, expertIn, expertOut, gate, up)) : null;
        this.expertOrder = new int[routing.experts()];
        this.expertRan = new boolean[routing.experts()];
        this.adapter = new int[capacity];
        this.loraScale = new float[capacity];
    }

    /** Widths of the per-row buffers. */
    public record BufferSizes(int embedding, int qDim, int kvDim, int ffn, int ropeHalf) {}

    /** Mixture-of-experts routing sizes: experts per layer and experts used per token ({@link #NONE}: dense). */
    public record Routing(int experts, int used) {
        public static final Routing NONE = new Routing(0, 0);

        public Routing {
            if (experts < 0 || used < 0 || used > experts || (experts > 0) != (used > 0)) {
                throw new IllegalArgumentException("bad routing: " + used + " of " + experts + " experts");
            }
        }
    }
}
