/*
 * Memory-safety and consistency check of the native kernels, built with AddressSanitizer and UBSan
 * (NativeKernelsSanitizerTest runs it): every weight, activation and output buffer is its own malloc of exactly the
 * bytes the kernel may touch, so one byte read or written outside them stops the run. Every ISA variant the CPU runs
 * must also give the same bits as the AVX2 one, for every type, odd row counts, widths and batches 1..130, and
 * ranges of rows split as the Java side splits them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>
#include <math.h>

#include "juno_cpu.h"

int juno_cpu_features(void);
/* weak: a variant the compiler could not build is absent (NULL) and skipped */
#define DECL(isa)                                                                                                      \
    __attribute__((weak)) int juno_##isa##_quantize(int, const float *, int64_t, int64_t, void *);                     \
    __attribute__((weak)) int juno_##isa##_quantize_rows(int, const float *, int64_t, int64_t, void *, int64_t, int64_t); \
    __attribute__((weak)) int juno_##isa##_matmul(int, const uint8_t *, int64_t, int64_t, const void *, int64_t,       \
                                                  float *, int64_t, int64_t, int64_t);                          \
    __attribute__((weak)) int juno_##isa##_repack(int, const uint8_t *, int64_t, int64_t, int64_t, uint8_t *);       \
    __attribute__((weak)) void juno_##isa##_attn_scores_f16(const uint16_t *, const int64_t *, int64_t, int64_t,       \
                                                            int64_t, const float *, int64_t, int64_t, int64_t, int64_t,  \
                                                            float, float *, int64_t);                                   \
    __attribute__((weak)) void juno_##isa##_attn_values_f16(const uint16_t *, const int64_t *, int64_t, int64_t,       \
                                                            int64_t, float *, int64_t, const float *, int64_t, float *,  \
                                                            int64_t, int64_t, int64_t);
DECL(avx2)
DECL(avxvnni)
DECL(avx512vnni)

typedef int (*quant_fn)(int, const float *, int64_t, int64_t, void *);
typedef int (*quant_rows_fn)(int, const float *, int64_t, int64_t, void *, int64_t, int64_t);
typedef int (*mm_fn)(int, const uint8_t *, int64_t, int64_t, const void *, int64_t, float *, int64_t, int64_t, int64_t);
typedef int (*repack_fn)(int, const uint8_t *, int64_t, int64_t, int64_t, uint8_t *);
typedef void (*scores_fn)(const uint16_t *, const int64_t *, int64_t, int64_t, int64_t, const float *, int64_t, int64_t,
                          int64_t, int64_t, float, float *, int64_t);
typedef void (*values_fn)(const uint16_t *, const int64_t *, int64_t, int64_t, int64_t, float *, int64_t, const float *,
                          int64_t, float *, int64_t, int64_t, int64_t);

static const struct {
    const char *name; int feature; quant_fn q; quant_rows_fn qr; mm_fn m; repack_fn p; scores_fn as; values_fn av;
} VARIANTS[] = {
    {"avx2", JUNO_FEAT_AVX2, juno_avx2_quantize, juno_avx2_quantize_rows, juno_avx2_matmul, juno_avx2_repack,
     juno_avx2_attn_scores_f16, juno_avx2_attn_values_f16},
    {"avxvnni", JUNO_FEAT_AVXVNNI, juno_avxvnni_quantize, juno_avxvnni_quantize_rows, juno_avxvnni_matmul,
     juno_avxvnni_repack, juno_avxvnni_attn_scores_f16, juno_avxvnni_attn_values_f16},
    {"avx512vnni", JUNO_FEAT_AVX512VNNI, juno_avx512vnni_quantize, juno_avx512vnni_quantize_rows, juno_avx512vnni_matmul,
     juno_avx512vnni_repack, juno_avx512vnni_attn_scores_f16, juno_avx512vnni_attn_values_f16},
};


