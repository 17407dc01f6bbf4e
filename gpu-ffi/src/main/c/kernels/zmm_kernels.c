/*
 * The AVX-512 tiles of Q4_K, Q6_K, Q4_0, Q8_0 and the floats (two weight rows per register).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
#ifdef JUNO_ZMM
_Static_assert(ZP == 2, "q4_k_ztile keeps the min terms of its 2 * ZP = 4 rows in one 128-bit vector");
AI void q4_k_ztile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int np, int nc,
                   float *out, int64_t ldo, const float *corr, int64_t bp) {
    __m512 acc[ZP][ZC_MAX];
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i hi8 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(8), 1);
    /* without corr (few activation rows): the min terms of the tile's 2*np <= 4 rows, one lane each, per activation
       row; each lane adds (dmin * d_x) * msum per block in block order, as the scalar form did */
    __m128 own[ZC_MAX];
    UNROLL for (int c = 0; c < nc; c++) {
        own[c] = _mm_setzero_ps();
        UNROLL for (int p = 0; p < np; p++) acc[p][c] = _mm512_setzero_ps();
    }
    const __m512i first = _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    for (int64_t b = 0; b < nb; b++) {
        __m512 dpair[ZP];
        __m512i scv[ZP];
        uint64_t mins[2 * ZP] = {0};
        /* the rows' dmin as four F16 in one word, built in registers: four 16-bit stores read back as one vector would
           stall on store forwarding */
        uint64_t dm = 0;
        UNROLL for (int p = 0; p < np; p++) {
            const uint8_t *ba = w + 2 * p * stride + b * 144, *bb = ba + stride;
            prefetch_row(ba, 144);
            prefetch_row(bb, 144);
            uint64_t sa, sb;
            k4_bytes(ba + 4, &sa, &mins[2 * p]);
            k4_bytes(bb + 4, &sb, &mins[2 * p + 1]);
            dpair[p] = halves_ps(f16_to_f32(rd16(ba)), f16_to_f32(rd16(bb)));
            scv[p] = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_set_epi64x((long long)sb, (long long)sa)));
            dm |= (uint64_t)rd16(ba + 2) << (32 * p) | (uint64_t)rd16(bb + 2) << (32 * p + 16);
        }
        __m512i lanes[ZP][ZC_MAX];
        UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) lanes[p][c] = _mm512_setzero_si512();
        for (int k = 0; k < 4; k++) {
            __m512i w0[ZP], w1[ZP], s0[ZP], s1[ZP];
            const __m512i i0 = _mm512_add_epi16(_mm512_set1_epi16((short)(2 * k)), hi8);
            const __m512i i1 = _mm512_add_epi16(_mm512_set1_epi16((short)(2 * k + 1)), hi8);
            UNROLL for (int p = 0; p < np; p++) {
                const uint8_t *ba = w + 2 * p * stride + b * 144 + 16 + 32 * k;
                __m512i raw = pair_order_z(load2(ba, ba + stride));
                w0[p] = _mm512_and_si512(raw, m4);
                w1[p] = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
                s0[p] = _mm512_permutexvar_epi16(i0, scv[p]);
                s1[p] = _mm512_permutexvar_epi16(i1, scv[p]);
            }
            UNROLL for (int c = 0; c < nc; c++) {
                const int8_t *q = x[c * xs + b].q + 64 * k;
                __m512i y0 = bcast32(q), y1 = bcast32(q + 32);
                UNROLL for (int p = 0; p < np; p++) {
                    lanes[p][c] = _mm512_dpwssd_epi32(lanes[p][c], _mm512_maddubs_epi16(w0[p], y0), s0[p]);
                    lanes[p][c] = _mm512_dpwssd_epi32(lanes[p][c], _mm512_maddubs_epi16(w1[p], y1), s1[p]);
                }
            }
        }
        /* the rows' eight mins as 16-bit lanes, row i in the i-th 128 bits; dmin of row i in lane i */
        __m512i mz = corr ? _mm512_setzero_si512()
                          : _mm512_cvtepu8_epi16(_mm256_setr_epi64x((long long)mins[0], (long long)mins[1],
                                                                    (long long)mins[2], (long long)mins[3]));
        __m128 dmin4 = corr ? _mm_setzero_ps() : _mm_cvtph_ps(_mm_cvtsi64_si128((long long)dm));
        UNROLL for (int c = 0; c < nc; c++) {
            const juno_xqk *xb = x + c * xs + b;
            __m512 dx = _mm512_set1_ps(xb->d);
            UNROLL for (int p = 0; p < np; p++) {
                acc[p][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lanes[p][c]), _mm512_mul_ps(dpair[p], dx), acc[p][c]);
            }
            if (!corr) {
                /* msum of each row = sum_j m_j * (S_2j + S_2j+1), the same integer as before (sixteen sums times the
                   doubled mins), for the four rows in one vector, reduced within each row's 128 bits */
                __m256i pairs = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)xb->bsums), _mm256_set1_epi16(1));
                __m128i bs = _mm_packs_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
                __m512i t = _mm512_madd_epi16(mz, _mm512_broadcast_i32x4(bs));
                t = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, (_MM_PERM_ENUM)0x4E));
                t = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, (_MM_PERM_ENUM)0xB1));
                __m128 msum = _mm_cvtepi32_ps(_mm512_castsi512_si128(_mm512_permutexvar_epi32(first, t)));
                own[c] = _mm_add_ps(own[c], _mm_mul_ps(_mm_mul_ps(dmin4, _mm_set1_ps(xb->d)), msum));
            }
        }
    }
    UNROLL for (int c = 0; c < nc; c++) {
        float o[4];
        _mm_storeu_ps(o, own[c]);
        UNROLL for (int p = 0; p < np; p++) {
            out[c * ldo + 2 * p] = hsum8_lo(acc[p][c]) - (corr ? corr[2 * p * bp + c] : o[2 * p]);
            out[c * ldo + 2 * p + 1] = hsum8_hi(acc[p][c]) - (corr ? corr[(2 * p + 1) * bp + c] : o[2 * p + 1]);
        }
    }
}

