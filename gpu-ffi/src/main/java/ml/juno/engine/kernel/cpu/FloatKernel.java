package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.f8;
import static ml.juno.engine.kernel.cpu.QuantLanes.sum;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import ml.juno.engine.tensor.GgmlType;

/**
 * The float weight types (F32, F16, BF16): their row decoders and the dot products of a decoded row with activations
 * rounded to the weight's type ({@link ActivationRounding}), summed in the order of the llama.cpp build that made the
 * reference outputs (AVX-512): tinyBLAS's 16 lanes for rows that are a multiple of 16, {@code ggml_vec_dot_f16}'s order
 * for other F16 rows ({@link #f16Order}).
 */
abstract class FloatKernel extends BlockKernel {
    /** Whether rows that are not a multiple of 16 are summed in {@code ggml_vec_dot_f16}'s order ({@link #dotF16Row}). */
    final boolean f16Order;

    private FloatKernel(GgmlType type, boolean f16Order) {
        super(type);
        this.f16Order = f16Order;
    }

    /** F32: the floats themselves. */
    static final class F32 extends FloatKernel {
        F32() {
            super(GgmlType.F32, false);
        }

        @Override
        void decodeVector(MemorySegment s, long off, float[] dst, int dstOff, int count) {
            MemorySegment.copy(s, BlockKernel.F32, off, dst, dstOff, count);
        }

        @Override
        void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
            for (int i = 0; i < count; i++) {
                dst[dstOff + i] = s.get(BlockKernel.F32, off + 4L * i);
            }
        }
    }

    /** F16 (IEEE half precision). */
    static final class F16 extends FloatKernel {
        F16() {
            super(GgmlType.F16, true);
        }

        @Override
        void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
            for (int i = 0; i < count; i++) {
                dst[dstOff + i] = Float.float16ToFloat(s.get(U16, off + 2L * i));
            }
        }
    }

    /** BF16 (the high half of an F32). */
    static final class BF16 extends FloatKernel {
        BF16() {
            super(GgmlType.BF16, false);
        }

        @Override
        void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
            for (int i = 0; i < count; i++) {
                dst[dstOff + i] = bf16(s.get(U16, off + 2L * i));
            }
        }
    }

    /**
     * Dot product of {@code n} floats in the order llama.cpp's CPU backend (its AVX-512 build, which made the reference
     * outputs) sums a row of F32/F16/BF16 weights: for {@code n % 16 == 0} tinyBLAS's, one 16-lane FMA accumulator
     * (element {@code i} in lane {@code i % 16}); otherwise one 8-lane accumulator and a scalar tail ({@link #dotF16Row}
     * is the F16 case). Fixed 256-bit vectors, so every x86 machine gives the same bits: sixteen lanes are two halves,
     * and {@code lo + hi} reduced by {@link QuantLanes#sum} is {@code _mm512_reduce_add_ps}'s tree. Activations rounded
     * to F16 make this order matter: a one-ulp difference moves a value across an F16 rounding boundary of the next
     * product, and tiny random models amplify that to 1e-3 on the logits.
     */
    static float dot(float[] a, int ao, float[] b, int bo, int n) {
        if (n % 16 == 0) {
            FloatVector lo = FloatVector.zero(F8);
            FloatVector hi = lo;
            for (int i = 0; i < n; i += 16) {
                lo = f8(a, ao + i).fma(f8(b, bo + i), lo);
                hi = f8(a, ao + i + 8).fma(f8(b, bo + i + 8), hi);
            }
            return sum(lo.add(hi));
        }
        FloatVector acc = FloatVector.zero(F8);
        int i = 0;
        for (int bound = n & ~7; i < bound; i += 8) {
            acc = f8(a, ao + i).fma(f8(b, bo + i), acc);
        }
        float s = sum(acc);
        for (; i < n; i++) {
            s += a[ao + i] * b[bo + i];
        }
        return s;
    }

    /**
     * An F16 row whose length is not a multiple of 16, in ggml_vec_dot_f16's order (what llama.cpp falls back to when
     * tinyBLAS cannot take the row): four 16-lane accumulators over chunks of 64, folded (0+2, 1+3, then 0+1) and
     * reduced as {@link #dot} reduces, then the remaining products added in double.
     */
    static float dotF16Row(float[] a, int ao, float[] b, int bo, int n) {
        int np = n & ~63;
        double s = 0;
        if (np > 0) {
            FloatVector z = FloatVector.zero(F8);
            FloatVector a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z;
            for (int i = 0; i < np; i += 64) {
                a0 = f8(a, ao + i).fma(f8(b, bo + i), a0);
                a1 = f8(a, ao + i + 8).fma(f8(b, bo + i + 8), a1);
                a2 = f8(a, ao + i + 16).fma(f8(b, bo + i + 16), a2);
                a3 = f8(a, ao + i + 24).fma(f8(b, bo + i + 24), a3);
                a4 = f8(a, ao + i + 32).fma(f8(b, bo + i + 32), a4);
                a5 = f8(a, ao + i + 40).fma(f8(b, bo + i + 40), a5);
                a6 = f8(a, ao + i + 48).fma(f8(b, bo + i + 48), a6);
                a7 = f8(a, ao + i + 56).fma(f8(b, bo + i + 56), a7);
            }
            // accumulator j is the pair (a_2j, a_2j+1); fold 0+2 and 1+3, then 0+1; then lanes i + (i+8)
            FloatVector lo = a0.add(a4).add(a2.add(a6));
            FloatVector hi = a1.add(a5).add(a3.add(a7));
            s = sum(lo.add(hi));
        }
        for (int i = np; i < n; i++) {
            s += a[ao + i] * b[bo + i]; // products of F16 values are exact in float
        }
        return (float) s;
    }

    /**
     * Four dot products sharing each activation load, for {@code n % 16 == 0}; each one identical to {@link #dot}
     * (two 8-lane accumulators per row).
     */
    static void dot4(float[] w, int n, float[] x, int xo, float[] out, int oo) {
        FloatVector a0 = FloatVector.zero(F8);
        FloatVector a1 = a0;
        FloatVector a2 = a0;
        FloatVector a3 = a0;
        FloatVector b0 = a0;
        FloatVector b1 = a0;
        FloatVector b2 = a0;
        FloatVector b3 = a0;
        for (int i = 0; i < n; i += 16) {
            FloatVector xl = f8(x, xo + i);
            FloatVector xh = f8(x, xo + i + 8);
            a0 = f8(w, i).fma(xl, a0);
            b0 = f8(w, i + 8).fma(xh, b0);
            a1 = f8(w, n + i).fma(xl, a1);
            b1 = f8(w, n + i + 8).fma(xh, b1);
            a2 = f8(w, 2 * n + i).fma(xl, a2);
            b2 = f8(w, 2 * n + i + 8).fma(xh, b2);
            a3 = f8(w, 3 * n + i).fma(xl, a3);
            b3 = f8(w, 3 * n + i + 8).fma(xh, b3);
        }
        out[oo] = sum(a0.add(b0));
        out[oo + 1] = sum(a1.add(b1));
        out[oo + 2] = sum(a2.add(b2));
        out[oo + 3] = sum(a3.add(b3));
    }
}
