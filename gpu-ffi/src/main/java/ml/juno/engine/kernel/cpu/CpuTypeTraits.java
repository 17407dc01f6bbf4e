package ml.juno.engine.kernel.cpu;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import ml.juno.engine.tensor.GgmlType;

/**
 * What the CPU backend knows about one weight type, as ggml's {@code type_traits_cpu} table holds it: the activation
 * format it pairs with, its kernel object, from how many activation rows the batched kernels take over from the
 * single-row one, and its native kernel. The one place a type's CPU facts are written ({@link #of}); the block sizes
 * themselves live in {@link GgmlType}.
 *
 * @param activation  what activations become before the product ({@code vec_dot_type})
 * @param kernel      the type's decoders and dot products
 * @param fusedBelow  activation rows below which a product builds each row's quants in registers straight from the
 *                    mapped blocks ({@link QuantKernel#dotRows}); from there on it decodes tiles of four weight rows once
 *                    into float lanes and runs them against two activation rows at a time. 0: the type has no
 *                    single-row kernel and always decodes. Bit-identical either way; measured per type
 *                    (docs/performance.md)
 * @param nativeKernel the type's native kernel
 */
record CpuTypeTraits(GgmlType type, ActivationFormat activation, BlockKernel kernel, int fusedBelow, Native nativeKernel) {

    /**
     * A type's kernel in Juno's C library ({@code juno_cpu.c}'s {@code TYPES[]}).
     *
     * @param id            the type id the library takes ({@code JUNO_*}, ggml's numbering)
     * @param activations   the layout its activations are quantized into ({@code ACT_*})
     * @param packing       the rearranged form the native kernels take its weights in, if any
     */
    record Native(int id, NativeActivations activations, Packing packing) {
        Native {
            Objects.requireNonNull(activations, "activations");
            Objects.requireNonNull(packing, "packing");
        }
    }

    /**
     * The packed weight forms of the native kernels ({@code NativeKernels.repack}): groups of 16 rows whose blocks'
     * integer dots are summed whole before one float multiply-add per block, within rounding of the Java kernels
     * (packed Q6_K: ggml's eight lanes per block, the Java kernels' bits).
     */
    enum Packing {
        /** The weights as stored. */
        NONE,
        /** One row per vector lane ({@code kernels/q4_0_x16.c}), every variant. */
        LANES,
        /**
         * One row per 512-bit lane ({@code kernels/q8_0_x16.h}), the AVX-512 variant only; the activations as for the
         * stored layout.
         */
        LANES_AVX512,
        /**
         * Q4_K super-blocks of 16 rows, one row per lane ({@code kernels/q4_k_x16.h}), the activations in groups of 16
         * rows too: the AVX-512 variant only, its products on AMX tiles where the CPU and the OS allow them.
         */
        K_GROUPS,
        /**
         * Q5_K as {@link #K_GROUPS}, each block followed by its quants' fifth bits ({@code kernels/q4_k_x16.h}
         * {@code k5_wblk}), the activations as packed Q4_K's: the AVX-512 variant only, on vectors (no AMX form).
         */
        K5_GROUPS,
        /**
         * Q6_K in groups of 16 rows, one row per lane ({@code kernels/q6_k_x16.h}), in ggml's eight lanes per row as the
         * stored layout sums them (the same bits), the activations the stored layout's blocks with their quants
         * reordered (the same size): the AVX-512 variant only.
         */
        Q6_GROUPS;

        /** Whether the packed kernel takes its activations in groups of 16 rows too ({@code k16_xblk}). */
        boolean activationGroups() {
            return this == K_GROUPS || this == K5_GROUPS;
        }
    }

    /** How the native kernels lay out quantized activations: the {@code ACT_*} kinds of {@code juno_cpu.c}. */
    enum NativeActivations {
        /** {@code juno_xq8} blocks of 32. */
        XQ8,
        /** {@code juno_xqk} blocks of 256. */
        XQK,
        /** {@code juno_xqk} blocks, then the sums of every 32 and the scales by activation row. */
        XQK_SUMS,
        /** Floats (F32 weights). */
        FLOATS,
        /** F16 or BF16 values rounded as llama.cpp rounds them, in their 16 bits (exact; half the bytes of floats). */
        HALVES
    }