AI void q6_k_ztile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xqk *x, int64_t xs, int np, int nc,
                   float *out, int64_t ldo) {
    __m512 acc[ZP][ZC_MAX];
    const __m512i m4 = _mm512_set1_epi8(0x0F), m3 = _mm512_set1_epi8(3);
    /* word index pattern: quarters take scale 2g, 2g+1 of row a, then of row b (16 words each in scv) */
    const __m512i qidx = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi16(1), _mm_set1_epi16(0))),
        _mm256_set_m128i(_mm_set1_epi16(17), _mm_set1_epi16(16)), 1);
    UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) acc[p][c] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        __m512 dpair[ZP];
        __m512i scv[ZP];
        __m512i lanes[ZP][ZC_MAX];
        UNROLL for (int p = 0; p < np; p++) {
            const uint8_t *ba = w + 2 * p * stride + b * 210, *bb = ba + stride;
            prefetch_row(ba, 210);
            prefetch_row(bb, 210);
            dpair[p] = halves_ps(f16_to_f32(rd16(ba + 208)), f16_to_f32(rd16(bb + 208)));
            /* the 16 scales of row a, then row b, as 32 signed 16-bit lanes */
            scv[p] = _mm512_cvtepi8_epi16(_mm256_set_m128i(_mm_loadu_si128((const __m128i *)(bb + 192)),
                                                          _mm_loadu_si128((const __m128i *)(ba + 192))));
            /* for the offset: row a's 16 scales are the low half of scv, row b's the high half */
            __m512i sc16 = scv[p];
            UNROLL for (int c = 0; c < nc; c++) {
                __m512i bs = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)x[c * xs + b].bsums));
                lanes[p][c] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(_mm512_madd_epi16(bs, sc16), 5));
            }
        }
        for (int n = 0; n < 2; n++) {
            for (int k = 0; k < 4; k++) {
                int g = 4 * n + k;
                __m512i u[ZP], sp[ZP];
                const __m512i idx = _mm512_add_epi16(qidx, _mm512_set1_epi16((short)(2 * g)));
                UNROLL for (int p = 0; p < np; p++) {
                    const uint8_t *ba = w + 2 * p * stride + b * 210;
                    const uint8_t *ql = ba + 64 * n + 32 * (k & 1), *qh = ba + 128 + 32 * n;
                    __m512i l = load2(ql, ql + stride);
                    __m512i h = load2(qh, qh + stride);
                    __m512i lo = (k >> 1) ? _mm512_srli_epi16(l, 4) : l;
                    u[p] = _mm512_or_si512(_mm512_and_si512(lo, m4),
                                           _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(h, 2 * k), m3), 4));
                    sp[p] = _mm512_permutexvar_epi16(idx, scv[p]);
                }
                UNROLL for (int c = 0; c < nc; c++) {
                    __m512i y = bcast32(x[c * xs + b].q + 32 * g);
                    UNROLL for (int p = 0; p < np; p++) {
                        lanes[p][c] = _mm512_dpwssd_epi32(lanes[p][c], _mm512_maddubs_epi16(u[p], y), sp[p]);
                    }
                }
            }
        }
        UNROLL for (int c = 0; c < nc; c++) {
            __m512 dx = _mm512_set1_ps(x[c * xs + b].d);
            UNROLL for (int p = 0; p < np; p++) {
                acc[p][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(lanes[p][c]), _mm512_mul_ps(dpair[p], dx), acc[p][c]);
            }
        }
    }
    UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) {
        out[c * ldo + 2 * p] = hsum8_lo(acc[p][c]);
        out[c * ldo + 2 * p + 1] = hsum8_hi(acc[p][c]);
    }
}

