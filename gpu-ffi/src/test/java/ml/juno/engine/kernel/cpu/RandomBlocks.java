package ml.juno.engine.kernel.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Random;
import ml.juno.engine.tensor.GgmlType;

/** Random but valid blocks of a GGML type: random quant bits, small finite scales. */
final class RandomBlocks {
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private RandomBlocks() {}

    /** Byte offsets of the f16 scale fields in one block. */
    static int[] halfFields(GgmlType t) {
        return switch (t) {
            case Q4_0, Q5_0, Q8_0 -> new int[] {0};
            case Q4_1, Q5_1, Q4_K, Q5_K -> new int[] {0, 2};
            case Q2_K -> new int[] {80, 82};
            case Q3_K -> new int[] {108};
            case Q6_K -> new int[] {208};
            default -> new int[0];
        };
    }

    static MemorySegment of(GgmlType t, int rows, int cols, long seed) {
        Random r = new Random(seed);
        long bytes = t.byteSize((long) rows * cols);
        MemorySegment s = Arena.ofAuto().allocate(bytes, 64);
        for (long i = 0; i < bytes; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt(256));
        }
        long elements = (long) rows * cols;
        switch (t) {
            case F32 -> {
                for (long i = 0; i < elements; i++) {
                    s.set(F32, 4 * i, (float) r.nextGaussian());
                }
            }
            case F16 -> {
                for (long i = 0; i < elements; i++) {
                    s.set(U16, 2 * i, Float.floatToFloat16((float) r.nextGaussian()));
                }
            }
            case BF16 -> {
                for (long i = 0; i < elements; i++) {
                    s.set(U16, 2 * i, (short) (Float.floatToRawIntBits((float) r.nextGaussian()) >>> 16));
                }
            }
            default -> {
                for (long b = 0; b < elements / t.blockSize; b++) {
                    for (int f : halfFields(t)) {
                        s.set(U16, b * t.typeSize + f, Float.floatToFloat16((float) (r.nextDouble() * 0.02 + 0.001)));
                    }
                }
            }
        }
        return s;
    }

    /** {@code n} Gaussian activations, every seventh four times larger (outliers for the quantizers' block scales). */
    static float[] activations(int n, long seed) {
        Random r = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) (r.nextGaussian() * (i % 7 == 0 ? 4 : 1));
        }
        return x;
    }

    /** Fails unless {@code actual} has {@code expected}'s bits; results laid out {@code [activation][rows]}. */
    static void assertBits(float[] expected, float[] actual, int rows, String what) {
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToIntBits(expected[i]) != Float.floatToIntBits(actual[i])) {
                org.junit.jupiter.api.Assertions.fail(what + ": row " + (i % rows) + " of activation " + (i / rows) + ": expected "
                        + expected[i] + ", got " + actual[i]);
            }
        }
    }
}
