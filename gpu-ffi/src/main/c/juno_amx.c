/*
 * Q4_K products on Intel AMX (tile registers, TDPBUSD), built apart from the other variants (-mamx-tile -mamx-int8 on
 * top of AVX-512) so that a compiler or CPU without AMX only loses this file. NativeKernels binds juno_amx_* where the
 * library has them, the CPU reports AMX and the OS grants the tile state (juno_amx_enable), and uses them for Q4_K
 * weights the backend repacked (juno_amx_repack_q4_k) at every batch size, so a row's result never depends on its
 * batch mates.
 *
 * Orientation: the activations are the A tile (up to 16 activation rows x 32 quants of one sub-block, as unsigned
 * bytes q_x + 128), the weights the B tile (8 rows of 16 weight rows x 4 quants), so C holds one activation row per
 * tile row and one weight row per 32-bit lane: C[n][m] = sum over the sub-block of (q_x + 128) * q_w.
 *
 * Numerics, per weight row m and activation row n (not the Java backend's lanes; within rounding of it):
 *   per super-block b: isum = sum_j sc_j * (sum of the sub-block's 32 products), exact in 32 bits (the +128 is taken
 *   back as the precomputed 128 * sum_j sc_j * (sum of sub-block j's weight quants));
 *   acc = fma((float)isum, d_m * d_x, acc);
 *   ms = sum_j S_j * min_j (S_j: sum of the activation quants of sub-block j; exact in floats), in j order;
 *   corr = corr + (dmin_m * d_x) * ms;
 *   result = acc - corr.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "juno_cpu.h"

#define JUNO_ISA amx
#include "kernels/common.h"

/* ---------------------------------------------------------------- layouts */

/* Weights: per group of 16 rows (rows past the matrix are zero) and super-block of 256 columns. */
typedef struct {
    uint8_t q[8][4][64]; /* sub-block j, chunk c: byte 4m+t, low nibble q_m[32j+8c+t], high q_m[32j+8c+4+t] */
    uint8_t sc[8][16];   /* 6-bit sub-block scales, [j][m] */
    uint8_t mn[8][16];   /* 6-bit sub-block mins, [j][m] */
    int32_t off[16];     /* 128 * sum_j sc_j * (sum of sub-block j's quants), per m */
    uint16_t d[16];      /* F16 d, per m */
    uint16_t dmin[16];   /* F16 dmin, per m */
} amx_wblk;

/* Activations: per group of 16 rows (rows past the batch are zero) and super-block. */
typedef struct {
    uint8_t q[16][256]; /* q_x + 128, natural order, per activation row */
    float d[16];        /* Q8_K scale per row */
    float s[16][8];     /* sum of the quants of each sub-block of 32, per row */
} amx_xblk;

#define AMX_ROWS 16

/* ---------------------------------------------------------------- setup */

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

/* Asks Linux for the tile state (once per process). Returns 0 when AMX may be used. */
int juno_amx_enable(void) {
#if defined(__linux__)
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 ? 0 : -1;
#else
    return -1;
#endif
}

/* Bytes of the repacked weights and of the activations, for the Java side's checks. */
int64_t juno_amx_q4_k_weight_bytes(int64_t rows, int64_t cols) {
    return (rows + AMX_ROWS - 1) / AMX_ROWS * (cols / 256) * (int64_t)sizeof(amx_wblk);
}

int64_t juno_amx_q4_k_activation_bytes(int64_t rows, int64_t cols) {
    return (rows + AMX_ROWS - 1) / AMX_ROWS * (cols / 256) * (int64_t)sizeof(amx_xblk);
}

/* Q4_K element e (0..255) of a block: chunk e/64, low nibbles its first 32 elements, high nibbles the next 32. */
static int q4_k_quant(const uint8_t *blk, int e) {
    const uint8_t *qs = blk + 16 + 32 * (e / 64);
    int i = e % 64;
    return i < 32 ? qs[i] & 0xF : qs[i - 32] >> 4;
}

/* Rows [0, rows) of Q4_K weights (row r at w + r*stride) into groups of 16 at dst. */
int juno_amx_repack_q4_k(const uint8_t *w, int64_t stride, int64_t rows, int64_t cols, uint8_t *dst) {
    int64_t nb = cols / 256;
    amx_wblk *o = (amx_wblk *)dst;
    for (int64_t g = 0; g < (rows + AMX_ROWS - 1) / AMX_ROWS; g++) {
        for (int64_t b = 0; b < nb; b++, o++) {
            memset(o, 0, sizeof(*o));
            for (int m = 0; m < AMX_ROWS && g * AMX_ROWS + m < rows; m++) {
                const uint8_t *blk = w + (g * AMX_ROWS + m) * stride + b * 144;
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
                            int lo = q4_k_quant(blk, 32 * j + 8 * c + t), hi = q4_k_quant(blk, 32 * j + 8 * c + 4 + t);
                            o->q[j][c][4 * m + t] = (uint8_t)(lo | hi << 4);
                            qsum += lo + hi;
                        }
                    }
                    off += 128 * sc[j] * qsum;
                }
                o->off[m] = off;
            }
        }
    }
    return 0;
}

