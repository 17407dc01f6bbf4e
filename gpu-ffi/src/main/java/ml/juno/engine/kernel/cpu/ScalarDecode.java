package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import ml.juno.engine.tensor.GgmlType;

/**
 * Scalar block decoders: turn {@code count} elements of GGML blocks into floats, one element at a time, with the same
 * arithmetic as ggml's reference dequantizers (ggml-quants.c {@code dequantize_row_*}). The reference the vector
 * decoders are tested against.
 */
public final class ScalarDecode {
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private ScalarDecode() {}

    /** Whether {@link #decode} handles this type. */
    public static boolean supports(GgmlType t) {
        return switch (t) {
            case F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K -> true;
            default -> false;
        };
    }

    /** Decodes {@code count} elements (a whole number of blocks) starting at byte {@code off} of {@code s}. */
    public static void decode(GgmlType t, MemorySegment s, long off, float[] dst, int dstOff, int count) {
        int blocks = count / t.blockSize;
        for (int b = 0; b < blocks; b++) {
            long o = off + (long) b * t.typeSize;
            int d = dstOff + b * t.blockSize;
            switch (t) {
                case F32 -> dst[d] = s.get(F32, o);
                case F16 -> dst[d] = Float.float16ToFloat(s.get(U16, o));
                case BF16 -> dst[d] = bf16(s.get(U16, o));
                case Q4_0 -> q4_0(s, o, dst, d);
                case Q4_1 -> q4_1(s, o, dst, d);
                case Q5_0 -> q5_0(s, o, dst, d);
                case Q5_1 -> q5_1(s, o, dst, d);
                case Q8_0 -> q8_0(s, o, dst, d);
                case Q2_K -> q2_k(s, o, dst, d);
                case Q3_K -> q3_k(s, o, dst, d);
                case Q4_K -> q4_k(s, o, dst, d);
                case Q5_K -> q5_k(s, o, dst, d);
                case Q6_K -> q6_k(s, o, dst, d);
                default -> throw new IllegalArgumentException("unsupported block type " + t);
            }
        }
    }

    static float bf16(short bits) {
        return Float.intBitsToFloat((bits & 0xFFFF) << 16);
    }

    static float half(MemorySegment s, long o) {
        return Float.float16ToFloat(s.get(U16, o));
    }

    static int u8(MemorySegment s, long o) {
        return s.get(ValueLayout.JAVA_BYTE, o) & 0xFF;
    }

    static int i8(MemorySegment s, long o) {
        return s.get(ValueLayout.JAVA_BYTE, o);
    }

