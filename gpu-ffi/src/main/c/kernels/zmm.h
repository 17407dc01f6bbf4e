/*
 * AVX-512 helpers: two weight rows per 512-bit register (only in the avx512vnni variant).
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
/* ---------------------------------------------------------------- AVX-512: two weight rows per 512-bit register */
#if defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define JUNO_ZMM 1
/*
 * The same integers and float steps as the 256-bit tiles, two weight rows at a time: the low 256 bits hold row r's
 * eight lanes, the high 256 bits row r+1's, so every lane computes exactly what the 256-bit code does (and the Java
 * backend) with half the instructions. ZP row pairs x ZC activation rows per tile.
 */
#define ZP 2
#define ZC 4
/* Wide tiles: one row pair x eight activation rows (each decode shared by eight, registers still fit), the rows left
   after them in one tile of their own; DEF_ZROWS from ZC + 1 rows, q4_k_zrows from eight. */
#define ZC_WIDE 8
#define ZC_MAX 8
#define ZP_MAX 4

AI __m512i pair_order_z(__m512i v) {
    const __m512i shuf = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15));
    return _mm512_shuffle_epi8(_mm512_permutex_epi64(v, 0xD8), shuf);
}

/* 32 bytes of row a in the low half, 32 of row b in the high half. */
AI __m512i load2(const uint8_t *a, const uint8_t *b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a)),
                              _mm256_loadu_si256((const __m256i *)b), 1);
}

/* 32 activation bytes in both halves. */
AI __m512i bcast32(const int8_t *p) { return _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)p)); }

/* A float for each half. */
AI __m512 halves_ps(float a, float b) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(a)), _mm256_set1_ps(b), 1);
}

AI float hsum8_lo(__m512 v) { return hsum8(_mm512_castps512_ps256(v)); }
AI float hsum8_hi(__m512 v) { return hsum8(_mm512_extractf32x8_ps(v, 1)); }

#endif
