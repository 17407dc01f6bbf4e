package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.S16;
import static ml.juno.engine.kernel.cpu.QuantLanes.I8;
import static ml.juno.engine.kernel.cpu.QuantLanes.B16;
import static ml.juno.engine.kernel.cpu.QuantLanes.B8;
import static ml.juno.engine.kernel.cpu.QuantLanes.widen;
import static ml.juno.engine.kernel.cpu.QuantLanes.nibbles;
import static ml.juno.engine.kernel.cpu.QuantLanes.bitsTo;
import static ml.juno.engine.kernel.cpu.QuantLanes.toFloat;
import static ml.juno.engine.kernel.cpu.QuantLanes.toInt;
import static ml.juno.engine.kernel.cpu.QuantLanes.f8;
import static ml.juno.engine.kernel.cpu.QuantLanes.sum;
import static ml.juno.engine.kernel.cpu.QuantLanes.lanes;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q6_K ({@code block_q6_K}, 210 bytes per 256 weights: low 4 bits of the quants in {@code ql[128]}, high 2 bits in
 * {@code qh[64]}, 16 signed 8-bit sub-block scales, F16 {@code d}; weight {@code d·sc·(q − 32)}), against Q8_K
 * activations. Unlike the other K-quants it follows ggml's AVX2 kernel lane for lane ({@link #fused}): unsigned quants,
 * the −32 taken out per pair of sub-blocks with the activation block sums, and the lanes in ggml's "quad order" (four
 * consecutive elements per lane); without it a pure-Q6_K reference case was 0.13 off llama.cpp.
 */
final class Q6_KKernel extends QuantKernel {
    /** The odd lanes of an 8-lane vector (ggml's lanes 4..7 in the quad order, see {@link #fused}). */
    static final VectorMask<Integer> ODD = VectorMask.fromLong(I8, 0xAAL);
    private static final VectorMask<Float> ODD_F = ODD.cast(F8);
    /** Swaps adjacent lanes (a constant shuffle: C2 compiles it to one permute; 64-bit lane shifts it may not). */
    static final VectorShuffle<Integer> SWAP = VectorShuffle.fromArray(I8, new int[] {1, 0, 3, 2, 5, 4, 7, 6}, 0);
    static final VectorShuffle<Float> SWAP_F = SWAP.cast(F8);
    static final ByteVector THIRTY_TWO = ByteVector.broadcast(B16, (byte) 32);

    Q6_KKernel() {
        super(GgmlType.Q6_K, 16);
    }

