package ml.juno.coordinator.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * A generated token handed to its request (an instant event). The first token of a sequence carries the time to
 * first token in {@code sinceSubmit}.
 */
@Name(TokenProducedEvent.NAME)
@Label("Token Produced")
@Category({"Juno", "Coordinator"})
@Description("A generated token delivered to its request")
@StackTrace(false)
public final class TokenProducedEvent extends Event {
    public static final String NAME = "juno.TokenProduced";
    private static final TokenProducedEvent PROBE = new TokenProducedEvent();

    @Label("Sequence")
    long sequenceId;

    @Label("Token")
    int tokenId;

    @Label("Index")
    @Description("1 for the sequence's first generated token")
    int index;

    @Label("Since Submit")
    @Description("Time from the request's submission to this token")
    @Timespan(Timespan.NANOSECONDS)
    long sinceSubmit;

    public static boolean enabled() {
        return PROBE.isEnabled();
    }

    /** Commits one token; call only when {@link #enabled()}. */
    public static void emit(long sequenceId, int tokenId, int index, long sinceSubmitNanos) {
        TokenProducedEvent e = new TokenProducedEvent();
        if (e.shouldCommit()) {
            e.sequenceId = sequenceId;
            e.tokenId = tokenId;
            e.index = index;
            e.sinceSubmit = sinceSubmitNanos;
            e.commit();
        }
    }
}
