/*
 * Q5_1 weights: d, m, 32 fifth bits, nibbles, value q*d + m.
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
AI blk32 load_q5_1(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = f16_to_f32(rd16(b + 2));
    r.q = _mm256_or_si256(nibbles_pair(_mm_loadu_si128((const __m128i *)(b + 8))), high_bits_pair(rd32(b + 4)));
    return r;
}

DEF_LEGACY(q5_1, 24, load_q5_1, 0, 1)
