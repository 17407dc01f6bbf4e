/*
 * Juno's CPU kernels, compiled once per ISA variant (JUNO_ISA = avx2 | avxvnni | avx512vnni; see build-native.sh).
 * Every exported function is named juno_<isa>_<name>. The ABI and the numerics are described in juno_cpu.h.
 *
 * Written for Juno; the integer block arithmetic follows ggml's (llama.cpp) idea of 8-bit multiply-adds
 * (vpmaddubsw/vpmaddwd, VNNI vpdpbusd), the lanes and float order follow Juno's Java backend (the kernel.cpu *Kernel classes).
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "juno_cpu.h"

#ifndef JUNO_ISA
#error "JUNO_ISA must name the variant"
#endif

/* The kernels, one file per block type (kernels/), in one translation unit per ISA variant. */
#include "kernels/common.h"
#include "kernels/q4_0.c"
#include "kernels/q4_1.c"
#include "kernels/q5_0.c"
#include "kernels/q5_1.c"
#include "kernels/q8_0.c"
#include "kernels/q2_k.c"
#include "kernels/q3_k.c"
#include "kernels/q4_k.c"
#include "kernels/q5_k.c"
#include "kernels/q6_k.c"
#include "kernels/float.c"
#include "kernels/zmm.h"
#include "kernels/zmm_kernels.c"
#include "kernels/q4_0_x16.c"
#ifdef JUNO_ZMM
#include "kernels/q4_k_x16.h"
#include "kernels/q6_k_x16.h"
#include "kernels/q8_0_x16.h"
#endif
#include "kernels/attention.c"

/* ---------------------------------------------------------------- the table of per-type facts */

/* How a weight type wants its activations. */
enum { ACT_Q8_0, ACT_Q8_K_PAIR, ACT_Q8_K_PAIR_SUMS, ACT_Q8_K_NATURAL, ACT_Q8_K_GROUPS, ACT_Q8_K_Q6X16, ACT_F32, ACT_F16, ACT_BF16 };

typedef void (*rows_fn)(const uint8_t *w, int64_t stride, int64_t cols, const void *xq, int64_t batch, float *out,
                        int64_t ldo, int64_t r0, int64_t r1);

/* The best rows function this variant has for a type: the AVX-512 tiles where they exist, else the 256-bit ones. */
#ifdef JUNO_ZMM
#define BEST(NAME) (rows_fn) NAME##_zrows
#else
#define BEST(NAME) (rows_fn) NAME##_rows
#endif

/*
 * One row per weight type with kernels: its activation format, the offset of its unsigned quants in the AVX-512
 * legacy tiles (juno_xq8.off), and its rows function. The exported functions only look things up here.
 */
static const struct {
    int type;
    int act;
    int off;
    rows_fn rows;
} TYPES[] = {
    {JUNO_Q4_0, ACT_Q8_0, 8, BEST(q4_0)},
    {JUNO_Q4_0 | JUNO_PACKED, ACT_Q8_0, 8, (rows_fn)q4_0_x16_rows},
    {JUNO_Q4_1, ACT_Q8_0, 0, (rows_fn)q4_1_rows},
    {JUNO_Q5_0, ACT_Q8_0, 16, (rows_fn)q5_0_rows},
    {JUNO_Q5_1, ACT_Q8_0, 0, (rows_fn)q5_1_rows},
    {JUNO_Q8_0, ACT_Q8_0, 128, BEST(q8_0)},
#ifdef JUNO_ZMM
    {JUNO_Q8_0 | JUNO_PACKED, ACT_Q8_0, 128, (rows_fn)q8_0_x16_rows},
#endif
    {JUNO_Q2_K, ACT_Q8_K_PAIR, 0, (rows_fn)q2_k_rows},
    {JUNO_Q3_K, ACT_Q8_K_PAIR, 0, (rows_fn)q3_k_rows},
    {JUNO_Q4_K, ACT_Q8_K_PAIR_SUMS, 0, BEST(q4_k)},
#ifdef JUNO_ZMM
    {JUNO_Q4_K | JUNO_PACKED, ACT_Q8_K_GROUPS, 0, (rows_fn)k16_rows},
#endif
    {JUNO_Q5_K, ACT_Q8_K_PAIR_SUMS, 0, (rows_fn)q5_k_rows},
#ifdef JUNO_ZMM
    {JUNO_Q5_K | JUNO_PACKED, ACT_Q8_K_GROUPS, 0, (rows_fn)k5_rows},
#endif
    {JUNO_Q6_K, ACT_Q8_K_NATURAL, 0, BEST(q6_k)},
#ifdef JUNO_ZMM
    {JUNO_Q6_K | JUNO_PACKED, ACT_Q8_K_Q6X16, 0, (rows_fn)q6_x16_rows},
#endif
    {JUNO_F32, ACT_F32, 0, BEST(f32)},
    {JUNO_F16, ACT_F16, 0, BEST(f16)},
    {JUNO_BF16, ACT_BF16, 0, BEST(bf16)},
};

static int type_index(int type) {
    for (int i = 0; i < (int)(sizeof(TYPES) / sizeof(TYPES[0])); i++) {
        if (TYPES[i].type == type) return i;
    }
    return -1;
}

/* ---------------------------------------------------------------- exported entry points */

