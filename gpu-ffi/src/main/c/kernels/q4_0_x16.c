/*
 * Q4_0 repacked at load in groups of 16 weight rows (juno_<isa>_repack), so that one vector lane holds one row and a
 * block's whole integer dot sums inside the lane: no lane sum per block, one float multiply-add per 16 rows.
 *
 * Layout: group g (rows 16g..16g+15) starts at g * (cols/32) * X16_BLOCK; per block of 32 columns, the 16 rows' F16
 * scales (32 bytes, row order), then four chunks of 64 bytes. In chunk k, bytes 4r..4r+3 belong to row r: their low
 * nibbles are the row's quants of activation lane 2k (pair order: elements 4k, 4k+1, 16+4k, 17+4k), their high
 * nibbles those of lane 2k+1 (4k+2, 4k+3, 18+4k, 19+4k). Rows past the matrix's last are zero (scale 0).
 *
 * Numerics (not the Java backend's lanes, see juno_cpu.h): per row, per block, the exact integer sum over the 32
 * products, then acc = fma((float)isum, d_w * d_x, acc) from block 0 up. The nibbles are unsigned (q + 8): the sum
 * starts from juno_xq8.osum = -8 * (sum of the block's activation quants).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
#define X16_ROWS 16
#define X16_BLOCK 288

/*
 * Rows [0, rows) of Q4_0 weights (row r at w + r*stride, cols a multiple of 32) into groups of 16 at dst. A block's
 * low nibbles are elements 0..15, its high nibbles 16..31; chunk k's byte t of a row takes lane 2k's element t (low
 * nibble) and lane 2k+1's (high), where lane L's elements are 2L, 2L+1 (low nibbles 2L, 2L+1) and 16+2L, 17+2L (high
 * nibbles 2L, 2L+1): four byte shuffles per block.
 */
static void q4_0_x16_repack(const uint8_t *w, int64_t stride, int64_t rows, int64_t cols, uint8_t *dst) {
    const __m128i m4 = _mm_set1_epi8(0x0F);
    const char Z = (char)0x80; /* a shuffle index that gives 0 */
    /* output byte 4k+t: lane 2k from the low nibbles (t < 2) or high (t >= 2); lane 2k+1 likewise */
    const __m128i lane_even_lo = _mm_setr_epi8(0, 1, Z, Z, 4, 5, Z, Z, 8, 9, Z, Z, 12, 13, Z, Z);
    const __m128i lane_even_hi = _mm_setr_epi8(Z, Z, 0, 1, Z, Z, 4, 5, Z, Z, 8, 9, Z, Z, 12, 13);
    const __m128i lane_odd_lo = _mm_setr_epi8(2, 3, Z, Z, 6, 7, Z, Z, 10, 11, Z, Z, 14, 15, Z, Z);
    const __m128i lane_odd_hi = _mm_setr_epi8(Z, Z, 2, 3, Z, Z, 6, 7, Z, Z, 10, 11, Z, Z, 14, 15);
    int64_t nb = cols / 32;
    int64_t groups = (rows + X16_ROWS - 1) / X16_ROWS;
    for (int64_t g = 0; g < groups; g++) {
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *o = dst + (g * nb + b) * X16_BLOCK;
            memset(o, 0, X16_BLOCK);
            for (int r = 0; r < X16_ROWS && g * X16_ROWS + r < rows; r++) {
                const uint8_t *blk = w + (g * X16_ROWS + r) * stride + b * 18;
                memcpy(o + 2 * r, blk, 2);
                __m128i qs = _mm_loadu_si128((const __m128i *)(blk + 2));
                __m128i lo = _mm_and_si128(qs, m4), hi = _mm_and_si128(_mm_srli_epi16(qs, 4), m4);
                __m128i even = _mm_or_si128(_mm_shuffle_epi8(lo, lane_even_lo), _mm_shuffle_epi8(hi, lane_even_hi));
                __m128i odd = _mm_or_si128(_mm_shuffle_epi8(lo, lane_odd_lo), _mm_shuffle_epi8(hi, lane_odd_hi));
                uint8_t bytes[16];
                _mm_storeu_si128((__m128i *)bytes, _mm_or_si128(even, _mm_slli_epi16(odd, 4)));
                for (int k = 0; k < 4; k++) memcpy(o + 32 + 64 * k + 4 * r, bytes + 4 * k, 4);
            }
        }
    }
}

