/*
 * Attention over an F16 KV cache: scores and weighted values (the softmax stays in Java).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */

/*
 * The F16 elements i..i+7 of eight positions' keys, transposed: c[m] lane j = element i+m of key j, as floats.
 */
AI void keys8x8(const uint16_t *const kp[8], int64_t i, __m256 c[8]) {
    __m128i a0 = _mm_unpacklo_epi16(_mm_loadu_si128((const __m128i *)(kp[0] + i)), _mm_loadu_si128((const __m128i *)(kp[1] + i)));
    __m128i a1 = _mm_unpackhi_epi16(_mm_loadu_si128((const __m128i *)(kp[0] + i)), _mm_loadu_si128((const __m128i *)(kp[1] + i)));
    __m128i a2 = _mm_unpacklo_epi16(_mm_loadu_si128((const __m128i *)(kp[2] + i)), _mm_loadu_si128((const __m128i *)(kp[3] + i)));
    __m128i a3 = _mm_unpackhi_epi16(_mm_loadu_si128((const __m128i *)(kp[2] + i)), _mm_loadu_si128((const __m128i *)(kp[3] + i)));
    __m128i a4 = _mm_unpacklo_epi16(_mm_loadu_si128((const __m128i *)(kp[4] + i)), _mm_loadu_si128((const __m128i *)(kp[5] + i)));
    __m128i a5 = _mm_unpackhi_epi16(_mm_loadu_si128((const __m128i *)(kp[4] + i)), _mm_loadu_si128((const __m128i *)(kp[5] + i)));
    __m128i a6 = _mm_unpacklo_epi16(_mm_loadu_si128((const __m128i *)(kp[6] + i)), _mm_loadu_si128((const __m128i *)(kp[7] + i)));
    __m128i a7 = _mm_unpackhi_epi16(_mm_loadu_si128((const __m128i *)(kp[6] + i)), _mm_loadu_si128((const __m128i *)(kp[7] + i)));
    __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
    __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
    __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
    __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
    c[0] = _mm256_cvtph_ps(_mm_unpacklo_epi64(b0, b4));
    c[1] = _mm256_cvtph_ps(_mm_unpackhi_epi64(b0, b4));
    c[2] = _mm256_cvtph_ps(_mm_unpacklo_epi64(b1, b5));
    c[3] = _mm256_cvtph_ps(_mm_unpackhi_epi64(b1, b5));
    c[4] = _mm256_cvtph_ps(_mm_unpacklo_epi64(b2, b6));
    c[5] = _mm256_cvtph_ps(_mm_unpackhi_epi64(b2, b6));
    c[6] = _mm256_cvtph_ps(_mm_unpacklo_epi64(b3, b7));
    c[7] = _mm256_cvtph_ps(_mm_unpackhi_epi64(b3, b7));
}

/*
 * The scores of G heads (queries q + h * qs, scores into s + h * ss) over one key tile: eight positions side by side,
 * each key block converted once for all G heads; every head adds its products in element order, as one head alone.
 */
AI void scores_heads(const uint16_t *k, const int64_t *off, int64_t from, int64_t to, int64_t dim, const float *q,
                     int64_t qs, int64_t n, float scale, float *s, int64_t ss, const int G) {
    int64_t t = from;
    for (; t + 8 <= to + 1; t += 8) {
        const uint16_t *kp[8];
        UNROLL for (int j = 0; j < 8; j++) kp[j] = k + off[t + j] + dim;
        /* lane j = position t+j; eight elements of eight positions transposed, then added in element order */
        __m256 acc[8];
        UNROLL for (int h = 0; h < G; h++) acc[h] = _mm256_setzero_ps();
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            __m256 c[8];
            keys8x8(kp, i, c);
            UNROLL for (int h = 0; h < G; h++) {
                const float *qh = q + h * qs;
                UNROLL for (int m = 0; m < 8; m++) acc[h] = _mm256_add_ps(acc[h], _mm256_mul_ps(_mm256_set1_ps(qh[i + m]), c[m]));
            }
        }
        UNROLL for (int h = 0; h < G; h++) {
            const float *qh = q + h * qs;
            float a[8];
            _mm256_storeu_ps(a, acc[h]);
            for (int64_t e = i; e < n; e++) {
                UNROLL for (int j = 0; j < 8; j++) a[j] = a[j] + qh[e] * f16_to_f32(kp[j][e]);
            }
            UNROLL for (int j = 0; j < 8; j++) s[h * ss + t + j] = a[j] * scale;
        }
    }
    for (; t <= to; t++) {
        const uint16_t *kp = k + off[t] + dim;
        UNROLL for (int h = 0; h < G; h++) {
            const float *qh = q + h * qs;
            float a = 0.0f;
            for (int64_t i = 0; i < n; i++) a = a + qh[i] * f16_to_f32(kp[i]);
            s[h * ss + t] = a * scale;
        }
    }
}

