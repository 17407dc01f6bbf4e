/*
 * Juno's CPU kernels, compiled once per ISA variant (JUNO_ISA = avx2 | avxvnni | avx512vnni; see build-native.sh).
 * Every exported function is named juno_<isa>_<name>. The ABI and the numerics are described in juno_cpu.h.
 *
 * Written for Juno; the integer block arithmetic follows ggml's (llama.cpp) idea of 8-bit multiply-adds
 * (vpmaddubsw/vpmaddwd, VNNI vpdpbusd), the lanes and float order follow Juno's Java backend (QuantDot).
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "juno_cpu.h"

#ifndef JUNO_ISA
#error "JUNO_ISA must name the variant"
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(CAT(CAT(juno_, JUNO_ISA), _), name)
#define AI static inline __attribute__((always_inline))

/* Tile sizes of the float (F32/F16/BF16) product: weight rows x activation rows; AVX-512 has 32 vector registers. */
#if defined(__AVX512VL__)
#define FT_R 2
#define FT_C 4
#else
#define FT_R 2
#define FT_C 3
#endif
/* Activation rows that share one decode of a quantized weight block. */
#define QT_C 4

/* ---------------------------------------------------------------- scalar helpers */

AI float f16_to_f32(uint16_t h) { return _cvtsh_ss(h); }

AI float f16_round(float f) { return _cvtsh_ss(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)); }

AI uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
AI uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

AI float bf16_round(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t r;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        r = ((u >> 16) | 64u) << 16;
    } else {
        r = ((u + (0x7fffu + ((u >> 16) & 1u))) >> 16) << 16;
    }
    float o;
    memcpy(&o, &r, 4);
    return o;
}

/* ---------------------------------------------------------------- vector helpers */

/* Natural element order of 32 bytes -> pair order (position 4L+k holds element 2L, 2L+1, 16+2L, 17+2L). */
AI __m256i pair_order(__m256i v) {
    const __m256i shuf = _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,
                                          0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    return _mm256_shuffle_epi8(_mm256_permute4x64_epi64(v, 0xD8), shuf);
}

/* 16 bytes whose low nibbles are elements 0..15 and high nibbles 16..31 -> 32 nibbles in pair order. */
AI __m256i nibbles_pair(__m128i qs) {
    const __m128i m4 = _mm_set1_epi8(0x0F);
    __m128i lo = _mm_and_si128(qs, m4);
    __m128i hi = _mm_and_si128(_mm_srli_epi16(qs, 4), m4);
    return _mm256_set_m128i(_mm_unpackhi_epi16(lo, hi), _mm_unpacklo_epi16(lo, hi));
}

/* The fifth bits of a Q5_0/Q5_1 block (bit e of qh = element e) as 0x10 bytes in pair order. */
AI __m256i high_bits_pair(uint32_t qh) {
    /* position p = 4L+k holds element e = (k < 2 ? 2L + k : 14 + 2L + k): byte e/8 of qh, bit e%8 */
    const __m256i idx = _mm256_setr_epi8(0, 0, 2, 2, 0, 0, 2, 2, 0, 0, 2, 2, 0, 0, 2, 2,
                                         1, 1, 3, 3, 1, 1, 3, 3, 1, 1, 3, 3, 1, 1, 3, 3);
    const __m256i bit = _mm256_setr_epi8(1, 2, 1, 2, 4, 8, 4, 8, 16, 32, 16, 32, 64, -128, 64, -128,
                                         1, 2, 1, 2, 4, 8, 4, 8, 16, 32, 16, 32, 64, -128, 64, -128);
    __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), idx);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(b, bit), bit), _mm256_set1_epi8(0x10));
}

/* Sum of unsigned u times signed s over each group of four bytes, into eight 32-bit lanes. */
AI __m256i dot_us(__m256i u, __m256i s) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#elif defined(__AVXVNNI__)
    return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

/* Signed q (|q| <= 128) times signed s, groups of four. */
AI __m256i dot_ss(__m256i q, __m256i s) { return dot_us(_mm256_sign_epi8(q, q), _mm256_sign_epi8(s, q)); }

/* acc + the 16-bit pair sums of unsigned u times signed s, multiplied by the 16-bit scales sc and summed in pairs. */
AI __m256i dot_scaled(__m256i acc, __m256i u, __m256i s, __m256i sc) {
    __m256i p = _mm256_maddubs_epi16(u, s);
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpwssd_epi32(acc, p, sc);
#elif defined(__AVXVNNI__)
    return _mm256_dpwssd_avx_epi32(acc, p, sc);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, sc));
#endif
}

/* ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)): the Java backend's QuantDot.sum. */
AI float hsum8(__m256 v) {
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)); /* l0+l4, l1+l5, l2+l6, l3+l7 */
    __m128 b = _mm_add_ps(a, _mm_movehl_ps(a, a));                                  /* (..)+(..) for 0,2 and 1,3 */
    return _mm_cvtss_f32(b) + _mm_cvtss_f32(_mm_shuffle_ps(b, b, 1));
}

AI int32_t hsum_i32(__m256i v) {
    __m128i a = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0x4E));
    a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0xB1));
    return _mm_cvtsi128_si32(a);
}

AI __m256 load_f16x8(const uint8_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

AI __m256 load_bf16x8(const uint8_t *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}

/*
 * Software prefetch of the weights, this many bytes ahead of the block being read in each row of a tile: rows of a
 * worker's range are contiguous, so this streams the matrix well ahead of use. Measured on TinyLlama Q4_K_M tg64
 * (2 threads): none 16.2 tok/s, 512 B 20.5, 4 KiB 24.5, 16 KiB 26.7, 64 KiB 25.8. Prefetches never fault.
 */
#define PF_AHEAD 16384

AI void prefetch_row(const uint8_t *p, int bytes) {
    for (int i = 0; i < bytes; i += 64) _mm_prefetch((const char *)p + PF_AHEAD + i, _MM_HINT_T0);
}

/* ---------------------------------------------------------------- activation quantization */

/* Eight int32 lanes of four vectors (elements 0..31 in natural order) to 32 int8 in natural order. */
AI __m256i pack_natural(__m256i i0, __m256i i1, __m256i i2, __m256i i3) {
    __m256i a = _mm256_packs_epi32(i0, i1);
    __m256i b = _mm256_packs_epi32(i2, i3);
    __m256i c = _mm256_packs_epi16(a, b);
    return _mm256_permutevar8x32_epi32(c, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

AI float hmax8(__m256 v) {
    __m128 a = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_max_ps(a, _mm_movehl_ps(a, a));
    a = _mm_max_ss(a, _mm_shuffle_ps(a, a, 1));
    return _mm_cvtss_f32(a);
}

#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* quantize_row_q8_0 as the Java backend does it (QuantActivations.q8): d = f16(amax/127), q = rint(x * 127/amax). */
static void quantize_q8_0(const float *x, int64_t n, juno_xq8 *y, int off) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < n / 32; b++, x += 32) {
        __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8), v2 = _mm256_loadu_ps(x + 16),
               v3 = _mm256_loadu_ps(x + 24);
        __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v0), _mm256_andnot_ps(sign, v1)),
                                 _mm256_max_ps(_mm256_andnot_ps(sign, v2), _mm256_andnot_ps(sign, v3)));
        float amax = hmax8(m);
        float d = f16_round(amax / 127.0f);
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        __m256 vid = _mm256_set1_ps(id);
        __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v0, vid), ROUND_NEAREST));
        __m256i i1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v1, vid), ROUND_NEAREST));
        __m256i i2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v2, vid), ROUND_NEAREST));
        __m256i i3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v3, vid), ROUND_NEAREST));
        int32_t sum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
        _mm256_storeu_si256((__m256i *)y[b].q, pair_order(pack_natural(i0, i1, i2, i3)));
        y[b].d = d;
        y[b].s = f16_round((float)sum * d);
        /* -off * (sum of each pair-order lane's four quants) */
        __m256i q = _mm256_loadu_si256((const __m256i *)y[b].q);
        __m256i l4 = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
        _mm256_storeu_si256((__m256i *)y[b].off, _mm256_mullo_epi32(l4, _mm256_set1_epi32(-off)));
    }
}