/* type id, elements per block, bytes per block, f16 scale field offsets (-1: none) */
static const struct { int id; const char *name; int block; int bytes; int half[2]; } TYPES[] = {
    {JUNO_F32, "F32", 1, 4, {-1, -1}},      {JUNO_F16, "F16", 1, 2, {-1, -1}},      {JUNO_BF16, "BF16", 1, 2, {-1, -1}},
    {JUNO_Q4_0, "Q4_0", 32, 18, {0, -1}},   {JUNO_Q4_1, "Q4_1", 32, 20, {0, 2}},    {JUNO_Q5_0, "Q5_0", 32, 22, {0, -1}},
    {JUNO_Q5_1, "Q5_1", 32, 24, {0, 2}},    {JUNO_Q8_0, "Q8_0", 32, 34, {0, -1}},   {JUNO_Q2_K, "Q2_K", 256, 84, {80, 82}},
    {JUNO_Q3_K, "Q3_K", 256, 110, {108, -1}}, {JUNO_Q4_K, "Q4_K", 256, 144, {0, 2}}, {JUNO_Q5_K, "Q5_K", 256, 176, {0, 2}},
    {JUNO_Q6_K, "Q6_K", 256, 210, {208, -1}}, {JUNO_Q4_0 | JUNO_PACKED, "Q4_0 packed", 32, 18, {0, -1}},
    {JUNO_Q4_K | JUNO_PACKED, "Q4_K packed", 256, 144, {0, 2}}, {JUNO_Q8_0 | JUNO_PACKED, "Q8_0 packed", 32, 34, {0, -1}},
    {JUNO_Q5_K | JUNO_PACKED, "Q5_K packed", 256, 176, {0, 2}}, {JUNO_Q6_K | JUNO_PACKED, "Q6_K packed", 256, 210, {208, -1}},
};

/* Packed Q4_K, Q5_K, Q6_K and Q8_0 (kernels/q4_k_x16.h, q6_k_x16.h, q8_0_x16.h) are in the AVX-512 variant only; the
 * others refuse them. */
static int has_type(const char *variant, int id) {
    return (id != (JUNO_Q4_K | JUNO_PACKED) && id != (JUNO_Q5_K | JUNO_PACKED) && id != (JUNO_Q6_K | JUNO_PACKED)
            && id != (JUNO_Q8_0 | JUNO_PACKED))
           || strcmp(variant, "avx512vnni") == 0;
}

/* Bytes of the packed weights: groups of 16 rows of cols/32 blocks of 288 bytes (Q4_0) or 544 (Q8_0), cols/256 of
 * 2432 (Q4_K), 2944 (Q5_K) or 3360 (Q6_K). */
static int64_t packed_bytes(int id, int64_t rows, int64_t cols) {
    int64_t per = id == (JUNO_Q4_K | JUNO_PACKED)   ? cols / 256 * 2432
                  : id == (JUNO_Q5_K | JUNO_PACKED) ? cols / 256 * 2944
                  : id == (JUNO_Q6_K | JUNO_PACKED) ? cols / 256 * 3360
                  : id == (JUNO_Q8_0 | JUNO_PACKED) ? cols / 32 * 544
                                                    : cols / 32 * 288;
    return (rows + 15) / 16 * per;
}

/*
 * Packed Q8_0's definition (kernels/q8_0_x16.h), in scalar C from the weights as stored and the activation blocks
 * (juno_xq8, pair order): per block the exact integer sum, then acc = fma(isum, d_w * d_x, acc).
 */
static void q8_0_packed_reference(const uint8_t *w, int64_t rowBytes, int64_t rows, int64_t cols, const juno_xq8 *x,
                                  int64_t batch, float *out) {
    int64_t nb = cols / 32;
    for (int64_t n = 0; n < batch; n++) {
        for (int64_t m = 0; m < rows; m++) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *blk = w + m * rowBytes + b * 34;
                const juno_xq8 *xb = x + n * nb + b;
                int32_t isum = 0;
                for (int i = 0; i < 32; i++) {
                    /* stored byte i (pair order): lane i/4 holds elements 2L, 2L+1, 16+2L, 17+2L */
                    int lane = i / 4, t = i % 4;
                    int e = t < 2 ? 2 * lane + t : 16 + 2 * lane + (t - 2);
                    isum += (int8_t)blk[2 + e] * xb->q[i];
                }
                uint16_t hd;
                memcpy(&hd, blk, 2);
                acc = fmaf((float)isum, _cvtsh_ss(hd) * xb->d, acc);
            }
            out[n * rows + m] = acc;
        }
    }
}