/* Rows [0, rows) of x ([rows][cols]) quantized to Q8_K (as quantize_q8_k) into the activation groups at xq. */
int juno_amx_quantize_q4_k(const float *x, int64_t rows, int64_t cols, void *xq) {
    int64_t nb = cols / 256;
    int64_t groups = (rows + AMX_ROWS - 1) / AMX_ROWS;
    amx_xblk *o = (amx_xblk *)xq;
    memset(o, 0, (size_t)(groups * nb) * sizeof(amx_xblk));
    for (int64_t n = 0; n < rows; n++) {
        for (int64_t b = 0; b < nb; b++) {
            juno_xqk k;
            quantize_q8_k(x + n * cols + b * 256, 256, &k, 0);
            amx_xblk *a = o + (n / AMX_ROWS) * nb + b;
            int r = (int)(n % AMX_ROWS);
            for (int e = 0; e < 256; e++) a->q[r][e] = (uint8_t)(k.q[e] + 128);
            a->d[r] = k.d;
            for (int j = 0; j < 8; j++) a->s[r][j] = (float)(k.bsums[2 * j] + k.bsums[2 * j + 1]);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- the product */

typedef struct {
    uint8_t palette, start;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

/* Tiles: 0 = C (nr rows of 16 int32), 1 = A (nr activation rows of 32 bytes), 2 = B (8 rows of 64 bytes). */
static void configure(int nr) {
    tile_config c;
    memset(&c, 0, sizeof(c));
    c.palette = 1;
    c.rows[0] = (uint8_t)nr;
    c.colsb[0] = 64;
    c.rows[1] = (uint8_t)nr;
    c.colsb[1] = 32;
    c.rows[2] = 8;
    c.colsb[2] = 64;
    _tile_loadconfig(&c);
}

/*
 * The same numbers without tiles, for few activation rows (a tile of one row does 1/16 of its work): sixteen weight
 * rows per 512-bit register, vpdpbusd of the unsigned weight quants with each activation dword, the same exact isum
 * and the same float steps.
 */
static void q4_k_rows_vnni(const amx_wblk *g, int64_t nb, const amx_xblk *xb, int64_t batch, float *out, int64_t ldo,
                           int64_t r, int64_t valid) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __mmask16 mask = (__mmask16)((1u << valid) - 1u);
    for (int64_t n = 0; n < batch; n++) {
        const amx_xblk *xa = xb + (n / AMX_ROWS) * nb;
        int row = (int)(n % AMX_ROWS);
        __m512 acc = _mm512_setzero_ps(), corr = _mm512_setzero_ps();
        for (int64_t b = 0; b < nb; b++) {
            const amx_wblk *k = g + b;
            const amx_xblk *x = xa + b;
            prefetch_row((const uint8_t *)k, (int)sizeof(amx_wblk));
            const uint8_t *q = x->q[row];
            __m512i isum = _mm512_setzero_si512();
            for (int j = 0; j < 8; j++) {
                __m512i dot0 = _mm512_setzero_si512(), dot1 = _mm512_setzero_si512();
                for (int c = 0; c < 4; c++) {
                    __m512i v = _mm512_loadu_si512((const void *)k->q[j][c]);
                    /* the activation quants back to signed: (q + 128) ^ 0x80 */
                    int32_t lo = (int32_t)(rd32(q + 32 * j + 8 * c) ^ 0x80808080u);
                    int32_t hi = (int32_t)(rd32(q + 32 * j + 8 * c + 4) ^ 0x80808080u);
                    dot0 = _mm512_dpbusd_epi32(dot0, _mm512_and_si512(v, m4), _mm512_set1_epi32(lo));
                    dot1 = _mm512_dpbusd_epi32(dot1, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4), _mm512_set1_epi32(hi));
                }
                __m512i sc = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)k->sc[j]));
                isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(_mm512_add_epi32(dot0, dot1), sc));
            }
            __m512 dx = _mm512_set1_ps(x->d[row]);
            __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)k->d));
            __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)k->dmin));
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(d, dx), acc);
            __m512 ms = _mm512_mul_ps(_mm512_set1_ps(x->s[row][0]),
                                      _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)k->mn[0]))));
            for (int j = 1; j < 8; j++) {
                ms = _mm512_fmadd_ps(_mm512_set1_ps(x->s[row][j]),
                                     _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)k->mn[j]))), ms);
            }
            corr = _mm512_add_ps(corr, _mm512_mul_ps(_mm512_mul_ps(dmin, dx), ms));
        }
        _mm512_mask_storeu_ps(out + n * ldo + r, mask, _mm512_sub_ps(acc, corr));
    }
}

/* Batches from which the tiles pay (measured: TinyLlama ffn_gate, one thread). */
#define AMX_MIN_BATCH 4