/* quantize_row_q8_K_ref as the Java backend does it (QuantActivations.q8k); quants in pair order or natural order. */
static void quantize_q8_k(const float *x, int64_t n, juno_xqk *y, int pair) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < n / 256; b++, x += 256) {
        __m256 m = _mm256_setzero_ps();
        for (int j = 0; j < 256; j += 8) {
            m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)));
        }
        float amax = hmax8(m);
        juno_xqk *o = &y[b];
        if (amax == 0.0f) {
            memset(o, 0, sizeof(*o));
            continue;
        }
        float max = 0.0f;
        for (int j = 0; j < 256; j++) {
            if (fabsf(x[j]) == amax) { /* the first element of the largest magnitude, as the strict > scan finds */
                max = x[j];
                break;
            }
        }
        float iscale = -127.0f / max;
        __m256 vs = _mm256_set1_ps(iscale);
        const __m256i top = _mm256_set1_epi32(127);
        for (int g = 0; g < 8; g++) {
            const float *xg = x + 32 * g;
            __m256i i0 = _mm256_min_epi32(top, _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(xg)), ROUND_NEAREST)));
            __m256i i1 = _mm256_min_epi32(top, _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(xg + 8)), ROUND_NEAREST)));
            __m256i i2 = _mm256_min_epi32(top, _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(xg + 16)), ROUND_NEAREST)));
            __m256i i3 = _mm256_min_epi32(top, _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(xg + 24)), ROUND_NEAREST)));
            o->bsums[2 * g] = (int16_t)hsum_i32(_mm256_add_epi32(i0, i1));
            o->bsums[2 * g + 1] = (int16_t)hsum_i32(_mm256_add_epi32(i2, i3));
            __m256i q = pack_natural(i0, i1, i2, i3);
            _mm256_storeu_si256((__m256i *)(o->q + 32 * g), pair ? pair_order(q) : q);
        }
        o->d = 1.0f / iscale;
    }
}

/*
 * For Q4_K/Q5_K, after the batch's blocks: every sum of 32 of super-block b of activation row c as a float at
 * [(8b + j)*bpad + c] and its scale d at [8*nb*bpad + b*bpad + c] (bpad = the batch rounded up to 16, padding 0),
 * so that the min terms of 16 activation rows take one vector (QuantActivations.sumsByRow in the Java backend).
 */
AI int64_t bpad16(int64_t batch) { return (batch + 15) & ~(int64_t)15; }

static void sums_by_row(const juno_xqk *x, int64_t batch, int64_t nb) {
    int64_t bp = bpad16(batch);
    float *t = (float *)(x + batch * nb);
    memset(t, 0, (size_t)(nb * 9 * bp) * sizeof(float));
    for (int64_t c = 0; c < batch; c++) {
        for (int64_t b = 0; b < nb; b++) {
            const juno_xqk *xb = x + c * nb + b;
            for (int j = 0; j < 8; j++) t[(8 * b + j) * bp + c] = (float)(xb->bsums[2 * j] + xb->bsums[2 * j + 1]);
            t[8 * nb * bp + b * bp + c] = xb->d;
        }
    }
}

/* ---------------------------------------------------------------- 32-element block types (Q8_0 activations) */

/* One weight block: 32 quants in pair order (signed for Q4_0/Q5_0/Q8_0, unsigned for Q4_1/Q5_1), scale, min. */
typedef struct {
    __m256i q;
    float d;
    float m;
} blk32;

AI blk32 load_q4_0(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = 0.0f;
    r.q = _mm256_sub_epi8(nibbles_pair(_mm_loadu_si128((const __m128i *)(b + 2))), _mm256_set1_epi8(8));
    return r;
}

AI blk32 load_q4_1(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = f16_to_f32(rd16(b + 2));
    r.q = nibbles_pair(_mm_loadu_si128((const __m128i *)(b + 4)));
    return r;
}

AI blk32 load_q5_0(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = 0.0f;
    __m256i q = _mm256_or_si256(nibbles_pair(_mm_loadu_si128((const __m128i *)(b + 6))), high_bits_pair(rd32(b + 2)));
    r.q = _mm256_sub_epi8(q, _mm256_set1_epi8(16));
    return r;
}

AI blk32 load_q5_1(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = f16_to_f32(rd16(b + 2));
    r.q = _mm256_or_si256(nibbles_pair(_mm_loadu_si128((const __m128i *)(b + 8))), high_bits_pair(rd32(b + 4)));
    return r;
}

AI blk32 load_q8_0(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = 0.0f;
    r.q = pair_order(_mm256_loadu_si256((const __m256i *)(b + 2)));
    return r;
}

/*
 * The tiles: NR weight rows x NC activation rows (at most TR x TC), every (row, activation) dot computed as the Java
 * backend computes it, so the tiling changes nothing in the results; it shares each weight decode among the NC
 * activation rows and each activation load among the NR weight rows, and gives NR*NC independent chains.
 * out[c*ldo + r] is the dot of weight row r (at w + r*stride) with activation row c (at x + c*xs).
 */
#define DEF_ROWS(NAME, XT, NBDIV, TR, TC)                                                                              \
    static void NAME##_rows(const uint8_t *w, int64_t stride, int64_t cols, const XT *x, int64_t batch, float *out,   \
                            int64_t ldo, int64_t r0, int64_t r1) {                                                     \
        int64_t nb = cols / (NBDIV);                                                                                   \
        int64_t r = r0;                                                                                                \
        for (; r + (TR) <= r1; r += (TR)) {                                                                            \
            int64_t c = 0;                                                                                             \
            for (; c + (TC) <= batch; c += (TC))                                                                       \
                NAME##_tile(w + r * stride, stride, nb, x + c * nb, nb, TR, TC, out + c * ldo + r, ldo);               \
            for (; c < batch; c++) NAME##_tile(w + r * stride, stride, nb, x + c * nb, nb, TR, 1, out + c * ldo + r, ldo); \
        }                                                                                                              \
        for (; r < r1; r++) {                                                                                          \
            int64_t c = 0;                                                                                             \
            for (; c + (TC) <= batch; c += (TC))                                                                       \
                NAME##_tile(w + r * stride, stride, nb, x + c * nb, nb, 1, TC, out + c * ldo + r, ldo);                \
            for (; c < batch; c++) NAME##_tile(w + r * stride, stride, nb, x + c * nb, nb, 1, 1, out + c * ldo + r, ldo); \
        }                                                                                                              \
    }

#if defined(__AVX512VL__)
#define LR 4 /* legacy tile: weight rows */
#define LC 4 /* legacy tile: activation rows */
#define KR 4
#define KC 4
#else
#define LR 2
#define LC 2
#define KR 2
#define KC 2
#endif

#define UNROLL _Pragma("GCC unroll 8")

/*
 * As QuantDot.dotFloat: per block the eight integer lanes, converted and multiply-added with d_w*d_x; the lane sum;
 * plus the min terms sum(m_b * s_b) for Q4_1/Q5_1.
 */
#define DEF_LEGACY(NAME, BYTES, LOAD, SIGNED, MINS)                                                                    \
    AI void NAME##_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xq8 *x, int64_t xs, int nr, int nc,  \
                        float *out, int64_t ldo) {                                                                     \
        __m256 acc[LR][LC];                                                                                            \
        float corr[LR][LC];                                                                                            \
        UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {                                      \
            acc[r][c] = _mm256_setzero_ps();                                                                           \
            corr[r][c] = 0.0f;                                                                                         \
        }                                                                                                              \
        for (int64_t b = 0; b < nb; b++) {                                                                             \
            blk32 wb[LR];                                                                                              \
            __m256i u[LR];                                                                                             \
            UNROLL for (int r = 0; r < nr; r++) {                                                                      \
                _mm_prefetch((const char *)(w + r * stride + b * (BYTES)) + PF_AHEAD, _MM_HINT_T0);             \
                wb[r] = LOAD(w + r * stride + b * (BYTES));                                                            \
                u[r] = SIGNED ? _mm256_sign_epi8(wb[r].q, wb[r].q) : wb[r].q;                                          \
            }                                                                                                          \
            UNROLL for (int c = 0; c < nc; c++) {                                                                      \
                const juno_xq8 *xb = x + c * xs + b;                                                                   \
                __m256i y = _mm256_loadu_si256((const __m256i *)xb->q);                                                \
                UNROLL for (int r = 0; r < nr; r++) {                                                                  \
                    __m256i p = dot_us(u[r], SIGNED ? _mm256_sign_epi8(y, wb[r].q) : y);                               \
                    acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(wb[r].d * xb->d), acc[r][c]);    \
                    if (MINS) corr[r][c] += wb[r].m * xb->s;                                                           \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
        UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {                                      \
            out[c * ldo + r] = MINS ? hsum8(acc[r][c]) + corr[r][c] : hsum8(acc[r][c]);                                \
        }                                                                                                              \
    }                                                                                                                  \
    DEF_ROWS(NAME, juno_xq8, 32, LR, LC)

DEF_LEGACY(q4_0, 18, load_q4_0, 1, 0)
DEF_LEGACY(q4_1, 20, load_q4_1, 0, 1)
DEF_LEGACY(q5_0, 22, load_q5_0, 1, 0)
DEF_LEGACY(q5_1, 24, load_q5_1, 0, 1)
DEF_LEGACY(q8_0, 34, load_q8_0, 1, 0)

/* ---------------------------------------------------------------- K-quants (Q8_K activations) */

/* Scale and min j of a Q4_K/Q5_K super-block's 12 packed bytes (ScalarDecode.scaleK4/minK4). */
AI void scales_k4(const uint8_t *q, int32_t *sc, int32_t *mn) {
    for (int j = 0; j < 4; j++) {
        sc[j] = q[j] & 63;
        mn[j] = q[j + 4] & 63;
    }
    for (int j = 4; j < 8; j++) {
        sc[j] = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        mn[j] = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* Q3_K scale j with its -32 (ScalarDecode.q3kScale). */
AI int32_t scale_q3k(const uint8_t *s, int j) {
    int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
    int high = (s[8 + (j & 3)] >> (2 * (j >> 2))) & 3;
    return (low | (high << 4)) - 32;
}

/* Two 16-bit scales alternating per 16-bit lane: the first for even lanes (elements < 16 of a pair-order 32). */
AI __m256i scale_pair(int32_t a, int32_t b) { return _mm256_set1_epi32((int32_t)((uint32_t)(a & 0xFFFF) | ((uint32_t)b << 16))); }

/*
 * The K-quant kernels: per super-block the eight integer lanes (sub-block scales applied in integers) of every (weight
 * row, activation row) of the tile, converted and multiply-added with d*d_x; the min terms (dmin*d_x)*sum(m_j*S_j)
 * summed apart and subtracted at the end (QuantDot.fusedQ4_K and the others).
 */
#define K_TILE_BEGIN                                                                                                   \
    __m256 acc[KR][KC];                                                                                                \
    float corr[KR][KC];                                                                                                \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {                                          \
        acc[r][c] = _mm256_setzero_ps();                                                                               \
        corr[r][c] = 0.0f;                                                                                             \
    }

#define K_LANES_ZERO                                                                                                   \
    __m256i lanes[KR][KC];                                                                                             \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) lanes[r][c] = _mm256_setzero_si256();

/* acc += lanes * (d_r * d_x); with mins, corr += (dmin_r * d_x) * msum, msum = sum_j m_j * S_j from a 16-bit madd. */
#define K_ACCUMULATE(MINS, MDUP, PC)                                                                                   \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {                                          \
        const juno_xqk *xb = x + c * xs + b;                                                                           \
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lanes[r][c]), _mm256_set1_ps(d[r] * xb->d), acc[r][c]);         \
        if (MINS && !(PC)) {                                                                                           \
            __m256i bs = _mm256_loadu_si256((const __m256i *)xb->bsums);                                               \
            int32_t msum = hsum_i32(_mm256_madd_epi16(bs, MDUP[r]));                                                   \
            corr[r][c] += dmin[r] * xb->d * (float)msum;                                                               \
        }                                                                                                              \
    }