    CpuTypeTraits {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(activation, "activation");
        Objects.requireNonNull(kernel, "kernel");
        Objects.requireNonNull(nativeKernel, "nativeKernel");
        if (kernel.type != type) {
            throw new IllegalArgumentException(type + " with the kernel of " + kernel.type);
        }
        boolean integer = kernel instanceof QuantKernel;
        if (integer != (activation == ActivationFormat.Q8_0 || activation == ActivationFormat.Q8_1
                || activation == ActivationFormat.Q8_K)) {
            throw new IllegalArgumentException(type + ": " + activation + " activations with a " + kernel);
        }
        if (fusedBelow < 0 || (fusedBelow > 0 && !integer)) {
            throw new IllegalArgumentException(type + ": single-row kernel below " + fusedBelow + " rows");
        }
    }

    private static final Map<GgmlType, CpuTypeTraits> TABLE = new EnumMap<>(GgmlType.class);

    static {
        NativeActivations xq8 = NativeActivations.XQ8;
        NativeActivations xqk = NativeActivations.XQK;
        add(GgmlType.F32, ActivationFormat.F32, new FloatKernel.F32(), 0, NativeActivations.FLOATS);
        add(GgmlType.F16, ActivationFormat.F16, new FloatKernel.F16(), 0, NativeActivations.HALVES);
        add(GgmlType.BF16, ActivationFormat.BF16, new FloatKernel.BF16(), 0, NativeActivations.HALVES);
        TABLE.put(GgmlType.Q4_0, new CpuTypeTraits(GgmlType.Q4_0, ActivationFormat.Q8_0, new Q4_0Kernel(), 8,
                new Native(GgmlType.Q4_0.id, xq8, Packing.LANES)));
        add(GgmlType.Q4_1, ActivationFormat.Q8_1, new Q4_1Kernel(), 0, xq8);
        add(GgmlType.Q5_0, ActivationFormat.Q8_0, new Q5_0Kernel(), 0, xq8);
        add(GgmlType.Q5_1, ActivationFormat.Q8_1, new Q5_1Kernel(), 0, xq8);
        add(GgmlType.Q8_0, ActivationFormat.Q8_0, new Q8_0Kernel(), 8, xq8, Packing.LANES_AVX512);
        add(GgmlType.Q2_K, ActivationFormat.Q8_K, new Q2_KKernel(), 4, xqk);
        add(GgmlType.Q3_K, ActivationFormat.Q8_K, new Q3_KKernel(), 3, xqk);
        add(GgmlType.Q4_K, ActivationFormat.Q8_K, new Q4_KKernel(), 4, NativeActivations.XQK_SUMS, Packing.K_GROUPS);
        add(GgmlType.Q5_K, ActivationFormat.Q8_K, new Q5_KKernel(), 3, NativeActivations.XQK_SUMS, Packing.K5_GROUPS);
        add(GgmlType.Q6_K, ActivationFormat.Q8_K, new Q6_KKernel(), 2, xqk, Packing.Q6_GROUPS);
    }

    private static void add(GgmlType type, ActivationFormat activation, BlockKernel kernel, int fusedBelow,
                            NativeActivations nativeActivations) {
        add(type, activation, kernel, fusedBelow, nativeActivations, Packing.NONE);
    }

    /** As the other {@code add}, the native kernels taking the weights in {@code packing} where the variant has it. */
    private static void add(GgmlType type, ActivationFormat activation, BlockKernel kernel, int fusedBelow,
                            NativeActivations nativeActivations, Packing packing) {
        TABLE.put(type, new CpuTypeTraits(type, activation, kernel, fusedBelow,
                new Native(type.id, nativeActivations, packing)));
    }

    /** Whether the CPU backend computes with weights of {@code type}. */
    static boolean supports(GgmlType type) {
        return TABLE.containsKey(type);
    }

    /** The facts of {@code type}; a type the CPU backend does not compute with is refused. */
    static CpuTypeTraits of(GgmlType type) {
        CpuTypeTraits t = TABLE.get(type);
        if (t == null) {
            throw new IllegalArgumentException("unsupported block type " + type);
        }
        return t;
    }

    /** Whether products with this type take the integer path ({@link QuantKernel}, Q8 activations). */
    boolean quantized() {
        return kernel instanceof QuantKernel;
    }

    /** The integer kernel of a {@link #quantized} type. */
    QuantKernel quantKernel() {
        return (QuantKernel) kernel;
    }
}
