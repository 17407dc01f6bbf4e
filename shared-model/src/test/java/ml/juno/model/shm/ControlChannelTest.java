package ml.juno.model.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ControlChannel}: a coordinator's messages reach the node and the node's answers the coordinator, in order and
 * byte for byte, a large one through a file of its own that is gone once read; a full ring waits for its reader and
 * fails with the reason past its deadline; a sleeping reader wakes at a message, at a wake-up and when the other side
 * leaves; a node maps only a channel of its own host, with one of our names and a live owner.
 */
class ControlChannelTest {
    private static final long SECOND = 1_000_000_000L;

    @BeforeAll
    static void needsDevShm() {
        if (System.getProperty("os.name").equals("Linux") && System.getProperty("os.arch").equals("amd64")) {
            assertTrue(Futex.AVAILABLE, "futexes through libc's syscall() work on Linux x86-64");
        }
        assumeTrue(ControlChannel.usable(), "no /dev/shm or futexes here (or JUNO_CONTROL_SHM=0): the channel is off");
    }

    /** A coordinator's channel and the node's mapping of it, both left at the end. */
    private record Pair(ControlChannel coordinator, ControlChannel node) implements AutoCloseable {
        static Pair open() throws Exception {
            ControlChannel c = ControlChannel.create();
            ControlChannel n = ControlChannel.attach(c.name(), ShmFiles.HOST);
            assertNotNull(n, "a channel of this host with a live owner is mapped");
            return new Pair(c, n);
        }

        @Override
        public void close() {
            node.close();
            coordinator.close();
        }
    }

