package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * The {@code juno} process's logging, on a logger tree of the test's own (the process's root logger is the test JVM's):
 * warnings and errors one line each on the given stream, nothing below, and below-warning calls not even formatted.
 */
class CliLoggingTest {

    @Test
    void configure_printsWarningsOneLineEach_andDisablesEverythingBelow() {
        Logger root = Logger.getLogger("clilogging.test");
        Handler earlier = new Handler() { // stands for Quarkus's start-up queue
            @Override
            public void publish(java.util.logging.LogRecord r) {
                throw new AssertionError("a replaced handler got " + r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        root.addHandler(earlier);
        root.setLevel(Level.ALL);
        root.setUseParentHandlers(false);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CliLogging.configure(root, new PrintStream(bytes, true, StandardCharsets.UTF_8));

        Logger child = Logger.getLogger("clilogging.test.engine");
        assertFalse(child.isLoggable(Level.INFO), "below WARNING is off, so trace and debug calls are not formatted");
        assertFalse(child.isLoggable(Level.FINEST));
        assertTrue(child.isLoggable(Level.WARNING));
        child.info("not shown");
        child.log(Level.WARNING, "the native kernels are unavailable: {0}", "no library");
        child.log(Level.SEVERE, "a node failed", new IllegalStateException("boom"));

        String err = bytes.toString(StandardCharsets.UTF_8);
        assertFalse(err.contains("not shown"), err);
        assertTrue(err.startsWith("juno: WARNING clilogging.test.engine: the native kernels are unavailable: no library"
                + System.lineSeparator() + "juno: SEVERE clilogging.test.engine: a node failed" + System.lineSeparator()
                + "java.lang.IllegalStateException: boom"), err);
        assertEquals(1, root.getHandlers().length, "the earlier handler is gone");
    }
}
