package ml.juno.coordinator.api;

import io.quarkus.logging.LoggingFilter;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.logging.Filter;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * A client that hangs up (closes its connection mid-body or mid-stream, resets it) is ordinary, not a server error. Any
 * log record whose exception is such a hang-up ({@link #isHangup}: Vert.x's {@code HttpClosedException}, Netty's
 * {@code IllegalReferenceCountException} from a write after close, a closed channel, "Connection reset by peer",
 * "Broken pipe") is turned into one INFO line without a stack trace, whoever logs it (the console handler's filter
 * {@code client-hangup}, {@code quarkus.log.console.filter}).
 */
@LoggingFilter(name = "client-hangup")
public final class ClientHangups implements Filter {

    private static final int MAX_DEPTH = 16;

    /** Whether {@code t} (or what caused it) only says the client went away. */
    public static boolean isHangup(Throwable t) {
        int depth = 0;
        for (Throwable c = t; c != null && depth < MAX_DEPTH; c = c.getCause() == c ? null : c.getCause(), depth++) {
            String type = c.getClass().getName();
            if (type.equals("io.vertx.core.http.HttpClosedException") || type.equals("io.netty.util.IllegalReferenceCountException")
                    || type.equals("io.netty.channel.StacklessClosedChannelException") || c instanceof ClosedChannelException) {
                return true;
            }
            String m = c.getMessage();
            if (c instanceof IOException && m != null && (m.contains("Connection reset by peer") || m.contains("Broken pipe")
                    || m.contains("Connection was closed"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code record} is Mutiny dropping a gRPC status error (a node's step stream ending with UNAVAILABLE,
     * CANCELLED, …) that arrived after the coordinator had already closed or replaced that stream: the link reported
     * the node's failure on its own path, so the late error is news for no one.
     */
    static boolean isDroppedStreamEnd(LogRecord record) {
        String logger = record.getLoggerName();
        String message = record.getMessage();
        boolean mutiny = (logger != null && logger.startsWith("io.quarkus.mutiny"))
                || (message != null && message.startsWith("Mutiny had to drop"));
        return mutiny && record.getThrown() != null
                && record.getThrown().getClass().getName().equals("io.grpc.StatusRuntimeException");
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        Throwable t = record.getThrown();
        if (t != null && record.getLevel().intValue() > Level.INFO.intValue() && isHangup(t)) {
            record.setLevel(Level.INFO);
            record.setThrown(null);
            record.setMessage("a client hung up (" + rootMessage(t) + ")");
            record.setParameters(null);
        } else if (t != null && record.getLevel().intValue() > Level.INFO.intValue() && isDroppedStreamEnd(record)) {
            record.setLevel(Level.INFO);
            record.setThrown(null);
            record.setMessage("a node's closed step stream ended late (" + t.getMessage() + ")");
            record.setParameters(null);
        }
        return true;
    }

    private static String rootMessage(Throwable t) {
        Throwable c = t;
        for (int i = 0; i < MAX_DEPTH && c.getCause() != null && c.getCause() != c; i++) {
            c = c.getCause();
        }
        return c.getClass().getSimpleName() + (c.getMessage() == null ? "" : ": " + c.getMessage());
    }
}
