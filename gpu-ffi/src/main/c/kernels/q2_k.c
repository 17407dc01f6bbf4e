/*
 * Q2_K weights: 16 bytes of 4-bit scales and mins, 64 bytes of 2-bit quants, d, dmin (16 sub-blocks of 16).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
AI void q2_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo) {
    K_TILE_BEGIN_MINS
    for (int64_t b = 0; b < nb; b++) {
        float d[KR], dmin[KR];
        __m256i mins[KR], slo[KR], shi[KR];
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 84;
            prefetch_row(blk, 84);
            d[r] = f16_to_f32(rd16(blk + 80));
            dmin[r] = f16_to_f32(rd16(blk + 82));
            /* the sixteen mins (high nibbles) as 16-bit lanes: madd with the sums of 16 gives m_j*S_j pairs */
            __m128i sm = _mm_loadu_si128((const __m128i *)blk);
            mins[r] = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), _mm_set1_epi8(0x0F)));
            /* and the sixteen scales (low nibbles) likewise, 0..7 and 8..15 each in both 128-bit halves */
            __m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(sm, _mm_set1_epi8(0x0F)));
            slo[r] = _mm256_permute4x64_epi64(sc16, 0x44);
            shi[r] = _mm256_permute4x64_epi64(sc16, 0xEE);
        }
        K_LANES_ZERO
        UNROLL for (int n = 0; n < 2; n++) {
            __m256i raw[KR];
            UNROLL for (int r = 0; r < nr; r++) {
                raw[r] = pair_order(_mm256_loadu_si256((const __m256i *)(w + r * stride + b * 84 + 16 + 32 * n)));
            }
            UNROLL for (int s = 0; s < 4; s++) {
                int g = 4 * n + s;
                __m256i wq[KR], sp[KR];
                UNROLL for (int r = 0; r < nr; r++) {
                    wq[r] = _mm256_and_si256(_mm256_srli_epi16(raw[r], 2 * s), _mm256_set1_epi8(3));
                    sp[r] = scale_pair_in(g < 4 ? slo[r] : shi[r], g & 3);
                }
                UNROLL for (int c = 0; c < nc; c++) {
                    __m256i y = _mm256_loadu_si256((const __m256i *)(x[c * xs + b].q + 32 * g));
                    UNROLL for (int r = 0; r < nr; r++) lanes[r][c] = dot_scaled(lanes[r][c], wq[r], y, sp[r]);
                }
            }
        }
        K_ACCUMULATE_MINS(mins, (const float *)NULL)
    }
    K_TILE_END_MINS((const float *)NULL, 0)
}

DEF_ROWS(q2_k, juno_xqk, 256, KR, KC)