/* Scale (min = 0) or min of sub-block j from a Q4_K block's 12 packed bytes at q. */
static int k4_scale(const uint8_t *q, int j, int min) {
    if (j < 4) return min ? q[j + 4] & 63 : q[j] & 63;
    return min ? (q[j + 4] >> 4) | ((q[j] >> 6) << 4) : (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
}

/*
 * Packed Q4_K's (five = 0) or Q5_K's (five = 1) definition (kernels/q4_k_x16.h), in scalar C from the weights as
 * stored and the Q8_K activations in natural order (quantize of JUNO_Q6_K): out[n*rows + m].
 */
static void k_packed_reference(const uint8_t *w, int64_t rowBytes, int64_t rows, int64_t cols, const juno_xqk *xk,
                               int64_t batch, float *out, int five) {
    int64_t nb = cols / 256;
    for (int64_t n = 0; n < batch; n++) {
        for (int64_t m = 0; m < rows; m++) {
            float acc = 0.0f, corr = 0.0f;
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *blk = w + m * rowBytes + b * (five ? 176 : 144);
                const juno_xqk *x = xk + n * nb + b;
                int32_t isum = 0;
                float ms = 0.0f;
                for (int j = 0; j < 8; j++) {
                    int32_t dot = 0, sum = 0;
                    for (int e = 32 * j; e < 32 * j + 32; e++) {
                        int i = e % 64;
                        int q = blk[(five ? 48 : 16) + 32 * (e / 64) + (i & 31)];
                        int quant = i < 32 ? q & 0xF : q >> 4;
                        if (five) quant |= (blk[16 + (i & 31)] >> (2 * (e / 64) + (i >= 32)) & 1) << 4;
                        dot += quant * x->q[e];
                        sum += x->q[e];
                    }
                    isum += k4_scale(blk + 4, j, 0) * dot;
                    float mj = (float)k4_scale(blk + 4, j, 1);
                    ms = j == 0 ? (float)sum * mj : fmaf((float)sum, mj, ms);
                }
                uint16_t h[2];
                memcpy(h, blk, 4);
                float d = _cvtsh_ss(h[0]), dmin = _cvtsh_ss(h[1]);
                acc = fmaf((float)isum, d * x->d, acc);
                corr = corr + (dmin * x->d) * ms;
            }
            out[n * rows + m] = acc - corr;
        }
    }
}

/*
 * Packed Q6_K's definition (kernels/q6_k_x16.h: ggml's eight integer lanes, as the stored layout), in scalar C from the
 * weights as stored and the Q8_K activations in natural order: out[n*rows + m].
 */
static void q6_k_packed_reference(const uint8_t *w, int64_t rowBytes, int64_t rows, int64_t cols, const juno_xqk *xk,
                                  int64_t batch, float *out) {
    int64_t nb = cols / 256;
    for (int64_t n = 0; n < batch; n++) {
        for (int64_t m = 0; m < rows; m++) {
            float acc[8] = {0};
            for (int64_t b = 0; b < nb; b++) {
                const uint8_t *blk = w + m * rowBytes + b * 210;
                const juno_xqk *x = xk + n * nb + b;
                uint16_t hd;
                memcpy(&hd, blk + 208, 2);
                for (int p = 0; p < 8; p++) {
                    int8_t s0 = (int8_t)blk[192 + 2 * p], s1 = (int8_t)blk[192 + 2 * p + 1];
                    int32_t lane = -32 * (s0 * x->bsums[2 * p] + s1 * x->bsums[2 * p + 1]);
                    for (int j = 0; j < 8; j++) {
                        int32_t dot = 0;
                        for (int e = 32 * j + 4 * p; e < 32 * j + 4 * p + 4; e++) {
                            int h = e / 128, k = e % 128 / 32, l = e % 32;
                            int ql = blk[64 * h + l + 32 * (k & 1)];
                            int q = (k < 2 ? ql & 0xF : ql >> 4) | (blk[128 + 32 * h + l] >> (2 * k) & 3) << 4;
                            dot += q * x->q[e];
                        }
                        lane += (int8_t)blk[192 + 2 * j + p / 4] * dot;
                    }
                    acc[p] = fmaf((float)lane, _cvtsh_ss(hd) * x->d, acc[p]);
                }
            }
            out[n * rows + m] = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
        }
    }
}

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (uint32_t)rng; }
static float gauss(void) { return ((int)(next() % 2001) - 1000) / 300.0f; }

/*
 * The attention kernels for groups of 1..11 heads, head sizes with and without a tail of eight, position ranges with
 * and without one: cache, offsets, queries, scores and outputs each of exactly the bytes the kernels may touch, and
 * every head's scores and values equal, bit for bit, to KvCache's order (one sum per element in order, products not
 * fused, the weight s * inv rounded first). Returns the failures.
 */
