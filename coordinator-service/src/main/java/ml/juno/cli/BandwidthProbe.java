package ml.juno.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * A rough memory read bandwidth: {@code threads} threads stream through a buffer much larger than the caches, best of
 * a few passes. Decode speed is bounded by this divided by the bytes a step reads.
 */
final class BandwidthProbe {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final long BYTES = 128L << 20;

    private BandwidthProbe() {}

    /** Bytes per second read. */
    static double measure(int threads) throws InterruptedException {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buf = arena.allocate(BYTES, 64);
            buf.fill((byte) 1);
            double best = 0;
            float[] sink = new float[threads];
            for (int rep = 0; rep < 3; rep++) {
                Thread[] team = new Thread[threads];
                long share = BYTES / threads / 64 * 64;
                long t0 = System.nanoTime();
                for (int w = 0; w < threads; w++) {
                    int id = w;
                    team[w] = Thread.ofPlatform().start(() -> sink[id] = sum(buf, id * share, share));
                }
                for (Thread t : team) {
                    t.join();
                }
                best = Math.max(best, share * threads / ((System.nanoTime() - t0) / 1e9));
            }
            if (Float.isNaN(sink[0])) {
                throw new IllegalStateException("unreachable: keeps the sums alive");
            }
            return best;
        }
    }

    private static float sum(MemorySegment s, long from, long bytes) {
        FloatVector a = FloatVector.zero(F);
        FloatVector b = FloatVector.zero(F);
        long step = F.vectorByteSize();
        long end = from + bytes - 2 * step;
        long i = from;
        for (; i <= end; i += 2 * step) {
            a = a.add(FloatVector.fromMemorySegment(F, s, i, ByteOrder.LITTLE_ENDIAN));
            b = b.add(FloatVector.fromMemorySegment(F, s, i + step, ByteOrder.LITTLE_ENDIAN));
        }
        return a.add(b).reduceLanes(jdk.incubator.vector.VectorOperators.ADD);
    }
}