/* The 16 row results of lanes [0, n) of v (one per row) to out. */
AI void x16_store(float *out, __m256 lo, __m256 hi, int n) {
    if (n == X16_ROWS) {
        _mm256_storeu_ps(out, lo);
        _mm256_storeu_ps(out + 8, hi);
    } else {
        float t[X16_ROWS];
        _mm256_storeu_ps(t, lo);
        _mm256_storeu_ps(t + 8, hi);
        memcpy(out, t, (size_t)n * sizeof(float));
    }
}

#ifdef JUNO_ZMM
/*
 * Block b of nc activation rows (x + c*xs) against the 16 rows of one packed block, the step packed Q4_0 and Q8_0
 * (kernels/q8_0_x16.h) share: wq[L] holds every row's unsigned quants of activation lane L, dw the rows' scales; per
 * activation row the block's whole integer sum from osum, then acc = fma(isum, d_w * d_x, acc).
 */
AI void x16_block(__m512 *acc, const __m512i *wq, __m512 dw, const juno_xq8 *x, int64_t xs, int64_t b, int nc) {
    UNROLL for (int c = 0; c < nc; c++) {
        const juno_xq8 *xb = x + c * xs + b;
        /* two chains of four: the integer sum is the same in any order */
        __m512i s0 = _mm512_set1_epi32(xb->osum), s1 = _mm512_setzero_si512();
        UNROLL for (int l = 0; l < 8; l += 2) {
            s0 = _mm512_dpbusd_epi32(s0, wq[l], _mm512_set1_epi32((int)rd32((const uint8_t *)xb->q + 4 * l)));
            s1 = _mm512_dpbusd_epi32(s1, wq[l + 1], _mm512_set1_epi32((int)rd32((const uint8_t *)xb->q + 4 * l + 4)));
        }
        __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(xb->d));
        acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1)), scale, acc[c]);
    }
}

/* One group x nc activation rows: sixteen rows per register, eight lanes of eight quants per block. */
AI void q4_0_x16_ztile(const uint8_t *g, int64_t nb, const juno_xq8 *x, int64_t xs, int nc, float *out, int64_t ldo,
                       int n) {
    __m512 acc[8];
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    UNROLL for (int c = 0; c < nc; c++) acc[c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = g + b * X16_BLOCK;
        prefetch_row(blk, X16_BLOCK);
        __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)blk));
        __m512i wq[8];
        UNROLL for (int k = 0; k < 4; k++) {
            __m512i raw = _mm512_loadu_si512((const void *)(blk + 32 + 64 * k));
            wq[2 * k] = _mm512_and_si512(raw, m4);
            wq[2 * k + 1] = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
        }
        x16_block(acc, wq, dw, x, xs, b, nc);
    }
    UNROLL for (int c = 0; c < nc; c++) {
        x16_store(out + c * ldo, _mm512_castps512_ps256(acc[c]), _mm512_extractf32x8_ps(acc[c], 1), n);
    }
}
#define X16_TILE(G, NB, X, XS, NC, OUT, LDO, N) q4_0_x16_ztile(G, NB, X, XS, NC, OUT, LDO, N)
#define X16_WIDE 8
#define X16_REST TILE_REST8
#else
/*
 * One group x nc activation rows, 256 bits: eight rows per register, the group's two halves one after the other.
 * Without VNNI the products are summed in 16 bits first (8 vpmaddubsw of at most 2*15*128 per lane: < 2^15).
 */
