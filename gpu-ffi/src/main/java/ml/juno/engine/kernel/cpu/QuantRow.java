package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import ml.juno.engine.tensor.GgmlType;

/**
 * One weight row of a quantized type split the way ggml's integer dot products see it: integer quants {@code q}
 * (16-bit, natural element order), an integer scale per sub-block {@code sc}, a float scale per super-block {@code d}, and the min
 * terms ({@code dmin} with integer sub-block mins {@code m} for K-quants, a float {@code m} per block for Q4_1/Q5_1).
 * Decoding has a scalar reference and a vector path producing the same numbers.
 */
public final class QuantRow {
    final short[] q;
    /** The quants as floats in {@link QuantDot#lanes lane order}, times their sub-block scale for K-quants. */
    final float[] wf;
    final int[] sc;
    final float[] d;
    final float[] dmin;
    final float[] m;
    /**
     * Q6_K, per super-block, the sub-block scales of each quad lane's offset pair ({@link QuantDot#fusedQ6_K}): lane 2M takes
     * sub-blocks 2M ({@code scA}) and 2M+1 ({@code scB}), lane 2M+1 sub-blocks 8+2M and 9+2M ({@link QuantDot#dotFloatQ6}).
     */
    final float[] scA;
    final float[] scB;
    /** Scratch for a tile's half-super-block lane sums ({@link QuantDot#dotFloat4x2Q6}): 128 per 256 columns. */
    final float[] halves;
    /** This row as a tile of one ({@link QuantDot#dotFloatQ6}). */
    final QuantRow[] one = new QuantRow[1];
    /** Scratch for the lanes of eight accumulators ({@link QuantDot#dotFloat4x2K}). */
    final float[] lanes = new float[64];
    /** Scratch for the scalar reference's integer lanes ({@link QuantDot#dotScalar}). */
    final int[] intLanes = new int[8];
    GgmlType type;
    int cols;

    public QuantRow(int maxCols) {
        q = new short[maxCols];
        wf = new float[maxCols];
        sc = new int[maxCols / 16];
        d = new float[maxCols / 32];
        dmin = new float[maxCols / 32];
        m = new float[maxCols / 16];
        scA = new float[maxCols / 32];
        scB = new float[maxCols / 32];
        halves = new float[maxCols / 2];
    }

    /** Elements per sub-block with one integer scale. */
    static int subBlock(GgmlType t) {
        return switch (t) {
            case Q2_K, Q3_K, Q6_K -> 16;
            default -> 32;
        };
    }

    /** Whether {@code t} takes the integer path (Q8_0/Q8_1/Q8_K activations). */
    public static boolean supports(GgmlType t) {
        return switch (t) {
            case Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K -> true;
            default -> false;
        };
    }

    static boolean kQuant(GgmlType t) {
        return t.blockSize == 256;
    }

    private static int u8(MemorySegment s, long o) {
        return ScalarDecode.u8(s, o);
    }

    private static float half(MemorySegment s, long o) {
        return ScalarDecode.half(s, o);
    }

