package ml.juno.engine.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import ml.juno.engine.kernel.WeightMatrix;

/**
 * One matrix product {@code out[batch][rows] = x[batch][cols] · Wᵀ}. Off even in a recording unless enabled
 * explicitly ({@code +juno.MatMul#enabled=true}, or {@code juno local --jfr-matmul}): there are several per layer
 * per step.
 *
 * <p>A backend times itself by calling {@link #enter} at the top of its matmul and, when that returns true, running
 * the same matmul again inside {@code try { … } finally { exit(); }}; the nested call sees the event already open
 * on this thread and runs the kernel plainly.
 */
@Name(MatMulEvent.NAME)
@Label("Matrix Multiplication")
@Category({"Juno", "Engine"})
@Description("One weight-matrix product over a batch of activation rows")
@StackTrace(false)
@Enabled(false)
public final class MatMulEvent extends Event {
    public static final String NAME = "juno.MatMul";

    private static final MatMulEvent PROBE = new MatMulEvent();
    /** The event open on this thread (set only while recording). */
    private static final ThreadLocal<MatMulEvent> OPEN = new ThreadLocal<>();

    @Label("Backend")
    String backend;

    @Label("Tensor")
    String tensor;

    @Label("Type")
    @Description("ggml block type of the weights")
    String type;

    @Label("Rows")
    @Description("Weight rows (output features)")
    int rows;

    @Label("Columns")
    @Description("Weight columns (input features)")
    int cols;

    @Label("Batch")
    @Description("Activation rows multiplied")
    int batch;

    /** True while a recording has this event enabled. */
    public static boolean enabled() {
        return PROBE.isEnabled();
    }

    /**
     * Opens the event for this matmul. False when one is already open on this thread (the caller is the timed, nested
     * call and just computes).
     */
    public static boolean enter(String backend, WeightMatrix w, int batch) {
        if (OPEN.get() != null) {
            return false;
        }
        MatMulEvent e = new MatMulEvent();
        e.backend = backend;
        e.tensor = w.name();
        e.type = w.type().name();
        e.rows = w.rows();
        e.cols = w.cols();
        e.batch = batch;
        OPEN.set(e);
        e.begin();
        return true;
    }

    /** Closes and commits the event opened by {@link #enter}. */
    public static void exit() {
        MatMulEvent e = OPEN.get();
        OPEN.remove();
        if (e != null) {
            e.end();
            if (e.shouldCommit()) {
                e.commit();
            }
        }
    }
}