/*
 * Legacy blocks of two rows as unsigned quants in pair order: q + OFF (Q8_0: q ^ 0x80 = q + 128; Q4_0: the nibbles,
 * q + 8). Each lane's product is then dpbusd(u, y) - OFF * (sum of its four activation quants): the same integer.
 */
AI __m512i q8_0_pair(const uint8_t *a, const uint8_t *b) {
    return _mm512_xor_si512(pair_order_z(load2(a + 2, b + 2)), _mm512_set1_epi8((char)0x80));
}

AI __m512i q4_0_pair(const uint8_t *a, const uint8_t *b) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i v = _mm256_set_m128i(_mm_loadu_si128((const __m128i *)(b + 2)), _mm_loadu_si128((const __m128i *)(a + 2)));
    __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
    /* per 128-bit lane (row): unpacklo = lanes 0..3, unpackhi = lanes 4..7 */
    return _mm512_permutex2var_epi64(_mm512_castsi256_si512(_mm256_unpacklo_epi16(lo, hi)),
                                     _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11),
                                     _mm512_castsi256_si512(_mm256_unpackhi_epi16(lo, hi)));
}

#define DEF_LEGACY_Z(NAME, BYTES, PAIR, OFF)                                                                           \
    AI void NAME##_ztile(const uint8_t *w, int64_t stride, int64_t nb, const juno_xq8 *x, int64_t xs, int np, int nc, \
                         float *out, int64_t ldo) {                                                                    \
        __m512 acc[ZP_MAX][ZC_MAX];                                                                                        \
        UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) acc[p][c] = _mm512_setzero_ps();       \
        for (int64_t b = 0; b < nb; b++) {                                                                             \
            __m512i u[ZP_MAX];                                                                                             \
            __m512 dpair[ZP_MAX];                                                                                          \
            UNROLL for (int p = 0; p < np; p++) {                                                                      \
                const uint8_t *ba = w + 2 * p * stride + b * (BYTES), *bb = ba + stride;                               \
                _mm_prefetch((const char *)ba + PF_AHEAD, PF_HINT);                                                     \
                _mm_prefetch((const char *)bb + PF_AHEAD, PF_HINT);                                                     \
                u[p] = PAIR(ba, bb);                                                                                   \
                dpair[p] = halves_ps(f16_to_f32(rd16(ba)), f16_to_f32(rd16(bb)));                                      \
            }                                                                                                          \
            UNROLL for (int c = 0; c < nc; c++) {                                                                      \
                const juno_xq8 *xb = x + c * xs + b;                                                                   \
                __m512i y = bcast32(xb->q);                                                                            \
                __m512 dx = _mm512_set1_ps(xb->d);                                                                     \
                __m512i init = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)xb->off));                   \
                UNROLL for (int p = 0; p < np; p++) {                                                                  \
                    __m512i pd = _mm512_dpbusd_epi32(init, u[p], y);                                                   \
                    acc[p][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pd), _mm512_mul_ps(dpair[p], dx), acc[p][c]);       \
                }                                                                                                      \
            }                                                                                                          \
        }                                                                                                              \
        UNROLL for (int p = 0; p < np; p++) UNROLL for (int c = 0; c < nc; c++) {                                      \
            out[c * ldo + 2 * p] = hsum8_lo(acc[p][c]);                                                                \
            out[c * ldo + 2 * p + 1] = hsum8_hi(acc[p][c]);                                                            \
        }                                                                                                              \
    }