#define K_TILE_END(MINS, PC)                                                                                           \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {                                          \
        out[c * ldo + r] = MINS ? hsum8(acc[r][c]) - ((PC) ? (PC)[r * bp + c] : corr[r][c]) : hsum8(acc[r][c]);        \
    }

/* Eight 6-bit mins, each twice, as 16-bit lanes: madd with the sixteen sums of 16 gives m_j*(S_2j + S_2j+1). */
AI __m256i mins_dup(const int32_t *mn) {
    return _mm256_setr_epi16((short)mn[0], (short)mn[0], (short)mn[1], (short)mn[1], (short)mn[2], (short)mn[2],
                             (short)mn[3], (short)mn[3], (short)mn[4], (short)mn[4], (short)mn[5], (short)mn[5],
                             (short)mn[6], (short)mn[6], (short)mn[7], (short)mn[7]);
}

AI void q4_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo, const float *pc, int64_t bp) {
    K_TILE_BEGIN
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int64_t b = 0; b < nb; b++) {
        float d[KR], dmin[KR];
        int32_t sc[KR][8], mn[KR][8];
        __m256i mdup[KR];
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 144;
            prefetch_row(blk, 144);
            d[r] = f16_to_f32(rd16(blk));
            dmin[r] = f16_to_f32(rd16(blk + 2));
            scales_k4(blk + 4, sc[r], mn[r]);
            mdup[r] = mins_dup(mn[r]);
        }
        K_LANES_ZERO
        for (int k = 0; k < 4; k++) {
            __m256i w0[KR], w1[KR];
            UNROLL for (int r = 0; r < nr; r++) {
                __m256i raw = pair_order(_mm256_loadu_si256((const __m256i *)(w + r * stride + b * 144 + 16 + 32 * k)));
                w0[r] = _mm256_and_si256(raw, m4);
                w1[r] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
            }
            UNROLL for (int c = 0; c < nc; c++) {
                const int8_t *q = x[c * xs + b].q + 64 * k;
                __m256i y0 = _mm256_loadu_si256((const __m256i *)q), y1 = _mm256_loadu_si256((const __m256i *)(q + 32));
                UNROLL for (int r = 0; r < nr; r++) {
                    lanes[r][c] = dot_scaled(lanes[r][c], w0[r], y0, _mm256_set1_epi16((short)sc[r][2 * k]));
                    lanes[r][c] = dot_scaled(lanes[r][c], w1[r], y1, _mm256_set1_epi16((short)sc[r][2 * k + 1]));
                }
            }
        }
        K_ACCUMULATE(1, mdup, pc)
    }
    K_TILE_END(1, pc)
}

AI void q5_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo, const float *pc, int64_t bp) {
    K_TILE_BEGIN
    const __m256i m4 = _mm256_set1_epi8(0x0F), h16 = _mm256_set1_epi8(0x10);
    for (int64_t b = 0; b < nb; b++) {
        float d[KR], dmin[KR];
        int32_t sc[KR][8], mn[KR][8];
        __m256i mdup[KR], qh[KR];
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 176;
            prefetch_row(blk, 176);
            d[r] = f16_to_f32(rd16(blk));
            dmin[r] = f16_to_f32(rd16(blk + 2));
            scales_k4(blk + 4, sc[r], mn[r]);
            mdup[r] = mins_dup(mn[r]);
            qh[r] = pair_order(_mm256_loadu_si256((const __m256i *)(blk + 16)));
        }
        K_LANES_ZERO
        for (int k = 0; k < 4; k++) {
            __m256i w0[KR], w1[KR];
            const __m256i b0 = _mm256_set1_epi8((char)(1 << (2 * k))), b1 = _mm256_set1_epi8((char)(2 << (2 * k)));
            UNROLL for (int r = 0; r < nr; r++) {
                __m256i raw = pair_order(_mm256_loadu_si256((const __m256i *)(w + r * stride + b * 176 + 48 + 32 * k)));
                __m256i hb0 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh[r], b0), b0), h16);
                __m256i hb1 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh[r], b1), b1), h16);
                w0[r] = _mm256_or_si256(_mm256_and_si256(raw, m4), hb0);
                w1[r] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(raw, 4), m4), hb1);
            }
            UNROLL for (int c = 0; c < nc; c++) {
                const int8_t *q = x[c * xs + b].q + 64 * k;
                __m256i y0 = _mm256_loadu_si256((const __m256i *)q), y1 = _mm256_loadu_si256((const __m256i *)(q + 32));
                UNROLL for (int r = 0; r < nr; r++) {
                    lanes[r][c] = dot_scaled(lanes[r][c], w0[r], y0, _mm256_set1_epi16((short)sc[r][2 * k]));
                    lanes[r][c] = dot_scaled(lanes[r][c], w1[r], y1, _mm256_set1_epi16((short)sc[r][2 * k + 1]));
                }
            }
        }
        K_ACCUMULATE(1, mdup, pc)
    }
    K_TILE_END(1, pc)
}

AI void q2_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo) {
    K_TILE_BEGIN
    const int64_t bp = 0;
    (void)bp;
    for (int64_t b = 0; b < nb; b++) {
        float d[KR], dmin[KR];
        __m256i mins[KR];
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 84;
            prefetch_row(blk, 84);
            d[r] = f16_to_f32(rd16(blk + 80));
            dmin[r] = f16_to_f32(rd16(blk + 82));
            /* the sixteen mins (high nibbles) as 16-bit lanes: madd with the sums of 16 gives m_j*S_j pairs */
            mins[r] = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(_mm_loadu_si128((const __m128i *)blk), 4),
                                                         _mm_set1_epi8(0x0F)));
        }
        K_LANES_ZERO
        for (int n = 0; n < 2; n++) {
            __m256i raw[KR];
            UNROLL for (int r = 0; r < nr; r++) {
                raw[r] = pair_order(_mm256_loadu_si256((const __m256i *)(w + r * stride + b * 84 + 16 + 32 * n)));
            }
            for (int s = 0; s < 4; s++) {
                int g = 4 * n + s;
                __m256i wq[KR], sp[KR];
                UNROLL for (int r = 0; r < nr; r++) {
                    const uint8_t *blk = w + r * stride + b * 84;
                    wq[r] = _mm256_and_si256(_mm256_srli_epi16(raw[r], 2 * s), _mm256_set1_epi8(3));
                    sp[r] = scale_pair(blk[2 * g] & 0xF, blk[2 * g + 1] & 0xF);
                }
                UNROLL for (int c = 0; c < nc; c++) {
                    __m256i y = _mm256_loadu_si256((const __m256i *)(x[c * xs + b].q + 32 * g));
                    UNROLL for (int r = 0; r < nr; r++) lanes[r][c] = dot_scaled(lanes[r][c], wq[r], y, sp[r]);
                }
            }
        }
        K_ACCUMULATE(1, mins, (const float *)NULL)
    }
    K_TILE_END(1, (const float *)NULL)
}

