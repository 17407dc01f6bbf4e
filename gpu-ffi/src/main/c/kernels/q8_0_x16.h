/*
 * Q8_0 repacked at load in groups of 16 weight rows (AVX-512 variant only): one vector lane holds one row, as packed
 * Q4_0 (kernels/q4_0_x16.c), with the activations of the stored layout (juno_xq8).
 *
 * Layout: group g (rows 16g..16g+15) starts at g * (cols/32) * Q8X16_BLOCK; per block of 32 columns, the 16 rows' F16
 * scales (32 bytes, row order), then eight chunks of 64 bytes: in chunk L, bytes 4r..4r+3 are row r's quants of
 * activation lane L (pair order: elements 2L, 2L+1, 16+2L, 17+2L) plus 128, unsigned. Rows past the matrix's last
 * are zero (scale 0).
 *
 * Numerics (not the Java backend's lanes; within rounding of them), as packed Q4_0: per row, per block, the exact
 * integer sum over the 32 products, then acc = fma((float)isum, d_w * d_x, acc) from block 0 up. The sum starts from
 * juno_xq8.osum = -128 * (sum of the block's activation quants), which takes the 128 back.
 * Included by juno_cpu.c in the AVX-512 variant, after kernels/q4_0_x16.c.
 */
#define Q8X16_BLOCK 544

/* Rows [0, rows) of Q8_0 weights (row r at w + r*stride, cols a multiple of 32) into groups of 16 at dst. */
static void q8_0_x16_repack(const uint8_t *w, int64_t stride, int64_t rows, int64_t cols, uint8_t *dst) {
    int64_t nb = cols / 32;
    int64_t groups = (rows + X16_ROWS - 1) / X16_ROWS;
    for (int64_t g = 0; g < groups; g++) {
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *o = dst + (g * nb + b) * Q8X16_BLOCK;
            memset(o, 0, Q8X16_BLOCK);
            for (int r = 0; r < X16_ROWS && g * X16_ROWS + r < rows; r++) {
                const uint8_t *blk = w + (g * X16_ROWS + r) * stride + b * 34;
                memcpy(o + 2 * r, blk, 2);
                uint8_t bytes[32];
                __m256i q = pair_order(_mm256_loadu_si256((const __m256i *)(blk + 2)));
                _mm256_storeu_si256((__m256i *)bytes, _mm256_xor_si256(q, _mm256_set1_epi8((char)0x80)));
                for (int l = 0; l < 8; l++) memcpy(o + 32 + 64 * l + 4 * r, bytes + 4 * l, 4);
            }
        }
    }
}

/* One group x nc activation rows: sixteen rows per register, eight lanes of four quants per block. */
AI void q8_0_x16_ztile(const uint8_t *g, int64_t nb, const juno_xq8 *x, int64_t xs, int nc, float *out, int64_t ldo,
                       int n) {
    __m512 acc[8];
    UNROLL for (int c = 0; c < nc; c++) acc[c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t *blk = g + b * Q8X16_BLOCK;
        prefetch_row(blk, Q8X16_BLOCK);
        __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)blk));
        __m512i wq[8];
        UNROLL for (int l = 0; l < 8; l++) wq[l] = _mm512_loadu_si512((const void *)(blk + 32 + 64 * l));
        x16_block(acc, wq, dw, x, xs, b, nc);
    }
    UNROLL for (int c = 0; c < nc; c++) {
        x16_store(out + c * ldo, _mm512_castps512_ps256(acc[c]), _mm512_extractf32x8_ps(acc[c], 1), n);
    }
}

/* As q4_0_x16_rows, for packed Q8_0. */
static void q8_0_x16_rows(const uint8_t *w, int64_t stride, int64_t cols, const juno_xq8 *x, int64_t batch, float *out,
                          int64_t ldo, int64_t r0, int64_t r1) {
    (void)stride;
    int64_t nb = cols / 32;
    for (int64_t r = r0; r < r1; r += X16_ROWS) {
        const uint8_t *g = w + (r / X16_ROWS) * nb * Q8X16_BLOCK;
        int n = r1 - r < X16_ROWS ? (int)(r1 - r) : X16_ROWS;
        int64_t c = 0;
        for (; c + 8 <= batch; c += 8) q8_0_x16_ztile(g, nb, x + c * nb, nb, 8, out + c * ldo + r, ldo, n);
        TILE_REST8(batch - c, q8_0_x16_ztile(g, nb, x + c * nb, nb, NC_, out + c * ldo + r, ldo, n))
    }
}