DEF_LEGACY_Z(q4_0, 18, q4_0_pair, 8)
DEF_LEGACY_Z(q8_0, 34, q8_0_pair, 0x80)

/*
 * Row pairs through the 512-bit tile, a last odd row through the 256-bit one (the same results). Batches of more
 * than ZC rows: WP row pairs x eight activation rows, then one tile of the rows left (a batch of 5 to 7 in one tile,
 * each weight decoded once); up to ZC rows: ZP row pairs x all of them.
 */
_Static_assert(ZC == 4 && ZC_WIDE == 8, "the rows after whole tiles go through TILE_REST4 / TILE_REST8");
#define DEF_ZROWS(NAME, XT, NBDIV, WP)                                                                                   \
    static void NAME##_zrows(const uint8_t *w, int64_t stride, int64_t cols, const XT *x, int64_t batch, float *out,  \
                             int64_t ldo, int64_t r0, int64_t r1) {                                                    \
        int64_t nb = cols / (NBDIV);                                                                                   \
        int64_t r = r0;                                                                                                \
        if (batch > ZC) {                                                                                              \
            for (; r + 2 * (WP) <= r1; r += 2 * (WP)) {                                                                \
                int64_t c = 0;                                                                                         \
                for (; c + ZC_WIDE <= batch; c += ZC_WIDE)                                                             \
                    NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, WP, ZC_WIDE, out + c * ldo + r, ldo);     \
                TILE_REST8(batch - c, NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, WP, NC_, out + c * ldo + r, ldo)) \
            }                                                                                                          \
        }                                                                                                              \
        for (; r + 2 * ZP <= r1; r += 2 * ZP) {                                                                        \
            int64_t c = 0;                                                                                             \
            for (; c + ZC <= batch; c += ZC)                                                                           \
                NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, ZP, ZC, out + c * ldo + r, ldo);              \
            TILE_REST4(batch - c, NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, ZP, NC_, out + c * ldo + r, ldo)) \
        }                                                                                                              \
        for (; r + 2 <= r1; r += 2) {                                                                                  \
            int64_t c = 0;                                                                                             \
            for (; c + ZC <= batch; c += ZC)                                                                           \
                NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, 1, ZC, out + c * ldo + r, ldo);               \
            TILE_REST4(batch - c, NAME##_ztile(w + r * stride, stride, nb, x + c * nb, nb, 1, NC_, out + c * ldo + r, ldo)) \
        }                                                                                                              \
        if (r < r1) NAME##_rows(w, stride, cols, x, batch, out, ldo, r, r1);                                           \
    }