AI void q3_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo) {
    K_TILE_BEGIN
    const int64_t bp = 0;
    (void)bp;
    float dmin[KR];
    __m256i mdup[KR];
    (void)dmin;
    (void)mdup;
    for (int64_t b = 0; b < nb; b++) {
        float d[KR];
        int32_t sc[KR][16];
        __m256i hm[KR];
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 110;
            prefetch_row(blk, 110);
            d[r] = f16_to_f32(rd16(blk + 108));
            for (int j = 0; j < 16; j++) sc[r][j] = scale_q3k(blk + 96, j);
            hm[r] = pair_order(_mm256_loadu_si256((const __m256i *)blk));
        }
        K_LANES_ZERO
        for (int n = 0; n < 2; n++) {
            __m256i raw[KR];
            UNROLL for (int r = 0; r < nr; r++) {
                raw[r] = pair_order(_mm256_loadu_si256((const __m256i *)(w + r * stride + b * 110 + 32 + 32 * n)));
            }
            for (int s = 0; s < 4; s++) {
                int g = 4 * n + s;
                const __m256i bit = _mm256_set1_epi8((char)(1 << g));
                __m256i q[KR], u[KR], sp[KR];
                UNROLL for (int r = 0; r < nr; r++) {
                    __m256i low = _mm256_and_si256(_mm256_srli_epi16(raw[r], 2 * s), _mm256_set1_epi8(3));
                    /* minus 4 where the high bit is clear */
                    __m256i clear = _mm256_andnot_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hm[r], bit), bit), _mm256_set1_epi8(4));
                    q[r] = _mm256_sub_epi8(low, clear);
                    u[r] = _mm256_sign_epi8(q[r], q[r]);
                    sp[r] = scale_pair(sc[r][2 * g], sc[r][2 * g + 1]);
                }
                UNROLL for (int c = 0; c < nc; c++) {
                    __m256i y = _mm256_loadu_si256((const __m256i *)(x[c * xs + b].q + 32 * g));
                    UNROLL for (int r = 0; r < nr; r++) {
                        lanes[r][c] = dot_scaled(lanes[r][c], u[r], _mm256_sign_epi8(y, q[r]), sp[r]);
                    }
                }
            }
        }
        K_ACCUMULATE(0, mdup, (const float *)NULL)
    }
    K_TILE_END(0, (const float *)NULL)
}

/* Q6_K in ggml's lanes (natural order): unsigned quants, the -32 taken out with the activation block sums. */
AI void q6_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo) {
    K_TILE_BEGIN
    const int64_t bp = 0;
    (void)bp;
    float dmin[KR];
    __m256i mdup[KR];
    (void)dmin;
    (void)mdup;
    const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3);
    for (int64_t b = 0; b < nb; b++) {
        float d[KR];
        K_LANES_ZERO
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 210;
            prefetch_row(blk, 210);
            d[r] = f16_to_f32(rd16(blk + 208));
            __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 192)));
            UNROLL for (int c = 0; c < nc; c++) {
                /* -32 * (sc_2p*bsum_2p + sc_2p+1*bsum_2p+1) per lane p */
                __m256i bs = _mm256_loadu_si256((const __m256i *)x[c * xs + b].bsums);
                lanes[r][c] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(bs, sc16), 5));
            }
        }
        for (int n = 0; n < 2; n++) {
            for (int k = 0; k < 4; k++) {
                int g = 4 * n + k;
                __m256i u[KR], sp[KR];
                UNROLL for (int r = 0; r < nr; r++) {
                    const uint8_t *blk = w + r * stride + b * 210;
                    const uint8_t *ql = blk + 64 * n + 32 * (k & 1), *qh = blk + 128 + 32 * n;
                    __m256i l = _mm256_loadu_si256((const __m256i *)ql);
                    __m256i h = _mm256_loadu_si256((const __m256i *)qh);
                    __m256i lo = (k >> 1) ? _mm256_srli_epi16(l, 4) : l;
                    u[r] = _mm256_or_si256(_mm256_and_si256(lo, m4),
                                           _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(h, 2 * k), m3), 4));
                    const int8_t *scales = (const int8_t *)(blk + 192);
                    sp[r] = _mm256_set_m128i(_mm_set1_epi16(scales[2 * g + 1]), _mm_set1_epi16(scales[2 * g]));
                }
                UNROLL for (int c = 0; c < nc; c++) {
                    __m256i y = _mm256_loadu_si256((const __m256i *)(x[c * xs + b].q + 32 * g));
                    UNROLL for (int r = 0; r < nr; r++) lanes[r][c] = dot_scaled(lanes[r][c], u[r], y, sp[r]);
                }
            }
        }
        K_ACCUMULATE(0, mdup, (const float *)NULL)
    }
    K_TILE_END(0, (const float *)NULL)
}

DEF_ROWS(q2_k, juno_xqk, 256, KR, KC)
DEF_ROWS(q3_k, juno_xqk, 256, KR, KC)
/* The packed 6-bit mins of a Q4_K/Q5_K super-block as eight bytes (QuantDot.minsK4). */
AI uint64_t k4_min_bytes(const uint8_t *q) {
    uint32_t u1 = rd32(q + 4), u2 = rd32(q + 8);
    uint32_t mlo = u1 & 0x3f3f3f3fu;
    uint32_t mhi = ((u2 >> 4) & 0x0f0f0f0fu) | ((u1 >> 2) & 0x30303030u);
    return mlo | (uint64_t)mhi << 32;
}

/*
 * The min terms of weight rows [0, nr) (Q4_K/Q5_K, BYTES per block) with every activation row, as
 * QuantDot.kCorrections: per super-block for 8 activation rows at once, ms = sum_j m_j * S_j (exact integers in
 * floats), then corr += (dmin * d_x) * ms; corr[r*bp + c]. t: the sums by activation row (sums_by_row).
 */
static void k4_corrections_y(const uint8_t *w, int64_t stride, int64_t nb, const float *t, int64_t bp, int nr, int bytes,
                             float *corr) {
    const float *dt = t + 8 * nb * bp;
    for (int r = 0; r < nr; r++) {
        for (int64_t c0 = 0; c0 < bp; c0 += 8) {
            __m256 acc = _mm256_setzero_ps();
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *blk = w + r * stride + b * bytes;
                uint64_t mn = k4_min_bytes(blk + 4);
                const float *tb = t + 8 * b * bp + c0;
                __m256 ms = _mm256_mul_ps(_mm256_loadu_ps(tb), _mm256_set1_ps((float)(mn & 0xFF)));
                for (int j = 1; j < 8; j++) {
                    ms = _mm256_fmadd_ps(_mm256_loadu_ps(tb + j * bp), _mm256_set1_ps((float)((mn >> (8 * j)) & 0xFF)), ms);
                }
                __m256 dd = _mm256_mul_ps(_mm256_set1_ps(f16_to_f32(rd16(blk + 2))), _mm256_loadu_ps(dt + b * bp + c0));
                acc = _mm256_add_ps(acc, _mm256_mul_ps(dd, ms));
            }
            _mm256_storeu_ps(corr + r * bp + c0, acc);
        }
    }
}

/* Q4_K/Q5_K rows: per tile of KR rows, from four activation rows their min terms with the whole batch first. */
#define DEF_K4_ROWS(NAME, BYTES)                                                                                       \
    static void NAME##_rows(const uint8_t *w, int64_t stride, int64_t cols, const juno_xqk *x, int64_t batch,         \
                            float *out, int64_t ldo, int64_t r0, int64_t r1) {                                         \
        int64_t nb = cols / 256;                                                                                       \
        int64_t bp = bpad16(batch);                                                                                    \
        const float *t = (const float *)(x + batch * nb);                                                              \
        float corr[KR * bp];                                                                                           \
        for (int64_t r = r0; r < r1;) {                                                                                \
            int nr = r + KR <= r1 ? KR : 1;                                                                            \
            const float *pc = batch >= 4 ? corr : NULL;                                                                \
            if (pc) k4_corrections_y(w + r * stride, stride, nb, t, bp, nr, BYTES, corr);                              \
            int64_t c = 0;                                                                                             \
            const uint8_t *wr = w + r * stride;                                                                        \
            if (nr == KR) {                                                                                            \
                for (; c + KC <= batch; c += KC)                                                                       \
                    NAME##_tile(wr, stride, nb, x + c * nb, nb, KR, KC, out + c * ldo + r, ldo, pc ? pc + c : NULL, bp); \
                for (; c < batch; c++)                                                                                 \
                    NAME##_tile(wr, stride, nb, x + c * nb, nb, KR, 1, out + c * ldo + r, ldo, pc ? pc + c : NULL, bp); \
            } else {                                                                                                   \
                for (; c + KC <= batch; c += KC)                                                                       \
                    NAME##_tile(wr, stride, nb, x + c * nb, nb, 1, KC, out + c * ldo + r, ldo, pc ? pc + c : NULL, bp); \
                for (; c < batch; c++)                                                                                 \
                    NAME##_tile(wr, stride, nb, x + c * nb, nb, 1, 1, out + c * ldo + r, ldo, pc ? pc + c : NULL, bp); \
            }                                                                                                          \
            r += nr;                                                                                                   \
        }                                                                                                              \
    }