/*
 * Quantizes (or rounds) rows [r0, r1) of x ([rows][cols]) into xq, where and as quantize() writes them for the whole
 * batch (for Q4_K/Q5_K with their entries in the sums by row, for packed Q4_K and Q5_K in their activation group;
 * the range that ends the batch zeroes the padding), so that ranges quantized on several threads give quantize()'s
 * bytes. A packed type (JUNO_PACKED) gets the activations its packed kernel takes. Returns 0, or -1 for a type it
 * does not know or a range outside [0, rows).
 */
int FN(quantize_rows)(int type, const float *x, int64_t rows, int64_t cols, void *xq, int64_t r0, int64_t r1) {
    int t = type_index(type);
    if (t < 0 || r0 < 0 || r1 < r0 || r1 > rows) return -1;
    int64_t n = (r1 - r0) * cols;
    const float *xr = x + r0 * cols;
    switch (TYPES[t].act) {
    case ACT_Q8_0:
        quantize_q8_0(xr, n, (juno_xq8 *)xq + r0 * (cols / 32), TYPES[t].off);
        return 0;
    case ACT_Q8_K_PAIR:
        quantize_q8_k(xr, n, (juno_xqk *)xq + r0 * (cols / 256), 1);
        return 0;
    case ACT_Q8_K_PAIR_SUMS:
        quantize_q8_k(xr, n, (juno_xqk *)xq + r0 * (cols / 256), 1);
        sums_by_row((const juno_xqk *)xq, rows, cols / 256, r0, r1);
        return 0;
    case ACT_Q8_K_NATURAL:
        quantize_q8_k(xr, n, (juno_xqk *)xq + r0 * (cols / 256), 0);
        return 0;
#ifdef JUNO_ZMM
    case ACT_Q8_K_GROUPS:
        k16_quantize_rows(x, rows, cols, xq, r0, r1);
        return 0;
    case ACT_Q8_K_Q6X16:
        quantize_q8_k(xr, n, (juno_xqk *)xq + r0 * (cols / 256), 0);
        q6_x16_order((juno_xqk *)xq + r0 * (cols / 256), n / 256);
        return 0;
#endif
    case ACT_F32:
        memcpy((float *)xq + r0 * cols, xr, (size_t)n * sizeof(float));
        return 0;
    case ACT_F16: {
        uint16_t *y = (uint16_t *)xq + r0 * cols;
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(xr + i), ROUND_NEAREST));
        }
        for (; i < n; i++) y[i] = _cvtss_sh(xr[i], ROUND_NEAREST);
        return 0;
    }
    default: {
        uint16_t *y = (uint16_t *)xq + r0 * cols;
        for (int64_t i = 0; i < n; i++) {
            float f = bf16_round(xr[i]);
            uint32_t u;
            memcpy(&u, &f, 4);
            y[i] = (uint16_t)(u >> 16);
        }
        return 0;
    }
    }
}

/*
 * Quantizes (or rounds) rows [0, rows) of x ([rows][cols]) into xq the way the weight type wants its activations:
 * juno_xq8 blocks, juno_xqk blocks (for Q4_K/Q5_K followed by the sums by activation row), F16 or BF16 values (as
 * llama.cpp rounds them, stored in 16 bits), or floats (F32: copied). Returns 0, or -1 for a type it does not know.
 */
int FN(quantize)(int type, const float *x, int64_t rows, int64_t cols, void *xq) {
    return FN(quantize_rows)(type, x, rows, cols, xq, 0, rows);
}

/*
 * Rearranges rows [0, rows) of weights of this type (row r at w + r*stride) for matmul(type | JUNO_PACKED, ...) into
 * dst (Q4_0: (rows+15)/16 groups of cols/32 * 288 bytes; in the AVX-512 variant only, Q8_0: cols/32 * 544 bytes,
 * Q4_K: cols/256 * sizeof(k16_wblk), Q5_K: cols/256 * sizeof(k5_wblk) and Q6_K: cols/256 * sizeof(q6_wblk) per
 * group). Returns 0, or -1 for a type without a packed form in this variant.
 */
int FN(repack)(int type, const uint8_t *w, int64_t stride, int64_t rows, int64_t cols, uint8_t *dst) {
    if (type == JUNO_Q4_0) {
        q4_0_x16_repack(w, stride, rows, cols, dst);
        return 0;
    }
#ifdef JUNO_ZMM
    if (type == JUNO_Q4_K) {
        k16_repack(w, stride, rows, cols, dst);
        return 0;
    }
    if (type == JUNO_Q8_0) {
        q8_0_x16_repack(w, stride, rows, cols, dst);
        return 0;
    }
    if (type == JUNO_Q5_K) {
        k5_repack(w, stride, rows, cols, dst);
        return 0;
    }
    if (type == JUNO_Q6_K) {
        q6_x16_repack(w, stride, rows, cols, dst);
        return 0;
    }
#endif
    return -1;
}

/*
 * out[b*ldo + r] = dot(weight row r, activation row b) for r0 <= r < r1 and b < batch; weight row r at w + r*stride;
 * xq as quantize() wrote it for this type and cols. For a packed type (JUNO_PACKED) w is what repack() wrote, stride
 * is unused and r0 a multiple of 16. Returns 0, or -1 for a type it does not know.
 */
int FN(matmul)(int type, const uint8_t *w, int64_t stride, int64_t cols, const void *xq, int64_t batch, float *out,
               int64_t ldo, int64_t r0, int64_t r1) {
    int t = type_index(type);
    if (t < 0) return -1;
    TYPES[t].rows(w, stride, cols, xq, batch, out, ldo, r0, r1);
    return 0;
}
