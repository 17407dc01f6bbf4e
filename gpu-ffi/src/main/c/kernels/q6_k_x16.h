/*
 * Q6_K in groups of 16 weight rows, one row per 32-bit lane of a 512-bit register, for the AVX-512 variant's vectors:
 * repack(JUNO_Q6_K) writes the weights, quantize_rows(JUNO_Q6_K | JUNO_PACKED) the activations (the stored layout's Q8_K
 * blocks, each block's quants reordered by q6_x16_order), matmul(JUNO_Q6_K | JUNO_PACKED) multiplies them.
 *
 * Numerics: the stored layout's, bit for bit (q6_k_tile, q6_k_ztile, the Java backend's Q6_KKernel), which are
 * ggml's: per weight row m, activation row n and super-block b, eight exact integer lanes, lane p (0..7) holding
 *   I_p = sum_j sc[2j + p/4] * (sum_t u[32j + 4p + t] * q_x[32j + 4p + t])  (j = 0..7, t = 0..3)
 *         - 32 * (sc[2p] * bsum[2p] + sc[2p+1] * bsum[2p+1])
 * (u the unsigned six-bit quant, bsum_s the sum of the activation quants of sub-block s of 16), then
 *   acc_p = fma((float)I_p, d_m * d_x, acc_p),
 * and the result ((acc_0 + acc_4) + (acc_2 + acc_6)) + ((acc_1 + acc_5) + (acc_3 + acc_7)), as hsum8 sums the lanes.
 * llama.cpp's reference logits for Q6_K depend on these lanes (a single integer sum per block, closer to the exact
 * value, moved a pure-Q6_K case 0.06 off them), so the packed form keeps them: each lane p is a register of its own,
 * the 16 rows in its 32-bit lanes. What it saves against the stored tiles is instructions: 3 multiply instructions and
 * a pack per 128 products (the stored tiles: 4), the quants decoded for 8 activation rows, the scales once per group.
 * Included by juno_cpu.c in the AVX-512 variant, after kernels/q4_k_x16.h.
 */

/*
 * Weights: per group of 16 rows (rows past the matrix are zero) and super-block of 256 columns, the size of 16 blocks.
 * Lane p of parts 2J and 2J+1 is two vectors s = 0, 1 of 16 32-bit lanes: lane l the four quants 32j+4p..+3 of row 8s
 * + l/2, part j = 2J + l%2. vpdpbusd sums each lane's four products, vpackssdw puts the two vectors' sums side by side
 * as 16-bit pairs (part 2J, part 2J+1) of one row, and vpdpwssd scales both at once, so the results come in "lane
 * order": 32-bit lane o of a result holds row Q6_ROW(o). Everything per row below is stored in that order.
 */
#define Q6_ROW(o) ((o) % 4 < 2 ? 2 * ((o) / 4) + (o) % 4 : 6 + 2 * ((o) / 4) + (o) % 4)
/* Its inverse: the lane of row m. */
#define Q6_LANE(m) (4 * ((m) % 8 / 2) + 2 * ((m) / 8) + (m) % 2)
typedef struct {
    uint8_t q[4][8][64];  /* [J][p]: vector s=0 in the low nibbles, s=1 in the high */
    uint8_t qh[4][4][64]; /* [J][p/2]: the top two bits of vector s of lane p at bits 2(2(p%2)+s).. */
    int8_t sc[4][2][16][2]; /* [J][h][o]: the scales of sub-blocks 4J+h and 4J+2+h of row Q6_ROW(o) */
    uint16_t d[16];       /* F16 d of row Q6_ROW(o) */
} q6_wblk;

/* Q6_K element e (0..255) of a block (ggml's layout: ql at 0, qh at 128): the unsigned six-bit quant. */
static int q6_quant(const uint8_t *blk, int e) {
    int h = e / 128, k = e % 128 / 32, l = e % 32;
    int ql = blk[64 * h + l + 32 * (k & 1)];
    int low = k < 2 ? ql & 0xF : ql >> 4;
    return low | (blk[128 + 32 * h + l] >> (2 * k) & 3) << 4;
}