DEF_K4_ROWS(q4_k, 144)
DEF_K4_ROWS(q5_k, 176)
DEF_ROWS(q6_k, juno_xqk, 256, KR, KC)

/* ---------------------------------------------------------------- F32 / F16 / BF16 weights */

/* 8 weights of row r at element i, as floats. */
AI __m256 load_w(int type, const uint8_t *row, int64_t i) {
    if (type == JUNO_F16) return load_f16x8(row + 2 * i);
    if (type == JUNO_BF16) return load_bf16x8(row + 2 * i);
    return _mm256_loadu_ps((const float *)row + i);
}

/*
 * NR weight rows x NC activation rows, each dot as CpuBackend.dot for n % 16 == 0: two 8-lane accumulators (elements
 * 16i..16i+7 and 16i+8..16i+15), then the lane sum of lo + hi.
 */
AI void float_tile(int type, const uint8_t *w, int64_t stride, int64_t cols, const float *x, int nr, int nc,
                   float *out, int64_t ldo) {
    __m256 lo[FT_R][FT_C], hi[FT_R][FT_C];
    _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) {
        _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++) {
            lo[r][c] = _mm256_setzero_ps();
            hi[r][c] = _mm256_setzero_ps();
        }
    }
    for (int64_t i = 0; i < cols; i += 16) {
        __m256 wl[FT_R], wh[FT_R];
        _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) {
            _mm_prefetch((const char *)(w + r * stride) + (type == JUNO_F32 ? 4 : 2) * i + PF_AHEAD, _MM_HINT_T0);
            wl[r] = load_w(type, w + r * stride, i);
            wh[r] = load_w(type, w + r * stride, i + 8);
        }
        _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++) {
            __m256 xl = _mm256_loadu_ps(x + c * cols + i), xh = _mm256_loadu_ps(x + c * cols + i + 8);
            _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) {
                lo[r][c] = _mm256_fmadd_ps(wl[r], xl, lo[r][c]);
                hi[r][c] = _mm256_fmadd_ps(wh[r], xh, hi[r][c]);
            }
        }
    }
    _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) {
        _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++) {
            out[c * ldo + r] = hsum8(_mm256_add_ps(lo[r][c], hi[r][c]));
        }
    }
}

#define DEF_FLOAT_ROWS(NAME, TYPE)                                                                                     \
    static void NAME##_rows(const uint8_t *w, int64_t stride, int64_t cols, const float *x, int64_t batch,            \
                            float *out, int64_t ldo, int64_t r0, int64_t r1) {                                         \
        int64_t r = r0;                                                                                                \
        for (; r + FT_R <= r1; r += FT_R) {                                                                            \
            int64_t c = 0;                                                                                             \
            for (; c + FT_C <= batch; c += FT_C)                                                                       \
                float_tile(TYPE, w + r * stride, stride, cols, x + c * cols, FT_R, FT_C, out + c * ldo + r, ldo);      \
            for (; c < batch; c++)                                                                                     \
                float_tile(TYPE, w + r * stride, stride, cols, x + c * cols, FT_R, 1, out + c * ldo + r, ldo);         \
        }                                                                                                              \
        for (; r < r1; r++) {                                                                                          \
            int64_t c = 0;                                                                                             \
            for (; c + FT_C <= batch; c += FT_C)                                                                       \
                float_tile(TYPE, w + r * stride, stride, cols, x + c * cols, 1, FT_C, out + c * ldo + r, ldo);         \
            for (; c < batch; c++)                                                                                     \
                float_tile(TYPE, w + r * stride, stride, cols, x + c * cols, 1, 1, out + c * ldo + r, ldo);            \
        }                                                                                                              \
    }

DEF_FLOAT_ROWS(f32, JUNO_F32)
DEF_FLOAT_ROWS(f16, JUNO_F16)
DEF_FLOAT_ROWS(bf16, JUNO_BF16)

/* ---------------------------------------------------------------- AVX-512: two weight rows per 512-bit register */
#if defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define JUNO_ZMM 1
/*
 * The same integers and float steps as the 256-bit tiles, two weight rows at a time: the low 256 bits hold row r's
 * eight lanes, the high 256 bits row r+1's, so every lane computes exactly what the 256-bit code does (and the Java
 * backend) with half the instructions. ZP row pairs x ZC activation rows per tile.
 */
#define ZP 2
#define ZC 4
/* Batches of eight or more: one row pair x eight activation rows (each decode shared by eight, registers still fit). */
#define ZC_WIDE 8
#define ZC_MAX 8
#define ZP_MAX 4

AI __m512i pair_order_z(__m512i v) {
    const __m512i shuf = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15));
    return _mm512_shuffle_epi8(_mm512_permutex_epi64(v, 0xD8), shuf);
}

/* 32 bytes of row a in the low half, 32 of row b in the high half. */
AI __m512i load2(const uint8_t *a, const uint8_t *b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
                              _mm256_loadu_si256((const __m256i *)b), 1);
}

/* 32 activation bytes in both halves. */
AI __m512i bcast32(const int8_t *p) { return _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)p)); }

/* A float for each half. */
AI __m512 halves_ps(float a, float b) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(a)), _mm256_set1_ps(b), 1);
}

AI float hsum8_lo(__m512 v) { return hsum8(_mm512_castps512_ps256(v)); }
AI float hsum8_hi(__m512 v) { return hsum8(_mm512_extractf32x8_ps(v, 1)); }

/* The packed 6-bit scales and mins of a Q4_K/Q5_K super-block as eight bytes each (QuantDot.scalesK4/minsK4). */
AI void k4_bytes(const uint8_t *q, uint64_t *sc, uint64_t *mn) {
    uint32_t u0 = rd32(q), u1 = rd32(q + 4), u2 = rd32(q + 8);
    uint32_t slo = u0 & 0x3f3f3f3fu, mlo = u1 & 0x3f3f3f3fu;
    uint32_t shi = (u2 & 0x0f0f0f0fu) | ((u0 >> 2) & 0x30303030u);
    uint32_t mhi = ((u2 >> 4) & 0x0f0f0f0fu) | ((u1 >> 2) & 0x30303030u);
    *sc = slo | (uint64_t)shi << 32;
    *mn = mlo | (uint64_t)mhi << 32;
}

/* Eight mins, each twice, as 16-bit lanes (madd with the sixteen sums of 16 gives m_j*(S_2j + S_2j+1) per lane j). */
AI __m256i mins_dup8(uint64_t mn) {
    __m128i v = _mm_cvtsi64_si128((long long)mn);
    return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v));
}

/*
 * The min terms of weight rows [0, nr) with every activation row, as QuantDot.kCorrections: per super-block, for 16
 * activation rows at once, ms = sum_j m_j * S_j (exact integers in floats), then corr += (dmin * d_x) * ms.
 * corr[r*bp + c]; MOFF and BYTES: where the 12 scale bytes start and the block size (Q4_K 4/144, Q5_K 4/176).
 */
static void k4_corrections(const uint8_t *w, int64_t stride, int64_t nb, const float *t, int64_t bp, int nr, int bytes,
                           float *corr) {
    const float *dt = t + 8 * nb * bp;
    for (int r = 0; r < nr; r++) {
        for (int64_t c0 = 0; c0 < bp; c0 += 16) {
            __m512 acc = _mm512_setzero_ps();
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *blk = w + r * stride + b * bytes;
                uint64_t sc, mn;
                k4_bytes(blk + 4, &sc, &mn);
                const float *tb = t + 8 * b * bp + c0;
                __m512 ms = _mm512_mul_ps(_mm512_loadu_ps(tb), _mm512_set1_ps((float)(mn & 0xFF)));
                for (int j = 1; j < 8; j++) {
                    ms = _mm512_fmadd_ps(_mm512_loadu_ps(tb + j * bp), _mm512_set1_ps((float)((mn >> (8 * j)) & 0xFF)), ms);
                }
                __m512 dd = _mm512_mul_ps(_mm512_set1_ps(f16_to_f32(rd16(blk + 2))), _mm512_loadu_ps(dt + b * bp + c0));
                acc = _mm512_add_ps(acc, _mm512_mul_ps(dd, ms));
            }
            _mm512_storeu_ps(corr + r * bp + c0, acc);
        }
    }
}