    // block_q4_0: d f16, qs[16]; element j = low nibble of qs[j], element j+16 = high nibble; value (q-8)·d
    static void q4_0(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 2 + j);
            y[d0 + j] = ((q & 0xF) - 8) * d;
            y[d0 + j + 16] = ((q >> 4) - 8) * d;
        }
    }

    // block_q4_1: d f16, m f16, qs[16]; value q·d + m
    static void q4_1(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        float m = half(s, o + 2);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 4 + j);
            y[d0 + j] = (q & 0xF) * d + m;
            y[d0 + j + 16] = (q >> 4) * d + m;
        }
    }

    // block_q5_0: d f16, qh u32 (fifth bits), qs[16]; value (q-16)·d
    static void q5_0(MemorySegment s, long o, float[] y, int d0) {
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

    // block_q5_1: d f16, m f16, qh u32, qs[16]; value q·d + m
    static void q5_1(MemorySegment s, long o, float[] y, int d0) {
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

    // block_q8_0: d f16, qs[32] int8
    static void q8_0(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        for (int j = 0; j < 32; j++) {
            y[d0 + j] = i8(s, o + 2 + j) * d;
        }
    }

    // block_q2_K: scales[16] (low nibble scale, high nibble min), qs[64], d f16, dmin f16
    static void q2_k(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o + 80);
        float dmin = half(s, o + 82);
        int is = 0;
        int out = d0;
        for (int n = 0; n < 2; n++) {
            long q = o + 16 + n * 32L;
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; part++) {
                    int sc = u8(s, o + is++);
                    float dl = d * (sc & 0xF);
                    float ml = dmin * (sc >> 4);
                    for (int l = 0; l < 16; l++) {
                        y[out++] = dl * ((u8(s, q + part * 16 + l) >> shift) & 3) - ml;
                    }
                }
            }
        }
    }

    /** Six-bit scale {@code j} (0..15) of a Q3_K block, unpacked from its 12 bytes, with the −32 offset applied. */
    static int q3kScale(MemorySegment s, long scalesOff, int j) {
        int low = j < 8 ? (u8(s, scalesOff + j) & 0xF) : (u8(s, scalesOff + j - 8) >> 4);
        int high = (u8(s, scalesOff + 8 + (j & 3)) >> (2 * (j >> 2))) & 3;
        return (low | (high << 4)) - 32;
    }

    // block_q3_K: hmask[32], qs[64], scales[12], d f16
    static void q3_k(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o + 108);
        int is = 0;
        int out = d0;
        int m = 1;
        for (int n = 0; n < 2; n++) {
            long q = o + 32 + n * 32L;
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; part++) {
                    float dl = d * q3kScale(s, o + 96, is++);
                    for (int l = 0; l < 16; l++) {
                        int hm = u8(s, o + part * 16 + l);
                        int v = ((u8(s, q + part * 16 + l) >> shift) & 3) - ((hm & m) != 0 ? 0 : 4);
                        y[out++] = dl * v;
                    }
                }
                m <<= 1;
            }
        }
    }

    /** Scale and min {@code j} (0..7) of a Q4_K/Q5_K block's 12 packed bytes: {@code {scale, min}}. */
    static int scaleK4(MemorySegment s, long q, int j) {
        return j < 4 ? u8(s, q + j) & 63 : (u8(s, q + j + 4) & 0xF) | ((u8(s, q + j - 4) >> 6) << 4);
    }

    static int minK4(MemorySegment s, long q, int j) {
        return j < 4 ? u8(s, q + j + 4) & 63 : (u8(s, q + j + 4) >> 4) | ((u8(s, q + j) >> 6) << 4);
    }

    // block_q4_K: d f16, dmin f16, scales[12], qs[128]
    static void q4_k(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        float dmin = half(s, o + 2);
        int out = d0;
        for (int j = 0; j < 4; j++) {
            long q = o + 16 + j * 32L;
            float d1 = d * scaleK4(s, o + 4, 2 * j);
            float m1 = dmin * minK4(s, o + 4, 2 * j);
            float d2 = d * scaleK4(s, o + 4, 2 * j + 1);
            float m2 = dmin * minK4(s, o + 4, 2 * j + 1);
            for (int l = 0; l < 32; l++) {
                y[out + l] = d1 * (u8(s, q + l) & 0xF) - m1;
                y[out + 32 + l] = d2 * (u8(s, q + l) >> 4) - m2;
            }
            out += 64;
        }
    }

    // block_q5_K: d f16, dmin f16, scales[12], qh[32], qs[128]
    static void q5_k(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        float dmin = half(s, o + 2);
        int out = d0;
        for (int j = 0; j < 4; j++) {
            long q = o + 48 + j * 32L;
            float d1 = d * scaleK4(s, o + 4, 2 * j);
            float m1 = dmin * minK4(s, o + 4, 2 * j);
            float d2 = d * scaleK4(s, o + 4, 2 * j + 1);
            float m2 = dmin * minK4(s, o + 4, 2 * j + 1);
            int u1 = 1 << (2 * j);
            int u2 = 2 << (2 * j);
            for (int l = 0; l < 32; l++) {
                int h = u8(s, o + 16 + l);
                y[out + l] = d1 * ((u8(s, q + l) & 0xF) + ((h & u1) != 0 ? 16 : 0)) - m1;
                y[out + 32 + l] = d2 * ((u8(s, q + l) >> 4) + ((h & u2) != 0 ? 16 : 0)) - m2;
            }
            out += 64;
        }
    }

    // block_q6_K: ql[128], qh[64], scales[16] int8, d f16
    static void q6_k(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o + 208);
        for (int n = 0; n < 2; n++) {
            long ql = o + n * 64L;
            long qh = o + 128 + n * 32L;
            long sc = o + 192 + n * 8L;
            int out = d0 + n * 128;
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int h = u8(s, qh + l);
                int a = u8(s, ql + l);
                int b = u8(s, ql + l + 32);
                int q1 = ((a & 0xF) | ((h & 3) << 4)) - 32;
                int q2 = ((b & 0xF) | (((h >> 2) & 3) << 4)) - 32;
                int q3 = ((a >> 4) | (((h >> 4) & 3) << 4)) - 32;
                int q4 = ((b >> 4) | (((h >> 6) & 3) << 4)) - 32;
                y[out + l] = d * i8(s, sc + is) * q1;
                y[out + l + 32] = d * i8(s, sc + is + 2) * q2;
                y[out + l + 64] = d * i8(s, sc + is + 4) * q3;
                y[out + l + 96] = d * i8(s, sc + is + 6) * q4;
            }
        }
    }
}
