package ml.juno.engine.kernel;

import java.util.Arrays;
import java.util.Objects;

/**
 * Some of the routed experts of one mixture-of-experts layer step, to be run together ({@link Backend#experts}):
 * expert {@code k < count()} is a gated FFN {@code down(act(gate(x)) · up(x))} over the input rows routed to it, and
 * its output for each of those rows, times the row's routing weight, lands in that choice's row of {@link #mixed}.
 * Every expert's result depends only on its own rows and weights, so the experts may run in any order and on any
 * thread: a backend that spreads them over its threads gives the same bits as one that runs them one by one.
 *
 * <p>A choice is {@code row · used + rank}; the choices routed to expert {@code k} are
 * {@code choices[from(k) .. from(k) + rows(k))}. Reused step after step: {@link #clear}, {@link #add}, run.
 *
 * <p>An expert added with {@link #addIncoming} has its matrices over memory its bytes are still arriving in (a streamed
 * expert being read): whichever thread computes it first calls {@link #arrive}, which waits for the bytes, and skips
 * the expert when that says they failed (the source reports the failure afterwards). So the experts present run while
 * the missing ones are read, and a missing one runs on the first thread free once it lands.
 */
public final class ExpertBatch {
    /** Embedding width: the length of an input row and of an output row. */
    public final int dim;
    /** Experts each row uses (the stride of choices per row). */
    public final int used;
    /** The layer's input, {@code [batch][dim]}. */
    public final float[] x;
    /** Choices grouped by expert ({@code row · used + rank}), {@code [batch · used]}. */
    public final int[] choices;
    /** Routing weight of each choice, {@code [batch · used]}. */
    public final float[] weights;
    /** Output: each choice's weighted expert output, {@code [batch · used][dim]}. */
    public final float[] mixed;
    /**
     * Scratch of a backend that runs the experts one by one: gathered input rows and expert output,
     * {@code [batch][dim]}; gate and up products, {@code [batch][width]}.
     */
    public final float[] in;
    public final float[] out;
    public final float[] gate;
    public final float[] up;

    private final WeightMatrix[] gateW;
    private final WeightMatrix[] upW;
    private final WeightMatrix[] downW;
    private final int[] ids;
    private final int[] from;
    private final int[] rows;
    private final boolean[] incoming;
    private Arrivals arrivals;
    private boolean gelu;
    private int count;

    /**
     * A batch of up to {@code experts} experts; the arrays are the step's buffers (shapes above), shared with the
     * rest of the forward pass.
     */
    public ExpertBatch(int experts, int dim, int used, Buffers b) {
        if (experts <= 0 || dim <= 0 || used <= 0) {
            throw new IllegalArgumentException("bad expert batch: " + experts + " experts, dim " + dim + ", " + used + " used");
        }
        this.dim = dim;
        this.used = used;
        this.x = b.x();
        this.choices = b.choices();
        this.weights = b.weights();
        this.mixed = b.mixed();
        this.in = b.in();
        this.out = b.out();
        this.gate = b.gate();
        this.up = b.up();
        this.gateW = new WeightMatrix[experts];
        this.upW = new WeightMatrix[experts];
        this.downW = new WeightMatrix[experts];
        this.ids = new int[experts];
        this.from = new int[experts];
        this.rows = new int[experts];
        this.incoming = new boolean[experts];
    }

    /** Waits for an incoming expert's bytes; called on any thread, once per expert and step. */
    @FunctionalInterface
    public interface Arrivals {
        /** Waits until expert {@code id}'s bytes have arrived; {@code false} when their read failed. */
        boolean await(int id);
    }

    /** The step buffers an expert batch works in (see the fields of {@link ExpertBatch}). */
    public record Buffers(float[] x, int[] choices, float[] weights, float[] mixed, float[] in, float[] out, float[] gate,
                          float[] up) {}