AI void q4_k_ztile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int np, int nc,
                   float *out, int64_t ldo, const float *corr, int64_t bp) {
    __m512 acc[ZP][ZC_MAX];
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i hi8 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(8), 1);
    /* without corr (few activation rows): the min terms per (row, activation), in the same float steps */
    float own[2 * ZP][ZC_MAX];
    UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) {
        acc[p][c] = _mm512_setzero_ps();
        own[2 * p][c] = own[2 * p + 1][c] = 0.0f;
    }
    for (int64_t b = 0; b < nb; b++) {
        __m512 dpair[ZP];
        __m512i scv[ZP];
        __m256i mdup[2 * ZP];
        float dmin[2 * ZP];
        UNROLL for (int p = 0; p < np; p++) {
            const uint8_t *ba = w + 2 * p * stride + b * 144, *bb = ba + stride;
            prefetch_row(ba, 144);
            prefetch_row(bb, 144);
            uint64_t sa, ma, sb, mb;
            k4_bytes(ba + 4, &sa, &ma);
            k4_bytes(bb + 4, &sb, &mb);
            dpair[p] = halves_ps(f16_to_f32(rd16(ba)), f16_to_f32(rd16(bb)));
            scv[p] = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_set_epi64x((long long)sb, (long long)sa)));
            if (!corr) {
                mdup[2 * p] = mins_dup8(ma);
                mdup[2 * p + 1] = mins_dup8(mb);
                dmin[2 * p] = f16_to_f32(rd16(ba + 2));
                dmin[2 * p + 1] = f16_to_f32(rd16(bb + 2));
            }
        }
        __m512i lanes[ZP][ZC_MAX];
        UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) lanes[p][c] = _mm512_setzero_si512();
        for (int k = 0; k < 4; k++) {
            __m512i w0[ZP], w1[ZP], s0[ZP], s1[ZP];
            const __m512i i0 = _mm512_add_epi16(_mm512_set1_epi16((short)(2 * k)), hi8);
            const __m512i i1 = _mm512_add_epi16(_mm512_set1_epi16((short)(2 * k + 1)), hi8);
            UNROLL for (int p = 0; p < np; p++) {
                const uint8_t *ba = w + 2 * p * stride + b * 144 + 16 + 32 * k;
                __m512i raw = pair_order_z(load2(ba, ba + stride));
                w0[p] = _mm512_and_si512(raw, m4);
                w1[p] = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
                s0[p] = _mm512_permutexvar_epi16(i0, scv[p]);
                s1[p] = _mm512_permutexvar_epi16(i1, scv[p]);
            }
            UNROLL for (int c = 0; c < nc; c++) {
                const int8_t *q = x[c * xs + b].q + 64 * k;
                __m512i y0 = bcast32(q), y1 = bcast32(q + 32);
                UNROLL for (int p = 0; p < np; p++) {
                    lanes[p][c] = _mm512_dpwssd_epi32(lanes[p][c], _mm512_maddubs_epi16(w0[p], y0), s0[p]);
                    lanes[p][c] = _mm512_dpwssd_epi32(lanes[p][c], _mm512_maddubs_epi16(w1[p], y1), s1[p]);
                }
            }
        }
        UNROLL for (int c = 0; c < nc; c++) {
            const juno_xqk *xb = x + c * xs + b;
            __m512 dx = _mm512_set1_ps(xb->d);
            UNROLL for (int p = 0; p < np; p++) {
                acc[p][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lanes[p][c]), _mm512_mul_ps(dpair[p], dx), acc[p][c]);
                if (!corr) {
                    __m256i bs = _mm256_loadu_si256((const __m256i *)xb->bsums);
                    UNROLL for (int h = 0; h < 2; h++) {
                        int32_t msum = hsum_i32(_mm256_madd_epi16(bs, mdup[2 * p + h]));
                        own[2 * p + h][c] += dmin[2 * p + h] * xb->d * (float)msum;
                    }
                }
            }
        }
    }
    UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) {
        out[c * ldo + 2 * p] = hsum8_lo(acc[p][c]) - (corr ? corr[2 * p * bp + c] : own[2 * p][c]);
        out[c * ldo + 2 * p + 1] = hsum8_hi(acc[p][c]) - (corr ? corr[(2 * p + 1) * bp + c] : own[2 * p + 1][c]);
    }
}

AI void q6_k_ztile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int np, int nc,
                   float *out, int64_t ldo) {
    __m512 acc[ZP][ZC_MAX];
    const __m512i m4 = _mm512_set1_epi8(0x0F), m3 = _mm512_set1_epi8(3);
    /* word index pattern: quarters take scale 2g, 2g+1 of row a, then of row b (16 words each in scv) */
    const __m512i qidx = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi16(1), _mm_set1_epi16(0))),
        _mm256_set_m128i(_mm_set1_epi16(17), _mm_set1_epi16(16)), 1);
    UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) acc[p][c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        __m512 dpair[ZP];
        __m512i scv[ZP];
        __m512i lanes[ZP][ZC_MAX];
        UNROLL for (int p = 0; p < np; p++) {
            const uint8_t *ba = w + 2 * p * stride + b * 210, *bb = ba + stride;
            prefetch_row(ba, 210);
            prefetch_row(bb, 210);
            dpair[p] = halves_ps(f16_to_f32(rd16(ba + 208)), f16_to_f32(rd16(bb + 208)));
            /* the 16 scales of row a, then row b, as 32 signed 16-bit lanes */
            scv[p] = _mm512_cvtepi8_epi16(_mm256_set_m128i(_mm_loadu_si128((const __m128i *)(bb + 192)),
                                                          _mm_loadu_si128((const __m128i *)(ba + 192))));
            /* for the offset: row a's 16 scales are the low half of scv, row b's the high half */
            __m512i sc16 = scv[p];
            UNROLL for (int c = 0; c < nc; c++) {
                __m512i bs = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)x[c * xs + b].bsums));
                lanes[p][c] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(_mm512_madd_epi16(bs, sc16), 5));
            }
        }
        for (int n = 0; n < 2; n++) {
            for (int k = 0; k < 4; k++) {
                int g = 4 * n + k;
                __m512i u[ZP], sp[ZP];
                const __m512i idx = _mm512_add_epi16(qidx, _mm512_set1_epi16((short)(2 * g)));
                UNROLL for (int p = 0; p < np; p++) {
                    const uint8_t *ba = w + 2 * p * stride + b * 210;
                    const uint8_t *ql = ba + 64 * n + 32 * (k & 1), *qh = ba + 128 + 32 * n;
                    __m512i l = load2(ql, ql + stride);
                    __m512i h = load2(qh, qh + stride);
                    __m512i lo = (k >> 1) ? _mm512_srli_epi16(l, 4) : l;
                    u[p] = _mm512_or_si512(_mm512_and_si512(lo, m4),
                                           _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(h, 2 * k), m3), 4));
                    sp[p] = _mm512_permutexvar_epi16(idx, scv[p]);
                }
                UNROLL for (int c = 0; c < nc; c++) {
                    __m512i y = bcast32(x[c * xs + b].q + 32 * g);
                    UNROLL for (int p = 0; p < np; p++) {
                        lanes[p][c] = _mm512_dpwssd_epi32(lanes[p][c], _mm512_maddubs_epi16(u[p], y), sp[p]);
                    }
                }
            }
        }
        UNROLL for (int c = 0; c < nc; c++) {
            __m512 dx = _mm512_set1_ps(x[c * xs + b].d);
            UNROLL for (int p = 0; p < np; p++) {
                acc[p][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lanes[p][c]), _mm512_mul_ps(dpair[p], dx), acc[p][c]);
            }
        }
    }
    UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) {
        out[c * ldo + 2 * p] = hsum8_lo(acc[p][c]);
        out[c * ldo + 2 * p + 1] = hsum8_hi(acc[p][c]);
    }
}

/*
 * Legacy blocks of two rows as unsigned quants in pair order: q + OFF (Q8_0: q ^ 0x80 = q + 128; Q4_0: the nibbles,
 * q + 8). Each lane's product is then dpbusd(u, y) - OFF * (sum of its four activation quants): the same integer.
 */
AI __m512i q8_0_pair(const uint8_t *a, const uint8_t *b) {
    return _mm512_xor_si512(pair_order_z(load2(a + 2, b + 2)), _mm512_set1_epi8((char)0x80));
}

AI __m512i q4_0_pair(const uint8_t *a, const uint8_t *b) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i v = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)(b + 2)), _mm_loadu_si128((const __m128i *)(a + 2)));
    __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    /* per 128-bit lane (row): unpacklo = lanes 0..3, unpackhi = lanes 4..7 */
    return _mm512_permutex2var_epi64(_mm512_castsi256_si512(_mm256_unpacklo_epi16(lo, hi)),
                                     _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11),
                                     _mm512_castsi256_si512(_mm256_unpackhi_epi16(lo, hi)));
}

