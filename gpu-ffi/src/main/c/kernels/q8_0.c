/*
 * Q8_0 weights: d, 32 signed bytes.
 * Included by juno_cpu.c, once per ISA variant (see there).
 */
AI blk32 load_q8_0(const uint8_t *b) {
    blk32 r;
    r.d = f16_to_f32(rd16(b));
    r.m = 0.0f;
    r.q = pair_order(_mm256_loadu_si256((const __m256i *)(b + 2)));
    return r;
}

DEF_LEGACY(q8_0, 34, load_q8_0, 1, 0)
