/*
 * Q4_K in groups of 16 weight rows, one row per 32-bit lane of a 512-bit register: the packed form that the AMX tiles
 * (juno_amx.c) and the AVX-512 VNNI vectors here both take. The AVX-512 variant's repack(JUNO_Q4_K) writes the
 * weights, its quantize_rows(JUNO_Q4_K | JUNO_PACKED) the activations (in groups of 16 rows as well) and its
 * matmul(JUNO_Q4_K | JUNO_PACKED) multiplies them without AMX; juno_amx_matmul_q4_k multiplies the same bytes on tiles.
 * Q5_K packs the same way with its fifth bits after each block (k5_wblk; vectors only), its quants 0..31 in the same
 * products and the same numerics, the activations those of packed Q4_K.
 *
 * Numerics, per weight row m and activation row n (not the Java backend's lanes; within rounding of it, and the same
 * bits from tiles and from vectors, at every batch size):
 *   per super-block b: isum = sum_j sc_j * (sum of the sub-block's 32 products), exact in 32 bits (the activation
 *   quants are stored as q_x + 128; the 128 is taken back as the precomputed 128 * sum_j sc_j * (sum of sub-block j's
 *   weight quants));
 *   acc = fma((float)isum, d_m * d_x, acc);
 *   ms = sum_j S_j * min_j (S_j: sum of the activation quants of sub-block j; exact in floats), in j order;
 *   corr = corr + (dmin_m * d_x) * ms;
 *   result = acc - corr.
 * Included by juno_cpu.c in the AVX-512 variant and by juno_amx.c, after kernels/common.h.
 */
#define K16_ROWS 16

/* Weights: per group of 16 rows (rows past the matrix are zero) and super-block of 256 columns. */
typedef struct {
    uint8_t q[8][4][64]; /* sub-block j, chunk c: byte 4m+t, low nibble q_m[32j+8c+t], high q_m[32j+8c+4+t] */
    uint8_t sc[8][16];   /* 6-bit sub-block scales, [j][m] */
    uint8_t mn[8][16];   /* 6-bit sub-block mins, [j][m] */
    int32_t off[16];     /* 128 * sum_j sc_j * (sum of sub-block j's quants), per m */
    uint16_t d[16];      /* F16 d, per m */
    uint16_t dmin[16];   /* F16 dmin, per m */
} k16_wblk;

/*
 * Q5_K weights: the Q4_K group block of the quants' low four bits (off from the five-bit quants), then their fifth
 * bits: qh[j][4m+t] bit 2c that of q_m[32j+8c+t] (the low nibble of chunk c's byte 4m+t), bit 2c+1 that of
 * q_m[32j+8c+4+t] (its high nibble).
 */
typedef struct {
    k16_wblk k;
    uint8_t qh[8][64];
} k5_wblk;

/* Activations: per group of 16 rows (rows past the batch are zero) and super-block. */
typedef struct {
    uint8_t q[16][256]; /* q_x + 128, natural order, per activation row */
    float d[16];        /* Q8_K scale per row */
    float s[16][8];     /* sum of the quants of each sub-block of 32, per row */
} k16_xblk;

/* Q4_K element e (0..255) of a block: chunk e/64, low nibbles its first 32 elements, high nibbles the next 32. */
static int k16_quant(const uint8_t *blk, int e) {
    const uint8_t *qs = blk + 16 + 32 * (e / 64);
    int i = e % 64;
    return i < 32 ? qs[i] & 0xF : qs[i - 32] >> 4;
}

/* Q5_K element e (0..255) of a block: Q4_K's nibble (from qs at 48) and the fifth bit from qh at 16. */
static int k5_quant(const uint8_t *blk, int e) {
    const uint8_t *qs = blk + 48 + 32 * (e / 64);
    int i = e % 64;
    int low = i < 32 ? qs[i] & 0xF : qs[i - 32] >> 4;
    return low | (blk[16 + (i & 31)] >> (2 * (e / 64) + (i >= 32)) & 1) << 4;
}