    /** Empties the batch; {@code gelu}: the gate's activation is GELU (else SiLU) for the experts added next. */
    public void clear(boolean gelu) {
        Arrays.fill(gateW, 0, count, null);
        Arrays.fill(upW, 0, count, null);
        Arrays.fill(downW, 0, count, null);
        Arrays.fill(incoming, 0, count, false);
        this.arrivals = null;
        this.gelu = gelu;
        count = 0;
    }

    /** Adds expert {@code id}: its matrices and its choices {@code choices[from .. from + rows)}. */
    public void add(int id, WeightMatrix gate, WeightMatrix up, WeightMatrix down, int from, int rows) {
        if (count == gateW.length) {
            throw new IllegalStateException("expert batch is full (" + count + ")");
        }
        if (rows <= 0 || from < 0 || from + rows > choices.length || gate.cols() != dim || down.rows() != dim) {
            throw new IllegalArgumentException("bad expert: choices " + from + "+" + rows + " of " + choices.length
                    + ", gate " + gate.cols() + " wide, down " + down.rows() + " tall, dim " + dim);
        }
        ids[count] = id;
        gateW[count] = gate;
        upW[count] = up;
        downW[count] = down;
        this.from[count] = from;
        this.rows[count] = rows;
        count++;
    }

    /**
     * Adds expert {@code id} as {@link #add} does, its matrices over memory its bytes are still arriving in:
     * {@code arrivals} waits for them ({@link #arrive}); one waiter for the whole batch.
     */
    public void addIncoming(int id, WeightMatrix gate, WeightMatrix up, WeightMatrix down, int from, int rows, Arrivals arrivals) {
        if (this.arrivals != null && this.arrivals != arrivals) {
            throw new IllegalArgumentException("one waiter for the incoming experts of a batch");
        }
        add(id, gate, up, down, from, rows);
        this.arrivals = Objects.requireNonNull(arrivals, "arrivals");
        incoming[count - 1] = true;
    }

    /** Whether expert {@code k}'s bytes may still be arriving ({@link #addIncoming}). */
    public boolean incoming(int k) {
        return incoming[k];
    }

    /**
     * Before computing expert {@code k}: waits for its bytes if they are incoming; {@code false} when their read failed
     * (the expert is then skipped: its output is never used, the step fails).
     */
    public boolean arrive(int k) {
        return !incoming[k] || arrivals.await(ids[k]);
    }

    public int count() {
        return count;
    }

    /** Whether the gate's activation is GELU (else SiLU). */
    public boolean gelu() {
        return gelu;
    }

    /** The id (in its layer) of expert {@code k}. */
    public int id(int k) {
        return ids[k];
    }

    public WeightMatrix gate(int k) {
        return gateW[k];
    }

    public WeightMatrix up(int k) {
        return upW[k];
    }

    public WeightMatrix down(int k) {
        return downW[k];
    }

    /** Where expert {@code k}'s choices start in {@link #choices}. */
    public int from(int k) {
        return from[k];
    }

    /** Rows routed to expert {@code k}. */
    public int rows(int k) {
        return rows[k];
    }

    /** Copies expert {@code k}'s input rows, in choice order, into {@code dst} ({@code [rows(k)][dim]}). */
    public void gather(int k, float[] dst) {
        int f = from[k];
        for (int i = 0; i < rows[k]; i++) {
            System.arraycopy(x, choices[f + i] / used * dim, dst, i * dim, dim);
        }
    }

    /** Writes expert {@code k}'s outputs {@code src} ({@code [rows(k)][dim]}), each times its choice's weight, into {@link #mixed}. */
    public void scatter(int k, float[] src) {
        int f = from[k];
        for (int i = 0; i < rows[k]; i++) {
            int choice = choices[f + i];
            float w = weights[choice];
            int o = choice * dim;
            int so = i * dim;
            for (int j = 0; j < dim; j++) {
                mixed[o + j] = w * src[so + j];
            }
        }
    }
}
