/*
 * Shared by every kernel file: helpers, activation quantization, tile shapes and the tile macros.
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
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
AI uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

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

/* ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)): the Java backend's QuantLanes.sum. */
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
 * worker's range are contiguous, so this streams the matrix well ahead of use (the distances measured are in
 * docs/performance.md). Prefetches never fault. Into L2 (T1), not L1: 16 KiB ahead in each row of a tile is more than
 * L1 holds until use, and on Zen 4 the T0 form ran batch-1 Q4_K from DRAM at 9.9 GB/s on one core against 15 with T1
 * (Q6_K 8.3 against 18.7).
 */
#define PF_AHEAD 16384
#define PF_HINT _MM_HINT_T1

AI void prefetch_row(const uint8_t *p, int bytes) {
    for (int i = 0; i < bytes; i += 64) _mm_prefetch((const char *)p + PF_AHEAD + i, PF_HINT);
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
        y[b].osum = -off * sum;
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

/* The sums-by-row entries of activation rows [c0, c1) of the batch; the range that ends the batch zeroes the padding. */
static void sums_by_row(const juno_xqk *x, int64_t batch, int64_t nb, int64_t c0, int64_t c1) {
    int64_t bp = bpad16(batch);
    float *t = (float *)(x + batch * nb);
    for (int64_t c = c0; c < c1; c++) {
        for (int64_t b = 0; b < nb; b++) {
            const juno_xqk *xb = x + c * nb + b;
            for (int j = 0; j < 8; j++) t[(8 * b + j) * bp + c] = (float)(xb->bsums[2 * j] + xb->bsums[2 * j + 1]);
            t[8 * nb * bp + b * bp + c] = xb->d;
        }
    }
    if (c1 == batch) {
        for (int64_t r = 0; r < 9 * nb; r++) {
            for (int64_t c = batch; c < bp; c++) t[r * bp + c] = 0.0f;
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
            TILE_REST_K(batch - c, NAME##_tile(w + r * stride, stride, nb, x + c * nb, nb, TR, NC_, out + c * ldo + r, ldo)) \
        }                                                                                                              \
        for (; r < r1; r++) {                                                                                          \
            int64_t c = 0;                                                                                             \
            for (; c + (TC) <= batch; c += (TC))                                                                       \
                NAME##_tile(w + r * stride, stride, nb, x + c * nb, nb, 1, TC, out + c * ldo + r, ldo);                \
            TILE_REST_K(batch - c, NAME##_tile(w + r * stride, stride, nb, x + c * nb, nb, 1, NC_, out + c * ldo + r, ldo)) \
        }                                                                                                              \
    }

/*
 * The n activation rows left after a batch's whole tiles (n = 1..3, 1..7, 1) as one tile of exactly n rows: the
 * statement runs with the constant NC_ = n, which it passes as the tile's width, so one decode of the weights serves
 * every row left, where a tile of one row each decoded them n times (a micro-batch of 3 rows cost as much as 4, one
 * of 7 as much as 16). The tiles compute every (row, activation) pair alone, so the results are the same bits.
 */
#define TILE_REST_CASE(k, ...) case k: { enum { NC_ = k }; __VA_ARGS__; } break;
#define TILE_REST2(n, ...) switch (n) { TILE_REST_CASE(1, __VA_ARGS__) default: break; }
#define TILE_REST4(n, ...)                                                                                              \
    switch (n) { TILE_REST_CASE(3, __VA_ARGS__) TILE_REST_CASE(2, __VA_ARGS__) TILE_REST_CASE(1, __VA_ARGS__) default: break; }
#define TILE_REST8(n, ...)                                                                                              \
    switch (n) {                                                                                                       \
        TILE_REST_CASE(7, __VA_ARGS__) TILE_REST_CASE(6, __VA_ARGS__) TILE_REST_CASE(5, __VA_ARGS__)                  \
        TILE_REST_CASE(4, __VA_ARGS__) TILE_REST_CASE(3, __VA_ARGS__) TILE_REST_CASE(2, __VA_ARGS__)                  \
        TILE_REST_CASE(1, __VA_ARGS__) default: break;                                                                 \
    }

#if defined(__AVX512VL__)
#define LR 4 /* legacy tile: weight rows */
#define LC 4 /* legacy tile: activation rows */
#define KR 4
#define KC 4
#define TILE_REST_K TILE_REST4 /* the activation rows after whole KC (LC) tiles */
_Static_assert(KC == LC && KC == 4, "TILE_REST_K covers the rows after whole tiles of four");
#else
#define LR 2
#define LC 2
#define KR 1 /* one weight row by four activation rows: the 16 ymm registers hold four accumulators and four lane sums */
#define KC 4
#define TILE_REST_K TILE_REST4
_Static_assert(KC == 4 && LC <= 4, "TILE_REST_K covers the rows after whole tiles of at most four");
#endif

#define UNROLL _Pragma("GCC unroll 8")

/*
 * As Block32Kernel.dotFloat: per block the eight integer lanes, converted and multiply-added with d_w*d_x; the lane sum;
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
                _mm_prefetch((const char *)(w + r * stride + b * (BYTES)) + PF_AHEAD, PF_HINT);                  \
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

/* ---------------------------------------------------------------- K-quants (Q8_K activations) */

/* Scale and min j of a Q4_K/Q5_K super-block's 12 packed bytes (Q4_KKernel.scaleK4/minK4). */
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

/* The packed 6-bit mins of a Q4_K/Q5_K super-block as eight bytes (Q4_KKernel.minsK4). */
AI uint64_t k4_min_bytes(const uint8_t *q) {
    uint32_t u1 = rd32(q + 4), u2 = rd32(q + 8);
    uint32_t mlo = u1 & 0x3f3f3f3fu;
    uint32_t mhi = ((u2 >> 4) & 0x0f0f0f0fu) | ((u1 >> 2) & 0x30303030u);
    return mlo | (uint64_t)mhi << 32;
}

/* The packed 6-bit scales and mins of a Q4_K/Q5_K super-block as eight bytes each (Q4_KKernel.scalesK4/minsK4). */
AI void k4_bytes(const uint8_t *q, uint64_t *sc, uint64_t *mn) {
    uint32_t u0 = rd32(q), u2 = rd32(q + 8);
    *sc = (u0 & 0x3f3f3f3fu) | (uint64_t)((u2 & 0x0f0f0f0fu) | ((u0 >> 2) & 0x30303030u)) << 32;
    *mn = k4_min_bytes(q);
}

/*
 * The same eight scales and mins in vectors, without a scalar per value (k4_bytes: four bytes at a time):
 * *s16 holds scale j as 16-bit lane j of both 128-bit halves (scale_at picks one), *mdup the mins, each twice, as
 * 16-bit lanes (madd with the sixteen sums of 16 gives m_j*(S_2j + S_2j+1)). q: the 12 packed bytes.
 */
AI void k4_scales_vec(const uint8_t *q, __m256i *s16, __m256i *mdup) {
    uint64_t sc, mn;
    k4_bytes(q, &sc, &mn);
    __m128i s = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)sc));
    __m128i m = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)mn));
    *s16 = _mm256_broadcastsi128_si256(s);
    *mdup = _mm256_set_m128i(_mm_unpackhi_epi16(m, m), _mm_unpacklo_epi16(m, m));
}

