/*
 * Q4_1 weights: d, m, 16 bytes of nibbles, value q*d + m.
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
AI blk32 load_q4_1(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = f16_to_f32(rd16(b + 2));
    r.q = nibbles_pair(_mm_loadu_si128((const __m128i *)(b + 4)));
    return r;
}

DEF_LEGACY(q4_1, 20, load_q4_1, 0, 1)
