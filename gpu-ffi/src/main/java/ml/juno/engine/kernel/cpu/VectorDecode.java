package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import ml.juno.engine.tensor.GgmlType;

/**
 * Vector API block decoders: the same values as {@link ScalarDecode}, bit for bit (same float operations, no fusing),
 * produced a vector of lanes at a time. Nibbles and bytes are widened to float lanes straight from the mapped blocks.
 * Types without a vector path here fall back to the scalar decoder.
 */
public final class VectorDecode {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    /** Bytes species with one lane per float lane, so a byte load widens lane for lane. */
    static final VectorSpecies<Byte> B = F.length() == 16 ? ByteVector.SPECIES_128
            : F.length() == 8 ? ByteVector.SPECIES_64 : ByteVector.SPECIES_64;
    private static final int L = F.length();
    private static final boolean VECTOR = L == 8 || L == 16;
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(LE);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    private VectorDecode() {}

    /** Decodes {@code count} elements (whole blocks) from byte {@code off} of {@code s} into {@code dst[dstOff..]}. */
    public static void decode(GgmlType t, MemorySegment s, long off, float[] dst, int dstOff, int count) {
        if (!VECTOR) {
            ScalarDecode.decode(t, s, off, dst, dstOff, count);
            return;
        }
        switch (t) {
            case F32 -> MemorySegment.copy(s, F32, off, dst, dstOff, count);
            case F16 -> {
                for (int i = 0; i < count; i++) {
                    dst[dstOff + i] = Float.float16ToFloat(s.get(U16, off + 2L * i));
                }
            }
            case Q4_0 -> {
                for (int b = 0; b < count / 32; b++) {
                    q4_0(s, off + b * 18L, dst, dstOff + b * 32);
                }
            }
            case Q8_0 -> {
                for (int b = 0; b < count / 32; b++) {
                    q8_0(s, off + b * 34L, dst, dstOff + b * 32);
                }
            }
            case Q4_K -> {
                for (int b = 0; b < count / 256; b++) {
                    q4_k(s, off + b * 144L, dst, dstOff + b * 256);
                }
            }
            case Q6_K -> {
                for (int b = 0; b < count / 256; b++) {
                    q6_k(s, off + b * 210L, dst, dstOff + b * 256);
                }
            }
            default -> ScalarDecode.decode(t, s, off, dst, dstOff, count);
        }
    }

    private static FloatVector toFloat(ByteVector v) {
        return (FloatVector) v.convertShape(VectorOperators.B2F, F, 0);
    }

    private static void q4_0(MemorySegment s, long o, float[] y, int d0) {
        float d = ScalarDecode.half(s, o);
        for (int j = 0; j < 16; j += L) {
            ByteVector q = ByteVector.fromMemorySegment(B, s, o + 2 + j, LE);
            toFloat(q.and((byte) 0xF).sub((byte) 8)).mul(d).intoArray(y, d0 + j);
            toFloat(q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8)).mul(d).intoArray(y, d0 + 16 + j);
        }
    }

    private static void q8_0(MemorySegment s, long o, float[] y, int d0) {
        float d = ScalarDecode.half(s, o);
        for (int j = 0; j < 32; j += L) {
            toFloat(ByteVector.fromMemorySegment(B, s, o + 2 + j, LE)).mul(d).intoArray(y, d0 + j);
        }
    }

    private static void q4_k(MemorySegment s, long o, float[] y, int d0) {
        float d = ScalarDecode.half(s, o);
        float dmin = ScalarDecode.half(s, o + 2);
        for (int j = 0; j < 4; j++) {
            long q = o + 16 + j * 32L;
            float d1 = d * ScalarDecode.scaleK4(s, o + 4, 2 * j);
            float m1 = dmin * ScalarDecode.minK4(s, o + 4, 2 * j);
            float d2 = d * ScalarDecode.scaleK4(s, o + 4, 2 * j + 1);
            float m2 = dmin * ScalarDecode.minK4(s, o + 4, 2 * j + 1);
            int out = d0 + 64 * j;
            for (int l = 0; l < 32; l += L) {
                ByteVector v = ByteVector.fromMemorySegment(B, s, q + l, LE);
                toFloat(v.and((byte) 0xF)).mul(d1).sub(m1).intoArray(y, out + l);
                toFloat(v.lanewise(VectorOperators.LSHR, 4)).mul(d2).sub(m2).intoArray(y, out + 32 + l);
            }
        }
    }

    private static void q6_k(MemorySegment s, long o, float[] y, int d0) {
        float d = ScalarDecode.half(s, o + 208);
        for (int n = 0; n < 2; n++) {
            long ql = o + n * 64L;
            long qh = o + 128 + n * 32L;
            long sc = o + 192 + n * 8L;
            int out = d0 + n * 128;
            for (int l = 0; l < 32; l += L) {
                int is = l / 16;
                ByteVector a = ByteVector.fromMemorySegment(B, s, ql + l, LE);
                ByteVector b = ByteVector.fromMemorySegment(B, s, ql + l + 32, LE);
                ByteVector h = ByteVector.fromMemorySegment(B, s, qh + l, LE);
                ByteVector q1 = a.and((byte) 0xF).or(h.and((byte) 3).lanewise(VectorOperators.LSHL, 4)).sub((byte) 32);
                ByteVector q2 = b.and((byte) 0xF).or(h.lanewise(VectorOperators.LSHR, 2).and((byte) 3)
                        .lanewise(VectorOperators.LSHL, 4)).sub((byte) 32);
                ByteVector q3 = a.lanewise(VectorOperators.LSHR, 4).or(h.lanewise(VectorOperators.LSHR, 4).and((byte) 3)
                        .lanewise(VectorOperators.LSHL, 4)).sub((byte) 32);
                ByteVector q4 = b.lanewise(VectorOperators.LSHR, 4).or(h.lanewise(VectorOperators.LSHR, 6)
                        .lanewise(VectorOperators.LSHL, 4)).sub((byte) 32);
                toFloat(q1).mul(d * ScalarDecode.i8(s, sc + is)).intoArray(y, out + l);
                toFloat(q2).mul(d * ScalarDecode.i8(s, sc + is + 2)).intoArray(y, out + l + 32);
                toFloat(q3).mul(d * ScalarDecode.i8(s, sc + is + 4)).intoArray(y, out + l + 64);
                toFloat(q4).mul(d * ScalarDecode.i8(s, sc + is + 6)).intoArray(y, out + l + 96);
            }
        }
    }
}