    /** Scalar reference decode of {@code cols} elements starting at byte {@code off}. */
    public void decodeScalar(GgmlType t, MemorySegment s, long off, int cols) {
        this.type = t;
        this.cols = cols;
        for (int b = 0; b < cols / t.blockSize; b++) {
            long o = off + (long) b * t.typeSize;
            int e = b * t.blockSize;
            switch (t) {
                case Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 -> legacyScalar(t, s, o, e, b);
                case Q2_K -> {
                    d[b] = half(s, o + 80);
                    dmin[b] = half(s, o + 82);
                    int is = 0;
                    for (int n = 0; n < 2; n++) {
                        for (int shift = 0; shift < 8; shift += 2) {
                            for (int part = 0; part < 2; part++) {
                                int scale = u8(s, o + is);
                                sc[b * 16 + is] = scale & 0xF;
                                m[b * 16 + is] = scale >> 4;
                                for (int l = 0; l < 16; l++) {
                                    q[e + is * 16 + l] = (short) ((u8(s, o + 16 + n * 32 + part * 16 + l) >> shift) & 3);
                                }
                                is++;
                            }
                        }
                    }
                }
                case Q3_K -> {
                    d[b] = half(s, o + 108);
                    int is = 0;
                    int mask = 1;
                    for (int n = 0; n < 2; n++) {
                        for (int shift = 0; shift < 8; shift += 2) {
                            for (int part = 0; part < 2; part++) {
                                sc[b * 16 + is] = ScalarDecode.q3kScale(s, o + 96, is);
                                for (int l = 0; l < 16; l++) {
                                    int hm = u8(s, o + part * 16 + l);
                                    q[e + is * 16 + l] = (short) (((u8(s, o + 32 + n * 32 + part * 16 + l) >> shift) & 3) - ((hm & mask) != 0 ? 0 : 4));
                                }
                                is++;
                            }
                            mask <<= 1;
                        }
                    }
                }
                case Q4_K, Q5_K -> {
                    boolean five = t == GgmlType.Q5_K;
                    d[b] = half(s, o);
                    dmin[b] = half(s, o + 2);
                    long qs = o + (five ? 48 : 16);
                    for (int j = 0; j < 4; j++) {
                        for (int h = 0; h < 2; h++) {
                            sc[b * 8 + 2 * j + h] = ScalarDecode.scaleK4(s, o + 4, 2 * j + h);
                            m[b * 8 + 2 * j + h] = ScalarDecode.minK4(s, o + 4, 2 * j + h);
                        }
                        for (int l = 0; l < 32; l++) {
                            int v = u8(s, qs + j * 32L + l);
                            int lo = v & 0xF;
                            int hi = v >> 4;
                            if (five) {
                                int hb = u8(s, o + 16 + l);
                                lo += ((hb >> (2 * j)) & 1) != 0 ? 16 : 0;
                                hi += ((hb >> (2 * j + 1)) & 1) != 0 ? 16 : 0;
                            }
                            q[e + 64 * j + l] = (short) (lo);
                            q[e + 64 * j + 32 + l] = (short) (hi);
                        }
                    }
                }
                case Q6_K -> {
                    d[b] = half(s, o + 208);
                    for (int j = 0; j < 16; j++) {
                        sc[b * 16 + j] = ScalarDecode.i8(s, o + 192 + j);
                    }
                    for (int n = 0; n < 2; n++) {
                        long ql = o + n * 64L;
                        long qh = o + 128 + n * 32L;
                        int out = e + n * 128;
                        for (int l = 0; l < 32; l++) {
                            int h = u8(s, qh + l);
                            int a = u8(s, ql + l);
                            int c = u8(s, ql + l + 32);
                            q[out + l] = (short) (((a & 0xF) | ((h & 3) << 4)) - 32);
                            q[out + l + 32] = (short) (((c & 0xF) | (((h >> 2) & 3) << 4)) - 32);
                            q[out + l + 64] = (short) (((a >> 4) | (((h >> 4) & 3) << 4)) - 32);
                            q[out + l + 96] = (short) (((c >> 4) | (((h >> 6) & 3) << 4)) - 32);
                        }
                    }
                }
                default -> throw new IllegalArgumentException("no integer path for " + t);
            }
        }
    }

    private void legacyScalar(GgmlType t, MemorySegment s, long o, int e, int b) {
        d[b] = half(s, o);
        switch (t) {
            case Q4_0 -> {
                for (int j = 0; j < 16; j++) {
                    int v = u8(s, o + 2 + j);
                    q[e + j] = (short) ((v & 0xF) - 8);
                    q[e + j + 16] = (short) ((v >> 4) - 8);
                }
            }
            case Q4_1 -> {
                m[b] = half(s, o + 2);
                for (int j = 0; j < 16; j++) {
                    int v = u8(s, o + 4 + j);
                    q[e + j] = (short) (v & 0xF);
                    q[e + j + 16] = (short) (v >> 4);
                }
            }
            case Q5_0, Q5_1 -> {
                boolean one = t == GgmlType.Q5_1;
                int base = one ? 4 : 2;
                if (one) {
                    m[b] = half(s, o + 2);
                }
                int qh = s.get(QuantDot.U32, o + base);
                int bias = one ? 0 : 16;
                for (int j = 0; j < 16; j++) {
                    int v = u8(s, o + base + 4 + j);
                    q[e + j] = (short) (((v & 0xF) | (((qh >>> j) << 4) & 0x10)) - bias);
                    q[e + j + 16] = (short) (((v >> 4) | ((qh >>> (j + 12)) & 0x10)) - bias);
                }
            }
            case Q8_0 -> {
                for (int j = 0; j < 32; j++) {
                    q[e + j] = (short) (ScalarDecode.i8(s, o + 2 + j));
                }
            }
            default -> throw new IllegalArgumentException("no integer path for " + t);
        }
    }

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /** Fills {@link #wf} from the decoded quants (and sub-block scales): the input of {@link QuantDot#dotFloat}. */
    void toFloatLanes() {
        if (type == GgmlType.Q6_K) {
            toFloatLanesQ6();
            return;
        }
        boolean k = kQuant(type);
        int g = subBlock(type);
        for (int e = 0; e < cols; e += 32) {
            float lo = 1f;
            float hi = 1f;
            if (k) {
                int j = e / g;
                lo = sc[j];
                hi = g == 16 ? sc[j + 1] : lo;
            }
            QuantDot.lanes(q, e, wf, e, lo, hi);
        }
    }