/* Q4_K: per tile of four rows, their min terms with the whole batch first (k4_corrections), then the tiles. */
static void q4_k_zrows(const uint8_t *w, int64_t stride, int64_t cols, const juno_xqk *x, int64_t batch, float *out,
                       int64_t ldo, int64_t r0, int64_t r1) {
    int64_t nb = cols / 256;
    int64_t bp = bpad16(batch);
    const float *t = (const float *)(x + batch * nb);
    float corr[2 * ZP * bp];
    int64_t r = r0;
    for (; r + 2 <= r1;) {
        int np = batch < ZC_WIDE && r + 2 * ZP <= r1 ? ZP : 1;
        /* the batch's min terms (k4_corrections, 16 activation rows a vector) pay from eight activation rows; below,
           the tile's own (four weight rows a vector) are cheaper: one core, 2048 x 2048, batch 4 7.55 -> 8.92 GB/s,
           batch 5 +9%, 7 +2% */
        float *cr = batch >= ZC_WIDE ? corr : NULL;
        if (cr) k4_corrections(w + r * stride, stride, nb, t, bp, 2 * np, 144, corr);
        int64_t c = 0;
        const uint8_t *wr = w + r * stride;
        if (np == ZP) {
            for (; c + ZC <= batch; c += ZC)
                q4_k_ztile(wr, stride, nb, x + c * nb, nb, ZP, ZC, out + c * ldo + r, ldo, cr ? cr + c : NULL, bp);
            TILE_REST4(batch - c, q4_k_ztile(wr, stride, nb, x + c * nb, nb, ZP, NC_, out + c * ldo + r, ldo, cr ? cr + c : NULL, bp))
        } else {
            for (; c + ZC_WIDE <= batch; c += ZC_WIDE)
                q4_k_ztile(wr, stride, nb, x + c * nb, nb, 1, ZC_WIDE, out + c * ldo + r, ldo, cr ? cr + c : NULL, bp);
            TILE_REST8(batch - c, q4_k_ztile(wr, stride, nb, x + c * nb, nb, 1, NC_, out + c * ldo + r, ldo, cr ? cr + c : NULL, bp))
        }
        r += 2 * np;
    }
    if (r < r1) q4_k_rows(w, stride, cols, x, batch, out, ldo, r, r1);
}
/* wide tiles: one row pair for the K-quants (their integer lanes fill the registers), two for the legacy types */
DEF_ZROWS(q6_k, juno_xqk, 256, 1)
DEF_ZROWS(q4_0, juno_xq8, 32, 2)
DEF_ZROWS(q8_0, juno_xq8, 32, 2)

/* F32/F16/BF16: one 16-lane accumulator per (row, activation) is CpuBackend.dot's lo/hi pair exactly. */
AI __m512 load_w16(int type, const uint8_t *row, int64_t i) {
    if (type == JUNO_F16) return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 2 * i)));
    if (type == JUNO_BF16)
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(row + 2 * i))), 16));
    return _mm512_loadu_ps((const float *)row + i);
}

#define FZ_R 6
#define FZ_C 4
_Static_assert(FZ_C == 4, "the rows after whole float tiles go through TILE_REST4");
AI void float_ztile(int type, const uint8_t *w, int64_t stride, int64_t cols, const uint8_t *x, int nr, int nc,
                    float *out, int64_t ldo) {
    __m512 acc[FZ_R][FZ_C];
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) acc[r][c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < cols; i += 16) {
        __m512 wv[FZ_R];
        UNROLL for (int r = 0; r < nr; r++) {
            _mm_prefetch((const char *)(w + r * stride) + (type == JUNO_F32 ? 4 : 2) * i + PF_AHEAD, PF_HINT);
            wv[r] = load_w16(type, w + r * stride, i);
        }
        UNROLL for (int c = 0; c < nc; c++) {
            __m512 xv = load_w16(type, x + c * cols * X_BYTES(type), i); /* activations in the weights' format */
            UNROLL for (int r = 0; r < nr; r++) acc[r][c] = _mm512_fmadd_ps(wv[r], xv, acc[r][c]);
        }
    }
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {
        out[c * ldo + r] = hsum8(_mm256_add_ps(_mm512_castps512_ps256(acc[r][c]), _mm512_extractf32x8_ps(acc[r][c], 1)));
    }
}

