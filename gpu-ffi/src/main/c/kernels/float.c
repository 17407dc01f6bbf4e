/*
 * F32, F16 and BF16 weights (CpuBackend.dot's 16-lane order). Their activations come rounded to the weight's type as
 * llama.cpp rounds them, so F16/BF16 activations are stored in 16 bits (exactly; half the bytes to stream per tile).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
/* ---------------------------------------------------------------- F32 / F16 / BF16 weights */

/* 8 weights of row r at element i, as floats. */
AI __m256 load_w(int type, const uint8_t *row, int64_t i) {
    if (type == JUNO_F16) return load_f16x8(row + 2 * i);
    if (type == JUNO_BF16) return load_bf16x8(row + 2 * i);
    return _mm256_loadu_ps((const float *)row + i);
}

/* Bytes of one activation element for weights of this type. */
#define X_BYTES(type) ((type) == JUNO_F32 ? 4 : 2)

/* 8 activations at element i of row x (F32 floats, F16 or BF16 bits), as floats. */
AI __m256 load_x(int type, const uint8_t *x, int64_t i) {
    if (type == JUNO_F16) return load_f16x8(x + 2 * i);
    if (type == JUNO_BF16) return load_bf16x8(x + 2 * i);
    return _mm256_loadu_ps((const float *)x + i);
}

/*
 * NR weight rows x NC activation rows, each dot as CpuBackend.dot for n % 16 == 0: two 8-lane accumulators (elements
 * 16i..16i+7 and 16i+8..16i+15), then the lane sum of lo + hi.
 */
AI void float_tile(int type, const uint8_t *w, int64_t stride, int64_t cols, const uint8_t *x, int nr, int nc,
                   float *out, int64_t ldo) {
    __m256 lo[FT_R][FT_C], hi[FT_R][FT_C];
    _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) {
        _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++) {
            lo[r][c] = _mm256_setzero_ps();
            hi[r][c] = _mm256_setzero_ps();
        }
    }
    for (int64_t i = 0; i < cols; i += 16) {
        __m256 wl[FT_R], wh[FT_R];
        _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) {
            _mm_prefetch((const char *)(w + r * stride) + (type == JUNO_F32 ? 4 : 2) * i + PF_AHEAD, PF_HINT);
            wl[r] = load_w(type, w + r * stride, i);
            wh[r] = load_w(type, w + r * stride, i + 8);
        }
        _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++) {
            const uint8_t *xc = x + c * cols * X_BYTES(type);
            __m256 xl = load_x(type, xc, i), xh = load_x(type, xc, i + 8);
            _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) {
                lo[r][c] = _mm256_fmadd_ps(wl[r], xl, lo[r][c]);
                hi[r][c] = _mm256_fmadd_ps(wh[r], xh, hi[r][c]);
            }
        }
    }
    _Pragma("GCC unroll 4") for (int r = 0; r < nr; r++) {
        _Pragma("GCC unroll 4") for (int c = 0; c < nc; c++) {
            out[c * ldo + r] = hsum8(_mm256_add_ps(lo[r][c], hi[r][c]));
        }
    }
}

#define DEF_FLOAT_ROWS(NAME, TYPE)                                                                                     \
    static void NAME##_rows(const uint8_t *w, int64_t stride, int64_t cols, const void *xv, int64_t batch,            \
                            float *out, int64_t ldo, int64_t r0, int64_t r1) {                                         \
        const uint8_t *x = (const uint8_t *)xv;                                                                        \
        const int64_t xs = cols * X_BYTES(TYPE);                                                                       \
        int64_t r = r0;                                                                                                \
        for (; r + FT_R <= r1; r += FT_R) {                                                                            \
            int64_t c = 0;                                                                                             \
            for (; c + FT_C <= batch; c += FT_C)                                                                       \
                float_tile(TYPE, w + r * stride, stride, cols, x + c * xs, FT_R, FT_C, out + c * ldo + r, ldo);      \
            for (; c < batch; c++)                                                                                     \
                float_tile(TYPE, w + r * stride, stride, cols, x + c * xs, FT_R, 1, out + c * ldo + r, ldo);         \
        }                                                                                                              \
        for (; r < r1; r++) {                                                                                          \
            int64_t c = 0;                                                                                             \
            for (; c + FT_C <= batch; c += FT_C)                                                                       \
                float_tile(TYPE, w + r * stride, stride, cols, x + c * xs, 1, FT_C, out + c * ldo + r, ldo);         \
            for (; c < batch; c++)                                                                                     \
                float_tile(TYPE, w + r * stride, stride, cols, x + c * xs, 1, 1, out + c * ldo + r, ldo);            \
        }                                                                                                              \
    }

DEF_FLOAT_ROWS(f32, JUNO_F32)
DEF_FLOAT_ROWS(f16, JUNO_F16)
DEF_FLOAT_ROWS(bf16, JUNO_BF16)

