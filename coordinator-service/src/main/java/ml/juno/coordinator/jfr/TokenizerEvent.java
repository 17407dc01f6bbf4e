package ml.juno.coordinator.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One text → token ids encoding. */
@Name(TokenizerEvent.NAME)
@Label("Tokenizer")
@Category({"Juno", "Coordinator"})
@StackTrace(false)
public final class TokenizerEvent extends Event {
    public static final String NAME = "juno.Tokenizer";
    private static final TokenizerEvent PROBE = new TokenizerEvent();

    @Label("Input Bytes")
    @DataAmount
    int bytes;

    @Label("Tokens")
    int tokens;

    /** A started event, or {@code null} when no recording wants it. */
    public static TokenizerEvent startIfEnabled() {
        if (!PROBE.isEnabled()) {
            return null;
        }
        TokenizerEvent e = new TokenizerEvent();
        e.begin();
        return e;
    }

    /** Ends and commits; a {@code null} event (recording off) is ignored. */
    public static void finish(TokenizerEvent e, int bytes, int tokens) {
        if (e == null) {
            return;
        }
        e.end();
        if (e.shouldCommit()) {
            e.bytes = bytes;
            e.tokens = tokens;
            e.commit();
        }
    }
}