/*
 * Batches of F16/BF16 weights, blocked so that both operands come from L1 without conversions in the inner loop
 * (vcvtph2ps is two uops on the FMA ports: converting a weight per activation tile and an activation per weight tile
 * costs more than the FMAs): per block of 16 weight rows and chunk of FK_K columns, the rows widened to floats once,
 * each tile of FZ_C activation rows widened once and taken by the four row tiles; the 16-lane accumulators wait in
 * memory between chunks. Every lane still adds its products in column order, so the bits are float_ztile's.
 */
#define FK_K 256
#define FK_ROWS (4 * FZ_R)
#define FK_MIN_BATCH 32

/* One tile's chunk: state holds the accumulators between chunks; on the last chunk the results go to out. */
AI void float_ktile(const float *wk, const float *xk, int nr, int nc, int64_t len, __m512 *state, int first,
                    float *out, int64_t ldo) {
    __m512 acc[FZ_R][FZ_C];
    UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {
        acc[r][c] = first ? _mm512_setzero_ps() : state[r * FZ_C + c];
    }
    for (int64_t i = 0; i < len; i += 16) {
        __m512 wv[FZ_R];
        UNROLL for (int r = 0; r < nr; r++) wv[r] = _mm512_loadu_ps(wk + r * FK_K + i);
        UNROLL for (int c = 0; c < nc; c++) {
            __m512 xv = _mm512_loadu_ps(xk + c * FK_K + i);
            UNROLL for (int r = 0; r < nr; r++) acc[r][c] = _mm512_fmadd_ps(wv[r], xv, acc[r][c]);
        }
    }
    if (out) {
        UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) {
            out[c * ldo + r] = hsum8(_mm256_add_ps(_mm512_castps512_ps256(acc[r][c]), _mm512_extractf32x8_ps(acc[r][c], 1)));
        }
    } else {
        UNROLL for (int r = 0; r < nr; r++) UNROLL for (int c = 0; c < nc; c++) state[r * FZ_C + c] = acc[r][c];
    }
}

/* Elements [k0, k0+len) of n rows of 16-bit values (row i at p + i*stride bytes) as floats at dst (rows FK_K apart). */
AI void widen_chunk(int type, const uint8_t *p, int64_t stride, int n, int64_t k0, int64_t len, float *dst) {
    for (int i = 0; i < n; i++) {
        for (int64_t e = 0; e < len; e += 16) {
            _mm_prefetch((const char *)(p + i * stride) + 2 * (k0 + e + FK_K), _MM_HINT_T0); /* the next chunk */
            _mm512_storeu_ps(dst + i * FK_K + e, load_w16(type, p + i * stride, k0 + e));
        }
    }
}

/*
 * Rows [r0, r1) (r1 - r0 a multiple of FZ_R) with every activation row, blocked as above. Returns 0, or -1 without
 * memory (the caller then runs the unblocked tiles).
 */