#define DEF_LEGACY_Z(NAME, BYTES, PAIR, OFF)                                                                           \
    AI void NAME##_ztile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xq8 *x, int64_t xs, int np, int nc, \
                         float *out, int64_t ldo) {                                                                    \
        __m512 acc[ZP_MAX][ZC_MAX];                                                                                        \
        UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) acc[p][c] = _mm512_setzero_ps();       \
        for (int64_t b = 0; b < nb; b++) {                                                                             \
            __m512i u[ZP_MAX];                                                                                             \
            __m512 dpair[ZP_MAX];                                                                                          \
            UNROLL for (int p = 0; p < np; p++) {                                                                      \
                const uint8_t *ba = w + 2 * p * stride + b * (BYTES), *bb = ba + stride;                               \
                _mm_prefetch((const char *)ba + PF_AHEAD, _MM_HINT_T0);                                                \
                _mm_prefetch((const char *)bb + PF_AHEAD, _MM_HINT_T0);                                                \
                u[p] = PAIR(ba, bb);                                                                                   \
                dpair[p] = halves_ps(f16_to_f32(rd16(ba)), f16_to_f32(rd16(bb)));                                      \
            }                                                                                                          \
            UNROLL for (int c = 0; c < nc; c++) {                                                                      \
                const juno_xq8 *xb = x + c * xs + b;                                                                   \
                __m512i y = bcast32(xb->q);                                                                            \
                __m512 dx = _mm512_set1_ps(xb->d);                                                                     \
                __m512i init = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)xb->off));                   \
                UNROLL for (int p = 0; p < np; p++) {                                                                  \
                    __m512i pd = _mm512_dpbusd_epi32(init, u[p], y);                                                   \
                    acc[p][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pd), _mm512_mul_ps(dpair[p], dx), acc[p][c]);       \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
        UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) {                                      \
            out[c * ldo + 2 * p] = hsum8_lo(acc[p][c]);                                                                \
            out[c * ldo + 2 * p + 1] = hsum8_hi(acc[p][c]);                                                            \
        }                                                                                                              \
    }

DEF_LEGACY_Z(q4_0, 18, q4_0_pair, 8)
DEF_LEGACY_Z(q8_0, 34, q8_0_pair, 0x80)

/* Row pairs through the 512-bit tile, a last odd row through the 256-bit one (the same results). */
#define DEF_ZROWS(NAME, XT, NBDIV, WP)                                                                                   \
    static void NAME##_zrows(const uint8_t *w, int64_t stride, int64_t cols, const XT *x, int64_t batch, float *out,  \
                             int64_t ldo, int64_t r0, int64_t r1) {                                                    \
        int64_t nb = cols / (NBDIV);                                                                                   \
        int64_t r = r0;                                                                                                \
        if (batch >= ZC_WIDE) {                                                                                        \
            for (; r + 2 * (WP) <= r1; r += 2 * (WP)) {                                                                \
                int64_t c = 0;                                                                                         \
                for (; c + ZC_WIDE <= batch; c += ZC_WIDE)                                                             \
                    NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, WP, ZC_WIDE, out + c * ldo + r, ldo);     \
                for (; c + ZC <= batch; c += ZC)                                                                       \
                    NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, WP, ZC, out + c * ldo + r, ldo);          \
                for (; c < batch; c++) NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, WP, 1, out + c * ldo + r, ldo); \
            }                                                                                                          \
        }                                                                                                              \
        for (; r + 2 * ZP <= r1; r += 2 * ZP) {                                                                        \
            int64_t c = 0;                                                                                             \
            for (; c + ZC <= batch; c += ZC)                                                                           \
                NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, ZP, ZC, out + c * ldo + r, ldo);              \
            for (; c < batch; c++) NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, ZP, 1, out + c * ldo + r, ldo); \
        }                                                                                                              \
        for (; r + 2 <= r1; r += 2) {                                                                                  \
            int64_t c = 0;                                                                                             \
            for (; c + ZC <= batch; c += ZC)                                                                           \
                NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, 1, ZC, out + c * ldo + r, ldo);               \
            for (; c < batch; c++) NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, 1, 1, out + c * ldo + r, ldo); \
        }                                                                                                              \
        if (r < r1) NAME##_rows(w, stride, cols, x, batch, out, ldo, r, r1);                                           \
    }

/* Q4_K: per tile of four rows, their min terms with the whole batch first (k4_corrections), then the tiles. */
static void q4_k_zrows(const uint8_t *w, int64_t stride, int64_t cols, const juno_xqk *x, int64_t batch, float *out,
                       int64_t ldo, int64_t r0, int64_t r1) {
    int64_t nb = cols / 256;
    int64_t bp = bpad16(batch);
    const float *t = (const float *)(x + batch * nb);
    float corr[2 * ZP * bp];
    int64_t r = r0;
    for (; r + 2 <= r1;) {
        int np = batch < ZC_WIDE && r + 2 * ZP <= r1 ? ZP : 1;
        /* the vector min terms pay from four activation rows (TinyLlama ffn_gate, one thread: 0.36 ms per-pair vs
           0.56 ms vector at one row) */
        float *cr = batch >= 4 ? corr : NULL;
        if (cr) k4_corrections(w + r * stride, stride, nb, t, bp, 2 * np, 144, corr);
        int64_t c = 0;
        const uint8_t *wr = w + r * stride;
        if (np == ZP) {
            for (; c + ZC <= batch; c += ZC)
                q4_k_ztile(wr, stride, nb, x + c * nb, nb, ZP, ZC, out + c * ldo + r, ldo, cr ? cr + c : NULL, bp);
            for (; c < batch; c++)
                q4_k_ztile(wr, stride, nb, x + c * nb, nb, ZP, 1, out + c * ldo + r, ldo, cr ? cr + c : NULL, bp);
        } else {
            for (; c + ZC_WIDE <= batch; c += ZC_WIDE)
                q4_k_ztile(wr, stride, nb, x + c * nb, nb, 1, ZC_WIDE, out + c * ldo + r, ldo, cr ? cr + c : NULL, bp);
            for (; c + ZC <= batch; c += ZC)
                q4_k_ztile(wr, stride, nb, x + c * nb, nb, 1, ZC, out + c * ldo + r, ldo, cr ? cr + c : NULL, bp);
            for (; c < batch; c++)
                q4_k_ztile(wr, stride, nb, x + c * nb, nb, 1, 1, out + c * ldo + r, ldo, cr ? cr + c : NULL, bp);
        }
        r += 2 * np;
    }
    if (r < r1) q4_k_rows(w, stride, cols, x, batch, out, ldo, r, r1);
}
/* wide tiles: one row pair for the K-quants (their integer lanes fill the registers), two for the legacy types */
DEF_ZROWS(q6_k, juno_xqk, 256, 1)
DEF_ZROWS(q4_0, juno_xq8, 32, 2)
DEF_ZROWS(q8_0, juno_xq8, 32, 2)

/* F32/F16/BF16: one 16-lane accumulator per (row, activation) is CpuBackend.dot's lo/hi pair exactly. */
AI __m512 load_w16(int type, const uint8_t *row, int64_t i) {
    if (type == JUNO_F16) return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 2 * i)));
    if (type == JUNO_BF16)
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(row + 2 * i))), 16));
    return _mm512_loadu_ps((const float *)row + i);
}

#define FZ_R 4
#define FZ_C 6
AI void float_ztile(int type, const uint8_t *w, int64_t stride, int64_t cols, const float *x, int nr, int nc,
                    float *out, int64_t ldo) {
    __m512 acc[FZ_R][FZ_C];
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) acc[r][c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < cols; i += 16) {
        __m512 wv[FZ_R];
        UNROLL for (int r = 0; r < nr; r++) {
            _mm_prefetch((const char *)(w + r * stride) + (type == JUNO_F32 ? 4 : 2) * i + PF_AHEAD, _MM_HINT_T0);
            wv[r] = load_w16(type, w + r * stride, i);
        }
        UNROLL for (int c = 0; c < nc; c++) {
            __m512 xv = _mm512_loadu_ps(x + c * cols + i);
            UNROLL for (int r = 0; r < nr; r++) acc[r][c] = _mm512_fmadd_ps(wv[r], xv, acc[r][c]);
        }
    }
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {
        out[c * ldo + r] = hsum8(_mm256_add_ps(_mm512_castps512_ps256(acc[r][c]), _mm512_extractf32x8_ps(acc[r][c], 1)));
    }
}

#define DEF_FLOAT_ZROWS(NAME, TYPE)                                                                                    \
    static void NAME##_zrows(const uint8_t *w, int64_t stride, int64_t cols, const float *x, int64_t batch,           \
                             float *out, int64_t ldo, int64_t r0, int64_t r1) {                                        \
        int64_t r = r0;                                                                                                \
        for (; r + FZ_R <= r1; r += FZ_R) {                                                                            \
            int64_t c = 0;                                                                                             \
            for (; c + FZ_C <= batch; c += FZ_C)                                                                       \
                float_ztile(TYPE, w + r * stride, stride, cols, x + c * cols, FZ_R, FZ_C, out + c * ldo + r, ldo);     \
            for (; c < batch; c++)                                                                                     \
                float_ztile(TYPE, w + r * stride, stride, cols, x + c * cols, FZ_R, 1, out + c * ldo + r, ldo);        \
        }                                                                                                              \
        for (; r < r1; r++) {                                                                                          \
            int64_t c = 0;                                                                                             \
            for (; c + FZ_C <= batch; c += FZ_C)                                                                       \
                float_ztile(TYPE, w + r * stride, stride, cols, x + c * cols, 1, FZ_C, out + c * ldo + r, ldo);        \
            for (; c < batch; c++)                                                                                     \
                float_ztile(TYPE, w + r * stride, stride, cols, x + c * cols, 1, 1, out + c * ldo + r, ldo);           \
        }                                                                                                              \
    }

