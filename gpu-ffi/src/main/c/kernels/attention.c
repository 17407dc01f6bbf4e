/*
 * Attention over an F16 KV cache: scores and weighted values (the softmax stays in Java).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */

/*
 * s[t] = (sum_i q[i] * K_t[i], summed in i order in floats, products not fused) * scale for from <= t <= to, key t at
 * element off[t] + dim of k: KvCache.dotKey's F16 order exactly; eight positions run side by side.
 */
void FN(attn_scores_f16)(const uint16_t *k, const int64_t *off, int64_t from, int64_t to, int64_t dim, const float *q,
                         int64_t qoff, int64_t n, float scale, float *s) {
    q += qoff;
    int64_t t = from;
    for (; t + 8 <= to + 1; t += 8) {
        const uint16_t *kp[8];
        UNROLL for (int j = 0; j < 8; j++) kp[j] = k + off[t + j] + dim;
        /* lane j = position t+j; eight elements of eight positions transposed, then added in element order */
        __m256 acc = _mm256_setzero_ps();
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
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
            __m128i c[8];
            c[0] = _mm_unpacklo_epi64(b0, b4);
            c[1] = _mm_unpackhi_epi64(b0, b4);
            c[2] = _mm_unpacklo_epi64(b1, b5);
            c[3] = _mm_unpackhi_epi64(b1, b5);
            c[4] = _mm_unpacklo_epi64(b2, b6);
            c[5] = _mm_unpackhi_epi64(b2, b6);
            c[6] = _mm_unpacklo_epi64(b3, b7);
            c[7] = _mm_unpackhi_epi64(b3, b7);
            UNROLL for (int m = 0; m < 8; m++) acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(q[i + m]), _mm256_cvtph_ps(c[m])));
        }
        float a[8];
        _mm256_storeu_ps(a, acc);
        for (; i < n; i++) {
            UNROLL for (int j = 0; j < 8; j++) a[j] = a[j] + q[i] * f16_to_f32(kp[j][i]);
        }
        UNROLL for (int j = 0; j < 8; j++) s[t + j] = a[j] * scale;
    }
    for (; t <= to; t++) {
        const uint16_t *kp = k + off[t] + dim;
        float a = 0.0f;
        for (int64_t i = 0; i < n; i++) a = a + q[i] * f16_to_f32(kp[i]);
        s[t] = a * scale;
    }
}

/* out[i] = sum over t in order of (s[t] * inv) * V_t[i] (each step out + w*v, not fused): KvCache.addValue's order. */
void FN(attn_values_f16)(const uint16_t *v, const int64_t *off, int64_t from, int64_t to, int64_t dim, const float *s,
                         float inv, float *out, int64_t outoff, int64_t n) {
    out += outoff;
    for (int64_t i = 0; i < n; i++) out[i] = 0.0f;
    for (int64_t t = from; t <= to; t++) {
        const uint16_t *vp = v + off[t] + dim;
        float w = s[t] * inv;
        __m256 wv = _mm256_set1_ps(w);
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) {
            __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(vp + i)));
            _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(out + i), _mm256_mul_ps(wv, x)));
        }
        for (; i < n; i++) out[i] = out[i] + w * f16_to_f32(vp[i]);
    }
}