/* Rows [0, rows) of Q6_K weights (row r at w + r*stride) into groups of 16 at dst. */
static void q6_x16_repack(const uint8_t *w, int64_t stride, int64_t rows, int64_t cols, uint8_t *dst) {
    int64_t nb = cols / 256;
    q6_wblk *o = (q6_wblk *)dst;
    for (int64_t g = 0; g < (rows + K16_ROWS - 1) / K16_ROWS; g++) {
        for (int64_t b = 0; b < nb; b++, o++) {
            memset(o, 0, sizeof(*o));
            for (int m = 0; m < K16_ROWS && g * K16_ROWS + m < rows; m++) {
                const uint8_t *blk = w + (g * K16_ROWS + m) * stride + b * 210;
                int lane = Q6_LANE(m);
                o->d[lane] = rd16(blk + 208);
                for (int J = 0; J < 4; J++) {
                    for (int h = 0; h < 2; h++) {
                        o->sc[J][h][lane][0] = (int8_t)blk[192 + 4 * J + h];
                        o->sc[J][h][lane][1] = (int8_t)blk[192 + 4 * J + 2 + h];
                    }
                }
                int s = m / 8;
                for (int j = 0; j < 8; j++) {
                    int J = j / 2, l = 2 * (m % 8) + j % 2;
                    for (int p = 0; p < 8; p++) {
                        for (int t = 0; t < 4; t++) {
                            int u = q6_quant(blk, 32 * j + 4 * p + t);
                            o->q[J][p][4 * l + t] |= (uint8_t)((u & 0xF) << (4 * s));
                            o->qh[J][p / 2][4 * l + t] |= (uint8_t)((u >> 4) << (2 * (2 * (p % 2) + s)));
                        }
                    }
                }
            }
        }
    }
}

/* Packed Q6_K's activations: quantize(JUNO_Q6_K)'s blocks with each block's quants reordered, 8 bytes per (J, p):
   quants 64J+4p..+3, then 64J+32+4p..+3 (the two parts' lanes that one vpbroadcastq serves). */
static void q6_x16_order(juno_xqk *y, int64_t blocks) {
    for (int64_t b = 0; b < blocks; b++) {
        int8_t t[256];
        memcpy(t, y[b].q, 256);
        for (int J = 0; J < 4; J++) {
            for (int p = 0; p < 8; p++) {
                memcpy(y[b].q + 8 * (8 * J + p), t + 64 * J + 4 * p, 4);
                memcpy(y[b].q + 8 * (8 * J + p) + 4, t + 64 * J + 32 + 4 * p, 4);
            }
        }
    }
}

/*
 * One group of 16 weight rows x nc activation rows, lane by lane (the definition above): each lane's quants of a pair
 * of parts decoded once for the nc rows; per activation row two vpdpbusd, one vpackssdw (the sums are at most 4 * 63 *
 * 128 in magnitude: no saturation) and one vpdpwssd per 128 products. x: activation row 0's blocks (q6_x16_order), xs
 * blocks apart per row.
 */