    private static byte[] message(int n, int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (n * 31 + i);
        }
        return b;
    }

    private static long largeFiles() throws Exception {
        try (var s = Files.list(ShmFiles.DIR)) {
            return s.filter(p -> p.getFileName().toString().startsWith("juno-cxm-" + Long.toHexString(ProcessHandle.current().pid()) + "-")).count();
        }
    }

    @Test
    void messagesGoBothWays_inOrder_andALargeOneThroughAFileOfItsOwn() throws Exception {
        try (Pair p = Pair.open()) {
            ControlChannel coordinator = p.coordinator();
            ControlChannel node = p.node();
            long deadline = System.nanoTime() + 5 * SECOND;
            int[] sizes = {0, 1, 700, 256 * 1024 - 64, 300_000, 3};
            for (int i = 0; i < sizes.length; i++) {
                coordinator.send(message(i, sizes[i]), deadline);
            }
            assertEquals(1, largeFiles(), "the one message larger than a slot waits in a file of its own");
            for (int i = 0; i < sizes.length; i++) {
                assertArrayEquals(message(i, sizes[i]), node.receive(deadline, () -> false), "message " + i);
            }
            assertEquals(0, largeFiles(), "the reader removed it");
            assertNull(node.poll(), "nothing more");
            node.send(message(7, 40), deadline);
            assertNull(node.poll(), "a side reads only what the other side sent");
            assertArrayEquals(message(7, 40), coordinator.receive(deadline, () -> false));
        }
    }

    @Test
    void thousandsOfMessages_passThroughTheRingsWrapAround_inOrder() throws Exception {
        try (Pair p = Pair.open()) {
            ControlChannel coordinator = p.coordinator();
            ControlChannel node = p.node();
            int count = 5_000;
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < count; i++) {
                    coordinator.send(ByteBuffer.allocate(8 + i % 100).putInt(0, i).array(), System.nanoTime() + 10 * SECOND);
                }
            });
            for (int i = 0; i < count; i++) {
                byte[] m = node.receive(System.nanoTime() + 10 * SECOND, () -> false);
                assertNotNull(m, "message " + i);
                assertEquals(8 + i % 100, m.length);
                assertEquals(i, ByteBuffer.wrap(m).getInt(0));
            }
            writer.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aFullRing_waitsForItsReader_andFailsWithTheReasonPastItsDeadline() throws Exception {
        try (Pair p = Pair.open()) {
            ControlChannel coordinator = p.coordinator();
            ControlChannel node = p.node();
            for (int i = 0; i < ControlChannel.SLOTS; i++) {
                coordinator.send(message(i, 10), System.nanoTime() + SECOND);
            }
            IllegalStateException full = assertThrows(IllegalStateException.class,
                    () -> coordinator.send(message(99, 10), System.nanoTime() + 50_000_000L));
            assertTrue(full.getMessage().contains("read none of its " + ControlChannel.SLOTS), full.getMessage());
            CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> coordinator.send(message(100, 10), System.nanoTime() + 10 * SECOND));
            Thread.sleep(100);
            assertFalse(waiting.isDone(), "the send waits while the ring is full");
            assertArrayEquals(message(0, 10), node.poll());
            waiting.get(5, TimeUnit.SECONDS); // a slot freed: it went
            for (int i = 1; i < ControlChannel.SLOTS; i++) {
                assertArrayEquals(message(i, 10), node.poll());
            }
            assertArrayEquals(message(100, 10), node.poll(), "the refused message never went; the waiting one did");
        }
    }

    @Test
    void aSleepingReader_wakesAtAMessage_atAWakeUp_andWhenTheOtherSideLeaves() throws Exception {
        try (Pair p = Pair.open()) {
            ControlChannel coordinator = p.coordinator();
            ControlChannel node = p.node();
            Path file = ShmFiles.DIR.resolve(coordinator.name());
            // a message: the reader sleeps on the bell (its wait would last 30 s) and wakes when it comes
            CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> node.receive(System.nanoTime() + 30 * SECOND, () -> false));
            Thread.sleep(200);
            assertFalse(got.isDone());
            coordinator.send(message(1, 5), System.nanoTime() + SECOND);
            assertArrayEquals(message(1, 5), got.get(2, TimeUnit.SECONDS));

            // a wake-up from another thread of the reader's process, after what it waits for became true
            AtomicBoolean stop = new AtomicBoolean();
            CompletableFuture<byte[]> stopped = CompletableFuture.supplyAsync(() -> coordinator.receive(System.nanoTime() + 30 * SECOND, stop::get));
            Thread.sleep(200);
            assertFalse(stopped.isDone());
            stop.set(true);
            coordinator.wake();
            assertNull(stopped.get(2, TimeUnit.SECONDS));

            // the coordinator leaves: the node's wait ends, and the file is gone
            CompletableFuture<byte[]> left = CompletableFuture.supplyAsync(() -> node.receive(System.nanoTime() + 30 * SECOND, () -> false));
            Thread.sleep(200);
            assertFalse(node.peerGone());
            coordinator.close();
            assertNull(left.get(2, TimeUnit.SECONDS));
            assertTrue(node.peerGone());
            assertFalse(Files.exists(file), "the coordinator removes its channel's file");
            IllegalStateException gone = assertThrows(IllegalStateException.class, () -> {
                for (int i = 0; i <= ControlChannel.SLOTS; i++) {
                    node.send(message(i, 1), System.nanoTime() + 10 * SECOND);
                }
            });
            assertTrue(gone.getMessage().contains("left"), "a writer stops waiting for a reader that left: " + gone.getMessage());
        }
    }

    @Test
    void aNodeMapsOnlyAChannelOfItsHost_withOneOfOurNames_andALiveOwner() throws Exception {
        ControlChannel coordinator = ControlChannel.create();
        Path file = ShmFiles.DIR.resolve(coordinator.name());
        try {
            assertNull(ControlChannel.attach(coordinator.name(), ShmFiles.HOST + 1), "another host's (or namespace's) coordinator");
            assertNull(ControlChannel.attach("../" + coordinator.name(), ShmFiles.HOST), "a name outside /dev/shm");
            assertNull(ControlChannel.attach("juno-tp-1-0", ShmFiles.HOST), "another kind of file");
            assertNull(ControlChannel.attach("juno-cx-1-abcdef", ShmFiles.HOST), "a channel that is not there");
            assertNotNull(ControlChannel.attach(coordinator.name(), ShmFiles.HOST));
            long deadPid = new ProcessBuilder("true").start().onExit().get().pid();
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, deadPid), 8);
            }
            assertNull(ControlChannel.attach(coordinator.name(), ShmFiles.HOST), "a channel whose owner is dead");
            assertTrue(ShmFiles.sweep() >= 1);
            assertFalse(Files.exists(file), "and the sweep removes it");
        } finally {
            coordinator.close();
        }
    }
}