/* Rows [0, rows) of Q4_K weights (five = 0) or Q5_K weights (five = 1), row r at w + r*stride, into groups of 16 at dst. */
static void kx_repack(const uint8_t *w, int64_t stride, int64_t rows, int64_t cols, uint8_t *dst, int five) {
    int64_t nb = cols / 256;
    size_t bytes = five ? sizeof(k5_wblk) : sizeof(k16_wblk);
    int64_t in = five ? 176 : 144;
    for (int64_t g = 0; g < (rows + K16_ROWS - 1) / K16_ROWS; g++) {
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *ob = dst + (size_t)(g * nb + b) * bytes;
            k16_wblk *o = (k16_wblk *)ob;
            uint8_t(*qh)[64] = five ? ((k5_wblk *)ob)->qh : NULL;
            memset(ob, 0, bytes);
            for (int m = 0; m < K16_ROWS && g * K16_ROWS + m < rows; m++) {
                const uint8_t *blk = w + (g * K16_ROWS + m) * stride + b * in;
                int32_t sc[8], mn[8];
                scales_k4(blk + 4, sc, mn);
                o->d[m] = rd16(blk);
                o->dmin[m] = rd16(blk + 2);
                int32_t off = 0;
                for (int j = 0; j < 8; j++) {
                    o->sc[j][m] = (uint8_t)sc[j];
                    o->mn[j][m] = (uint8_t)mn[j];
                    int32_t qsum = 0;
                    for (int c = 0; c < 4; c++) {
                        for (int t = 0; t < 4; t++) {
                            int e = 32 * j + 8 * c + t;
                            int lo = five ? k5_quant(blk, e) : k16_quant(blk, e);
                            int hi = five ? k5_quant(blk, e + 4) : k16_quant(blk, e + 4);
                            o->q[j][c][4 * m + t] = (uint8_t)((lo & 0xF) | (hi & 0xF) << 4);
                            if (five) qh[j][4 * m + t] |= (uint8_t)((lo >> 4) << (2 * c) | (hi >> 4) << (2 * c + 1));
                            qsum += lo + hi;
                        }
                    }
                    off += 128 * sc[j] * qsum;
                }
                o->off[m] = off;
            }
        }
    }
}

static void k16_repack(const uint8_t *w, int64_t stride, int64_t rows, int64_t cols, uint8_t *dst) {
    kx_repack(w, stride, rows, cols, dst, 0);
}

static void k5_repack(const uint8_t *w, int64_t stride, int64_t rows, int64_t cols, uint8_t *dst) {
    kx_repack(w, stride, rows, cols, dst, 1);
}

/*
 * Rows [r0, r1) of x ([rows][cols]) quantized to Q8_K (as quantize_q8_k) into their places in the activation groups
 * at xq, as quantizing the whole batch puts them; the range that ends the batch zeroes the last group's padding rows.
 */
static void k16_quantize_rows(const float *x, int64_t rows, int64_t cols, void *xq, int64_t r0, int64_t r1) {
    int64_t nb = cols / 256;
    k16_xblk *o = (k16_xblk *)xq;
    const __m256i bias = _mm256_set1_epi8((char)0x80);
    for (int64_t n = r0; n < r1; n++) {
        for (int64_t b = 0; b < nb; b++) {
            juno_xqk k;
            quantize_q8_k(x + n * cols + b * 256, 256, &k, 0);
            k16_xblk *a = o + (n / K16_ROWS) * nb + b;
            int r = (int)(n % K16_ROWS);
            for (int e = 0; e < 256; e += 32) {
                _mm256_storeu_si256((__m256i *)(a->q[r] + e),
                                    _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(k.q + e)), bias));
            }
            a->d[r] = k.d;
            for (int j = 0; j < 8; j++) a->s[r][j] = (float)(k.bsums[2 * j] + k.bsums[2 * j + 1]);
        }
    }
    if (r1 == rows && rows % K16_ROWS != 0) {
        for (int64_t b = 0; b < nb; b++) {
            k16_xblk *a = o + (rows / K16_ROWS) * nb + b;
            for (int r = (int)(rows % K16_ROWS); r < K16_ROWS; r++) {
                memset(a->q[r], 0, sizeof(a->q[r]));
                a->d[r] = 0.0f;
                memset(a->s[r], 0, sizeof(a->s[r]));
            }
        }
    }
}

/* v shifted left by s bits (right by -s), in 16-bit lanes: a byte's bit 4 comes from its own bits for |s| <= 4 (left) or 3 (right). */
AI __m512i shift16(__m512i v, int s) { return s >= 0 ? _mm512_slli_epi16(v, (unsigned)s) : _mm512_srli_epi16(v, (unsigned)-s); }

/*
 * One group of 16 weight rows x nc activation rows n0..n0+nc-1 of one activation group (vpdpbusd of the unsigned
 * activation quants, broadcast, with the weight quants of 16 rows): the exact isum of every (row, activation) pair
 * per super-block, then the float steps of the definition above. Each weight decode serves the nc rows. g: the
 * group's blocks, bytes apart (k16_wblk, or k5_wblk when five: each quant's fifth bit put in as its bit 4).
 */
