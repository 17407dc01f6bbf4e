/*
 * Q4_K weights: d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles (8 sub-blocks of 32).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
AI void q4_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo, const float *pc, int64_t bp) {
    K_TILE_BEGIN_MINS
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int64_t b = 0; b < nb; b++) {
        float d[KR], dmin[KR];
        __m256i s16[KR], mdup[KR];
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 144;
            prefetch_row(blk, 144);
            d[r] = f16_to_f32(rd16(blk));
            dmin[r] = f16_to_f32(rd16(blk + 2));
            k4_scales_vec(blk + 4, &s16[r], &mdup[r]);
        }
        K_LANES_ZERO
        UNROLL for (int k = 0; k < 4; k++) {
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
                    lanes[r][c] = dot_scaled(lanes[r][c], w0[r], y0, scale_at(s16[r], 2 * k));
                    lanes[r][c] = dot_scaled(lanes[r][c], w1[r], y1, scale_at(s16[r], 2 * k + 1));
                }
            }
        }
        K_ACCUMULATE_MINS(mdup, pc)
    }
    K_TILE_END_MINS(pc, bp)
}

/* The vectors of the min-term pre-pass: 16 activation rows at once where the variant has 512-bit registers. */
#if defined(__AVX512F__)
#define MT_W 16
#define mt_vec __m512
#define mt_load _mm512_loadu_ps
#define mt_set1 _mm512_set1_ps
#define mt_mul _mm512_mul_ps
#define mt_add _mm512_add_ps
#define mt_fmadd _mm512_fmadd_ps
#define mt_store _mm512_storeu_ps
#define mt_zero _mm512_setzero_ps
#else
#define MT_W 8
#define mt_vec __m256
#define mt_load _mm256_loadu_ps
#define mt_set1 _mm256_set1_ps
#define mt_mul _mm256_mul_ps
#define mt_add _mm256_add_ps
#define mt_fmadd _mm256_fmadd_ps
#define mt_store _mm256_storeu_ps
#define mt_zero _mm256_setzero_ps
#endif

/*
 * The min terms of weight rows [0, nr) (Q4_K/Q5_K, BYTES per block) with every activation row, as
 * SuperBlockKernel.kCorrections: per super-block for MT_W activation rows at once, ms = sum_j m_j * S_j (exact integers in
 * floats), then corr += (dmin * d_x) * ms; corr[r*bp + c]. t: the sums by activation row (sums_by_row).
 */
static void k4_corrections(const uint8_t *w, int64_t stride, int64_t nb, const float *t, int64_t bp, int nr, int bytes,
                           float *corr) {
    const float *dt = t + 8 * nb * bp;
    for (int r = 0; r < nr; r++) {
        float *cr = corr + r * bp;
        /* super-blocks outer, so each block's mins are decoded once for the whole batch; every lane still adds its
           terms in block order */
        for (int64_t c0 = 0; c0 < bp; c0 += MT_W) mt_store(cr + c0, mt_zero());
        for (int64_t b = 0; b < nb; b++) {
            const uint8_t *blk = w + r * stride + b * bytes;
            uint64_t mn = k4_min_bytes(blk + 4);
            mt_vec m[8];
            for (int j = 0; j < 8; j++) m[j] = mt_set1((float)((mn >> (8 * j)) & 0xFF));
            mt_vec dmin = mt_set1(f16_to_f32(rd16(blk + 2)));
            const float *tb = t + 8 * b * bp;
            for (int64_t c0 = 0; c0 < bp; c0 += MT_W) {
                mt_vec ms = mt_mul(mt_load(tb + c0), m[0]);
                for (int j = 1; j < 8; j++) ms = mt_fmadd(mt_load(tb + j * bp + c0), m[j], ms);
                mt_vec dd = mt_mul(dmin, mt_load(dt + b * bp + c0));
                mt_store(cr + c0, mt_add(mt_load(cr + c0), mt_mul(dd, ms)));
            }
        }
    }
}

/* From this batch on, a tile of Q4_K/Q5_K takes its min terms from k4_corrections (computed for 8 or 16 activation rows
   at once) instead of one vector sum per block; with the 256-bit variants' tiles of one weight row that pays from 8
   activation rows (measured: 4 to 7 rows ran 5-15% slower with it). */
#if defined(__AVX512VL__)
#define K4_PC_FROM 4
#else
#define K4_PC_FROM 8
#endif

/* Q4_K/Q5_K rows: per tile of KR rows, from K4_PC_FROM activation rows their min terms with the whole batch first. */
#define DEF_K4_ROWS(NAME, BYTES)                                                                                       \
    static void NAME##_rows(const uint8_t *w, int64_t stride, int64_t cols, const juno_xqk *x, int64_t batch,         \
                            float *out, int64_t ldo, int64_t r0, int64_t r1) {                                         \
        int64_t nb = cols / 256;                                                                                       \
        int64_t bp = bpad16(batch);                                                                                    \
        const float *t = (const float *)(x + batch * nb);                                                              \
        float corr[KR * bp];                                                                                           \
        for (int64_t r = r0; r < r1;) {                                                                                \
            int nr = r + KR <= r1 ? KR : 1;                                                                            \
            const float *pc = batch >= K4_PC_FROM ? corr : NULL;                                                       \
            if (pc) k4_corrections(w + r * stride, stride, nb, t, bp, nr, BYTES, corr);                              \
            int64_t c = 0;                                                                                             \
            const uint8_t *wr = w + r * stride;                                                                        \
            if (nr == KR) {                                                                                            \
                for (; c + KC <= batch; c += KC)                                                                       \
                    NAME##_tile(wr, stride, nb, x + c * nb, nb, KR, KC, out + c * ldo + r, ldo, pc ? pc + c : NULL, bp); \
                TILE_REST_K(batch - c, NAME##_tile(wr, stride, nb, x + c * nb, nb, KR, NC_, out + c * ldo + r, ldo, pc ? pc + c : NULL, bp)) \
            } else {                                                                                                   \
                for (; c + KC <= batch; c += KC)                                                                       \
                    NAME##_tile(wr, stride, nb, x + c * nb, nb, 1, KC, out + c * ldo + r, ldo, pc ? pc + c : NULL, bp); \
                TILE_REST_K(batch - c, NAME##_tile(wr, stride, nb, x + c * nb, nb, 1, NC_, out + c * ldo + r, ldo, pc ? pc + c : NULL, bp)) \
            }                                                                                                          \
            r += nr;                                                                                                   \
        }                                                                                                              \
    }

DEF_K4_ROWS(q4_k, 144)
