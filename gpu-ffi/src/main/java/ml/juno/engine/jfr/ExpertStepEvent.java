package ml.juno.engine.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * One forward step's streamed experts (an expert store, {@code --expert-cache}) over all MoE layers of the shard: hits
 * in the RAM tier, experts read, bytes read, the longest read queue, and the inference thread's time waiting for reads
 * and computing experts. Its duration is from the first MoE layer's routing to the last one's end.
 */
@Name(ExpertStepEvent.NAME)
@Label("Expert Streaming Step")
@Category({"Juno", "Engine"})
@Description("Streamed mixture-of-experts traffic of one forward step")
@StackTrace(false)
public final class ExpertStepEvent extends Event {
    public static final String NAME = "juno.ExpertStep";

    private static final ExpertStepEvent PROBE = new ExpertStepEvent();

    @Label("Rows")
    int rows;

    @Label("Hits")
    @Description("Expert uses served from the RAM tier")
    int hits;

    @Label("Misses")
    @Description("Experts read from the file")
    int misses;

    @Label("Bytes Read")
    @DataAmount
    long bytesRead;

    @Label("Max Reads In Flight")
    int maxReadsInFlight;

    @Label("Read Wait")
    @Timespan
    long readWait;

    @Label("Expert Compute")
    @Timespan
    long compute;

    public static boolean enabled() {
        return PROBE.isEnabled();
    }

    /** A started event; call only when {@link #enabled()}. */
    public static ExpertStepEvent start() {
        ExpertStepEvent e = new ExpertStepEvent();
        e.begin();
        return e;
    }

    /** Ends the step and commits it with its figures (nanoseconds for the times). */
    public void finish(int rows, int hits, int misses, long bytesRead, int maxReadsInFlight, long readWaitNanos,
                       long computeNanos) {
        end();
        if (shouldCommit()) {
            this.rows = rows;
            this.hits = hits;
            this.misses = misses;
            this.bytesRead = bytesRead;
            this.maxReadsInFlight = maxReadsInFlight;
            this.readWait = readWaitNanos;
            this.compute = computeNanos;
            commit();
        }
    }
}
