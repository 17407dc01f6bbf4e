/*
 * Q6_K weights: 128 bytes of low nibbles, 64 of high bits, 16 signed scales, d (ggml's lanes).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
/* Scales 2j and 2j+1 of the four pairs in each 128-bit half of s: 2j in every 16-bit lane of the low half, 2j+1 of the
   high half (j a constant once unrolled). */
AI __m256i scale_pair_at(__m256i s, int j) {
    return _mm256_shuffle_epi8(s, _mm256_set_m128i(_mm_set1_epi16((short)(((4 * j + 3) << 8) | (4 * j + 2))),
                                                   _mm_set1_epi16((short)(((4 * j + 1) << 8) | (4 * j)))));
}

/* Q6_K in ggml's lanes (natural order): unsigned quants, the -32 taken out with the activation block sums. */
AI void q6_k_tile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int nr, int nc,
                  float *out, int64_t ldo) {
    K_TILE_BEGIN
    const __m256i m4 = _mm256_set1_epi8(0x0F), m3 = _mm256_set1_epi8(3);
    for (int64_t b = 0; b < nb; b++) {
        float d[KR];
        __m256i slo[KR], shi[KR];
        K_LANES_ZERO
        UNROLL for (int r = 0; r < nr; r++) {
            const uint8_t *blk = w + r * stride + b * 210;
            prefetch_row(blk, 210);
            d[r] = f16_to_f32(rd16(blk + 208));
            __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(blk + 192)));
            slo[r] = _mm256_permute4x64_epi64(sc16, 0x44); /* scales 0..7 in both 128-bit halves */
            shi[r] = _mm256_permute4x64_epi64(sc16, 0xEE); /* scales 8..15 */
            UNROLL for (int c = 0; c < nc; c++) {
                /* -32 * (sc_2p*bsum_2p + sc_2p+1*bsum_2p+1) per lane p */
                __m256i bs = _mm256_loadu_si256((const __m256i *)x[c * xs + b].bsums);
                lanes[r][c] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(bs, sc16), 5));
            }
        }
        UNROLL for (int n = 0; n < 2; n++) {
            UNROLL for (int k = 0; k < 4; k++) {
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
                    sp[r] = scale_pair_at(g < 4 ? slo[r] : shi[r], g & 3);
                }
                UNROLL for (int c = 0; c < nc; c++) {
                    __m256i y = _mm256_loadu_si256((const __m256i *)(x[c * xs + b].q + 32 * g));
                    UNROLL for (int r = 0; r < nr; r++) lanes[r][c] = dot_scaled(lanes[r][c], u[r], y, sp[r]);
                }
            }
        }
        K_ACCUMULATE
    }
    K_TILE_END
}

DEF_ROWS(q6_k, juno_xqk, 256, KR, KC)