/*
 * s[h * ss + t] = (sum_i q[h * qs + i] * K_t[i], summed in i order in floats, products not fused) * scale for heads
 * h < g (sharing one KV head) and from <= t <= to, key t at element off[t] + dim of k: KvCache.dotKey's F16 order
 * exactly for every head; the heads of a group share each key load and conversion.
 */
void FN(attn_scores_f16)(const uint16_t *k, const int64_t *off, int64_t from, int64_t to, int64_t dim, const float *q,
                         int64_t qoff, int64_t qs, int64_t g, int64_t n, float scale, float *s, int64_t ss) {
    q += qoff;
    for (int64_t h = 0; h < g;) {
        int64_t left = g - h;
        const float *qh = q + h * qs;
        float *sh = s + h * ss;
        if (left >= 8) {
            scores_heads(k, off, from, to, dim, qh, qs, n, scale, sh, ss, 8);
            h += 8;
        } else if (left >= 4) {
            scores_heads(k, off, from, to, dim, qh, qs, n, scale, sh, ss, 4);
            h += 4;
        } else if (left >= 2) {
            scores_heads(k, off, from, to, dim, qh, qs, n, scale, sh, ss, 2);
            h += 2;
        } else {
            scores_heads(k, off, from, to, dim, qh, qs, n, scale, sh, ss, 1);
            h += 1;
        }
    }
}

/*
 * The weighted values of G heads (weights w + h * ws, outputs out + h * os) over elements i..i+7: each head's eight
 * sums kept in a register through every position, the position's values converted once for all G heads.
 */
AI void values_heads(const uint16_t *v, const int64_t *off, int64_t from, int64_t to, int64_t dim, const float *w,
                     int64_t ws, float *out, int64_t os, int64_t i, const int G) {
    __m256 acc[8];
    UNROLL for (int h = 0; h < G; h++) acc[h] = _mm256_setzero_ps();
    for (int64_t t = from; t <= to; t++) {
        __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + off[t] + dim + i)));
        UNROLL for (int h = 0; h < G; h++) acc[h] = _mm256_add_ps(acc[h], _mm256_mul_ps(_mm256_set1_ps(w[h * ws + t]), x));
    }
    UNROLL for (int h = 0; h < G; h++) _mm256_storeu_ps(out + h * os + i, acc[h]);
}

/*
 * out[h * os + i] = sum over t in order of (s[h * ss + t] * inv[h]) * V_t[i] for heads h < g (sharing one KV head),
 * each step out + w*v, not fused: KvCache.addValue's order for every head. The weights s[h * ss + t] * inv[h] are
 * written over the scores (from..to) first.
 */
void FN(attn_values_f16)(const uint16_t *v, const int64_t *off, int64_t from, int64_t to, int64_t dim, float *s,
                         int64_t ss, const float *inv, int64_t g, float *out, int64_t outoff, int64_t os, int64_t n) {
    out += outoff;
    for (int64_t h = 0; h < g; h++) {
        float *sh = s + h * ss;
        for (int64_t t = from; t <= to; t++) sh[t] = sh[t] * inv[h];
    }
    for (int64_t h = 0; h < g;) {
        int64_t left = g - h;
        int G = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
        const float *wh = s + h * ss;
        float *oh = out + h * os;
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            switch (G) {
            case 8: values_heads(v, off, from, to, dim, wh, ss, oh, os, i, 8); break;
            case 4: values_heads(v, off, from, to, dim, wh, ss, oh, os, i, 4); break;
            case 2: values_heads(v, off, from, to, dim, wh, ss, oh, os, i, 2); break;
            default: values_heads(v, off, from, to, dim, wh, ss, oh, os, i, 1); break;
            }
        }
        for (int hh = 0; hh < G; hh++) {
            for (int64_t e = i; e < n; e++) {
                float a = 0.0f;
                for (int64_t t = from; t <= to; t++) a = a + wh[hh * ss + t] * f16_to_f32(v[off[t] + dim + e]);
                oh[hh * os + e] = a;
            }
        }
        h += G;
    }
}
