/*
 * Q4_K products on Intel AMX (tile registers, TDPBUSD), built apart from the other variants (-mamx-tile -mamx-int8 on
 * top of AVX-512) so that a compiler or CPU without AMX only loses this file. NativeKernels binds juno_amx_matmul_q4_k
 * where the library has it, the CPU reports AMX and the OS grants the tile state (juno_amx_enable), and uses it for
 * Q4_K weights the AVX-512 variant repacked (kernels/q4_k_x16.h: groups of 16 rows, the activations in groups of 16
 * rows too) at every batch size; below four activation rows it runs that file's vector tiles, so a row's result never
 * depends on its batch mates, and the bits are the same as the AVX-512 variant's without AMX (the numerics are
 * described there).
 *
 * Orientation: the activations are the A tile (up to 16 activation rows x 32 quants of one sub-block, as unsigned
 * bytes q_x + 128), the weights the B tile (8 rows of 16 weight rows x 4 quants), so C holds one activation row per
 * tile row and one weight row per 32-bit lane: C[n][m] = sum over the sub-block of (q_x + 128) * q_w.
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
#include "kernels/q4_k_x16.h"

#define AMX_ROWS K16_ROWS
typedef k16_wblk amx_wblk;
typedef k16_xblk amx_xblk;

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

/* Batches from which the tiles pay (measured: TinyLlama ffn_gate, one thread). */
#define AMX_MIN_BATCH 4

/*
 * out[n*ldo + m] for weight rows [r0, r1) (r0 a multiple of 16) and activation rows n < batch: w and xq as
 * kernels/q4_k_x16.h lays them out (the AVX-512 variant's repack and quantize_rows). Each group of 16 weight rows is read once:
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
        k16_rows(w, 0, cols, xq, batch, out, ldo, r0, r1);
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