static int check_attention(int features, int *passed) {
    static const int groups[] = {1, 2, 3, 5, 8, 11};
    static const int dims[] = {64, 20};
    static const int ranges[][2] = {{0, 0}, {0, 6}, {0, 7}, {3, 15}, {0, 39}};
    int failed = 0;
    for (size_t gi = 0; gi < sizeof(groups) / sizeof(groups[0]); gi++) {
        for (size_t di = 0; di < sizeof(dims) / sizeof(dims[0]); di++) {
            for (size_t ri = 0; ri < sizeof(ranges) / sizeof(ranges[0]); ri++) {
                int64_t g = groups[gi], n = dims[di], from = ranges[ri][0], to = ranges[ri][1], dim = 3;
                int64_t positions = to + 1, qs = n + 5, ss = to + 1 + 2, os = n + 1;
                /* positions stored in reverse order, the key of position t at element (to - t) * (n + 3) + dim */
                int64_t *off = malloc((size_t)positions * sizeof(int64_t));
                for (int64_t t = 0; t < positions; t++) off[t] = (to - t) * (n + 3);
                int64_t elements = off[0] + dim + n; /* off[0] is the largest */
                uint16_t *kv = malloc((size_t)elements * 2);
                for (int64_t i = 0; i < elements; i++) kv[i] = _cvtss_sh(gauss(), 0);
                int64_t qn = (g - 1) * qs + n, sn = (g - 1) * ss + to + 1, on = (g - 1) * os + n;
                float *q = malloc((size_t)qn * sizeof(float));
                for (int64_t i = 0; i < qn; i++) q[i] = gauss();
                float *inv = malloc((size_t)g * sizeof(float));
                for (int64_t h = 0; h < g; h++) inv[h] = 0.01f + (next() % 100) / 1000.0f;
                for (size_t v = 0; v < sizeof(VARIANTS) / sizeof(VARIANTS[0]); v++) {
                    if (!(features & VARIANTS[v].feature) || !VARIANTS[v].as || !VARIANTS[v].av) continue;
                    float *s = malloc((size_t)sn * sizeof(float));
                    float *out = malloc((size_t)on * sizeof(float));
                    VARIANTS[v].as(kv, off, from, to, dim, q, 0, qs, g, n, 0.125f, s, ss);
                    int ok = 1;
                    for (int64_t h = 0; h < g && ok; h++) {
                        for (int64_t t = from; t <= to; t++) {
                            float a = 0.0f;
                            for (int64_t i = 0; i < n; i++) a = a + q[h * qs + i] * _cvtsh_ss(kv[off[t] + dim + i]);
                            if (memcmp(&(float){a * 0.125f}, &s[h * ss + t], 4) != 0) ok = 0;
                        }
                    }
                    float *ref = malloc((size_t)sn * sizeof(float));
                    memcpy(ref, s, (size_t)sn * sizeof(float));
                    VARIANTS[v].av(kv, off, from, to, dim, s, ss, inv, g, out, 0, os, n);
                    for (int64_t h = 0; h < g && ok; h++) {
                        for (int64_t i = 0; i < n; i++) {
                            float a = 0.0f;
                            for (int64_t t = from; t <= to; t++) a = a + (ref[h * ss + t] * inv[h]) * _cvtsh_ss(kv[off[t] + dim + i]);
                            if (memcmp(&a, &out[h * os + i], 4) != 0) ok = 0;
                        }
                    }
                    if (ok) {
                        (*passed)++;
                    } else {
                        failed++;
                        printf("FAIL %s attention heads %lld head size %lld positions %lld..%lld\n", VARIANTS[v].name,
                               (long long)g, (long long)n, (long long)from, (long long)to);
                    }
                    free(ref);
                    free(out);
                    free(s);
                }
                free(inv);
                free(q);
                free(kv);
                free(off);
            }
        }
    }
    return failed;
}

