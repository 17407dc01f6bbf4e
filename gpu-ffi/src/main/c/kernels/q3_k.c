/*
 * Q3_K weights: 32 bytes of high bits, 64 of 2-bit quants, 12 of 6-bit scales, d (16 sub-blocks of 16).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
AI void q3_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo) {
    K_TILE_BEGIN
    for (int64_t b = 0; b < nb; b++) {
        float d[KR];
        __m256i slo[KR], shi[KR], hm[KR];
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 110;
            prefetch_row(blk, 110);
            d[r] = f16_to_f32(rd16(blk + 108));
            __m256i sc16 = q3k_scales_vec(blk + 96);
            slo[r] = _mm256_permute4x64_epi64(sc16, 0x44); /* scales 0..7 in both 128-bit halves */
            shi[r] = _mm256_permute4x64_epi64(sc16, 0xEE); /* scales 8..15 */
            hm[r] = pair_order(_mm256_loadu_si256((const __m256i *)blk));
        }
        K_LANES_ZERO
        UNROLL for (int n = 0; n < 2; n++) {
            __m256i raw[KR];
            UNROLL for (int r = 0; r < nr; r++) {
                raw[r] = pair_order(_mm256_loadu_si256((const __m256i *)(w + r * stride + b * 110 + 32 + 32 * n)));
            }
            UNROLL for (int s = 0; s < 4; s++) {
                int g = 4 * n + s;
                const __m256i bit = _mm256_set1_epi8((char)(1 << g));
                __m256i q[KR], u[KR], sp[KR];
                UNROLL for (int r = 0; r < nr; r++) {
                    __m256i low = _mm256_and_si256(_mm256_srli_epi16(raw[r], 2 * s), _mm256_set1_epi8(3));
                    /* minus 4 where the high bit is clear */
                    __m256i clear = _mm256_andnot_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hm[r], bit), bit), _mm256_set1_epi8(4));
                    q[r] = _mm256_sub_epi8(low, clear);
                    u[r] = _mm256_sign_epi8(q[r], q[r]);
                    sp[r] = scale_pair_in(g < 4 ? slo[r] : shi[r], g & 3);
                }
                UNROLL for (int c = 0; c < nc; c++) {
                    __m256i y = _mm256_loadu_si256((const __m256i *)(x[c * xs + b].q + 32 * g));
                    UNROLL for (int r = 0; r < nr; r++) {
                        lanes[r][c] = dot_scaled(lanes[r][c], u[r], _mm256_sign_epi8(y, q[r]), sp[r]);
                    }
                }
            }
        }
        K_ACCUMULATE
    }
    K_TILE_END
}

DEF_ROWS(q3_k, juno_xqk, 256, KR, KC)
