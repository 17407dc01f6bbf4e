package ml.juno.coordinator.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One iteration of the generation loop: schedule → execute → update → deliver. Its duration is the step latency. */
@Name(SchedulerStepEvent.NAME)
@Label("Scheduler Step")
@Category({"Juno", "Coordinator"})
@Description("One schedule/execute/update iteration of the generation loop")
@StackTrace(false)
public final class SchedulerStepEvent extends Event {
    public static final String NAME = "juno.SchedulerStep";
    private static final SchedulerStepEvent PROBE = new SchedulerStepEvent();

    @Label("Step")
    long stepId;

    @Label("Batch Rows")
    @Description("Sequences in the step")
    int batchRows;

    @Label("Prefill Tokens")
    @Description("Tokens of rows with more than one token (prompt chunks)")
    int prefillTokens;

    @Label("Decode Tokens")
    @Description("Rows of one token (decoding; a one-token prompt chunk counts here too)")
    int decodeTokens;

    @Label("Tokens Produced")
    @Description("Tokens streamed to clients by this step")
    int tokensProduced;

    public static boolean enabled() {
        return PROBE.isEnabled();
    }

    /** A started event, or {@code null} when no recording wants it (nothing allocated then). */
    public static SchedulerStepEvent startIfEnabled() {
        if (!PROBE.isEnabled()) {
            return null;
        }
        SchedulerStepEvent e = new SchedulerStepEvent();
        e.begin();
        return e;
    }

    /** Ends and commits the step. */
    public void finish(long stepId, int batchRows, int prefillTokens, int decodeTokens, int tokensProduced) {
        end();
        if (shouldCommit()) {
            this.stepId = stepId;
            this.batchRows = batchRows;
            this.prefillTokens = prefillTokens;
            this.decodeTokens = decodeTokens;
            this.tokensProduced = tokensProduced;
            commit();
        }
    }
}
