/*
 * Built for the baseline x86-64: tells Java which of the library's ISA variants this CPU (and its OS) can run.
 */
#include <stdint.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "juno_cpu.h"

#define ABI_VERSION 7

/* The ABI version of juno_cpu.h this library was built with; Java refuses a library of another version. */
int juno_abi_version(void) { return ABI_VERSION; }

/* JUNO_FEAT_* bits of the running CPU (CPUID and the OS's saved vector state, as GCC's builtins check them). */
int juno_cpu_features(void) {
    int f = 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        f |= JUNO_FEAT_AVX2; /* every AVX2 CPU has F16C */
        if (__builtin_cpu_supports("avxvnni")) f |= JUNO_FEAT_AVXVNNI;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
                && __builtin_cpu_supports("avx512vnni")) {
            f |= JUNO_FEAT_AVX512VNNI;
            /* CPUID.7.0:EDX bits 24 (AMX-TILE) and 25 (AMX-INT8); XCR0 bits 17 and 18 (tile config and data) */
            unsigned a, b, c, d;
            if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (3u << 24)) == (3u << 24)) {
                unsigned lo, hi;
                __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
                if ((lo & (3u << 17)) == (3u << 17)) f |= JUNO_FEAT_AMX;
            }
        }
    }
#endif
    return f;
}
