package ml.juno.engine.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * One forward step of an inference session over a batch of rows, on the shard it holds. Its duration is the whole
 * step (layers and, on the last shard, the output head).
 */
@Name(ForwardPassEvent.NAME)
@Label("Forward Pass")
@Category({"Juno", "Engine"})
@Description("One forward step over a batch of rows on one shard")
@StackTrace(false)
public final class ForwardPassEvent extends Event {
    public static final String NAME = "juno.ForwardPass";

    /** Asked on every step: reads only static state, so checking costs no allocation. */
    private static final ForwardPassEvent PROBE = new ForwardPassEvent();

    @Label("Rows")
    @Description("Rows (tokens) in the batch")
    int rows;

    @Label("Logit Rows")
    @Description("Rows whose logits were computed")
    int logitRows;

    @Label("First Layer")
    int firstLayer;

    @Label("End Layer")
    @Description("One past the last layer of the shard")
    int endLayer;

    @Label("Tensor Rank")
    int tensorRank;

    @Label("Tensor Parts")
    int tensorParts;

    /** True while a recording has this event enabled. */
    public static boolean enabled() {
        return PROBE.isEnabled();
    }

    /** A started event; call only when {@link #enabled()}. */
    public static ForwardPassEvent start() {
        ForwardPassEvent e = new ForwardPassEvent();
        e.begin();
        return e;
    }

    /** Ends the step and commits it with its figures. */
    public void finish(int rows, int logitRows, int firstLayer, int endLayer, int tensorRank, int tensorParts) {
        end();
        if (shouldCommit()) {
            this.rows = rows;
            this.logitRows = logitRows;
            this.firstLayer = firstLayer;
            this.endLayer = endLayer;
            this.tensorRank = tensorRank;
            this.tensorParts = tensorParts;
            commit();
        }
    }
}
