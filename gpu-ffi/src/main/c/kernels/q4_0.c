/*
 * Q4_0 weights: d, 16 bytes of nibbles (element j low, j+16 high), value (q-8)*d.
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
AI blk32 load_q4_0(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = 0.0f;
    r.q = _mm256_sub_epi8(nibbles_pair(_mm_loadu_si128((const __m128i *)(b + 2))), _mm256_set1_epi8(8));
    return r;
}

DEF_LEGACY(q4_0, 18, load_q4_0, 1, 0)
