/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU identity and the features that decide which kernel variants can run.
 * Features come from CPUID + XGETBV on x86 and getauxval() on Arm; libcpuid
 * only names the CPU (0.6.2 misses AVX-512 on AMD and has no VPOPCNTDQ).
 */
#ifndef SP_CPU_H
#define SP_CPU_H

#include <stdbool.h>
#include <stdint.h>

/* X(id, name): the features simdpath knows, in display order. The OS_*
 * features mean the kernel saves that register state (XCR0). */
#define SP_CPU_FEATURES(X)                \
    X(SSE42, "sse4_2")                    \
    X(POPCNT, "popcnt")                   \
    X(PCLMUL, "pclmulqdq")                \
    X(MOVBE, "movbe")                     \
    X(OS_YMM, "os_ymm")                   \
    X(AVX, "avx")                         \
    X(AVX2, "avx2")                       \
    X(BMI1, "bmi1")                       \
    X(BMI2, "bmi2")                       \
    X(OS_ZMM, "os_zmm")                   \
    X(AVX512F, "avx512f")                 \
    X(AVX512CD, "avx512cd")               \
    X(AVX512BW, "avx512bw")               \
    X(AVX512DQ, "avx512dq")               \
    X(AVX512VL, "avx512vl")               \
    X(AVX512VBMI, "avx512vbmi")           \
    X(AVX512VBMI2, "avx512vbmi2")         \
    X(AVX512VPOPCNTDQ, "avx512vpopcntdq") \
    X(AVX512BITALG, "avx512bitalg")       \
    X(GFNI, "gfni")                       \
    X(VPCLMULQDQ, "vpclmulqdq")           \
    X(ASIMD, "asimd")                     \
    X(CRC32, "crc32")                     \
    X(PMULL, "pmull")                     \
    X(SVE, "sve")                         \
    X(SVE2, "sve2")

enum sp_cpu_feature_bit {
#define SP_CPU_FEATURE_BIT(id, name) SP_CPU_BIT_##id,
    SP_CPU_FEATURES(SP_CPU_FEATURE_BIT)
#undef SP_CPU_FEATURE_BIT
        SP_CPU_FEATURE_COUNT
};

#define SP_CPU(id) (UINT64_C(1) << SP_CPU_BIT_##id)

struct sp_cpu_info {
    const char *arch;   /* "x86_64", "aarch64", ... */
    char vendor[32];    /* "AuthenticAMD", "ARM", ... */
    char brand[64];     /* marketing name, if the CPU reports one */
    char codename[64];  /* libcpuid's codename, or "" */
    const char *source; /* what named the CPU: "libcpuid 0.6.2", ... */
    char source_buf[32];
    unsigned cores; /* 0 when unknown */
    unsigned logical;
    unsigned l1d_kib, l2_kib, l3_kib; /* 0 when unknown */
    /* Features as libcpuid saw them, for the report only. */
    bool libcpuid_avx2, libcpuid_avx512f;
};

/* Features of this CPU, detected once (thread-safe, cheap after the first
 * call). Does not include the test mask of sp_dispatch_hide_features(). */
uint64_t sp_cpu_detect_features(void);

/* Identity of this CPU; the first call may take a millisecond. */
const struct sp_cpu_info *sp_cpu_identity(void);

/* The name of one feature bit, or NULL. */
const char *sp_cpu_feature_name(unsigned bit);

/* Writes the names of the features in 'set', separated by spaces. */
void sp_cpu_format_features(uint64_t set, char *buf, unsigned size);

#endif /* SP_CPU_H */
