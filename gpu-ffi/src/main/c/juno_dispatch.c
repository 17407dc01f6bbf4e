/*
 * Built for the baseline x86-64: tells Java which of the library's ISA variants this CPU (and its OS) can run.
 */
#include <stdint.h>

#include "juno_cpu.h"

#define ABI_VERSION 4

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
        }
    }
#endif
    return f;
}
