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

#include "juno_cpu.h"

int juno_cpu_features(void);
/* weak: a variant the compiler could not build is absent (NULL) and skipped */
#define DECL(isa)                                                                                                      \
    __attribute__((weak)) int juno_##isa##_quantize(int, const float *, int64_t, int64_t, void *);                     \
    __attribute__((weak)) int juno_##isa##_matmul(int, const uint8_t *, int64_t, int64_t, const void *, int64_t,       \
                                                  float *, int64_t, int64_t, int64_t);                          \
    __attribute__((weak)) int juno_##isa##_repack(int, const uint8_t *, int64_t, int64_t, int64_t, uint8_t *);
DECL(avx2)
DECL(avxvnni)
DECL(avx512vnni)

typedef int (*quant_fn)(int, const float *, int64_t, int64_t, void *);
typedef int (*mm_fn)(int, const uint8_t *, int64_t, int64_t, const void *, int64_t, float *, int64_t, int64_t, int64_t);
typedef int (*repack_fn)(int, const uint8_t *, int64_t, int64_t, int64_t, uint8_t *);

static const struct { const char *name; int feature; quant_fn q; mm_fn m; repack_fn p; } VARIANTS[] = {
    {"avx2", JUNO_FEAT_AVX2, juno_avx2_quantize, juno_avx2_matmul, juno_avx2_repack},
    {"avxvnni", JUNO_FEAT_AVXVNNI, juno_avxvnni_quantize, juno_avxvnni_matmul, juno_avxvnni_repack},
    {"avx512vnni", JUNO_FEAT_AVX512VNNI, juno_avx512vnni_quantize, juno_avx512vnni_matmul, juno_avx512vnni_repack},
};

/* type id, elements per block, bytes per block, f16 scale field offsets (-1: none) */
static const struct { int id; const char *name; int block; int bytes; int half[2]; } TYPES[] = {
    {JUNO_F32, "F32", 1, 4, {-1, -1}},      {JUNO_F16, "F16", 1, 2, {-1, -1}},      {JUNO_BF16, "BF16", 1, 2, {-1, -1}},
    {JUNO_Q4_0, "Q4_0", 32, 18, {0, -1}},   {JUNO_Q4_1, "Q4_1", 32, 20, {0, 2}},    {JUNO_Q5_0, "Q5_0", 32, 22, {0, -1}},
    {JUNO_Q5_1, "Q5_1", 32, 24, {0, 2}},    {JUNO_Q8_0, "Q8_0", 32, 34, {0, -1}},   {JUNO_Q2_K, "Q2_K", 256, 84, {80, 82}},
    {JUNO_Q3_K, "Q3_K", 256, 110, {108, -1}}, {JUNO_Q4_K, "Q4_K", 256, 144, {0, 2}}, {JUNO_Q5_K, "Q5_K", 256, 176, {0, 2}},
    {JUNO_Q6_K, "Q6_K", 256, 210, {208, -1}}, {JUNO_Q4_0 | JUNO_PACKED, "Q4_0 packed", 32, 18, {0, -1}},
};

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (uint32_t)rng; }
static float gauss(void) { return ((int)(next() % 2001) - 1000) / 300.0f; }

static int64_t xq_bytes(int id, int64_t rows, int64_t cols) {
    int64_t n = rows * cols;
    switch (id) {
    case JUNO_F32: return n * 4;
    case JUNO_F16: case JUNO_BF16: return n * 2;
    case JUNO_Q2_K: case JUNO_Q3_K: case JUNO_Q6_K: return n / 256 * (int64_t)sizeof(juno_xqk);
    case JUNO_Q4_K: case JUNO_Q5_K: /* then the sums by activation row (sums_by_row) */
        return n / 256 * (int64_t)sizeof(juno_xqk) + cols / 256 * 9 * ((rows + 15) / 16 * 16) * 4;
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
                        if (!(features & VARIANTS[v].feature) || !VARIANTS[v].q || !VARIANTS[v].m || !VARIANTS[v].p) continue;
                        void *xq = malloc((size_t)xq_bytes(TYPES[t].id, batch, cols));
                        float *out = malloc((size_t)(batch * rows) * sizeof(float));
                        int rc = VARIANTS[v].q(TYPES[t].id, x, batch, cols, xq);
                        /* packed Q4_0: groups of 16 rows of cols/32 blocks of 288 bytes, exactly */
                        const uint8_t *wm = w;
                        uint8_t *packed = NULL;
                        if (TYPES[t].id & JUNO_PACKED) {
                            packed = malloc((size_t)((rows + 15) / 16 * (cols / 32) * 288));
                            rc |= VARIANTS[v].p(JUNO_Q4_0, w, rowBytes, rows, cols, packed);
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