    /** Q6_K in the quad order, unsigned (quant + 32) times the sub-block scale, as {@link QuantDot#dotFloatQ6} reads it. */
    private void toFloatLanesQ6() {
        for (int e = 0; e < cols; e += 32) {
            QuantDot.lanesQuad(q, e, wf, e, sc[e / 16], sc[e / 16 + 1], 32f);
        }
        for (int b = 0; b < cols / 256; b++) {
            QuantDot.offsetPairs(sc, b * 16, scA, scB, b * 8);
        }
    }

    /**
     * Vector decode: the same numbers as {@link #decodeScalar}. Q4_0, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K and Q6_K have vector paths that
     * build exactly the 16-lane quant vectors {@link QuantDot#dotFused} builds in registers; the others decode scalar.
     */
    public void decode(GgmlType t, MemorySegment s, long off, int cols) {
        this.type = t;
        this.cols = cols;
        switch (t) {
            case Q4_0 -> decodeQ4_0(s, off, cols);
            case Q8_0 -> decodeQ8_0(s, off, cols);
            case Q2_K -> decodeQ2_K(s, off, cols);
            case Q3_K -> decodeQ3_K(s, off, cols);
            case Q4_K, Q5_K -> decodeQ45_K(t == GgmlType.Q5_K, s, off, cols);
            case Q6_K -> decodeQ6_K(s, off, cols);
            default -> decodeScalar(t, s, off, cols);
        }
    }

