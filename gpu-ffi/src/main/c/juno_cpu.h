/*
 * Juno's native CPU kernels: the ABI shared by every ISA variant and the Java bindings
 * (ml.juno.engine.kernel.cpu.NativeKernels).
 *
 * The kernels are compiled once per instruction set (juno_cpu.c with -DJUNO_ISA=avx2, avxvnni, avx512vnni) into one
 * shared library; every exported name carries its variant (juno_avx2_matmul, ...), and juno_cpu_features() (built for
 * the baseline) tells Java which variants this CPU can run. Java checks every size before a call: these functions
 * trust their arguments.
 *
 * Numerics: the same integers and the same float operations, in the same order, as the Java backend (the kernel.cpu *Kernel classes), so
 * the results are bit-identical to it: activations quantized as llama.cpp quantizes them (Q8_0 blocks of 32 with an
 * F16-rounded scale, Q8_K blocks of 256), integer sums per block in eight 32-bit lanes, one float multiply-add per
 * block with d_w * d_x, the lanes summed in a fixed tree. Lane L of a 32-element block holds elements 2L, 2L+1,
 * 16+2L, 17+2L ("pair order", the Java backend's lanes), except Q6_K, which holds elements 4L..4L+3 (ggml's lanes).
 * The packed types (JUNO_PACKED) differ: per row and block the whole integer sum, then one multiply-add, as llama.cpp's
 * repacked Q4_0 kernels do (Q4_K, Q5_K: per super-block, its min terms apart); their results are within rounding of the Java
 * backend's, not bit-identical. Packed Q6_K keeps ggml's lanes (kernels/q6_k_x16.h) and is bit-identical.
 */
#ifndef JUNO_CPU_H
#define JUNO_CPU_H

#include <stdint.h>

/* ggml type ids (GgmlType.id), the ones with kernels here. */
enum {
    JUNO_F32 = 0, JUNO_F16 = 1, JUNO_Q4_0 = 2, JUNO_Q4_1 = 3, JUNO_Q5_0 = 6, JUNO_Q5_1 = 7, JUNO_Q8_0 = 8,
    JUNO_Q2_K = 10, JUNO_Q3_K = 11, JUNO_Q4_K = 12, JUNO_Q5_K = 13, JUNO_Q6_K = 14, JUNO_BF16 = 30
};

/*
 * Added to a type id: the weights as juno_<isa>_repack rearranged them in groups of 16 rows (Q4_0 in every variant,
 * kernels/q4_0_x16.c; Q8_0, Q4_K, Q5_K and Q6_K in the AVX-512 variant, kernels/q8_0_x16.h, q4_k_x16.h and
 * q6_k_x16.h), taken by juno_<isa>_matmul; quantize_rows with the packed id writes the activations the packed kernel
 * takes (the plain type's, except packed Q4_K's and Q5_K's groups of 16 rows and packed Q6_K's reordered quants).
 */
#define JUNO_PACKED 256

/* Feature bits of juno_cpu_features(). */
enum {
    JUNO_FEAT_AVX2 = 1,       /* AVX2 + FMA + F16C */
    JUNO_FEAT_AVXVNNI = 2,    /* AVX-VNNI (VEX-encoded vpdpbusd) */
    JUNO_FEAT_AVX512VNNI = 4, /* AVX-512 F/BW/VL/DQ + VNNI */
    JUNO_FEAT_AMX = 8         /* AMX-TILE + AMX-INT8 with the OS's tile state (XCR0); Linux still asks per process */
};

/*
 * A quantized activation block for 32-element weight blocks: scale, F16-rounded d*sum(q), 32 quants in pair order,
 * and for weights whose quants the AVX-512 kernels take unsigned (q + OFF: Q4_0 8, Q5_0 16, Q8_0 128) each lane's
 * -OFF * (sum of its four activation quants), so that vpdpbusd(off, u, y) gives the signed product, and the sum
 * of those eight (-OFF * the block's sum), where one lane holds a whole block (packed Q4_0).
 */
typedef struct {
    float d;
    float s;
    int8_t q[32];
    int32_t off[8];
    int32_t osum;
} juno_xq8;

/* A quantized activation block for 256-element weight blocks (Q8_K): scale, sums of every 16, 256 quants (pair order
 * per 32 for Q2_K..Q5_K, natural order for Q6_K). */
typedef struct {
    float d;
    int16_t bsums[16];
    int8_t q[256];
} juno_xqk;

#endif
