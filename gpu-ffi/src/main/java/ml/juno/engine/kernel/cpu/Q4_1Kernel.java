package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q4_1 ({@code block_q4_1}, 20 bytes per 32 weights: F16 scale {@code d} and min {@code m}, 16 bytes of nibbles; weight
 * {@code q·d + m}), against Q8_1 activations. Decoded scalar: no model of the reference set is big enough in Q4_1 for
 * a vector decoder or a single-row kernel to pay.
 */
final class Q4_1Kernel extends Block32Kernel {
    Q4_1Kernel() {
        super(GgmlType.Q4_1, true);
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 32; b++) {
            q4_1Block(s, off + b * 20L, dst, dstOff + b * 32);
        }
    }

    // block_q4_1: d f16, m f16, qs[16]; value q·d + m
    private static void q4_1Block(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        float m = half(s, o + 2);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 4 + j);
            y[d0 + j] = (q & 0xF) * d + m;
            y[d0 + j + 16] = (q >> 4) * d + m;
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 20L;
            int e = b * 32;
            row.d[b] = half(s, o);
            row.m[b] = half(s, o + 2);
            for (int j = 0; j < 16; j++) {
                int v = u8(s, o + 4 + j);
                row.q[e + j] = (short) (v & 0xF);
                row.q[e + j + 16] = (short) (v >> 4);
            }
        }
    }
}