AI void q4_0_x16_ytile(const uint8_t *g, int64_t nb, const juno_xq8 *x, int64_t xs, int nc, float *out, int64_t ldo,
                       int n) {
    __m256 acc[2][4];
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    UNROLL for (int h = 0; h < 2; h++) UNROLL for (int c = 0; c < nc; c++) acc[h][c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = g + b * X16_BLOCK;
        prefetch_row(blk, X16_BLOCK);
        UNROLL for (int h = 0; h < 2; h++) {
            __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(blk + 16 * h)));
#if defined(__AVXVNNI__)
            __m256i s[4];
            UNROLL for (int c = 0; c < nc; c++) s[c] = _mm256_set1_epi32(x[c * xs + b].osum);
#else
            __m256i s[4];
            UNROLL for (int c = 0; c < nc; c++) s[c] = _mm256_setzero_si256();
#endif
            UNROLL for (int k = 0; k < 4; k++) {
                __m256i raw = _mm256_loadu_si256((const __m256i *)(blk + 32 + 64 * k + 32 * h));
                __m256i lo = _mm256_and_si256(raw, m4), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
                UNROLL for (int c = 0; c < nc; c++) {
                    const uint8_t *q = (const uint8_t *)x[c * xs + b].q + 8 * k;
                    __m256i y0 = _mm256_set1_epi32((int)rd32(q)), y1 = _mm256_set1_epi32((int)rd32(q + 4));
#if defined(__AVXVNNI__)
                    s[c] = _mm256_dpbusd_avx_epi32(s[c], lo, y0);
                    s[c] = _mm256_dpbusd_avx_epi32(s[c], hi, y1);
#else
                    s[c] = _mm256_add_epi16(s[c], _mm256_add_epi16(_mm256_maddubs_epi16(lo, y0), _mm256_maddubs_epi16(hi, y1)));
#endif
                }
            }
            UNROLL for (int c = 0; c < nc; c++) {
                const juno_xq8 *xb = x + c * xs + b;
#if defined(__AVXVNNI__)
                __m256i isum = s[c];
#else
                __m256i isum = _mm256_add_epi32(_mm256_madd_epi16(s[c], _mm256_set1_epi16(1)), _mm256_set1_epi32(xb->osum));
#endif
                __m256 scale = _mm256_mul_ps(dw, _mm256_set1_ps(xb->d));
                acc[h][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), scale, acc[h][c]);
            }
        }
    }
    UNROLL for (int c = 0; c < nc; c++) x16_store(out + c * ldo, acc[0][c], acc[1][c], n);
}
#define X16_TILE(G, NB, X, XS, NC, OUT, LDO, N) q4_0_x16_ytile(G, NB, X, XS, NC, OUT, LDO, N)
#define X16_WIDE 4
#define X16_REST TILE_REST4
#endif

/*
 * Rows [r0, r1) of repacked Q4_0 weights (r0 a multiple of 16; stride unused: groups are dense) with every activation
 * row of the batch: out[c*ldo + r].
 */
static void q4_0_x16_rows(const uint8_t *w, int64_t stride, int64_t cols, const juno_xq8 *x, int64_t batch, float *out,
                          int64_t ldo, int64_t r0, int64_t r1) {
    (void)stride;
    int64_t nb = cols / 32;
    for (int64_t r = r0; r < r1; r += X16_ROWS) {
        const uint8_t *g = w + (r / X16_ROWS) * nb * X16_BLOCK;
        int n = r1 - r < X16_ROWS ? (int)(r1 - r) : X16_ROWS;
        int64_t c = 0;
        for (; c + X16_WIDE <= batch; c += X16_WIDE) X16_TILE(g, nb, x + c * nb, nb, X16_WIDE, out + c * ldo + r, ldo, n);
        X16_REST(batch - c, X16_TILE(g, nb, x + c * nb, nb, NC_, out + c * ldo + r, ldo, n))
    }
}