DEF_FLOAT_ZROWS(f32, JUNO_F32)
DEF_FLOAT_ZROWS(f16, JUNO_F16)
DEF_FLOAT_ZROWS(bf16, JUNO_BF16)
#endif

/* ---------------------------------------------------------------- attention over an F16 KV cache */

/*
 * s[t] = (sum_i q[i] * K_t[i], summed in i order in floats, products not fused) * scale for from <= t <= to, key t at
 * element off[t] + dim of k: KvCache.dotKey's F16 order exactly; eight positions run side by side.
 */
void FN(attn_scores_f16)(const uint16_t *k, const int64_t *off, int64_t from, int64_t to, int64_t dim, const float *q,
                         int64_t n, float scale, float *s) {
    int64_t t = from;
    for (; t + 8 <= to + 1; t += 8) {
        const uint16_t *kp[8];
        UNROLL for (int j = 0; j < 8; j++) kp[j] = k + off[t + j] + dim;
        /* lane j = position t+j; eight elements of eight positions transposed, then added in element order */
        __m256 acc = _mm256_setzero_ps();
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            __m128i a0 = _mm_unpacklo_epi16(_mm_loadu_si128((const __m128i *)(kp[0] + i)), _mm_loadu_si128((const __m128i *)(kp[1] + i)));
            __m128i a1 = _mm_unpackhi_epi16(_mm_loadu_si128((const __m128i *)(kp[0] + i)), _mm_loadu_si128((const __m128i *)(kp[1] + i)));
            __m128i a2 = _mm_unpacklo_epi16(_mm_loadu_si128((const __m128i *)(kp[2] + i)), _mm_loadu_si128((const __m128i *)(kp[3] + i)));
            __m128i a3 = _mm_unpackhi_epi16(_mm_loadu_si128((const __m128i *)(kp[2] + i)), _mm_loadu_si128((const __m128i *)(kp[3] + i)));
            __m128i a4 = _mm_unpacklo_epi16(_mm_loadu_si128((const __m128i *)(kp[4] + i)), _mm_loadu_si128((const __m128i *)(kp[5] + i)));
            __m128i a5 = _mm_unpackhi_epi16(_mm_loadu_si128((const __m128i *)(kp[4] + i)), _mm_loadu_si128((const __m128i *)(kp[5] + i)));
            __m128i a6 = _mm_unpacklo_epi16(_mm_loadu_si128((const __m128i *)(kp[6] + i)), _mm_loadu_si128((const __m128i *)(kp[7] + i)));
            __m128i a7 = _mm_unpackhi_epi16(_mm_loadu_si128((const __m128i *)(kp[6] + i)), _mm_loadu_si128((const __m128i *)(kp[7] + i)));
            __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
            __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
            __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
            __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
            __m128i c[8];
            c[0] = _mm_unpacklo_epi64(b0, b4);
            c[1] = _mm_unpackhi_epi64(b0, b4);
            c[2] = _mm_unpacklo_epi64(b1, b5);
            c[3] = _mm_unpackhi_epi64(b1, b5);
            c[4] = _mm_unpacklo_epi64(b2, b6);
            c[5] = _mm_unpackhi_epi64(b2, b6);
            c[6] = _mm_unpacklo_epi64(b3, b7);
            c[7] = _mm_unpackhi_epi64(b3, b7);
            UNROLL for (int m = 0; m < 8; m++) acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(q[i + m]), _mm256_cvtph_ps(c[m])));
        }
        float a[8];
        _mm256_storeu_ps(a, acc);
        for (; i < n; i++) {
            UNROLL for (int j = 0; j < 8; j++) a[j] = a[j] + q[i] * f16_to_f32(kp[j][i]);
        }
        UNROLL for (int j = 0; j < 8; j++) s[t + j] = a[j] * scale;
    }
    for (; t <= to; t++) {
        const uint16_t *kp = k + off[t] + dim;
        float a = 0.0f;
        for (int64_t i = 0; i < n; i++) a = a + q[i] * f16_to_f32(kp[i]);
        s[t] = a * scale;
    }
}

/* out[i] = sum over t in order of (s[t] * inv) * V_t[i] (each step out + w*v, not fused): KvCache.addValue's order. */
void FN(attn_values_f16)(const uint16_t *v, const int64_t *off, int64_t from, int64_t to, int64_t dim, const float *s,
                         float inv, float *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = 0.0f;
    for (int64_t t = from; t <= to; t++) {
        const uint16_t *vp = v + off[t] + dim;
        float w = s[t] * inv;
        __m256 wv = _mm256_set1_ps(w);
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(vp + i)));
            _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(out + i), _mm256_mul_ps(wv, x)));
        }
        for (; i < n; i++) out[i] = out[i] + w * f16_to_f32(vp[i]);
    }
}

/* ---------------------------------------------------------------- exported entry points */

/*
 * Quantizes (or rounds) rows [0, rows) of x ([rows][cols]) into xq the way the weight type wants its activations:
 * juno_xq8 blocks, juno_xqk blocks, or floats rounded to F16/BF16 (F32: copied). Returns 0, or -1 for a type it
 * does not know.
 */
int FN(quantize)(int type, const float *x, int64_t rows, int64_t cols, void *xq) {
    int64_t n = rows * cols;
    switch (type) {
    case JUNO_Q4_0: quantize_q8_0(x, n, (juno_xq8 *)xq, 8); return 0;
    case JUNO_Q5_0: quantize_q8_0(x, n, (juno_xq8 *)xq, 16); return 0;
    case JUNO_Q8_0: quantize_q8_0(x, n, (juno_xq8 *)xq, 128); return 0;
    case JUNO_Q4_1: case JUNO_Q5_1: quantize_q8_0(x, n, (juno_xq8 *)xq, 0); return 0;
    case JUNO_Q4_K: case JUNO_Q5_K:
        quantize_q8_k(x, n, (juno_xqk *)xq, 1);
        sums_by_row((const juno_xqk *)xq, rows, cols / 256);
        return 0;
    case JUNO_Q2_K: case JUNO_Q3_K:
        quantize_q8_k(x, n, (juno_xqk *)xq, 1);
        return 0;
    case JUNO_Q6_K:
        quantize_q8_k(x, n, (juno_xqk *)xq, 0);
        return 0;
    case JUNO_F32:
        memcpy(xq, x, (size_t)n * sizeof(float));
        return 0;
    case JUNO_F16: {
        float *y = (float *)xq;
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + i), ROUND_NEAREST)));
        }
        for (; i < n; i++) y[i] = f16_round(x[i]);
        return 0;
    }
    case JUNO_BF16: {
        float *y = (float *)xq;
        for (int64_t i = 0; i < n; i++) y[i] = bf16_round(x[i]);
        return 0;
    }
    default:
        return -1;
    }
}

/*
 * out[b*ldo + r] = dot(weight row r, activation row b) for r0 <= r < r1 and b < batch; weight row r at w + r*stride;
 * xq as quantize() wrote it for this type and cols. Returns 0, or -1 for a type it does not know.
 */
int FN(matmul)(int type, const uint8_t *w, int64_t stride, int64_t cols, const void *xq, int64_t batch, float *out,
               int64_t ldo, int64_t r0, int64_t r1) {
    switch (type) {
#ifdef JUNO_ZMM
    case JUNO_Q4_0: q4_0_zrows(w, stride, cols, (const juno_xq8 *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q8_0: q8_0_zrows(w, stride, cols, (const juno_xq8 *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q4_K: q4_k_zrows(w, stride, cols, (const juno_xqk *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q6_K: q6_k_zrows(w, stride, cols, (const juno_xqk *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_F32: f32_zrows(w, stride, cols, (const float *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_F16: f16_zrows(w, stride, cols, (const float *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_BF16: bf16_zrows(w, stride, cols, (const float *)xq, batch, out, ldo, r0, r1); return 0;
#else
    case JUNO_Q4_0: q4_0_rows(w, stride, cols, (const juno_xq8 *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q8_0: q8_0_rows(w, stride, cols, (const juno_xq8 *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q4_K: q4_k_rows(w, stride, cols, (const juno_xqk *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q6_K: q6_k_rows(w, stride, cols, (const juno_xqk *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_F32: f32_rows(w, stride, cols, (const float *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_F16: f16_rows(w, stride, cols, (const float *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_BF16: bf16_rows(w, stride, cols, (const float *)xq, batch, out, ldo, r0, r1); return 0;
#endif
    case JUNO_Q4_1: q4_1_rows(w, stride, cols, (const juno_xq8 *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q5_0: q5_0_rows(w, stride, cols, (const juno_xq8 *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q5_1: q5_1_rows(w, stride, cols, (const juno_xq8 *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q2_K: q2_k_rows(w, stride, cols, (const juno_xqk *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q3_K: q3_k_rows(w, stride, cols, (const juno_xqk *)xq, batch, out, ldo, r0, r1); return 0;
    case JUNO_Q5_K: q5_k_rows(w, stride, cols, (const juno_xqk *)xq, batch, out, ldo, r0, r1); return 0;
    default: return -1;
    }
}
