package ml.juno.engine.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** The slot memory: the size asked, aligned, zeroed, writable end to end, and released with its arena. */
class HugeMemoryTest {
    @Test
    void givesZeroedAlignedWritableMemory_freedWithItsArena() {
        for (long bytes : new long[] {4096, 3 * 1048576 + 12288, 9 * 1048576}) {
            try (Arena a = Arena.ofShared()) {
                MemorySegment m = HugeMemory.allocate(a, bytes, 4096);
                assertEquals(bytes, m.byteSize());
                assertEquals(0, m.address() % 4096, "aligned");
                for (long o = 0; o < bytes; o += 4096) {
                    assertEquals(0, m.get(ValueLayout.JAVA_BYTE, o), "zeroed at " + o);
                }
                m.set(ValueLayout.JAVA_LONG, bytes - 8, 0x1234_5678_9abc_def0L);
                m.set(ValueLayout.JAVA_LONG, 0, -1L);
                assertEquals(0x1234_5678_9abc_def0L, m.get(ValueLayout.JAVA_LONG, bytes - 8));
                assertEquals(-1L, m.get(ValueLayout.JAVA_LONG, 0));
            }
        }
    }
}
