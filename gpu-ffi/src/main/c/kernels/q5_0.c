/*
 * Q5_0 weights: d, 32 fifth bits, nibbles, value (q-16)*d.
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
AI blk32 load_q5_0(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = 0.0f;
    __m256i q = _mm256_or_si256(nibbles_pair(_mm_loadu_si128((const __m128i *)(b + 6))), high_bits_pair(rd32(b + 2)));
    r.q = _mm256_sub_epi8(q, _mm256_set1_epi8(16));
    return r;
}

DEF_LEGACY(q5_0, 22, load_q5_0, 1, 0)