static int64_t xq_bytes(int id, int64_t rows, int64_t cols) {
    int64_t n = rows * cols;
    switch (id) {
    case JUNO_F32: return n * 4;
    case JUNO_F16: case JUNO_BF16: return n * 2;
    case JUNO_Q2_K: case JUNO_Q3_K: case JUNO_Q6_K: case JUNO_Q6_K | JUNO_PACKED: return n / 256 * (int64_t)sizeof(juno_xqk);
    case JUNO_Q4_K: case JUNO_Q5_K: /* then the sums by activation row (sums_by_row) */
        return n / 256 * (int64_t)sizeof(juno_xqk) + cols / 256 * 9 * ((rows + 15) / 16 * 16) * 4;
    case JUNO_Q4_K | JUNO_PACKED: /* groups of 16 rows: 16 x 256 quants, 16 scales, 16 x 8 sums per super-block */
    case JUNO_Q5_K | JUNO_PACKED:
        return (rows + 15) / 16 * (cols / 256) * 4672;
    default: return n / 32 * (int64_t)sizeof(juno_xq8);
    }
}

int main(void) {
    int features = juno_cpu_features();
    if (!(features & JUNO_FEAT_AVX2)) {
        printf("this CPU has no AVX2: nothing to check\n0 passed, 0 failed\n");
        return 0;
    }
    static const int batches[] = {1, 2, 3, 4, 5, 7, 9, 16, 17, 33, 130};
    static const int rowsList[] = {1, 5, 37};
    int passed = 0, failed = 0;
    failed += check_attention(features, &passed);
    for (size_t t = 0; t < sizeof(TYPES) / sizeof(TYPES[0]); t++) {
        int widths[2];
        if (TYPES[t].block == 256) { widths[0] = 256; widths[1] = 768; }
        else if (TYPES[t].block == 32) { widths[0] = 96; widths[1] = 544; }
        else { widths[0] = 48; widths[1] = 528; }
        for (int wi = 0; wi < 2; wi++) {
            int64_t cols = widths[wi];
            int64_t rowBytes = cols / TYPES[t].block * TYPES[t].bytes;
            for (size_t ri = 0; ri < sizeof(rowsList) / sizeof(rowsList[0]); ri++) {
                int64_t rows = rowsList[ri];
                uint8_t *w = malloc((size_t)(rows * rowBytes));
                for (int64_t i = 0; i < rows * rowBytes; i++) w[i] = (uint8_t)next();
                for (int64_t i = 0; i < rows * cols && TYPES[t].block == 1; i++) {
                    float f = gauss();
                    if (TYPES[t].id == JUNO_F32) memcpy(w + 4 * i, &f, 4);
                    else if (TYPES[t].id == JUNO_F16) { uint16_t h = _cvtss_sh(f, 0); memcpy(w + 2 * i, &h, 2); }
                    else { uint32_t u; memcpy(&u, &f, 4); uint16_t h = (uint16_t)(u >> 16); memcpy(w + 2 * i, &h, 2); }
                }
                for (int64_t b = 0; TYPES[t].block > 1 && b < rows * cols / TYPES[t].block; b++) {
                    for (int k = 0; k < 2; k++) {
                        if (TYPES[t].half[k] < 0) continue;
                        uint16_t h = _cvtss_sh(0.001f + (next() % 1000) / 50000.0f, 0);
                        memcpy(w + b * TYPES[t].bytes + TYPES[t].half[k], &h, 2);
                    }
                }
                for (size_t bi = 0; bi < sizeof(batches) / sizeof(batches[0]); bi++) {
                    int64_t batch = batches[bi];
                    float *x = malloc((size_t)(batch * cols) * sizeof(float));
                    for (int64_t i = 0; i < batch * cols; i++) x[i] = gauss();
                    float *ref = NULL;
                    for (size_t v = 0; v < sizeof(VARIANTS) / sizeof(VARIANTS[0]); v++) {
                        if (!(features & VARIANTS[v].feature) || !VARIANTS[v].q || !VARIANTS[v].qr || !VARIANTS[v].m || !VARIANTS[v].p) continue;
                        if (!has_type(VARIANTS[v].name, TYPES[t].id)) {
                            /* a variant without the type refuses it */
                            uint8_t scratch[64];
                            if (VARIANTS[v].qr(TYPES[t].id, x, batch, cols, scratch, 0, 0) != -1) {
                                failed++;
                                printf("FAIL %s took %s\n", VARIANTS[v].name, TYPES[t].name);
                            }
                            continue;
                        }
                        void *xq = malloc((size_t)xq_bytes(TYPES[t].id, batch, cols));
                        float *out = malloc((size_t)(batch * rows) * sizeof(float));
                        int rc = VARIANTS[v].q(TYPES[t].id, x, batch, cols, xq);
                        /* the same bytes from three row ranges, over a buffer of garbage (the sums' padding included) */
                        int64_t xn = xq_bytes(TYPES[t].id, batch, cols);
                        uint8_t *xr = malloc((size_t)xn);
                        memset(xr, 0xAB, (size_t)xn);
                        int64_t cut1 = batch / 3, cut2 = 2 * batch / 3;
                        rc |= VARIANTS[v].qr(TYPES[t].id, x, batch, cols, xr, cut2, batch);
                        rc |= VARIANTS[v].qr(TYPES[t].id, x, batch, cols, xr, 0, cut1);
                        rc |= VARIANTS[v].qr(TYPES[t].id, x, batch, cols, xr, cut1, cut2);
                        if (VARIANTS[v].qr(TYPES[t].id, x, batch, cols, xr, 0, batch + 1) != -1) rc |= 64;
                        if (memcmp(xr, xq, (size_t)xn) != 0) rc |= 128;
                        free(xr);
                        /* packed weights: exactly their bytes */
                        const uint8_t *wm = w;
                        uint8_t *packed = NULL;
                        if (TYPES[t].id & JUNO_PACKED) {
                            packed = malloc((size_t)packed_bytes(TYPES[t].id, rows, cols));
                            rc |= VARIANTS[v].p(TYPES[t].id & ~JUNO_PACKED, w, rowBytes, rows, cols, packed);
                            wm = packed;
                        }
                        /* two ranges, split at a multiple of 16 as CpuBackend splits rows between workers */
                        int64_t mid = rows > 16 ? 16 : rows;
                        rc |= VARIANTS[v].m(TYPES[t].id, wm, rowBytes, cols, xq, batch, out, rows, 0, mid);
                        rc |= VARIANTS[v].m(TYPES[t].id, wm, rowBytes, cols, xq, batch, out, rows, mid, rows);
                        free(packed);
                        int ok = rc == 0;
                        if (ok && ref == NULL) {
                            ref = out;
                            out = NULL;
                        } else if (ok) {
                            ok = memcmp(ref, out, (size_t)(batch * rows) * sizeof(float)) == 0;
                        }
                        if (ok) {
                            passed++;
                        } else {
                            failed++;
                            printf("FAIL %s %s cols %lld rows %lld batch %lld (rc %d)\n", VARIANTS[v].name, TYPES[t].name,
                                   (long long)cols, (long long)rows, (long long)batch, rc);
                        }
                        free(out);
                        free(xq);
                    }
                    if (ref != NULL && (TYPES[t].id == (JUNO_Q8_0 | JUNO_PACKED) || TYPES[t].id == (JUNO_Q4_K | JUNO_PACKED)
                                        || TYPES[t].id == (JUNO_Q5_K | JUNO_PACKED) || TYPES[t].id == (JUNO_Q6_K | JUNO_PACKED))) {
                        /* and the definition's bits, from the activations as the AVX2 variant quantizes them */
                        int kq = TYPES[t].id != (JUNO_Q8_0 | JUNO_PACKED); /* a packed K-quant */
                        void *xa = malloc((size_t)(kq ? batch * cols / 256 * (int64_t)sizeof(juno_xqk)
                                                       : batch * cols / 32 * (int64_t)sizeof(juno_xq8)));
                        float *def = malloc((size_t)(batch * rows) * sizeof(float));
                        int ok = juno_avx2_quantize(kq ? JUNO_Q6_K : JUNO_Q8_0, x, batch, cols, xa) == 0;
                        if (TYPES[t].id == (JUNO_Q6_K | JUNO_PACKED)) q6_k_packed_reference(w, rowBytes, rows, cols, xa, batch, def);
                        else if (kq) k_packed_reference(w, rowBytes, rows, cols, xa, batch, def, TYPES[t].id == (JUNO_Q5_K | JUNO_PACKED));
                        else q8_0_packed_reference(w, rowBytes, rows, cols, xa, batch, def);
                        if (ok && memcmp(def, ref, (size_t)(batch * rows) * sizeof(float)) == 0) {
                            passed++;
                        } else {
                            failed++;
                            printf("FAIL %s definition cols %lld rows %lld batch %lld\n", TYPES[t].name, (long long)cols,
                                   (long long)rows, (long long)batch);
                        }
                        free(def);
                        free(xa);
                    }
                    free(ref);
                    free(x);
                }
                free(w);
            }
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
