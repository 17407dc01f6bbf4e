package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;
import ml.juno.engine.tensor.GgmlType;

/**
 * Integer dot products of a quantized weight row with a quantized activation row (Q8_0/Q8_1/Q8_K), the way ggml's
 * integer kernels compute them: exact integer sums per (sub-)block, integer sub-block scales applied in integers (K-quants),
 * then one float multiply-add per (super-)block with {@code d_w·d_x}; min terms from the activation block sums.
 *
 * <p>Quants travel as 16-bit lanes: 16 weight quants times 16 activation quants in one {@code vpmullw}, adjacent
 * products summed into 32-bit lanes by shifts ({@link #pairSum}), so a 256-bit register does 16 multiply-adds per
 * instruction with no float conversion until the block scale. Every product fits 16 bits (|w| ≤ 128, |x| ≤ 127) and so
 * does the sum of two (≤ 32 512). Integer lanes are exact, so the result depends only on which elements share a lane and
 * on the order of the per-block float steps; {@link #dotFused} (few rows, straight from the mapped blocks) and
 * {@link #dotFloat}/{@link #dotFloat4} (many rows: the same integers held exactly in float lanes of a decoded row) use
 * the same lanes and order and give bit-identical results, so a row's result never depends on its batch. Q6_K follows
 * ggml's own lanes and unsigned quants ({@link #fusedQ6_K}); in float lanes its sums need two half super-blocks and an
 * integer step ({@link #dotFloatQ6}). The species are fixed at 256 bits (AVX2); wider machines run them as they are.
 */
final class QuantDot {
    static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    static final VectorSpecies<Short> S16 = ShortVector.SPECIES_256;
    static final VectorSpecies<Integer> I8 = IntVector.SPECIES_256;
    static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
    static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;
    /** The odd lanes of an 8-lane vector (ggml's lanes 4..7 in the quad order, see {@link #fusedQ6_K}). */
    static final VectorMask<Integer> ODD = VectorMask.fromLong(I8, 0xAAL);
    private static final VectorMask<Float> ODD_F = ODD.cast(F8);
    /** Swaps adjacent lanes (a constant shuffle: C2 compiles it to one permute; 64-bit lane shifts it may not). */
    static final VectorShuffle<Integer> SWAP = VectorShuffle.fromArray(I8, new int[] {1, 0, 3, 2, 5, 4, 7, 6}, 0);
    static final VectorShuffle<Float> SWAP_F = SWAP.cast(F8);
    static final ByteVector EIGHT = ByteVector.broadcast(B16, (byte) 8);
    static final ByteVector THIRTY_TWO = ByteVector.broadcast(B16, (byte) 32);
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    private QuantDot() {}

    // ---- lane helpers (shared with QuantRow's vector decoders)

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

    /** Q6_K quants: low 4 bits from {@code nib}, 2 high bits from {@code h >>> shift}, minus 32. */
    static ShortVector q6(ByteVector nib, ByteVector h, int shift) {
        return widen(nib.or(bitsTo(h, shift, 3, 4)).sub(THIRTY_TWO));
    }

    /**
     * {@link #sum} for lanes in the quad order ({@link #fusedQ6_K}): ggml's {@code hsum_float_8} tree over its lanes 0..7, which sit
     * in lanes 0, 2, 4, 6 (ggml 0..3) and 1, 3, 5, 7 (ggml 4..7) here.
     */
    static float sumQuads(FloatVector v) {
        FloatVector pairs = v.add(v.rearrange(SWAP_F));
        return (pairs.lane(0) + pairs.lane(4)) + (pairs.lane(2) + pairs.lane(6));
    }