    @Override
    void decodeVector(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 256; b++) {
            q6_kVector(s, off + b * 210L, dst, dstOff + b * 256);
        }
    }

    private static void q6_kVector(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o + 208);
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
                bytesToFloats(q1).mul(d * i8(s, sc + is)).intoArray(y, out + l);
                bytesToFloats(q2).mul(d * i8(s, sc + is + 2)).intoArray(y, out + l + 32);
                bytesToFloats(q3).mul(d * i8(s, sc + is + 4)).intoArray(y, out + l + 64);
                bytesToFloats(q4).mul(d * i8(s, sc + is + 6)).intoArray(y, out + l + 96);
            }
        }
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 256; b++) {
            q6_kBlock(s, off + b * 210L, dst, dstOff + b * 256);
        }
    }

    // block_q6_K: ql[128], qh[64], scales[16] int8, d f16
    private static void q6_kBlock(MemorySegment s, long o, float[] y, int d0) {
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

    @Override
    void decodeQuants(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 210L;
            row.d[b] = half(s, o + 208);
            // same sub-block walk as fusedQ6_K (two loops of eight, which C2 unrolls fully)
            for (int n = 0; n < 2; n++) {
                for (int jj = 0; jj < 8; jj++) {
                    int j = 8 * n + jj;
                    row.sc[b * 16 + j] = i8(s, o + 192 + j);
                    int k = jj >> 1;
                    int l = (jj & 1) * 16;
                    ByteVector src = ByteVector.fromMemorySegment(B16, s, o + n * 64L + (k & 1) * 32L + l, LE);
                    ByteVector nib = nibbles(src, 4 * (k >> 1));
                    ByteVector h = ByteVector.fromMemorySegment(B16, s, o + 128 + n * 32L + l, LE);
                    q6(nib, h, 2 * k).intoArray(row.q, b * 256 + 16 * j);
                }
            }
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 210L;
            int e = b * 256;
            row.d[b] = half(s, o + 208);
            for (int j = 0; j < 16; j++) {
                row.sc[b * 16 + j] = i8(s, o + 192 + j);
            }
            for (int n = 0; n < 2; n++) {
                long ql = o + n * 64L;
                long qh = o + 128 + n * 32L;
                int out = e + n * 128;
                for (int l = 0; l < 32; l++) {
                    int h = u8(s, qh + l);
                    int a = u8(s, ql + l);
                    int c = u8(s, ql + l + 32);
                    row.q[out + l] = (short) (((a & 0xF) | ((h & 3) << 4)) - 32);
                    row.q[out + l + 32] = (short) (((c & 0xF) | (((h >> 2) & 3) << 4)) - 32);
                    row.q[out + l + 64] = (short) (((a >> 4) | (((h >> 4) & 3) << 4)) - 32);
                    row.q[out + l + 96] = (short) (((c >> 4) | (((h >> 6) & 3) << 4)) - 32);
                }
            }
        }
    }

    /** Q6_K quants: low 4 bits from {@code nib}, 2 high bits from {@code h >>> shift}, minus 32. */
    static ShortVector q6(ByteVector nib, ByteVector h, int shift) {
        return widen(nib.or(bitsTo(h, shift, 3, 4)).sub(THIRTY_TWO));
    }

    /** The quad order, unsigned (quant + 32) times the sub-block scale, as {@link #dotFloatQ6} reads it. */
    @Override
    void toFloatLanes(QuantRow row) {
        for (int e = 0; e < row.cols; e += 32) {
            lanesQuad(row.q, e, row.wf, e, row.sc[e / 16], row.sc[e / 16 + 1], 32f);
        }
        for (int b = 0; b < row.cols / 256; b++) {
            offsetPairs(row.sc, b * 16, row.scA, row.scB, b * 8);
        }
    }

    @Override
    void toFloatLanes(QuantActivations x, int batch) {
        x.toFloatLanes(batch, true);
    }

    /**
     * {@link QuantLanes#sum} for lanes in the quad order ({@link #fused}): ggml's {@code hsum_float_8} tree over its
     * lanes 0..7, which sit in lanes 0, 2, 4, 6 (ggml 0..3) and 1, 3, 5, 7 (ggml 4..7) here.
     */
    static float sumQuads(FloatVector v) {
        FloatVector pairs = v.add(v.rearrange(SWAP_F));
        return (pairs.lane(0) + pairs.lane(4)) + (pairs.lane(2) + pairs.lane(6));
    }

    /**
     * {@link QuantLanes#lanes} in the quad order ({@link #fused}): 32 quants from {@code src[so..]} as four vectors of
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
     * lane 2M+1 sub-blocks 8+2M and 9+2M ({@link #fused}); written at {@code a[d0..d0+8)}, {@code b[d0..d0+8)}.
     */
    static void offsetPairs(int[] src, int s0, float[] a, float[] b, int d0) {
        for (int m = 0; m < 4; m++) {
            a[d0 + 2 * m] = src[s0 + 2 * m];
            b[d0 + 2 * m] = src[s0 + 2 * m + 1];
            a[d0 + 2 * m + 1] = src[s0 + 8 + 2 * m];
            b[d0 + 2 * m + 1] = src[s0 + 9 + 2 * m];
        }
    }

    /**
     * The Q6_K offset lanes ({@link #fused}'s {@code 32·(sc_j·bsum_j + sc_j+1·bsum_j+1)} in the quad order) of
     * weight row {@code w} with activation row {@code xRow} in super-block {@code b}, from {@link QuantRow#scA}/
     * {@code scB} and {@link QuantActivations#bsA}/{@code bsB}: products below 2^23, sums below 2^24, so exact.
     */
    private static IntVector q6Offset(QuantRow w, QuantActivations x, int xRow, int b) {
        int xi = (xRow * (w.cols >> 8) + b) * 8;
        return toInt(f8(w.scB, b * 8).fma(f8(x.bsB, xi), f8(w.scA, b * 8).mul(f8(x.bsA, xi))));
    }

    @Override
    float dotFloat(QuantRow w, QuantActivations x, int xRow) {
        return dotFloatQ6(w, x, xRow);
    }

    @Override
    void dotFloat4(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0) {
        q6Halves(w, x, xRow, 1, w[0].halves);
        q6Combine(w, 4, x, xRow, 1, w[0].halves, out, o0, 0);
    }

    @Override
    int dotTilePairs(QuantRow[] tile, QuantActivations x, int batch, float[] out, int r0, int rows, float[] corr) {
        int b = 0;
        for (; b + 1 < batch; b += 2) {
            dotFloat4x2(tile, x, b, out, b * rows + r0, rows);
        }
        return b;
    }

    /**
     * {@link #dotFloat} for Q6_K, bit-identical to {@link #fused}: the unsigned quants times the sub-block scales
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

    /**
     * {@link #dotFloatQ6} of four weight rows with two activation rows ({@code xRow}, {@code xRow + 1}; results at
     * {@code out[o0..]} and {@code out[o0 + next..]}), each bit-identical to it.
     */
    private static void dotFloat4x2(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0, int next) {
        q6Halves(w, x, xRow, 2, w[0].halves);
        q6Combine(w, 4, x, xRow, 2, w[0].halves, out, o0, next);
    }

    /**
     * The float-lane sums of each half super-block of the four weight rows {@code w[0..4)} with activation rows
     * {@code xRow..xRow+xRows} (1 or 2), stored at {@code h[((b·2 + half)·4·xRows + t·xRows + r)·8]}. Four rows with
     * two activation rows is the batched hot loop (eight FMA chains, 0.75 loads per FMA); four rows with one (the
     * last row of an odd batch) runs the same loop with the second activation row equal to the first.
     */
    // The FMA block is a near-copy of SuperBlockKernel.dotFloat4x2's on purpose (see the note on Block32Kernel.dotFloat4x2): a helper taking
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

    @Override
    void dotRows(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
        for (int r = r0; r < r1; r++) {
            out[o0 + r] = fused(s, r * stride, cols, x, xRow);
        }
    }

    /**
     * ggml's AVX2 Q6_K kernel, lane for lane: unsigned quants (0..63) times the activation quants, times the sub-block
     * scale, summed into eight integer lanes, minus {@code 32·(sc_j·bsum_j + sc_j+1·bsum_j+1)} per lane for a pair of
     * sub-blocks (ggml takes the −32 out of the products with the activation block sums); every lane is an exact
     * integer, converted and multiply-added with {@code d·d_x} per super-block, and the eight are summed in
     * {@code hsum_float_8}'s order.
     *
     * <p>The quad order. ggml's lane p (vpmaddubsw, then vpmaddwd) holds elements 4p..4p+3 of every 32, and its offset
     * pair is sub-blocks (2p, 2p+1). Here {@link QuantLanes#pairSum} gives pairs: {@code lo} holds, in lane m, elements 2m, 2m+1
     * of the first half of every 32, {@code hi} the same for the second half; then lane 2M of
     * {@code blend(lo, hi) + blend(swap(lo), swap(hi))} holds ggml's lane M and lane 2M+1 ggml's lane 4+M, which
     * {@link #sumQuads} reduces in ggml's order. The offset of sub-block j goes in pair lane j mod 8 of lo (j < 8) or
     * hi, so those sums pair it as ggml does. The other types keep the pair lanes: the same integer totals, ulp-level
     * differences from ggml per block, which no reference case shows.
     */
    private static float fused(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        int[] bs = x.bsums32;
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 210L;
            int x16 = xo / 16 + b * 16;
            // every vector operation of this method is written out (see Q5_KKernel why); the scale bytes become int
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

    /**
     * Scalar reference of {@link #fused}: ggml's eight lanes as eight ints, lane p summing elements 4p..4p+3 of every
     * 32 with unsigned quants, minus {@code 32·(sc_2p·bsum_2p + sc_2p+1·bsum_2p+1)}; then per lane one float
     * multiply-add per super-block and ggml's reduction.
     */
    @Override
    float dotScalar(QuantRow w, QuantActivations x, int xRow) {
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
}