/* Scale j (a constant once unrolled) of k4_scales_vec's *s16 in every 16-bit lane: one byte shuffle. */
AI __m256i scale_at(__m256i s16, int j) { return _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short)(((2 * j + 1) << 8) | (2 * j)))); }

/*
 * The sixteen Q3_K scales with their -32 (Q3_KKernel.q3kScale's values) as 16-bit lanes, 0..7 in the low 128 bits
 * and 8..15 in the high: the 6-bit fields taken four bytes at a time instead of one scalar each. s: the 12 packed bytes.
 */
AI __m256i q3k_scales_vec(const uint8_t *s) {
    const uint32_t m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
    uint32_t a0 = rd32(s), a1 = rd32(s + 4), t = rd32(s + 8);
    __m128i b = _mm_setr_epi32((int)((a0 & m4) | ((t & m2) << 4)), (int)((a1 & m4) | (((t >> 2) & m2) << 4)),
                               (int)(((a0 >> 4) & m4) | (((t >> 4) & m2) << 4)), (int)(((a1 >> 4) & m4) | (((t >> 6) & m2) << 4)));
    return _mm256_sub_epi16(_mm256_cvtepu8_epi16(b), _mm256_set1_epi16(32));
}

/* Scales 2j and 2j+1 of the four pairs in each 128-bit half of s, alternating per 16-bit lane: the first for even lanes
   (elements < 16 of a pair-order 32), the second for odd (j a constant once unrolled): one byte shuffle. */
AI __m256i scale_pair_in(__m256i s, int j) { return _mm256_shuffle_epi8(s, _mm256_set1_epi32((int)(0x03020100u + 0x04040404u * (uint32_t)j))); }

/*
 * The K-quant kernels: per super-block the eight integer lanes (sub-block scales applied in integers) of every (weight
 * row, activation row) of the tile, converted and multiply-added with d*d_x; the min terms (dmin*d_x)*sum(m_j*S_j)
 * summed apart and subtracted at the end (Q4_KKernel's single-row kernel and the others).
 */
#define K_TILE_BEGIN                                                                                                   \
    __m256 acc[KR][KC];                                                                                                \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) acc[r][c] = _mm256_setzero_ps();

/* K_TILE_BEGIN and the tile's own min terms. */
#define K_TILE_BEGIN_MINS                                                                                              \
    K_TILE_BEGIN                                                                                                       \
    float corr[KR][KC];                                                                                                \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) corr[r][c] = 0.0f;

#define K_LANES_ZERO                                                                                                   \
    __m256i lanes[KR][KC];                                                                                             \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) lanes[r][c] = _mm256_setzero_si256();

/* acc += lanes * (d_r * d_x), per (weight row, activation row) of the tile. */
#define K_ACCUMULATE                                                                                                   \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {                                          \
        acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lanes[r][c]), _mm256_set1_ps(d[r] * x[c * xs + b].d), acc[r][c]); \
    }

/* K_ACCUMULATE and, unless PC holds them already, corr += (dmin_r * d_x) * msum, msum = sum_j m_j * S_j (16-bit madd). */
#define K_ACCUMULATE_MINS(MDUP, PC)                                                                                    \
    K_ACCUMULATE                                                                                                       \
    if (!(PC)) {                                                                                                       \
        UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {                                      \
            const juno_xqk *xb = x + c * xs + b;                                                                       \
            int32_t msum = hsum_i32(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)xb->bsums), MDUP[r]));       \
            corr[r][c] += dmin[r] * xb->d * (float)msum;                                                               \
        }                                                                                                              \
    }

#define K_TILE_END                                                                                                     \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) out[c * ldo + r] = hsum8(acc[r][c]);

/* The lane sum minus the min term: from PC[r*BP + c] (computed for the batch) or the tile's own corr. */
#define K_TILE_END_MINS(PC, BP)                                                                                        \
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {                                          \
        out[c * ldo + r] = hsum8(acc[r][c]) - ((PC) ? (PC)[r * (BP) + c] : corr[r][c]);                                \
    }


