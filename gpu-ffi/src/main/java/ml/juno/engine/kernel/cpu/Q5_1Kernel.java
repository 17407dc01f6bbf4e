package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q5_1 ({@code block_q5_1}, 24 bytes per 32 weights: F16 scale {@code d} and min {@code m}, 32 fifth bits, 16 bytes of
 * nibbles; weight {@code q·d + m}), against Q8_1 activations. Decoded scalar, like {@link Q4_1Kernel}.
 */
final class Q5_1Kernel extends Block32Kernel {
    Q5_1Kernel() {
        super(GgmlType.Q5_1, true);
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 32; b++) {
            q5_1Block(s, off + b * 24L, dst, dstOff + b * 32);
        }
    }

    // block_q5_1: d f16, m f16, qh u32, qs[16]; value q·d + m
    private static void q5_1Block(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        float m = half(s, o + 2);
        int qh = s.get(U32, o + 4);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 8 + j);
            int h0 = ((qh >>> j) << 4) & 0x10;
            int h1 = (qh >>> (j + 12)) & 0x10;
            y[d0 + j] = ((q & 0xF) | h0) * d + m;
            y[d0 + j + 16] = ((q >> 4) | h1) * d + m;
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 24L;
            int e = b * 32;
            row.d[b] = half(s, o);
            row.m[b] = half(s, o + 2);
            int qh = s.get(U32, o + 4);
            for (int j = 0; j < 16; j++) {
                int v = u8(s, o + 8 + j);
                row.q[e + j] = (short) (((v & 0xF) | (((qh >>> j) << 4) & 0x10)));
                row.q[e + j + 16] = (short) (((v >> 4) | ((qh >>> (j + 12)) & 0x10)));
            }
        }
    }
}