    /** Sums adjacent 16-bit lanes into 32-bit lanes (what {@code vpmaddwd} does after the multiply). */
    static IntVector pairSum(ShortVector p) {
        IntVector i = p.reinterpretAsInts();
        return i.lanewise(VectorOperators.ASHR, 16).add(i.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
    }

    private static FloatVector toFloat(IntVector v) {
        return (FloatVector) v.convert(VectorOperators.I2F, 0);
    }

    private static ShortVector s16(short[] a, int i) {
        return ShortVector.fromArray(S16, a, i);
    }

    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(LE);
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(LE);

    /**
     * The eight 6-bit scales of a Q4_K/Q5_K super-block, one per byte, sub-blocks 0..3 in the low int and 4..7 in the
     * high int, from its 12 packed scale bytes read as {@code lo} (bytes 0..7) and {@code hi} (bytes 8..11); the same
     * numbers as ScalarDecode.scaleK4, unpacked with four masks and shifts for all eight at once (per sub-block
     * extraction was measured as a large share of the single-row kernel's time).
     */
    static long scalesK4(long lo, int hi) {
        int lo0 = (int) lo;
        return (lo0 & 0x3F3F3F3FL) | (long) ((hi & 0x0F0F0F0F) | ((lo0 >>> 2) & 0x30303030)) << 32;
    }

    /** The eight 6-bit mins of a Q4_K/Q5_K super-block, packed as {@link #scalesK4} packs the scales (as ScalarDecode.minK4). */
    static long minsK4(long lo, int hi) {
        int lo1 = (int) (lo >>> 32);
        return (lo1 & 0x3F3F3F3FL) | (long) (((hi >>> 4) & 0x0F0F0F0F) | ((lo1 >>> 2) & 0x30303030)) << 32;
    }

    /** Byte {@code j} of eight packed 6-bit values ({@link #scalesK4}, {@link #minsK4}). */
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

    private static boolean legacyMins(GgmlType t) {
        return t == GgmlType.Q4_1 || t == GgmlType.Q5_1;
    }

    private static boolean kMins(GgmlType t) {
        return t == GgmlType.Q2_K || t == GgmlType.Q4_K || t == GgmlType.Q5_K;
    }

    // ---- batched rows: exact integers in float lanes

    /**
     * Writes 32 quants from {@code src[so..]} as floats into {@code dst[d0..]} in <em>lane order</em>: four vectors of
     * eight, vector 0 lane L holding element 2L, vector 1 element 2L+1, vectors 2 and 3 elements 16+2L and 17+2L, i.e.
     * the elements {@link #pairSum} puts in 32-bit lane L. The first 16 are multiplied by {@code lo}, the others by
     * {@code hi} (integer sub-block scales, or 1). Its vector operations are written out, not called through this class's
     * helpers: it is inlined into large decoders, and past C2's node budget a helper stays a call that boxes its
     * vectors ({@link #fusedQ5_K} says more).
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

    /**
     * {@link #lanes} in the quad order ({@link #fusedQ6_K}): 32 quants from {@code src[so..]} as four vectors of
     * eight at {@code dst[d0..]}, vector k lane 2M holding element 4M+k (times {@code lo}) and lane 2M+1 element 16+4M+k
     * (times {@code hi}), each plus {@code add} before the scale.
     */
    static void lanesQuad(short[] src, int so, float[] dst, int d0, float lo, float hi, float add) {
        IntVector a = ShortVector.fromArray(S16, src, so).reinterpretAsInts();
        IntVector b = ShortVector.fromArray(S16, src, so + 16).reinterpretAsInts();
        // int lane 2M of a holds elements 4M, 4M+1 and lane 2M+1 elements 4M+2, 4M+3; likewise b from 16
        IntVector first = a.blend(b.rearrange(SWAP), ODD);   // lane 2M: (4M, 4M+1); lane 2M+1: (16+4M, 16+4M+1)
        IntVector second = a.rearrange(SWAP).blend(b, ODD); // lane 2M: (4M+2, 4M+3); lane 2M+1: (16+4M+2, 16+4M+3)
        FloatVector scale = FloatVector.broadcast(F8, lo).blend(FloatVector.broadcast(F8, hi), ODD_F);
        ((FloatVector) first.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0))
                .add(add).mul(scale).intoArray(dst, d0);
        ((FloatVector) first.lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0))
                .add(add).mul(scale).intoArray(dst, d0 + 8);
        ((FloatVector) second.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0))
                .add(add).mul(scale).intoArray(dst, d0 + 16);
        ((FloatVector) second.lanewise(VectorOperators.ASHR, 16).convert(VectorOperators.I2F, 0))
                .add(add).mul(scale).intoArray(dst, d0 + 24);
    }

    /**
     * The Q6_K offset pairing of one super-block's 16 per-sub-block values {@code src[s0..s0+16)} (weight scales, or
     * activation {@code 32·bsum}s) in the quad order: lane 2M takes sub-blocks 2M ({@code a}) and 2M+1 ({@code b}),
     * lane 2M+1 sub-blocks 8+2M and 9+2M ({@link #fusedQ6_K}); written at {@code a[d0..d0+8)}, {@code b[d0..d0+8)}.
     */
    static void offsetPairs(int[] src, int s0, float[] a, float[] b, int d0) {
        for (int m = 0; m < 4; m++) {
            a[d0 + 2 * m] = src[s0 + 2 * m];
            b[d0 + 2 * m] = src[s0 + 2 * m + 1];
            a[d0 + 2 * m + 1] = src[s0 + 8 + 2 * m];
            b[d0 + 2 * m + 1] = src[s0 + 9 + 2 * m];
        }
    }

    private static IntVector toInt(FloatVector v) {
        return (IntVector) v.convert(VectorOperators.F2I, 0);
    }

    /**
     * The Q6_K offset lanes ({@link #fusedQ6_K}'s {@code 32·(sc_j·bsum_j + sc_j+1·bsum_j+1)} in the quad order) of
     * weight row {@code w} with activation row {@code xRow} in super-block {@code b}, from {@link QuantRow#scA}/
     * {@code scB} and {@link QuantActivations#bsA}/{@code bsB}: products below 2^23, sums below 2^24, so exact.
     */
    private static IntVector q6Offset(QuantRow w, QuantActivations x, int xRow, int b) {
        int xi = (xRow * (w.cols >> 8) + b) * 8;
        return toInt(f8(w.scB, b * 8).fma(f8(x.bsB, xi), f8(w.scA, b * 8).mul(f8(x.bsA, xi))));
    }

    /**
     * {@link #dotFloat} for Q6_K, bit-identical to {@link #fusedQ6_K}: the unsigned quants times the sub-block scales
     * (≤ 8064) times activation quants (≤ 127) in float lanes, the two halves of each super-block summed separately
     * (16 products per lane, below 2^24, so exact; {@link #q6Halves}), then per lane in ints: both halves minus the
     * offset ({@link #q6Offset}), converted and multiply-added with {@code d·d_x} per super-block, as ggml does
     * ({@link #q6Combine}). Two passes, so that neither method outgrows what C2 inlines into one compilation.
     */
    static float dotFloatQ6(QuantRow w, QuantActivations x, int xRow) {
        QuantRow[] one = w.one;
        one[0] = w;
        float[] h = w.halves;
        int xo = xRow * w.cols;
        for (int e0 = 0; e0 < w.cols; e0 += 128) {
            FloatVector a = FloatVector.zero(F8);
            for (int e = e0; e < e0 + 128; e += 8) {
                a = f8(w.wf, e).fma(f8(x.qf, xo + e), a);
            }
            a.intoArray(h, e0 / 16);
        }
        q6Combine(one, 1, x, xRow, 1, h, w.lanes, 0, 0);
        return w.lanes[0];
    }

    /** {@link #dotFloatQ6} of four weight rows with one activation row, each result bit-identical to it. */
    static void dotFloat4Q6(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0) {
        q6Halves(w, x, xRow, 1, w[0].halves);
        q6Combine(w, 4, x, xRow, 1, w[0].halves, out, o0, 0);
    }

    /**
     * {@link #dotFloatQ6} of four weight rows with two activation rows ({@code xRow}, {@code xRow + 1}; results at
     * {@code out[o0..]} and {@code out[o0 + next..]}), each bit-identical to it.
     */
    static void dotFloat4x2Q6(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0, int next) {
        q6Halves(w, x, xRow, 2, w[0].halves);
        q6Combine(w, 4, x, xRow, 2, w[0].halves, out, o0, next);
    }

    /**
     * The float-lane sums of each half super-block of the four weight rows {@code w[0..4)} with activation rows
     * {@code xRow..xRow+xRows} (1 or 2), stored at {@code h[((b·2 + half)·4·xRows + t·xRows + r)·8]}. Four rows with
     * two activation rows is the batched hot loop (eight FMA chains, 0.75 loads per FMA); four rows with one (the
     * last row of an odd batch) runs the same loop with the second activation row equal to the first.
     */
    // The FMA block is a near-copy of dotFloat4x2K's on purpose (see the note on dotFloat4x2Legacy): a helper taking
    // or returning its vectors would box them.
    private static void q6Halves(QuantRow[] w, QuantActivations x, int xRow, int xRows, float[] h) {
        int cols = w[0].cols;
        int xo = xRow * cols;
        int yo = xo + (xRows > 1 ? cols : 0);
        float[] qx = x.qf;
        float[] q0 = w[0].wf;
        float[] q1 = w[1].wf;
        float[] q2 = w[2].wf;
        float[] q3 = w[3].wf;
        int combos = 4 * xRows;
        for (int e0 = 0; e0 < cols; e0 += 128) {
            FloatVector a0 = FloatVector.zero(F8);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            FloatVector b0 = a0;
            FloatVector b1 = a0;
            FloatVector b2 = a0;
            FloatVector b3 = a0;
            for (int e = e0; e < e0 + 128; e += 8) {
                FloatVector xv = f8(qx, xo + e);
                FloatVector yv = f8(qx, yo + e);
                FloatVector w0 = f8(q0, e);
                FloatVector w1 = f8(q1, e);
                FloatVector w2 = f8(q2, e);
                FloatVector w3 = f8(q3, e);
                a0 = w0.fma(xv, a0);
                a1 = w1.fma(xv, a1);
                a2 = w2.fma(xv, a2);
                a3 = w3.fma(xv, a3);
                b0 = w0.fma(yv, b0);
                b1 = w1.fma(yv, b1);
                b2 = w2.fma(yv, b2);
                b3 = w3.fma(yv, b3);
            }
            // chain (t, r) = weight row t, activation row r at index t·xRows + r
            int o = (e0 / 128) * combos * 8;
            if (xRows == 2) {
                a0.intoArray(h, o);
                b0.intoArray(h, o + 8);
                a1.intoArray(h, o + 16);
                b1.intoArray(h, o + 24);
                a2.intoArray(h, o + 32);
                b2.intoArray(h, o + 40);
                a3.intoArray(h, o + 48);
                b3.intoArray(h, o + 56);
            } else {
                a0.intoArray(h, o);
                a1.intoArray(h, o + 8);
                a2.intoArray(h, o + 16);
                a3.intoArray(h, o + 24);
            }
        }
    }

    /**
     * Second pass of {@link #dotFloatQ6}: for every (weight row t, activation row r) of {@link #q6Halves}, per super-block
     * the lane integers {@code half0 + half1 − offset}, converted and multiply-added with {@code d·d_x}; the result of
     * row t with activation row r goes to {@code out[o0 + r·next + t]}. Two chains at a time, so their
     * multiply-adds overlap (four overflow what C2 inlines here, and box).
     */
    private static void q6Combine(QuantRow[] w, int n, QuantActivations x, int xRow, int xRows, float[] h,
                                  float[] out, int o0, int next) {
        int nb = w[0].cols / 256;
        int combos = n * xRows;
        int half = combos * 8;
        for (int c = 0; c < combos; c += 2) {
            int c1 = Math.min(c + 1, combos - 1); // a single chain runs twice
            QuantRow w0 = w[c / xRows];
            QuantRow w1 = w[c1 / xRows];
            int r0 = xRow + c % xRows;
            int r1 = xRow + c1 % xRows;
            FloatVector acc0 = FloatVector.zero(F8);
            FloatVector acc1 = acc0;
            for (int b = 0; b < nb; b++) {
                int o = 2 * b * half;
                IntVector l0 = toInt(f8(h, o + 8 * c)).add(toInt(f8(h, o + half + 8 * c))).sub(q6Offset(w0, x, r0, b));
                IntVector l1 = toInt(f8(h, o + 8 * c1)).add(toInt(f8(h, o + half + 8 * c1))).sub(q6Offset(w1, x, r1, b));
                acc0 = toFloat(l0).fma(FloatVector.broadcast(F8, w0.d[b] * x.d[r0 * nb + b]), acc0);
                acc1 = toFloat(l1).fma(FloatVector.broadcast(F8, w1.d[b] * x.d[r1 * nb + b]), acc1);
            }
            out[o0 + (c % xRows) * next + c / xRows] = sumQuads(acc0);
            out[o0 + (c1 % xRows) * next + c1 / xRows] = sumQuads(acc1);
        }
    }

    private static FloatVector f8(float[] a, int i) {
        return FloatVector.fromArray(F8, a, i);
    }

    /**
     * The integer dot product of a decoded row, from the lane-ordered floats ({@link QuantRow#toFloatLanes},
     * {@link QuantActivations#toFloatLanes}): every product and partial sum is an integer below 2^24 (checked for the
     * worst case of each type), so each float lane holds exactly the integer {@link #dotFused}'s 32-bit lane holds, and
     * the result is bit-identical. Float FMAs do 8 exact integer multiply-adds per instruction with no pair-sum shuffles,
     * which is what makes the batched path fast.
     */
    static float dotFloat(QuantRow w, QuantActivations x, int xRow) {
        if (w.type == GgmlType.Q6_K) {
            return dotFloatQ6(w, x, xRow);
        }
        int cols = w.cols;
        int xo = xRow * cols;
        float[] q = w.wf;
        float[] qx = x.qf;
        FloatVector acc = FloatVector.zero(F8);
        if (!QuantRow.kQuant(w.type)) {
            int xb = xo / 32;
            for (int b = 0; b < cols / 32; b++) {
                int e = b * 32;
                FloatVector p = f8(q, e).mul(f8(qx, xo + e));
                p = f8(q, e + 8).fma(f8(qx, xo + e + 8), p);
                p = f8(q, e + 16).fma(f8(qx, xo + e + 16), p);
                p = f8(q, e + 24).fma(f8(qx, xo + e + 24), p);
                acc = p.fma(FloatVector.broadcast(F8, w.d[b] * x.d[xb + b]), acc);
            }
            return sum(acc) + legacyCorrection(w, x, xRow);
        }
        for (int b = 0; b < cols / 256; b++) {
            FloatVector a = FloatVector.zero(F8);
            for (int e = b * 256; e < b * 256 + 256; e += 8) {
                a = f8(q, e).fma(f8(qx, xo + e), a);
            }
            acc = a.fma(FloatVector.broadcast(F8, w.d[b] * x.d[xo / 256 + b]), acc);
        }
        return sum(acc) - kCorrection(w, x, xRow);
    }

    /**
     * {@link #dotFloat} of four weight rows with one activation row, sharing each activation load (1.25 loads per FMA
     * instead of 2); each result is bit-identical to {@link #dotFloat} of that row.
     */
    static void dotFloat4(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0) {
        if (w[0].type == GgmlType.Q6_K) {
            dotFloat4Q6(w, x, xRow, out, o0);
        } else if (QuantRow.kQuant(w[0].type)) {
            dotFloat4K(w, x, xRow, out, o0);
        } else {
            dotFloat4Legacy(w, x, xRow, out, o0);
        }
    }

    private static void dotFloat4K(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0) {
        int cols = w[0].cols;
        int xo = xRow * cols;
        float[] qx = x.qf;
        float[] q0 = w[0].wf;
        float[] q1 = w[1].wf;
        float[] q2 = w[2].wf;
        float[] q3 = w[3].wf;
        FloatVector c0 = FloatVector.zero(F8);
        FloatVector c1 = c0;
        FloatVector c2 = c0;
        FloatVector c3 = c0;
        for (int b = 0; b < cols / 256; b++) {
            FloatVector a0 = FloatVector.zero(F8);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            for (int e = b * 256; e < b * 256 + 256; e += 8) {
                FloatVector xv = f8(qx, xo + e);
                a0 = f8(q0, e).fma(xv, a0);
                a1 = f8(q1, e).fma(xv, a1);
                a2 = f8(q2, e).fma(xv, a2);
                a3 = f8(q3, e).fma(xv, a3);
            }
            float dx = x.d[xo / 256 + b];
            c0 = a0.fma(FloatVector.broadcast(F8, w[0].d[b] * dx), c0);
            c1 = a1.fma(FloatVector.broadcast(F8, w[1].d[b] * dx), c1);
            c2 = a2.fma(FloatVector.broadcast(F8, w[2].d[b] * dx), c2);
            c3 = a3.fma(FloatVector.broadcast(F8, w[3].d[b] * dx), c3);
        }
        out[o0] = sum(c0) - kCorrection(w[0], x, xRow);
        out[o0 + 1] = sum(c1) - kCorrection(w[1], x, xRow);
        out[o0 + 2] = sum(c2) - kCorrection(w[2], x, xRow);
        out[o0 + 3] = sum(c3) - kCorrection(w[3], x, xRow);
    }

    /**
     * {@code corr[t·batch + r]} = {@link #kCorrection} of weight row {@code w[t]} ({@code t < n}) with activation row r,
     * bit-identical to it. For Q4_K/Q5_K eight activation rows at a time: per super-block, eight FMAs over the
     * sub-blocks give the eight rows' {@code Σ_j m_j·S_j} (integers below 2^24, exact in any order), two lane-wise
     * multiplies round {@code dmin·dx·msum} as the scalar expression does, and a lane-wise add accumulates the
     * super-blocks in order. One such term per (row, activation row) and super-block, one reduction each, cost a third
     * of a batched product's time.
     */
    static void kCorrections(QuantRow[] w, int n, QuantActivations x, int batch, float[] corr) {
        GgmlType type = w[0].type;
        boolean vector = type == GgmlType.Q4_K || type == GgmlType.Q5_K;
        float[] sums = x.sumsByRow;
        float[] dx = x.dByRow;
        for (int t = 0; t < n; t++) {
            QuantRow row = w[t];
            int r = 0;
            if (vector) {
                float[] m = row.m;
                int nb = row.cols / 256;
                for (; r + 8 <= batch; r += 8) {
                    FloatVector c = FloatVector.zero(F8);
                    for (int b = 0; b < nb; b++) {
                        int s0 = 8 * b * batch + r;
                        FloatVector ms = f8(sums, s0).mul(m[8 * b]);
                        for (int j = 1; j < 8; j++) {
                            ms = f8(sums, s0 + j * batch).fma(FloatVector.broadcast(F8, m[8 * b + j]), ms);
                        }
                        c = c.add(FloatVector.broadcast(F8, row.dmin[b]).mul(f8(dx, b * batch + r)).mul(ms));
                    }
                    c.intoArray(corr, t * batch + r);
                }
            }
            for (; r < batch; r++) {
                corr[t * batch + r] = kCorrection(row, x, r);
            }
        }
    }

    /**
     * {@link #dotFloat4} of the same four K-quant weight rows with two activation rows ({@code xRow}, {@code xRow + 1};
     * results at {@code out[o0..]} and {@code out[o0 + next..]}): eight independent FMA chains hide the FMA latency and
     * each weight load serves two rows (0.75 loads per FMA). The integer lane sums are exact in any order, so every
     * result is still bit-identical to {@link #dotFloat}. The min terms are given: weight row t with activation row
     * {@code xRow + i} subtracts {@code corr[cAt + t·cStride + i]} ({@link #kCorrections} computes them for a batch).
     */
    static void dotFloat4x2K(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0, int next,
                             float[] corr, int cAt, int cStride) {
        int cols = w[0].cols;
        int xo = xRow * cols;
        int yo = xo + cols;
        float[] qx = x.qf;
        float[] q0 = w[0].wf;
        float[] q1 = w[1].wf;
        float[] q2 = w[2].wf;
        float[] q3 = w[3].wf;
        FloatVector c0 = FloatVector.zero(F8);
        FloatVector c1 = c0;
        FloatVector c2 = c0;
        FloatVector c3 = c0;
        FloatVector d0 = c0;
        FloatVector d1 = c0;
        FloatVector d2 = c0;
        FloatVector d3 = c0;
        for (int b = 0; b < cols / 256; b++) {
            FloatVector a0 = FloatVector.zero(F8);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            FloatVector b0 = a0;
            FloatVector b1 = a0;
            FloatVector b2 = a0;
            FloatVector b3 = a0;
            for (int e = b * 256; e < b * 256 + 256; e += 8) {
                FloatVector xv = f8(qx, xo + e);
                FloatVector yv = f8(qx, yo + e);
                FloatVector w0 = f8(q0, e);
                FloatVector w1 = f8(q1, e);
                FloatVector w2 = f8(q2, e);
                FloatVector w3 = f8(q3, e);
                a0 = w0.fma(xv, a0);
                a1 = w1.fma(xv, a1);
                a2 = w2.fma(xv, a2);
                a3 = w3.fma(xv, a3);
                b0 = w0.fma(yv, b0);
                b1 = w1.fma(yv, b1);
                b2 = w2.fma(yv, b2);
                b3 = w3.fma(yv, b3);
            }
            float dx = x.d[xo / 256 + b];
            float dy = x.d[yo / 256 + b];
            c0 = a0.fma(FloatVector.broadcast(F8, w[0].d[b] * dx), c0);
            c1 = a1.fma(FloatVector.broadcast(F8, w[1].d[b] * dx), c1);
            c2 = a2.fma(FloatVector.broadcast(F8, w[2].d[b] * dx), c2);
            c3 = a3.fma(FloatVector.broadcast(F8, w[3].d[b] * dx), c3);
            d0 = b0.fma(FloatVector.broadcast(F8, w[0].d[b] * dy), d0);
            d1 = b1.fma(FloatVector.broadcast(F8, w[1].d[b] * dy), d1);
            d2 = b2.fma(FloatVector.broadcast(F8, w[2].d[b] * dy), d2);
            d3 = b3.fma(FloatVector.broadcast(F8, w[3].d[b] * dy), d3);
        }
        float[] ln = w[0].lanes;
        store8(ln, c0, c1, c2, c3, d0, d1, d2, d3);
        for (int t = 0; t < 4; t++) {
            out[o0 + t] = sumLanes(ln, 8 * t) - corr[cAt + t * cStride];
            out[o0 + next + t] = sumLanes(ln, 32 + 8 * t) - corr[cAt + t * cStride + 1];
        }
    }

    // A near-copy of dotFloat4x2K on purpose (as dotFloat4Legacy is of dotFloat4K): sharing the FMA block through a
    // helper would pass vectors across a call, which boxes them unless C2 inlines it, and these methods are near its
    // inlining limit.
    /** {@link #dotFloat4x2K} for the 32-blocks (Q4_0…Q8_0), whose min terms (Q4_1/Q5_1) it adds itself. */
    static void dotFloat4x2Legacy(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0, int next) {
        int cols = w[0].cols;
        int xo = xRow * cols;
        int yo = xo + cols;
        float[] qx = x.qf;
        float[] q0 = w[0].wf;
        float[] q1 = w[1].wf;
        float[] q2 = w[2].wf;
        float[] q3 = w[3].wf;
        FloatVector c0 = FloatVector.zero(F8);
        FloatVector c1 = c0;
        FloatVector c2 = c0;
        FloatVector c3 = c0;
        FloatVector d0 = c0;
        FloatVector d1 = c0;
        FloatVector d2 = c0;
        FloatVector d3 = c0;
        for (int b = 0; b < cols / 32; b++) {
            int e = b * 32;
            FloatVector a0 = FloatVector.zero(F8);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            FloatVector b0 = a0;
            FloatVector b1 = a0;
            FloatVector b2 = a0;
            FloatVector b3 = a0;
            for (int i = 0; i < 32; i += 8) {
                FloatVector xv = f8(qx, xo + e + i);
                FloatVector yv = f8(qx, yo + e + i);
                FloatVector w0 = f8(q0, e + i);
                FloatVector w1 = f8(q1, e + i);
                FloatVector w2 = f8(q2, e + i);
                FloatVector w3 = f8(q3, e + i);
                a0 = w0.fma(xv, a0);
                a1 = w1.fma(xv, a1);
                a2 = w2.fma(xv, a2);
                a3 = w3.fma(xv, a3);
                b0 = w0.fma(yv, b0);
                b1 = w1.fma(yv, b1);
                b2 = w2.fma(yv, b2);
                b3 = w3.fma(yv, b3);
            }
            float dx = x.d[xo / 32 + b];
            float dy = x.d[yo / 32 + b];
            c0 = a0.fma(FloatVector.broadcast(F8, w[0].d[b] * dx), c0);
            c1 = a1.fma(FloatVector.broadcast(F8, w[1].d[b] * dx), c1);
            c2 = a2.fma(FloatVector.broadcast(F8, w[2].d[b] * dx), c2);
            c3 = a3.fma(FloatVector.broadcast(F8, w[3].d[b] * dx), c3);
            d0 = b0.fma(FloatVector.broadcast(F8, w[0].d[b] * dy), d0);
            d1 = b1.fma(FloatVector.broadcast(F8, w[1].d[b] * dy), d1);
            d2 = b2.fma(FloatVector.broadcast(F8, w[2].d[b] * dy), d2);
            d3 = b3.fma(FloatVector.broadcast(F8, w[3].d[b] * dy), d3);
        }
        float[] ln = w[0].lanes;
        store8(ln, c0, c1, c2, c3, d0, d1, d2, d3);
        for (int t = 0; t < 4; t++) {
            out[o0 + t] = sumLanes(ln, 8 * t) + legacyCorrection(w[t], x, xRow);
            out[o0 + next + t] = sumLanes(ln, 32 + 8 * t) + legacyCorrection(w[t], x, xRow + 1);
        }
    }

    // Eight accumulators are stored and summed from memory: passing them to a call C2 does not inline (this method
    // is near its inlining limit) would box them.
    private static void store8(float[] ln, FloatVector c0, FloatVector c1, FloatVector c2, FloatVector c3,
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
    private static float sumLanes(float[] a, int o) {
        float x = (a[o] + a[o + 4]) + (a[o + 2] + a[o + 6]);
        float y = (a[o + 1] + a[o + 5]) + (a[o + 3] + a[o + 7]);
        return x + y;
    }

    /** The K-quant min term of {@link #dotFloat}, summed over the super-blocks in the same order. */
    private static float kCorrection(QuantRow w, QuantActivations x, int xRow) {
        if (!kMins(w.type)) {
            return 0f;
        }
        if (w.type != GgmlType.Q2_K) {
            return kCorrection32(w, x, xRow);
        }
        int xo = xRow * w.cols;
        int g = QuantRow.subBlock(w.type);
        int subs = 256 / g;
        float corr = 0f;
        for (int b = 0; b < w.cols / 256; b++) {
            corr += w.dmin[b] * x.d[xo / 256 + b] * minSum(w, x, b, subs, g, xo / 16);
        }
        return corr;
    }

    private static void dotFloat4Legacy(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0) {
        int cols = w[0].cols;
        int xo = xRow * cols;
        int xb = xo / 32;
        float[] qx = x.qf;
        float[] q0 = w[0].wf;
        float[] q1 = w[1].wf;
        float[] q2 = w[2].wf;
        float[] q3 = w[3].wf;
        FloatVector c0 = FloatVector.zero(F8);
        FloatVector c1 = c0;
        FloatVector c2 = c0;
        FloatVector c3 = c0;
        for (int b = 0; b < cols / 32; b++) {
            int e = b * 32;
            FloatVector x0 = f8(qx, xo + e);
            FloatVector p0 = f8(q0, e).mul(x0);
            FloatVector p1 = f8(q1, e).mul(x0);
            FloatVector p2 = f8(q2, e).mul(x0);
            FloatVector p3 = f8(q3, e).mul(x0);
            for (int i = 8; i < 32; i += 8) {
                FloatVector xv = f8(qx, xo + e + i);
                p0 = f8(q0, e + i).fma(xv, p0);
                p1 = f8(q1, e + i).fma(xv, p1);
                p2 = f8(q2, e + i).fma(xv, p2);
                p3 = f8(q3, e + i).fma(xv, p3);
            }
            float dx = x.d[xb + b];
            c0 = p0.fma(FloatVector.broadcast(F8, w[0].d[b] * dx), c0);
            c1 = p1.fma(FloatVector.broadcast(F8, w[1].d[b] * dx), c1);
            c2 = p2.fma(FloatVector.broadcast(F8, w[2].d[b] * dx), c2);
            c3 = p3.fma(FloatVector.broadcast(F8, w[3].d[b] * dx), c3);
        }
        out[o0] = sum(c0) + legacyCorrection(w[0], x, xRow);
        out[o0 + 1] = sum(c1) + legacyCorrection(w[1], x, xRow);
        out[o0 + 2] = sum(c2) + legacyCorrection(w[2], x, xRow);
        out[o0 + 3] = sum(c3) + legacyCorrection(w[3], x, xRow);
    }

    /**
     * {@link #kCorrection} for Q4_K/Q5_K (eight 32-wide sub-blocks): each super-block's {@code Σ_j m_j·S_j} as one
     * 8-lane product and lane sum. Mins ≤ 63 and sums ≤ 32·127 make every product and partial sum an integer below
     * 2^24, exact in float in any order, so the result equals the integer sum; then the same float expression in the
     * same order as {@link #kCorrection}.
     */
    private static float kCorrection32(QuantRow w, QuantActivations x, int xRow) {
        int xo = xRow * w.cols;
        float[] m = w.m;
        int[] s32 = x.sums32;
        float corr = 0f;
        for (int b = 0; b < w.cols / 256; b++) {
            FloatVector sums = toFloat(IntVector.fromArray(I8, s32, xo / 32 + b * 8));
            float msum = f8(m, b * 8).mul(sums).reduceLanes(VectorOperators.ADD);
            corr += w.dmin[b] * x.d[xo / 256 + b] * msum;
        }
        return corr;
    }

    /** The Q4_1/Q5_1 min term of {@link #dotFloat}, summed over the blocks in the same order. */
    private static float legacyCorrection(QuantRow w, QuantActivations x, int xRow) {
        if (!legacyMins(w.type)) {
            return 0f;
        }
        int xb = xRow * w.cols / 32;
        float corr = 0f;
        for (int b = 0; b < w.cols / 32; b++) {
            corr += w.m[b] * x.sums[xb + b];
        }
        return corr;
    }

    // ---- single rows straight from the mapped blocks

    /** Types {@link #dotFused} handles. */
    static boolean fusedSupports(GgmlType t) {
        return t == GgmlType.Q4_0 || t == GgmlType.Q8_0 || t == GgmlType.Q2_K || t == GgmlType.Q3_K || t == GgmlType.Q4_K
                || t == GgmlType.Q5_K || t == GgmlType.Q6_K;
    }

    /**
     * Single-row dot straight from the mapped blocks: the quant vectors {@link QuantRow#decode} would store are built
     * in registers (for Q2_K/Q3_K already times their sub-block scales) and used at once, with the lanes and order of
     * {@link #dotFloat}, so the result is bit-identical to it.
     */
    static float dotFused(GgmlType t, MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        return switch (t) {
            case Q4_0 -> fusedQ4_0(s, off, cols, x, xRow);
            case Q8_0 -> fusedQ8_0(s, off, cols, x, xRow);
            case Q2_K -> fusedQ2_K(s, off, cols, x, xRow);
            case Q3_K -> fusedQ3_K(s, off, cols, x, xRow);
            case Q4_K -> fusedQ4_K(s, off, cols, x, xRow);
            case Q5_K -> fusedQ5_K(s, off, cols, x, xRow);
            case Q6_K -> fusedQ6_K(s, off, cols, x, xRow);
            default -> throw new IllegalArgumentException("no fused dot for " + t);
        };
    }

    /**
     * One kernel object per type for rows {@code [r0, r1)} of a single activation row: the row loop lives inside each
     * type's own method, so the JIT compiles each as its own unit instead of inlining every type's vector code into the
     * caller (which overflows its inlining budget and leaves vectors boxed).
     */
    abstract static class Rows {
        /** {@code out[o0 + r] = dot(weight row r, activation row xRow)} for {@code r0 <= r < r1}. */
        abstract void run(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1);
    }

    private static final class Q4_0Rows extends Rows {
        @Override
        void run(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
            for (int r = r0; r < r1; r++) {
                out[o0 + r] = fusedQ4_0(s, r * stride, cols, x, xRow);
            }
        }
    }

    private static final class Q8_0Rows extends Rows {
        @Override
        void run(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
            for (int r = r0; r < r1; r++) {
                out[o0 + r] = fusedQ8_0(s, r * stride, cols, x, xRow);
            }
        }
    }

    private static final class Q4_KRows extends Rows {
        @Override
        void run(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
            for (int r = r0; r < r1; r++) {
                out[o0 + r] = fusedQ4_K(s, r * stride, cols, x, xRow);
            }
        }
    }

    private static final class Q2_KRows extends Rows {
        @Override
        void run(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
            for (int r = r0; r < r1; r++) {
                out[o0 + r] = fusedQ2_K(s, r * stride, cols, x, xRow);
            }
        }
    }

    private static final class Q3_KRows extends Rows {
        @Override
        void run(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
            for (int r = r0; r < r1; r++) {
                out[o0 + r] = fusedQ3_K(s, r * stride, cols, x, xRow);
            }
        }
    }

    private static final class Q5_KRows extends Rows {
        @Override
        void run(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
            for (int r = r0; r < r1; r++) {
                out[o0 + r] = fusedQ5_K(s, r * stride, cols, x, xRow);
            }
        }
    }

    private static final class Q6_KRows extends Rows {
        @Override
        void run(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
            for (int r = r0; r < r1; r++) {
                out[o0 + r] = fusedQ6_K(s, r * stride, cols, x, xRow);
            }
        }
    }

    private static final Rows Q4_0_ROWS = new Q4_0Rows();
    private static final Rows Q8_0_ROWS = new Q8_0Rows();
    private static final Rows Q2_K_ROWS = new Q2_KRows();
    private static final Rows Q3_K_ROWS = new Q3_KRows();
    private static final Rows Q4_K_ROWS = new Q4_KRows();
    private static final Rows Q5_K_ROWS = new Q5_KRows();
    private static final Rows Q6_K_ROWS = new Q6_KRows();

    /** The single-row kernel of {@code t}, or {@code null} when it has none ({@link #fusedSupports}). */
    static Rows fusedRows(GgmlType t) {
        return switch (t) {
            case Q4_0 -> Q4_0_ROWS;
            case Q8_0 -> Q8_0_ROWS;
            case Q2_K -> Q2_K_ROWS;
            case Q3_K -> Q3_K_ROWS;
            case Q4_K -> Q4_K_ROWS;
            case Q5_K -> Q5_K_ROWS;
            case Q6_K -> Q6_K_ROWS;
            default -> null;
        };
    }

    private static ByteVector load16(MemorySegment s, long o) {
        return ByteVector.fromMemorySegment(B16, s, o, LE);
    }

    private static float fusedQ4_0(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        int xb = xo / 32;
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 18L;
            int e = xo + b * 32;
            ByteVector v = load16(s, o + 2);
            ShortVector p = widen(lowNibbles(v).sub(EIGHT)).mul(s16(qx, e))
                    .add(widen(highNibbles(v).sub(EIGHT)).mul(s16(qx, e + 16)));
            acc = toFloat(pairSum(p)).fma(FloatVector.broadcast(F8, ScalarDecode.half(s, o) * x.d[xb + b]), acc);
        }
        return sum(acc);
    }

    private static float fusedQ8_0(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        int xb = xo / 32;
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 34L;
            int e = xo + b * 32;
            ShortVector p = widen(load16(s, o + 2)).mul(s16(qx, e)).add(widen(load16(s, o + 18)).mul(s16(qx, e + 16)));
            acc = toFloat(pairSum(p)).fma(FloatVector.broadcast(F8, ScalarDecode.half(s, o) * x.d[xb + b]), acc);
        }
        return sum(acc);
    }

    /**
     * Q2_K, one row, in {@link #dotFloat}'s lanes: as {@link #fusedQ3_K} (quants 0..3 times their 4-bit scales in 16-bit
     * lanes), plus the min term {@code dmin·d_x·Σ m_j·bsum_j} per super-block, subtracted at the end as
     * {@link #kCorrection} does. Block: scales[16] (scale in the low nibble, min in the high), qs[64] (group 4n+j at
     * bits 2j of bytes 32n..32n+31), d, dmin. Vector operations written out (see {@link #fusedQ5_K}).
     */
    private static float fusedQ2_K(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        float[] bsums = x.sums;
        FloatVector acc = FloatVector.zero(F8);
        float corr = 0f;
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 84L;
            long scales0 = s.get(U64, o);     // sub-blocks 0..7
            long scales1 = s.get(U64, o + 8); // 8..15
            int dd = s.get(U32, o + 80);      // d, dmin
            int x16 = xo / 16 + b * 16;
            int msum = 0;
            IntVector a = IntVector.zero(I8);
            for (int n = 0; n < 2; n++) {
                long scales = n == 0 ? scales0 : scales1;
                // sign-extended bytes: the masks below drop the extension
                ShortVector q0 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 16 + n * 32L, LE).convertShape(VectorOperators.B2S, S16, 0);
                ShortVector q1 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 32 + n * 32L, LE).convertShape(VectorOperators.B2S, S16, 0);
                for (int j = 0; j < 4; j++) {
                    int e = xo + b * 256 + 32 * (4 * n + j);
                    int sm0 = (int) (scales >>> (16 * j)) & 0xFF;
                    int sm1 = (int) (scales >>> (16 * j + 8)) & 0xFF;
                    ShortVector w0 = q0.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).mul((short) (sm0 & 0xF));
                    ShortVector w1 = q1.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).mul((short) (sm1 & 0xF));
                    IntVector p = w0.mul(ShortVector.fromArray(S16, qx, e)).add(w1.mul(ShortVector.fromArray(S16, qx, e + 16)))
                            .reinterpretAsInts();
                    a = a.add(p.lanewise(VectorOperators.ASHR, 16).add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16)));
                    msum += (sm0 >>> 4) * (int) bsums[x16 + 8 * n + 2 * j] + (sm1 >>> 4) * (int) bsums[x16 + 8 * n + 2 * j + 1];
                }
            }
            float dx = x.d[xo / 256 + b];
            acc = ((FloatVector) a.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F8, Float.float16ToFloat((short) dd) * dx), acc);
            corr += Float.float16ToFloat((short) (dd >>> 16)) * dx * (float) msum;
        }
        float lo = (acc.lane(0) + acc.lane(4)) + (acc.lane(2) + acc.lane(6));
        float hi = (acc.lane(1) + acc.lane(5)) + (acc.lane(3) + acc.lane(7));
        return (lo + hi) - corr;
    }

    /**
     * Eight of the 16 six-bit scales of a Q3_K super-block (before the −32), one per byte: sub-blocks 0..7 for
     * {@code half} 0, 8..15 for 1, from its 12 packed scale bytes read as {@code lo} (bytes 0..7) and {@code hi} (bytes
     * 8..11). The same numbers as ScalarDecode.q3kScale + 32, unpacked four at a time with masks and shifts.
     */
    static long q3Scales(long lo, int hi, int half) {
        int a = (int) lo;
        int b = (int) (lo >>> 32);
        int shift = 4 * half;
        int first = ((a >> shift) & 0x0F0F0F0F) | (((hi >> shift) & 0x03030303) << 4);
        int second = ((b >> shift) & 0x0F0F0F0F) | (((hi >> (shift + 2)) & 0x03030303) << 4);
        return (first & 0xFFFFFFFFL) | (long) second << 32;
    }

    /**
     * Q3_K, one row, in {@link #dotFloat}'s lanes: the quants of sub-blocks 2g and 2g+1 (16 each) times their scales in
     * 16-bit lanes (|q·sc| ≤ 128, times |x| ≤ 127, two such sums stay within a short), adjacent products summed into
     * 32-bit lanes, one float multiply-add per super-block. Vector operations written out (see {@link #fusedQ5_K}).
     * Block: hmask[32] (bit g of byte l: the high bit of element l, or 16+l, of group g), qs[64] (2 bits per element,
     * group 4n+j at bits 2j of bytes 32n..32n+31), scales[12], d.
     */
    private static float fusedQ3_K(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 110L;
            long l0 = s.get(U64, o + 96);  // scale bytes 0..7
            long l1 = s.get(U64, o + 102); // scale bytes 6..11, then d: stays inside the 110-byte block
            int hi = (int) (l1 >>> 16);
            // scales first: a call parsed early is inlined, one parsed near C2's node cutoff may stay a call
            long scales0 = q3Scales(l0, hi, 0);
            long scales1 = q3Scales(l0, hi, 1);
            // the high bits of every group, as 16-bit lanes shifted up by 2: bit g lands on bit 2 after a shift by g
            ShortVector h0 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o, LE).convertShape(VectorOperators.B2S, S16, 0))
                    .and((short) 0xFF).lanewise(VectorOperators.LSHL, 2);
            ShortVector h1 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o + 16, LE).convertShape(VectorOperators.B2S, S16, 0))
                    .and((short) 0xFF).lanewise(VectorOperators.LSHL, 2);
            IntVector a = IntVector.zero(I8);
            for (int n = 0; n < 2; n++) {
                long scales = n == 0 ? scales0 : scales1;
                // sign-extended bytes: the masks below drop the extension
                ShortVector q0 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 32 + n * 32L, LE).convertShape(VectorOperators.B2S, S16, 0);
                ShortVector q1 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 48 + n * 32L, LE).convertShape(VectorOperators.B2S, S16, 0);
                for (int j = 0; j < 4; j++) {
                    int g = 4 * n + j;
                    int e = xo + b * 256 + 32 * g;
                    short sc0 = (short) (((int) (scales >>> (16 * j)) & 0xFF) - 32);
                    short sc1 = (short) (((int) (scales >>> (16 * j + 8)) & 0xFF) - 32);
                    ShortVector w0 = q0.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3)
                            .or(h0.lanewise(VectorOperators.LSHR, g).and((short) 4)).sub((short) 4).mul(sc0);
                    ShortVector w1 = q1.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3)
                            .or(h1.lanewise(VectorOperators.LSHR, g).and((short) 4)).sub((short) 4).mul(sc1);
                    IntVector p = w0.mul(ShortVector.fromArray(S16, qx, e)).add(w1.mul(ShortVector.fromArray(S16, qx, e + 16)))
                            .reinterpretAsInts();
                    a = a.add(p.lanewise(VectorOperators.ASHR, 16).add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16)));
                }
            }
            acc = ((FloatVector) a.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F8, Float.float16ToFloat((short) (l1 >>> 48)) * x.d[xo / 256 + b]), acc);
        }
        float lo = (acc.lane(0) + acc.lane(4)) + (acc.lane(2) + acc.lane(6));
        float hi = (acc.lane(1) + acc.lane(5)) + (acc.lane(3) + acc.lane(7));
        return lo + hi;
    }

    // sub-block j of a Q4_K/Q5_K super-block: nibbles (low for even j, high for odd) of the 32 bytes of chunk j/2,
    // plus bit j of qh for Q5_K. Vector operations written out, as in fusedQ5_K (see there why).
    private static float fusedQ4_K(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        FloatVector acc = FloatVector.zero(F8);
        float corr = 0f;
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 144L;
            IntVector a = IntVector.zero(I8);
            int msum = 0;
            int x32 = xo / 32 + b * 8;
            // the 16-byte header (d, dmin, 12 scale bytes) in two loads
            long h01 = s.get(U64, o);
            long h23 = s.get(U64, o + 8);
            long sLo = (h01 >>> 32) | (h23 << 32);
            int sHi = (int) (h23 >>> 32);
            long scales = scalesK4(sLo, sHi);
            long mins = minsK4(sLo, sHi);
            for (int j = 0; j < 8; j++) {
                int e = xo + b * 256 + 32 * j;
                long chunk = o + 16 + (j >> 1) * 32L;
                int shift = 4 * (j & 1);
                // nibbles(load16(..), shift) widened, written out
                ByteVector n0 = ByteVector.fromMemorySegment(B16, s, chunk, LE).reinterpretAsShorts()
                        .lanewise(VectorOperators.LSHR, shift).reinterpretAsBytes().and((byte) 0x0F);
                ByteVector n1 = ByteVector.fromMemorySegment(B16, s, chunk + 16, LE).reinterpretAsShorts()
                        .lanewise(VectorOperators.LSHR, shift).reinterpretAsBytes().and((byte) 0x0F);
                IntVector p = ((ShortVector) n0.convertShape(VectorOperators.B2S, S16, 0)).mul(ShortVector.fromArray(S16, qx, e))
                        .add(((ShortVector) n1.convertShape(VectorOperators.B2S, S16, 0)).mul(ShortVector.fromArray(S16, qx, e + 16)))
                        .reinterpretAsInts();
                IntVector pairs = p.lanewise(VectorOperators.ASHR, 16).add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                a = a.add(pairs.mul((int) (scales >>> (8 * j)) & 0xFF));
                msum += ((int) (mins >>> (8 * j)) & 0xFF) * x.sums32[x32 + j];
            }
            float dx = x.d[xo / 256 + b];
            acc = ((FloatVector) a.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F8, Float.float16ToFloat((short) h01) * dx), acc);
            corr += Float.float16ToFloat((short) (h01 >>> 16)) * dx * (float) msum;
        }
        float lo = (acc.lane(0) + acc.lane(4)) + (acc.lane(2) + acc.lane(6));
        float hi = (acc.lane(1) + acc.lane(5)) + (acc.lane(3) + acc.lane(7));
        return (lo + hi) - corr;
    }

    /**
     * Q5_K, one row. Every vector operation is written out here, none through a helper of this class: C2 stops inlining
     * a method's callees once its parse has made {@code NodeCountInliningCutoff} nodes, except JDK methods marked
     * {@code @ForceInline} (the Vector API's own), which it inlines later instead. This method parses close to that
     * count, and how close depends on the profiles of the code it inlines, i.e. on what ran before (after the Q6_K
     * kernel it passed it): a helper of ours past the cutoff stays a call and the vectors it takes or returns are boxed
     * (about 300 KB allocated per 64-row product, several times slower). Written out, they cannot be refused.
     */
    private static float fusedQ5_K(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        FloatVector acc = FloatVector.zero(F8);
        float corr = 0f;
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 176L;
            IntVector a = IntVector.zero(I8);
            int msum = 0;
            int x32 = xo / 32 + b * 8;
            // the 16-byte header (d, dmin, 12 scale bytes) in two loads
            long h01 = s.get(U64, o);
            long h23 = s.get(U64, o + 8);
            long sLo = (h01 >>> 32) | (h23 << 32);
            int sHi = (int) (h23 >>> 32);
            long scales = scalesK4(sLo, sHi);
            long mins = minsK4(sLo, sHi);
            // the high bits of all eight sub-blocks, loaded once as 16-bit lanes and shifted up by 4, so bit j of qh
            // is bit 4 after a shift by j
            ShortVector h0 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o + 16, LE).convertShape(VectorOperators.B2S, S16, 0))
                    .and((short) 0xFF).lanewise(VectorOperators.LSHL, 4);
            ShortVector h1 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o + 32, LE).convertShape(VectorOperators.B2S, S16, 0))
                    .and((short) 0xFF).lanewise(VectorOperators.LSHL, 4);
            for (int j = 0; j < 8; j++) {
                int e = xo + b * 256 + 32 * j;
                long chunk = o + 48 + (j >> 1) * 32L;
                int shift = 4 * (j & 1);
                // nibbles taken in 16-bit lanes (sign-extended bytes: the mask drops the extension)
                ShortVector w0 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, chunk, LE).convertShape(VectorOperators.B2S, S16, 0))
                        .lanewise(VectorOperators.LSHR, shift).and((short) 15).or(h0.lanewise(VectorOperators.LSHR, j).and((short) 16));
                ShortVector w1 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, chunk + 16, LE).convertShape(VectorOperators.B2S, S16, 0))
                        .lanewise(VectorOperators.LSHR, shift).and((short) 15).or(h1.lanewise(VectorOperators.LSHR, j).and((short) 16));
                IntVector p = w0.mul(ShortVector.fromArray(S16, qx, e)).add(w1.mul(ShortVector.fromArray(S16, qx, e + 16))).reinterpretAsInts();
                // pairSum(p), written out
                IntVector pairs = p.lanewise(VectorOperators.ASHR, 16).add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                a = a.add(pairs.mul((int) (scales >>> (8 * j)) & 0xFF));
                msum += ((int) (mins >>> (8 * j)) & 0xFF) * x.sums32[x32 + j];
            }
            float dx = x.d[xo / 256 + b];
            acc = ((FloatVector) a.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F8, Float.float16ToFloat((short) h01) * dx), acc);
            corr += Float.float16ToFloat((short) (h01 >>> 16)) * dx * (float) msum;
        }
        // sum(acc), written out
        float lo = (acc.lane(0) + acc.lane(4)) + (acc.lane(2) + acc.lane(6));
        float hi = (acc.lane(1) + acc.lane(5)) + (acc.lane(3) + acc.lane(7));
        return (lo + hi) - corr;
    }

    /**
     * ggml's AVX2 Q6_K kernel, lane for lane: unsigned quants (0..63) times the activation quants, times the sub-block
     * scale, summed into eight integer lanes, minus {@code 32·(sc_j·bsum_j + sc_j+1·bsum_j+1)} per lane for a pair of
     * sub-blocks (ggml takes the −32 out of the products with the activation block sums); every lane is an exact
     * integer, converted and multiply-added with {@code d·d_x} per super-block, and the eight are summed in
     * {@code hsum_float_8}'s order.
     *
     * <p>The quad order. ggml's lane p (vpmaddubsw, then vpmaddwd) holds elements 4p..4p+3 of every 32, and its offset
     * pair is sub-blocks (2p, 2p+1). Here {@link #pairSum} gives pairs: {@code lo} holds, in lane m, elements 2m, 2m+1
     * of the first half of every 32, {@code hi} the same for the second half; then lane 2M of
     * {@code blend(lo, hi) + blend(swap(lo), swap(hi))} holds ggml's lane M and lane 2M+1 ggml's lane 4+M, which
     * {@link #sumQuads} reduces in ggml's order. The offset of sub-block j goes in pair lane j mod 8 of lo (j < 8) or
     * hi, so those sums pair it as ggml does. The other types keep the pair lanes: the same integer totals, ulp-level
     * differences from ggml per block, which no reference case shows.
     */
    private static float fusedQ6_K(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        int[] bs = x.bsums32;
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 210L;
            int x16 = xo / 16 + b * 16;
            // every vector operation of this method is written out (see fusedQ5_K why); the scale bytes become int
            // lanes through castShape (convertShape(B2I) is not intrinsified)
            IntVector lo = ((IntVector) ByteVector.fromMemorySegment(B8, s, o + 192, LE).castShape(I8, 0))
                    .mul(IntVector.fromArray(I8, bs, x16)).neg();
            IntVector hi = ((IntVector) ByteVector.fromMemorySegment(B8, s, o + 200, LE).castShape(I8, 0))
                    .mul(IntVector.fromArray(I8, bs, x16 + 8)).neg();
            // sub-block j = 8n + jj (16 elements): half n, within it quarter k = jj/2 and lanes l = 16·(jj%2);
            // low 4 bits from ql (nibble k/2 of byte 32·(k%2) + l), high 2 bits from qh bits 2k. Even j are the first
            // half of a 32 and go to lo, odd j to hi: each step adds to lo and swaps the two, which keeps one
            // sub-block per loop body (two overflow C2's inlining budget) and needs no branch (a vector merged from
            // two paths may be boxed). Two loops of eight: C2 unrolls an eight-trip loop of this body fully within
            // -XX:LoopUnrollLimit=300, not one of 16.
            for (int n = 0; n < 2; n++) {
                for (int jj = 0; jj < 8; jj++) {
                    int j = 8 * n + jj;
                    int k = jj >> 1;
                    int l = (jj & 1) * 16;
                    // unsigned quants (0..63, as ggml's AVX2 kernel multiplies them): low 4 bits from ql, 2 high bits from qh,
                    // then adjacent products summed into 32-bit lanes (pairSum)
                    ByteVector nib = ByteVector.fromMemorySegment(B16, s, o + n * 64L + (k & 1) * 32L + l, LE).reinterpretAsShorts()
                            .lanewise(VectorOperators.LSHR, 4 * (k >> 1)).reinterpretAsBytes().and((byte) 0x0F);
                    ByteVector high = ByteVector.fromMemorySegment(B16, s, o + 128 + n * 32L + l, LE).reinterpretAsShorts()
                            .lanewise(VectorOperators.LSHR, 2 * k).reinterpretAsBytes().and((byte) 3)
                            .reinterpretAsShorts().lanewise(VectorOperators.LSHL, 4).reinterpretAsBytes();
                    IntVector p = ((ShortVector) nib.or(high).convertShape(VectorOperators.B2S, S16, 0))
                            .mul(ShortVector.fromArray(S16, qx, xo + b * 256 + 16 * j)).reinterpretAsInts();
                    IntVector pairs = p.lanewise(VectorOperators.ASHR, 16).add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                    IntVector sum = lo.add(pairs.mul((int) s.get(ValueLayout.JAVA_BYTE, o + 192 + j)));
                    lo = hi;
                    hi = sum;
                }
            }
            // the quad lanes and sumQuads(acc), written out: this method is at C2's inlining limit, and a helper it
            // does not inline gets its vector arguments boxed
            IntVector lanes = lo.blend(hi, ODD).add(lo.rearrange(SWAP).blend(hi.rearrange(SWAP), ODD));
            acc = ((FloatVector) lanes.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F8, Float.float16ToFloat(s.get(U16, o + 208)) * x.d[xo / 256 + b]), acc);
        }
        FloatVector pairs = acc.add(acc.rearrange(SWAP_F));
        return (pairs.lane(0) + pairs.lane(4)) + (pairs.lane(2) + pairs.lane(6));
    }

    /** {@code Σ_j m_j · (sum of the activation quants of sub-block j)}: exact integers. */
    private static float minSum(QuantRow w, QuantActivations x, int b, int subs, int g, int xg) {
        int s = 0;
        for (int j = 0; j < subs; j++) {
            int bs = g == 16 ? (int) x.sums[xg + b * 16 + j] : (int) (x.sums[xg + b * 16 + 2 * j] + x.sums[xg + b * 16 + 2 * j + 1]);
            s += (int) w.m[b * subs + j] * bs;
        }
        return s;
    }

    /**
     * Scalar reference of {@link #fusedQ6_K}: ggml's eight lanes as eight ints, lane p summing elements 4p..4p+3 of every
     * 32 with unsigned quants, minus {@code 32·(sc_2p·bsum_2p + sc_2p+1·bsum_2p+1)}; then per lane one float
     * multiply-add per super-block and ggml's reduction.
     */
    private static float dotScalarQ6(QuantRow w, QuantActivations x, int xRow) {
        int xo = xRow * w.cols;
        int[] lane = w.intLanes;
        float[] acc = w.lanes;
        java.util.Arrays.fill(acc, 0, 8, 0f);
        for (int b = 0; b < w.cols / 256; b++) {
            for (int p = 0; p < 8; p++) {
                int j = b * 16 + 2 * p;
                lane[p] = -32 * (w.sc[j] * (int) x.sums[xo / 16 + 2 * p + b * 16] + w.sc[j + 1] * (int) x.sums[xo / 16 + 2 * p + 1 + b * 16]);
            }
            for (int g = 0; g < 8; g++) {
                for (int p = 0; p < 8; p++) {
                    for (int i = 0; i < 4; i++) {
                        int e = b * 256 + 32 * g + 4 * p + i;
                        lane[p] += w.sc[e / 16] * (w.q[e] + 32) * x.q[xo + e];
                    }
                }
            }
            float dd = w.d[b] * x.d[xo / 256 + b];
            for (int p = 0; p < 8; p++) {
                acc[p] = Math.fma(dd, (float) lane[p], acc[p]);
            }
        }
        return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
    }

    /** Scalar reference: integer sums in {@code int}, one float multiply-add per (super-)block, as ggml's generic code. */
    static float dotScalar(QuantRow w, QuantActivations x, int xRow) {
        GgmlType t = w.type;
        if (t == GgmlType.Q6_K) {
            return dotScalarQ6(w, x, xRow);
        }
        int cols = w.cols;
        int xo = xRow * cols;
        float sum = 0f;
        if (!QuantRow.kQuant(t)) {
            int xb = xo / 32;
            boolean mins = t == GgmlType.Q4_1 || t == GgmlType.Q5_1;
            for (int b = 0; b < cols / 32; b++) {
                int isum = 0;
                for (int i = 0; i < 32; i++) {
                    isum += (int) w.q[b * 32 + i] * (int) x.q[xo + b * 32 + i];
                }
                sum += isum * (w.d[b] * x.d[xb + b]);
                if (mins) {
                    sum += w.m[b] * x.sums[xb + b];
                }
            }
            return sum;
        }
        int g = QuantRow.subBlock(t);
        int subs = 256 / g;
        boolean mins = t == GgmlType.Q2_K || t == GgmlType.Q4_K || t == GgmlType.Q5_K;
        for (int b = 0; b < cols / 256; b++) {
            int a = 0;
            for (int j = 0; j < subs; j++) {
                int isum = 0;
                int e = b * 256 + j * g;
                for (int i = 0; i < g; i++) {
                    isum += (int) w.q[e + i] * (int) x.q[xo + e + i];
                }
                a += (int) w.sc[b * subs + j] * isum;
            }
            float dx = x.d[xo / 256 + b];
            sum += (w.d[b] * dx) * a;
            if (mins) {
                sum -= w.dmin[b] * dx * minSum(w, x, b, subs, g, xo / 16);
            }
        }
        return sum;
    }
}
