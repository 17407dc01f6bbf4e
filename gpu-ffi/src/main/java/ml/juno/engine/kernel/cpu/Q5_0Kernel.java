package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q5_0 ({@code block_q5_0}, 22 bytes per 32 weights: F16 scale {@code d}, 32 fifth bits, 16 bytes of nibbles; weight
 * {@code (q − 16)·d}), against Q8_0 activations. Decoded scalar, like {@link Q4_1Kernel}.
 */
final class Q5_0Kernel extends Block32Kernel {
    Q5_0Kernel() {
        super(GgmlType.Q5_0, false);
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 32; b++) {
            q5_0Block(s, off + b * 22L, dst, dstOff + b * 32);
        }
    }

    // block_q5_0: d f16, qh u32 (fifth bits), qs[16]; value (q-16)·d
    private static void q5_0Block(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        int qh = s.get(U32, o + 2);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 6 + j);
            int h0 = ((qh >>> j) << 4) & 0x10;
            int h1 = (qh >>> (j + 12)) & 0x10;
            y[d0 + j] = (((q & 0xF) | h0) - 16) * d;
            y[d0 + j + 16] = (((q >> 4) | h1) - 16) * d;
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 22L;
            int e = b * 32;
            row.d[b] = half(s, o);
            int qh = s.get(U32, o + 2);
            for (int j = 0; j < 16; j++) {
                int v = u8(s, o + 6 + j);
                row.q[e + j] = (short) (((v & 0xF) | (((qh >>> j) << 4) & 0x10)) - 16);
                row.q[e + j + 16] = (short) (((v >> 4) | ((qh >>> (j + 12)) & 0x10)) - 16);
            }
        }
    }
}
