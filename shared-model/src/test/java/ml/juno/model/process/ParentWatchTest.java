package ml.juno.model.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A child of a Juno launcher exits with it: when the launcher exits later, and at once when the launcher was gone
 * before the child finished starting (its children then stayed behind for good).
 */
class ParentWatchTest {

    private static Process sleeper() throws Exception {
        return new ProcessBuilder("sleep", "30").start();
    }

    @Test
    void aParentGoneBeforeTheWatchStarts_endsTheChildAtOnce() throws Exception {
        Process p = sleeper();
        long pid = p.pid();
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        AtomicInteger exits = new AtomicInteger();
        ParentWatch.watch(pid, exits::incrementAndGet);
        assertEquals(1, exits.get(), "the exit ran before watch returned");
    }

    @Test
    void aLiveParent_endsTheChildWhenItExits_notBefore() throws Exception {
        Process p = sleeper();
        try {
            CountDownLatch exited = new CountDownLatch(1);
            ParentWatch.watch(p.pid(), exited::countDown);
            assertFalse(exited.await(300, TimeUnit.MILLISECONDS), "the parent is alive");
            p.destroy();
            assertTrue(exited.await(10, TimeUnit.SECONDS), "the parent's exit ends the child");
        } finally {
            p.destroyForcibly();
        }
    }
}