AI void kx_tile(const uint8_t *g, size_t bytes, int five, int64_t nb, const k16_xblk *xa, int row0, int nc, float *out,
                int64_t ldo, __mmask16 mask) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i m16 = _mm512_set1_epi8(0x10);
    __m512 acc[8], corr[8];
    UNROLL for (int c = 0; c < nc; c++) acc[c] = corr[c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const k16_wblk *k = (const k16_wblk *)(g + (size_t)b * bytes);
        const k16_xblk *x = xa + b;
        prefetch_row((const uint8_t *)k, (int)bytes);
        __m512i isum[8];
        UNROLL for (int c = 0; c < nc; c++) isum[c] = _mm512_setzero_si512();
        for (int j = 0; j < 8; j++) {
            __m512i wq[8];
            __m512i h = five ? _mm512_loadu_si512((const void *)((const k5_wblk *)k)->qh[j]) : _mm512_setzero_si512();
            UNROLL for (int ch = 0; ch < 4; ch++) {
                __m512i v = _mm512_loadu_si512((const void *)k->q[j][ch]);
                wq[2 * ch] = _mm512_and_si512(v, m4);
                wq[2 * ch + 1] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
                if (five) { /* A | (B & C): the fifth bits (2ch and 2ch+1 of each byte) moved to bit 4 */
                    wq[2 * ch] = _mm512_ternarylogic_epi32(wq[2 * ch], shift16(h, 4 - 2 * ch), m16, 0xF8);
                    wq[2 * ch + 1] = _mm512_ternarylogic_epi32(wq[2 * ch + 1], shift16(h, 3 - 2 * ch), m16, 0xF8);
                }
            }
            __m512i sc = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)k->sc[j]));
            UNROLL for (int c = 0; c < nc; c++) {
                const uint8_t *q = x->q[row0 + c] + 32 * j;
                /* two chains of four: the integer sum is the same in any order */
                __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
                UNROLL for (int ch = 0; ch < 4; ch++) {
                    s0 = _mm512_dpbusd_epi32(s0, _mm512_set1_epi32((int)rd32(q + 8 * ch)), wq[2 * ch]);
                    s1 = _mm512_dpbusd_epi32(s1, _mm512_set1_epi32((int)rd32(q + 8 * ch + 4)), wq[2 * ch + 1]);
                }
                isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(_mm512_add_epi32(s0, s1), sc));
            }
        }
        __m512i off = _mm512_loadu_si512((const void *)k->off);
        __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)k->d));
        __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)k->dmin));
        __m512 mins[8];
        UNROLL for (int j = 0; j < 8; j++) {
            mins[j] = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)k->mn[j])));
        }
        UNROLL for (int c = 0; c < nc; c++) {
            __m512 dx = _mm512_set1_ps(x->d[row0 + c]);
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(isum[c], off)), _mm512_mul_ps(d, dx), acc[c]);
            const float *s = x->s[row0 + c];
            __m512 ms = _mm512_mul_ps(_mm512_set1_ps(s[0]), mins[0]);
            UNROLL for (int j = 1; j < 8; j++) ms = _mm512_fmadd_ps(_mm512_set1_ps(s[j]), mins[j], ms);
            corr[c] = _mm512_add_ps(corr[c], _mm512_mul_ps(_mm512_mul_ps(dmin, dx), ms));
        }
    }
    UNROLL for (int c = 0; c < nc; c++) _mm512_mask_storeu_ps(out + (int64_t)c * ldo, mask, _mm512_sub_ps(acc[c], corr[c]));
}

/*
 * out[n*ldo + m] for weight rows [r0, r1) (r0 a multiple of 16) and activation rows n < batch: w from kx_repack with
 * the same five, xq from k16_quantize_rows of the whole batch. Per group of 16 weight rows, the activation rows in
 * tiles of 8 within each activation group, then one tile of the rows left.
 */
AI void kx_rows(const uint8_t *w, int64_t cols, const void *xq, int64_t batch, float *out, int64_t ldo, int64_t r0,
                int64_t r1, int five) {
    int64_t nb = cols / 256;
    size_t bytes = five ? sizeof(k5_wblk) : sizeof(k16_wblk);
    const k16_xblk *xb = (const k16_xblk *)xq;
    for (int64_t r = r0; r < r1; r += K16_ROWS) {
        const uint8_t *g = w + (size_t)(r / K16_ROWS) * nb * bytes;
        int valid = r1 - r < K16_ROWS ? (int)(r1 - r) : K16_ROWS;
        __mmask16 mask = (__mmask16)((1u << valid) - 1u);
        for (int64_t a = 0; a < batch; a += K16_ROWS) {
            const k16_xblk *xa = xb + (a / K16_ROWS) * nb;
            int na = batch - a < K16_ROWS ? (int)(batch - a) : K16_ROWS;
            int c = 0;
            for (; c + 8 <= na; c += 8) kx_tile(g, bytes, five, nb, xa, c, 8, out + (a + c) * ldo + r, ldo, mask);
            TILE_REST8(na - c, kx_tile(g, bytes, five, nb, xa, c, NC_, out + (a + c) * ldo + r, ldo, mask))
        }
    }
}

static void k16_rows(const uint8_t *w, int64_t stride, int64_t cols, const void *xq, int64_t batch, float *out,
                     int64_t ldo, int64_t r0, int64_t r1) {
    (void)stride;
    kx_rows(w, cols, xq, batch, out, ldo, r0, r1, 0);
}

static void k5_rows(const uint8_t *w, int64_t stride, int64_t cols, const void *xq, int64_t batch, float *out,
                    int64_t ldo, int64_t r0, int64_t r1) {
    (void)stride;
    kx_rows(w, cols, xq, batch, out, ldo, r0, r1, 1);
}
