/*
 * Q5_K weights: as Q4_K plus 32 bytes of fifth bits. Uses k4_corrections and DEF_K4_ROWS from q4_k.c.
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
AI void q5_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo, const float *pc, int64_t bp) {
    K_TILE_BEGIN_MINS
    const __m256i m4 = _mm256_set1_epi8(0x0F), h16 = _mm256_set1_epi8(0x10);
    for (int64_t b = 0; b < nb; b++) {
        float d[KR], dmin[KR];
        __m256i s16[KR], mdup[KR], qh[KR];
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 176;
            prefetch_row(blk, 176);
            d[r] = f16_to_f32(rd16(blk));
            dmin[r] = f16_to_f32(rd16(blk + 2));
            k4_scales_vec(blk + 4, &s16[r], &mdup[r]);
            qh[r] = pair_order(_mm256_loadu_si256((const __m256i *)(blk + 16)));
        }
        K_LANES_ZERO
        UNROLL for (int k = 0; k < 4; k++) {
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
                    lanes[r][c] = dot_scaled(lanes[r][c], w0[r], y0, scale_at(s16[r], 2 * k));
                    lanes[r][c] = dot_scaled(lanes[r][c], w1[r], y1, scale_at(s16[r], 2 * k + 1));
                }
            }
        }
        K_ACCUMULATE_MINS(mdup, pc)
    }
    K_TILE_END_MINS(pc, bp)
}

DEF_K4_ROWS(q5_k, 176)