AI int float_kblocked(int type, const uint8_t *w, int64_t stride, int64_t cols, const uint8_t *x, int64_t xs,
                      int64_t batch, float *out, int64_t ldo, int64_t r0, int64_t r1) {
    int64_t full = batch / FZ_C, tiles = full + batch % FZ_C; /* tiles of FZ_C activation rows, then single rows */
    __m512 *state = aligned_alloc(64, (size_t)(4 * tiles * FZ_R * FZ_C) * sizeof(__m512));
    float *wk = aligned_alloc(64, (size_t)(FK_ROWS * FK_K) * sizeof(float));
    float *xk = aligned_alloc(64, (size_t)(FZ_C * FK_K) * sizeof(float));
    if (!state || !wk || !xk) {
        free(state);
        free(wk);
        free(xk);
        return -1;
    }
    for (int64_t rb = r0; rb < r1; rb += FK_ROWS) {
        int nrt = (int)((r1 - rb < FK_ROWS ? r1 - rb : FK_ROWS) / FZ_R); /* row tiles in this block */
        for (int64_t k0 = 0; k0 < cols; k0 += FK_K) {
            int64_t len = cols - k0 < FK_K ? cols - k0 : FK_K;
            int first = k0 == 0, last = k0 + len >= cols;
            widen_chunk(type, w + rb * stride, stride, nrt * FZ_R, k0, len, wk);
            for (int64_t t = 0; t < tiles; t++) {
                int64_t c0 = t < full ? t * FZ_C : full * FZ_C + (t - full);
                int nc = t < full ? FZ_C : 1;
                widen_chunk(type, x + c0 * xs, xs, nc, k0, len, xk);
                for (int rt = 0; rt < nrt; rt++) {
                    __m512 *st = state + (rt * tiles + t) * FZ_R * FZ_C;
                    float *o = last ? out + c0 * ldo + rb + rt * FZ_R : NULL;
                    if (nc == FZ_C) float_ktile(wk + rt * FZ_R * FK_K, xk, FZ_R, FZ_C, len, st, first, o, ldo);
                    else float_ktile(wk + rt * FZ_R * FK_K, xk, FZ_R, 1, len, st, first, o, ldo);
                }
            }
        }
    }
    free(state);
    free(wk);
    free(xk);
    return 0;
}

#define DEF_FLOAT_ZROWS(NAME, TYPE)                                                                                    \
    static void NAME##_zrows(const uint8_t *w, int64_t stride, int64_t cols, const void *xv, int64_t batch,           \
                             float *out, int64_t ldo, int64_t r0, int64_t r1) {                                        \
        const uint8_t *x = (const uint8_t *)xv;                                                                        \
        const int64_t xs = cols * X_BYTES(TYPE);                                                                       \
        int64_t r = r0;                                                                                                \
        int64_t rk = r0 + (r1 - r0) / FZ_R * FZ_R;                                                                     \
        if ((TYPE) != JUNO_F32 && batch >= FK_MIN_BATCH && rk > r0                                                     \
                && float_kblocked(TYPE, w, stride, cols, x, xs, batch, out, ldo, r0, rk) == 0) {                        \
            r = rk;                                                                                                    \
        }                                                                                                              \
        for (; r + FZ_R <= r1; r += FZ_R) {                                                                            \
            int64_t c = 0;                                                                                             \
            for (; c + FZ_C <= batch; c += FZ_C)                                                                       \
                float_ztile(TYPE, w + r * stride, stride, cols, x + c * xs, FZ_R, FZ_C, out + c * ldo + r, ldo);     \
            TILE_REST4(batch - c, float_ztile(TYPE, w + r * stride, stride, cols, x + c * xs, FZ_R, NC_, out + c * ldo + r, ldo)) \
        }                                                                                                              \
        for (; r < r1; r++) {                                                                                          \
            int64_t c = 0;                                                                                             \
            for (; c + FZ_C <= batch; c += FZ_C)                                                                       \
                float_ztile(TYPE, w + r * stride, stride, cols, x + c * xs, 1, FZ_C, out + c * ldo + r, ldo);        \
            TILE_REST4(batch - c, float_ztile(TYPE, w + r * stride, stride, cols, x + c * xs, 1, NC_, out + c * ldo + r, ldo)) \
        }                                                                                                              \
    }

DEF_FLOAT_ZROWS(f32, JUNO_F32)
DEF_FLOAT_ZROWS(f16, JUNO_F16)
DEF_FLOAT_ZROWS(bf16, JUNO_BF16)
#endif