    private void decodeQ4_0(MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 18L;
            d[b] = half(s, o);
            ByteVector v = ByteVector.fromMemorySegment(QuantDot.B16, s, o + 2, LE);
            QuantDot.widen(QuantDot.lowNibbles(v).sub(QuantDot.EIGHT)).intoArray(q, b * 32);
            QuantDot.widen(QuantDot.highNibbles(v).sub(QuantDot.EIGHT)).intoArray(q, b * 32 + 16);
        }
    }

    private void decodeQ8_0(MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 34L;
            d[b] = half(s, o);
            QuantDot.widen(ByteVector.fromMemorySegment(QuantDot.B16, s, o + 2, LE)).intoArray(q, b * 32);
            QuantDot.widen(ByteVector.fromMemorySegment(QuantDot.B16, s, o + 18, LE)).intoArray(q, b * 32 + 16);
        }
    }

    /** Q2_K in vector code, the same numbers as {@link #decodeScalar}; the quant walk of QuantDot.fusedQ2_K. */
    private void decodeQ2_K(MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 84L;
            int dd = s.get(QuantDot.U32, o + 80);
            d[b] = Float.float16ToFloat((short) dd);
            dmin[b] = Float.float16ToFloat((short) (dd >>> 16));
            for (int is = 0; is < 16; is++) {
                int scale = ScalarDecode.u8(s, o + is);
                sc[b * 16 + is] = scale & 0xF;
                m[b * 16 + is] = scale >> 4;
            }
            for (int n = 0; n < 2; n++) {
                // sign-extended bytes: the mask drops the extension
                ShortVector q0 = (ShortVector) ByteVector.fromMemorySegment(QuantDot.B16, s, o + 16 + n * 32L, LE)
                        .convertShape(VectorOperators.B2S, QuantDot.S16, 0);
                ShortVector q1 = (ShortVector) ByteVector.fromMemorySegment(QuantDot.B16, s, o + 32 + n * 32L, LE)
                        .convertShape(VectorOperators.B2S, QuantDot.S16, 0);
                for (int j = 0; j < 4; j++) {
                    int e = b * 256 + 32 * (4 * n + j);
                    q0.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).intoArray(q, e);
                    q1.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).intoArray(q, e + 16);
                }
            }
        }
    }

    /** Q3_K in vector code, the same numbers as {@link #decodeScalar}; the quant walk of QuantDot.fusedQ3_K. */
    private void decodeQ3_K(MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 110L;
            long l0 = s.get(QuantDot.U64, o + 96);
            long l1 = s.get(QuantDot.U64, o + 102);
            int hi = (int) (l1 >>> 16);
            d[b] = Float.float16ToFloat((short) (l1 >>> 48));
            long scales0 = QuantDot.q3Scales(l0, hi, 0);
            long scales1 = QuantDot.q3Scales(l0, hi, 1);
            for (int j = 0; j < 8; j++) {
                sc[b * 16 + j] = QuantDot.k4(scales0, j) - 32;
                sc[b * 16 + 8 + j] = QuantDot.k4(scales1, j) - 32;
            }
            ShortVector h0 = ((ShortVector) ByteVector.fromMemorySegment(QuantDot.B16, s, o, LE)
                    .convertShape(VectorOperators.B2S, QuantDot.S16, 0)).and((short) 0xFF).lanewise(VectorOperators.LSHL, 2);
            ShortVector h1 = ((ShortVector) ByteVector.fromMemorySegment(QuantDot.B16, s, o + 16, LE)
                    .convertShape(VectorOperators.B2S, QuantDot.S16, 0)).and((short) 0xFF).lanewise(VectorOperators.LSHL, 2);
            for (int n = 0; n < 2; n++) {
                ShortVector q0 = (ShortVector) ByteVector.fromMemorySegment(QuantDot.B16, s, o + 32 + n * 32L, LE)
                        .convertShape(VectorOperators.B2S, QuantDot.S16, 0);
                ShortVector q1 = (ShortVector) ByteVector.fromMemorySegment(QuantDot.B16, s, o + 48 + n * 32L, LE)
                        .convertShape(VectorOperators.B2S, QuantDot.S16, 0);
                for (int j = 0; j < 4; j++) {
                    int g = 4 * n + j;
                    int e = b * 256 + 32 * g;
                    q0.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).or(h0.lanewise(VectorOperators.LSHR, g).and((short) 4))
                            .sub((short) 4).intoArray(q, e);
                    q1.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).or(h1.lanewise(VectorOperators.LSHR, g).and((short) 4))
                            .sub((short) 4).intoArray(q, e + 16);
                }
            }
        }
    }

    private void decodeQ45_K(boolean five, MemorySegment s, long off, int cols) {
        int bytes = five ? 176 : 144;
        for (int b = 0; b < cols / 256; b++) {
            long o = off + (long) b * bytes;
            d[b] = half(s, o);
            dmin[b] = half(s, o + 2);
            long qs = o + (five ? 48 : 16);
            // same sub-block walk as QuantDot.fusedQ45_K (small loop bodies keep the JIT within its inlining limits)
            long sLo = s.get(QuantDot.U64, o + 4);
            int sHi = s.get(QuantDot.U32, o + 12);
            long scales = QuantDot.scalesK4(sLo, sHi);
            long mins = QuantDot.minsK4(sLo, sHi);
            for (int j = 0; j < 8; j++) {
                sc[b * 8 + j] = QuantDot.k4(scales, j);
                m[b * 8 + j] = QuantDot.k4(mins, j);
                long chunk = qs + (j >> 1) * 32L;
                for (int h = 0; h < 32; h += 16) {
                    ByteVector v = ByteVector.fromMemorySegment(QuantDot.B16, s, chunk + h, LE);
                    ByteVector n = QuantDot.nibbles(v, 4 * (j & 1));
                    if (five) {
                        n = n.or(QuantDot.bitsTo(ByteVector.fromMemorySegment(QuantDot.B16, s, o + 16 + h, LE), j, 1, 4));
                    }
                    QuantDot.widen(n).intoArray(q, b * 256 + 32 * j + h);
                }
            }
        }
    }

    private void decodeQ6_K(MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 210L;
            d[b] = half(s, o + 208);
            // same sub-block walk as QuantDot.fusedQ6_K (two loops of eight, which C2 unrolls fully)
            for (int n = 0; n < 2; n++) {
                for (int jj = 0; jj < 8; jj++) {
                    int j = 8 * n + jj;
                    sc[b * 16 + j] = ScalarDecode.i8(s, o + 192 + j);
                    int k = jj >> 1;
                    int l = (jj & 1) * 16;
                    ByteVector src = ByteVector.fromMemorySegment(QuantDot.B16, s, o + n * 64L + (k & 1) * 32L + l, LE);
                    ByteVector nib = QuantDot.nibbles(src, 4 * (k >> 1));
                    ByteVector h = ByteVector.fromMemorySegment(QuantDot.B16, s, o + 128 + n * 32L + l, LE);
                    QuantDot.q6(nib, h, 2 * k).intoArray(q, b * 256 + 16 * j);
                }
            }
        }
    }
}
