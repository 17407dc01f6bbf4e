package ml.juno.engine.moe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A model file that changes under a streaming engine, or reads that come back short, fail the step with a clear
 * {@link ExpertStreamException} and leave the store failed (its health), never a step computed on other bytes.
 */
class ExpertStoreIntegrityTest {

    private static Path copy(Path tmp) throws Exception {
        Path p = tmp.resolve("moe.gguf");
        Files.copy(ExpertStreamingTest.model("tiny-qwen3moe-random-Q8_0.gguf"), p);
        return p;
    }

    private static void prompt(InferenceSession s) {
        StepBatch.Builder b = new StepBatch.Builder(32);
        for (int i = 0; i < 8; i++) {
            b.add(0, i, 3 + 17 * i, i == 7);
        }
        s.forward(b.build());
    }

    @Test
    void fileTruncatedWhileLoaded_failsTheStep_andEveryLaterOne(@TempDir Path tmp) throws Exception {
        Path file = copy(tmp);
        try (GgufFile f = GgufFile.open(file);
             Model m = Model.load(f, ExpertStreamingTest.options(), t -> new CpuBackend(1, null))) {
            ExpertStore store = m.streamExperts(f, ExpertBudget.ofBytes(0));
            try (InferenceSession s = m.newSession()) {
                prompt(s);
                assertTrue(store.stats().healthy());
                // cut the last tensor's tail (nothing mapped is touched there: experts are read, not mapped)
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                    ch.truncate(ch.size() - 4096);
                }
                ExpertStreamException e = assertThrows(ExpertStreamException.class, () -> prompt(s));
                assertTrue(e.getMessage().contains("changed under the engine"), e.getMessage());
                assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
                assertNotNull(store.failure());
                assertEquals(e.getMessage(), store.stats().failure());
                ExpertStreamException again = assertThrows(ExpertStreamException.class, () -> prompt(s));
                assertEquals(e.getMessage(), again.getMessage());
            }
        }
    }

    @Test
    void fileRewrittenInPlace_sameSize_isSeenByItsModificationTime(@TempDir Path tmp) throws Exception {
        Path file = copy(tmp);
        try (GgufFile f = GgufFile.open(file);
             Model m = Model.load(f, ExpertStreamingTest.options(), t -> new CpuBackend(1, null))) {
            ExpertStore store = m.streamExperts(f, ExpertBudget.ofBytes(0));
            try (InferenceSession s = m.newSession()) {
                prompt(s);
                Files.setLastModifiedTime(file, FileTime.fromMillis(Files.getLastModifiedTime(file).toMillis() + 5000));
                ExpertStreamException e = assertThrows(ExpertStreamException.class, () -> prompt(s));
                assertTrue(e.getMessage().contains("modified"), e.getMessage());
                assertTrue(!store.stats().healthy());
            }
        }
    }

    /** A read the file cannot fill (past its end) is an EOFException on the slot, with the offset, not a zero tail. */
    @Test
    void shortRead_isAnError_naming_theOffset(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("short.bin");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(3 * 4096 + 100);
        }
        try (ExpertReader r = new ExpertReader(file, 2, 16, true);
             Arena arena = Arena.ofShared()) {
            Slot ok = new Slot(0, false, arena.allocate(8192, 4096), 1);
            Slot bad = new Slot(1, false, arena.allocate(8192, 4096), 1);
            read(r, ok, 8192, 4096 + 100);   // ends inside the file's last page: fine
            read(r, bad, 8192, 4096 + 200);  // needs 100 bytes more than the file has
            assertEquals(null, ok.error);
            assertInstanceOf(EOFException.class, bad.error);
            assertTrue(bad.error.getMessage().contains("at offset 8192"), bad.error.getMessage());
        }
    }

    private static void read(ExpertReader r, Slot s, long pos, int need) {
        ExpertReader.Task t = s.tasks[0];
        t.position = pos;
        t.offset = 0;
        t.length = 8192;
        t.need = need;
        s.pending.set(1);
        r.submit(t);
        s.awaitReads();
    }
}
