package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The lanes every integer dot product of the quantized types ({@link QuantKernel}) shares: quants travel as 16-bit
 * lanes, 16 weight quants times 16 activation quants in one {@code vpmullw}, adjacent products summed into 32-bit lanes
 * by shifts ({@link #pairSum}), so a 256-bit register does 16 multiply-adds per instruction with no float conversion
 * until the block scale. Every product fits 16 bits ({@code |w| ≤ 128}, {@code |x| ≤ 127}) and so does the sum of two
 * (≤ 32 512). Integer lanes are exact, so a dot product depends only on which elements share a lane and on the order of
 * its per-block float steps; every path of a type (single rows from the mapped blocks, decoded tiles in float lanes)
 * uses the same lanes and order, so a row's result never depends on its batch. The species are fixed at 256 bits
 * (AVX2); wider machines run them as they are.
 */
final class QuantLanes {
    static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    static final VectorSpecies<Short> S16 = ShortVector.SPECIES_256;
    static final VectorSpecies<Integer> I8 = IntVector.SPECIES_256;
    static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;
    static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    private QuantLanes() {}

    /** 16 bytes to 16 signed 16-bit lanes. */
    static ShortVector widen(ByteVector v) {
        return (ShortVector) v.convertShape(VectorOperators.B2S, S16, 0);
    }

    static ByteVector lowNibbles(ByteVector v) {
        return v.and((byte) 0x0F);
    }

    /** High nibbles, shifted as 16-bit lanes (x86 has no byte shift) and masked per byte. */
    static ByteVector highNibbles(ByteVector v) {
        return v.reinterpretAsShorts().lanewise(VectorOperators.LSHR, 4).reinterpretAsBytes().and((byte) 0x0F);
    }

    /** Nibbles at bit {@code shift} (0 or 4) of every byte, with no branch (a vector merged from two paths may be boxed). */
    static ByteVector nibbles(ByteVector v, int shift) {
        return v.reinterpretAsShorts().lanewise(VectorOperators.LSHR, shift).reinterpretAsBytes().and((byte) 0x0F);
    }

    /** Per byte {@code ((v >>> shift) & mask) << up}, for {@code shift < 8} and results that fit the byte. */
    static ByteVector bitsTo(ByteVector v, int shift, int mask, int up) {
        ByteVector b = v.reinterpretAsShorts().lanewise(VectorOperators.LSHR, shift).reinterpretAsBytes().and((byte) mask);
        return b.reinterpretAsShorts().lanewise(VectorOperators.LSHL, up).reinterpretAsBytes();
    }

    /** Sums adjacent 16-bit lanes into 32-bit lanes (what {@code vpmaddwd} does after the multiply). */
    static IntVector pairSum(ShortVector p) {
        IntVector i = p.reinterpretAsInts();
        return i.lanewise(VectorOperators.ASHR, 16).add(i.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
    }

    static FloatVector toFloat(IntVector v) {
        return (FloatVector) v.convert(VectorOperators.I2F, 0);
    }

    static IntVector toInt(FloatVector v) {
        return (IntVector) v.convert(VectorOperators.F2I, 0);
    }

    static ShortVector s16(short[] a, int i) {
        return ShortVector.fromArray(S16, a, i);
    }

    static FloatVector f8(float[] a, int i) {
        return FloatVector.fromArray(F8, a, i);
    }

    static ByteVector load16(MemorySegment s, long o) {
        return ByteVector.fromMemorySegment(B16, s, o, LE);
    }

    /** Byte {@code j} of eight packed 6-bit values ({@link Q4_KKernel#scalesK4}, {@link Q4_KKernel#minsK4}, {@link Q3_KKernel#q3Scales}). */
    static int k4(long packed, int j) {
        return (int) (packed >>> (8 * j)) & 0xFF;
    }

    /**
     * Sum of the eight lanes in a fixed pairwise order, {@code ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7))}, never the JIT's
     * choice. Lane extractions with constant indices: a lane shuffle from a table is not always intrinsified and then
     * runs the Vector API's Java fallback (measured as the hottest frame of a batched run).
     */
    static float sum(FloatVector v) {
        float a = (v.lane(0) + v.lane(4)) + (v.lane(2) + v.lane(6));
        float b = (v.lane(1) + v.lane(5)) + (v.lane(3) + v.lane(7));
        return a + b;
    }

    /**
     * Writes 32 quants from {@code src[so..]} as floats into {@code dst[d0..]} in <em>lane order</em>: four vectors of
     * eight, vector 0 lane L holding element 2L, vector 1 element 2L+1, vectors 2 and 3 elements 16+2L and 17+2L, i.e.
     * the elements {@link #pairSum} puts in 32-bit lane L. The first 16 are multiplied by {@code lo}, the others by
     * {@code hi} (integer sub-block scales, or 1). Its vector operations are written out, not called through the
     * helpers here: it is inlined into large decoders, and past C2's node budget a helper stays a call that boxes its
     * vectors ({@link Q5_KKernel} says more).
     */
    static void lanes(short[] src, int so, float[] dst, int d0, float lo, float hi) {
        IntVector a = ShortVector.fromArray(S16, src, so).reinterpretAsInts();
        IntVector b = ShortVector.fromArray(S16, src, so + 16).reinterpretAsInts();
        ((FloatVector) a.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0))
                .mul(lo).intoArray(dst, d0);
        ((FloatVector) a.lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).mul(lo).intoArray(dst, d0 + 8);
        ((FloatVector) b.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0))
                .mul(hi).intoArray(dst, d0 + 16);
        ((FloatVector) b.lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0)).mul(hi).intoArray(dst, d0 + 24);
    }

    // Eight accumulators are stored and summed from memory: passing them to a call C2 does not inline (this method
    // is near its inlining limit) would box them.
    static void store8(float[] ln, FloatVector c0, FloatVector c1, FloatVector c2, FloatVector c3,
                               FloatVector d0, FloatVector d1, FloatVector d2, FloatVector d3) {
        c0.intoArray(ln, 0);
        c1.intoArray(ln, 8);
        c2.intoArray(ln, 16);
        c3.intoArray(ln, 24);
        d0.intoArray(ln, 32);
        d1.intoArray(ln, 40);
        d2.intoArray(ln, 48);
        d3.intoArray(ln, 56);
    }

    /** {@link #sum} of eight lanes stored at {@code a[o..o+8)}, in the same order. */
    static float sumLanes(float[] a, int o) {
        float x = (a[o] + a[o + 4]) + (a[o + 2] + a[o + 6]);
        float y = (a[o + 1] + a[o + 5]) + (a[o + 3] + a[o + 7]);
        return x + y;
    }
}