AI void q6_x16_tile(const q6_wblk *g, int64_t nb, const juno_xqk *x, int64_t xs, int nc, float *out, int64_t ldo,
                    __mmask16 mask) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m48 = _mm512_set1_epi8(0x30), zero = _mm512_setzero_si512();
    const __mmask32 odd = 0xAAAAAAAAu; /* the high 16-bit half of each 32-bit lane */
    __m512 acc[8][8];
    UNROLL for (int p = 0; p < 8; p++) UNROLL for (int c = 0; c < nc; c++) acc[p][c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const q6_wblk *k = g + b;
        prefetch_row((const uint8_t *)k, (int)sizeof(q6_wblk));
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)k->d));
        for (int h = 0; h < 2; h++) {
            __m512i sp[4];
            UNROLL for (int J = 0; J < 4; J++) sp[J] = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)k->sc[J][h]));
            UNROLL for (int i = 0; i < 4; i++) {
                const int p = 4 * h + i;
                /* (sc[2p], sc[2p+1]) = the low (p even) or high halves of sc[p/2][0] and sc[p/2][1], times -32 */
                const __m512i a = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)k->sc[p / 2][0]));
                const __m512i c1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)k->sc[p / 2][1]));
                const __m512i pair = p % 2 ? _mm512_mask_blend_epi16(odd, _mm512_srli_epi32(a, 16), c1)
                                           : _mm512_mask_blend_epi16(odd, a, _mm512_slli_epi32(c1, 16));
                const __m512i neg = _mm512_sub_epi16(zero, _mm512_slli_epi16(pair, 5));
                __m512i isum[8];
                UNROLL for (int c = 0; c < nc; c++) {
                    const juno_xqk *xb = x + c * xs + b;
                    isum[c] = _mm512_dpwssd_epi32(zero, neg, _mm512_set1_epi32((int)rd32((const uint8_t *)(xb->bsums + 2 * p))));
                }
                UNROLL for (int J = 0; J < 4; J++) {
                    const __m512i v = _mm512_loadu_si512((const void *)k->q[J][p]);
                    const __m512i th = _mm512_loadu_si512((const void *)k->qh[J][p / 2]);
                    /* A | (B & C): the top bits moved to bits 4..5 */
                    const __m512i u0 = _mm512_ternarylogic_epi32(_mm512_and_si512(v, m4), shift16(th, 4 - 4 * (p % 2)), m48, 0xF8);
                    const __m512i u1 = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(v, 4), m4),
                                                                 shift16(th, 2 - 4 * (p % 2)), m48, 0xF8);
                    UNROLL for (int c = 0; c < nc; c++) {
                        const __m512i xv = _mm512_set1_epi64((long long)rd64((const uint8_t *)x[c * xs + b].q + 8 * (8 * J + p)));
                        __m512i s0 = _mm512_dpbusd_epi32(zero, u0, xv);
                        __m512i s1 = _mm512_dpbusd_epi32(zero, u1, xv);
                        isum[c] = _mm512_dpwssd_epi32(isum[c], _mm512_packs_epi32(s0, s1), sp[J]);
                    }
                }
                UNROLL for (int c = 0; c < nc; c++) {
                    acc[p][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(d, _mm512_set1_ps(x[c * xs + b].d)),
                                                acc[p][c]);
                }
            }
        }
    }
    /* lane order back to row order: row r is in lane Q6_LANE(r) */
    const __m512i back = _mm512_setr_epi32(Q6_LANE(0), Q6_LANE(1), Q6_LANE(2), Q6_LANE(3), Q6_LANE(4), Q6_LANE(5),
                                           Q6_LANE(6), Q6_LANE(7), Q6_LANE(8), Q6_LANE(9), Q6_LANE(10), Q6_LANE(11),
                                           Q6_LANE(12), Q6_LANE(13), Q6_LANE(14), Q6_LANE(15));
    UNROLL for (int c = 0; c < nc; c++) {
        __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0][c], acc[4][c]), _mm512_add_ps(acc[2][c], acc[6][c])),
                                 _mm512_add_ps(_mm512_add_ps(acc[1][c], acc[5][c]), _mm512_add_ps(acc[3][c], acc[7][c])));
        _mm512_mask_storeu_ps(out + (int64_t)c * ldo, mask, _mm512_permutexvar_ps(back, s));
    }
}

/*
 * out[n*ldo + m] for weight rows [r0, r1) (r0 a multiple of 16) and activation rows n < batch: w from q6_x16_repack, xq
 * from quantize(JUNO_Q6_K) of the batch. Per group of 16 weight rows, the activation rows in tiles of 8, then one tile
 * of the rows left.
 */
static void q6_x16_rows(const uint8_t *w, int64_t stride, int64_t cols, const void *xq, int64_t batch, float *out,
                        int64_t ldo, int64_t r0, int64_t r1) {
    (void)stride;
    int64_t nb = cols / 256;
    const juno_xqk *x = (const juno_xqk *)xq;
    for (int64_t r = r0; r < r1; r += K16_ROWS) {
        const q6_wblk *g = (const q6_wblk *)w + (r / K16_ROWS) * nb;
        int valid = r1 - r < K16_ROWS ? (int)(r1 - r) : K16_ROWS;
        __mmask16 mask = (__mmask16)((1u << valid) - 1u);
        int64_t c = 0;
        for (; c + 8 <= batch; c += 8) q6_x16_tile(g, nb, x + c * nb, nb, 8, out + c * ldo + r, ldo, mask);
        TILE_REST8(batch - c, q6_x16_tile(g, nb, x + c * nb, nb, NC_, out + c * ldo + r, ldo, mask))
    }
}
