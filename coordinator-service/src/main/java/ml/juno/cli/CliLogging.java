package ml.juno.cli;

import java.io.PrintStream;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Logging of the {@code juno} process itself (the tool commands: {@code bench}, {@code chat}, {@code generate}, … run
 * the engine, and with {@code bench --nodes} the coordinator, in this JVM): warnings and errors on standard error,
 * one line each, nothing below.
 *
 * <p>Without this the process had the log manager's defaults: every logger at {@code ALL} and, as its only handler,
 * Quarkus's start-up queue, which keeps records for a server's log configuration that never comes in this JVM. Every
 * trace and debug call (a line per step and per hop to a node, Netty's frame logs) was formatted and queued, and
 * warnings were never shown.
 */
final class CliLogging {

    private CliLogging() {
    }

    /** For this process: the JBoss log manager where it is on the class path (as in the servers), then {@link #configure}. */
    static void install(PrintStream err) {
        if (System.getProperty("java.util.logging.manager") == null && onClassPath(JBOSS_LOG_MANAGER)) {
            // as the servers run: the logging behind System.Logger, JBoss Logging and Netty's loggers is the same one
            System.setProperty("java.util.logging.manager", JBOSS_LOG_MANAGER);
        }
        configure(Logger.getLogger(""), err);
    }

    /** Replaces {@code root}'s handlers by one on {@code err} and sets its level to {@code WARNING}. */
    static void configure(Logger root, PrintStream err) {
        for (Handler h : root.getHandlers()) {
            root.removeHandler(h);
        }
        Handler line = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (isLoggable(r)) {
                    err.print(getFormatter().format(r));
                    err.flush();
                }
            }

            @Override
            public void flush() {
                err.flush();
            }

            @Override
            public void close() {
                err.flush();
            }
        };
        line.setFormatter(new OneLine());
        line.setLevel(Level.WARNING);
        root.addHandler(line);
        root.setLevel(Level.WARNING);
    }

    private static final String JBOSS_LOG_MANAGER = "org.jboss.logmanager.LogManager";

    private static boolean onClassPath(String name) {
        try {
            Class.forName(name, false, CliLogging.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError absent) {
            return false;
        }
    }

    /** {@code juno: WARNING logger: message}, then the exception's stack trace when there is one. */
    static final class OneLine extends Formatter {
        @Override
        public String format(LogRecord r) {
            StringBuilder s = new StringBuilder("juno: ").append(r.getLevel().getName());
            if (r.getLoggerName() != null && !r.getLoggerName().isEmpty()) {
                s.append(' ').append(r.getLoggerName());
            }
            s.append(": ").append(formatMessage(r)).append(System.lineSeparator());
            if (r.getThrown() != null) {
                java.io.StringWriter trace = new java.io.StringWriter();
                r.getThrown().printStackTrace(new java.io.PrintWriter(trace));
                s.append(trace);
            }
            return s.toString();
        }
    }
}