/*
 * out[n*ldo + m] for weight rows [r0, r1) (r0 a multiple of 16) and activation rows n < batch: w from
 * juno_amx_repack_q4_k, xq from juno_amx_quantize_q4_k of the whole batch. Each group of 16 weight rows is read once:
 * per super-block its quants are widened to bytes once, then every group of 16 activation rows takes them.
 * Returns 0, or -1 when out of memory.
 */
int juno_amx_matmul_q4_k(const uint8_t *w, int64_t cols, const void *xq, int64_t batch, float *out, int64_t ldo,
                         int64_t r0, int64_t r1) {
    int64_t nb = cols / 256;
    int64_t groups = (batch + AMX_ROWS - 1) / AMX_ROWS;
    const amx_wblk *wb = (const amx_wblk *)w;
    const amx_xblk *xb = (const amx_xblk *)xq;
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    if (batch < AMX_MIN_BATCH) {
        for (int64_t r = r0; r < r1; r += AMX_ROWS) {
            q4_k_rows_vnni(wb + (r / AMX_ROWS) * nb, nb, xb, batch, out, ldo, r, r1 - r < AMX_ROWS ? r1 - r : AMX_ROWS);
        }
        return 0;
    }
    /* per activation row: the 16 weight rows' acc and corr */
    __m512 *acc = aligned_alloc(64, (size_t)(2 * groups * AMX_ROWS) * sizeof(__m512));
    if (!acc) return -1;
    __m512 *corr = acc + groups * AMX_ROWS;
    int configured = 0;
    for (int64_t r = r0; r < r1; r += AMX_ROWS) {
        const amx_wblk *g = wb + (r / AMX_ROWS) * nb;
        for (int64_t n = 0; n < groups * AMX_ROWS; n++) acc[n] = corr[n] = _mm512_setzero_ps();
        for (int64_t b = 0; b < nb; b++) {
            const amx_wblk *k = g + b;
            prefetch_row((const uint8_t *)k, (int)sizeof(amx_wblk));
            uint8_t bt[8][8][64] __attribute__((aligned(64))); /* the B tiles of the eight sub-blocks */
            for (int j = 0; j < 8; j++) {
                for (int c = 0; c < 4; c++) {
                    __m512i v = _mm512_loadu_si512((const void *)k->q[j][c]);
                    _mm512_store_si512((void *)bt[j][2 * c], _mm512_and_si512(v, m4));
                    _mm512_store_si512((void *)bt[j][2 * c + 1], _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
                }
            }
            __m512i off = _mm512_loadu_si512((const void *)k->off);
            __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)k->d));
            __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)k->dmin));
            float mins[8][16] __attribute__((aligned(64)));
            for (int j = 0; j < 8; j++) {
                _mm512_store_ps(mins[j], _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)k->mn[j]))));
            }
            for (int64_t a = 0; a < groups; a++) {
                int nr = batch - a * AMX_ROWS < AMX_ROWS ? (int)(batch - a * AMX_ROWS) : AMX_ROWS;
                if (nr != configured) {
                    configure(nr);
                    configured = nr;
                }
                const amx_xblk *x = xb + a * nb + b;
                __m512i isum[AMX_ROWS];
                for (int n = 0; n < nr; n++) isum[n] = _mm512_setzero_si512();
                for (int j = 0; j < 8; j++) {
                    int32_t ct[AMX_ROWS][16] __attribute__((aligned(64)));
                    _tile_loadd(1, x->q[0] + 32 * j, 256);
                    _tile_loadd(2, bt[j], 64);
                    _tile_zero(0);
                    _tile_dpbusd(0, 1, 2);
                    _tile_stored(0, ct, 64);
                    __m512i sc = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)k->sc[j]));
                    for (int n = 0; n < nr; n++) {
                        isum[n] = _mm512_add_epi32(isum[n], _mm512_mullo_epi32(_mm512_load_si512((const void *)ct[n]), sc));
                    }
                }
                __m512 *ac = acc + a * AMX_ROWS, *co = corr + a * AMX_ROWS;
                for (int n = 0; n < nr; n++) {
                    __m512 dx = _mm512_set1_ps(x->d[n]);
                    ac[n] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(isum[n], off)), _mm512_mul_ps(d, dx), ac[n]);
                    __m512 ms = _mm512_mul_ps(_mm512_set1_ps(x->s[n][0]), _mm512_load_ps(mins[0]));
                    for (int j = 1; j < 8; j++) ms = _mm512_fmadd_ps(_mm512_set1_ps(x->s[n][j]), _mm512_load_ps(mins[j]), ms);
                    co[n] = _mm512_add_ps(co[n], _mm512_mul_ps(_mm512_mul_ps(dmin, dx), ms));
                }
            }
        }
        int64_t valid = r1 - r < AMX_ROWS ? r1 - r : AMX_ROWS;
        __mmask16 mask = (__mmask16)((1u << valid) - 1u);
        for (int64_t n = 0; n < batch; n++) _mm512_mask_storeu_ps(out + n * ldo + r, mask, _mm512_sub_ps(acc[n], corr[n]));
    }
    if (configured) _tile_release();
    free(acc);
    return 0;
}
