/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CPU detection. The decision rests on the CPU's own feature bits plus the
 * register state the OS saves (XCR0), because a CPU flag alone does not make
 * an instruction usable. libcpuid only names the CPU: 0.6.2 misses AVX-512
 * on AMD and has no VPOPCNTDQ flag.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "simdpath/cpu.h"

#if defined(__x86_64__)
#include <cpuid.h>
#ifdef SP_HAVE_LIBCPUID
#include <libcpuid.h>
#endif
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

static const char *const feature_names[] = {
#define SP_CPU_FEATURE_NAME(id, name) name,
    SP_CPU_FEATURES(SP_CPU_FEATURE_NAME)
#undef SP_CPU_FEATURE_NAME
};

static pthread_once_t features_once = PTHREAD_ONCE_INIT;
static pthread_once_t identity_once = PTHREAD_ONCE_INIT;
static uint64_t detected;
static struct sp_cpu_info identity;

const char *
sp_cpu_feature_name(unsigned bit)
{
    return bit < SP_CPU_FEATURE_COUNT ? feature_names[bit] : NULL;
}

void
sp_cpu_format_features(uint64_t set, char *buf, unsigned size)
{
    unsigned used = 0;

    if (size) {
        buf[0] = '\0';
    }
    for (unsigned bit = 0; bit < SP_CPU_FEATURE_COUNT; bit++) {
        if (set & (UINT64_C(1) << bit)) {
            int w = snprintf(buf + used, size - used, "%s%s", used ? " " : "",
                             feature_names[bit]);

            if (w < 0 || (unsigned)w >= size - used) {
                return;
            }
            used += (unsigned)w;
        }
    }
}

#if defined(__x86_64__)

static uint64_t
xgetbv0(void)
{
    uint32_t lo, hi;

    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* XCR0 bits: SSE and AVX (YMM) state; opmask, ZMM_Hi256 and Hi16_ZMM. */
#define XCR0_YMM 0x06
#define XCR0_ZMM 0xe6

static void
detect_features(void)
{
    unsigned eax, ebx, ecx, edx;
    unsigned max = __get_cpuid_max(0, NULL);
    uint64_t f = 0;
    uint64_t xcr0 = 0;
    bool ymm, zmm;

    if (max < 1) {
        return;
    }
    __cpuid(1, eax, ebx, ecx, edx);
    if (ecx & (1u << 20)) {
        f |= SP_CPU(SSE42);
    }
    if (ecx & (1u << 23)) {
        f |= SP_CPU(POPCNT);
    }
    if (ecx & (1u << 1)) {
        f |= SP_CPU(PCLMUL);
    }
    if (ecx & (1u << 22)) {
        f |= SP_CPU(MOVBE);
    }
    /* XGETBV faults unless the OS set CR4.OSXSAVE (reported here). */
    if (ecx & (1u << 27)) {
        xcr0 = xgetbv0();
    }
    ymm = (xcr0 & XCR0_YMM) == XCR0_YMM;
    zmm = (xcr0 & XCR0_ZMM) == XCR0_ZMM;
    if (ymm) {
        f |= SP_CPU(OS_YMM);
        if (ecx & (1u << 28)) {
            f |= SP_CPU(AVX);
        }
    }
    if (zmm) {
        f |= SP_CPU(OS_ZMM);
    }
    if (max >= 7) {
        __cpuid_count(7, 0, eax, ebx, ecx, edx);
        const struct {
            unsigned *reg;
            unsigned bit;
            uint64_t feature;
            bool state; /* register state the feature needs */
        } leaf7[] = {
            {&ebx, 3, SP_CPU(BMI1), true},
            {&ebx, 8, SP_CPU(BMI2), true},
            {&ebx, 5, SP_CPU(AVX2), ymm},
            {&ebx, 16, SP_CPU(AVX512F), zmm},
            {&ebx, 17, SP_CPU(AVX512DQ), zmm},
            {&ebx, 28, SP_CPU(AVX512CD), zmm},
            {&ebx, 30, SP_CPU(AVX512BW), zmm},
            {&ebx, 31, SP_CPU(AVX512VL), zmm},
            {&ecx, 1, SP_CPU(AVX512VBMI), zmm},
            {&ecx, 6, SP_CPU(AVX512VBMI2), zmm},
            {&ecx, 8, SP_CPU(GFNI), true},
            {&ecx, 10, SP_CPU(VPCLMULQDQ), ymm},
            {&ecx, 12, SP_CPU(AVX512BITALG), zmm},
            {&ecx, 14, SP_CPU(AVX512VPOPCNTDQ), zmm},
        };
        for (size_t i = 0; i < sizeof leaf7 / sizeof leaf7[0]; i++) {
            if (leaf7[i].state && (*leaf7[i].reg & (1u << leaf7[i].bit))) {
                f |= leaf7[i].feature;
            }
        }
    }
    detected = f;
}

/* Vendor and brand straight from CPUID, when libcpuid is absent or fails. */
static void
identify_by_cpuid(struct sp_cpu_info *id)
{
    unsigned regs[4];

    __cpuid(0, regs[0], regs[1], regs[2], regs[3]);
    memcpy(id->vendor, &regs[1], 4);
    memcpy(id->vendor + 4, &regs[3], 4);
    memcpy(id->vendor + 8, &regs[2], 4);
    id->vendor[12] = '\0';
    if ((unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x80000004u) {
        for (unsigned leaf = 0; leaf < 3; leaf++) {
            __cpuid(0x80000002u + leaf, regs[0], regs[1], regs[2], regs[3]);
            memcpy(id->brand + 16 * leaf, regs, 16);
        }
        id->brand[48] = '\0';
    }
    id->source = "cpuid";
}

static void
identify(void)
{
    struct sp_cpu_info *id = &identity;

    id->arch = "x86_64";
#ifdef SP_HAVE_LIBCPUID
    struct cpu_raw_data_t raw;
    struct cpu_id_t data;

    if (cpuid_get_raw_data(&raw) == 0 && cpu_identify(&raw, &data) == 0) {
        snprintf(id->vendor, sizeof id->vendor, "%s", data.vendor_str);
        snprintf(id->brand, sizeof id->brand, "%s", data.brand_str);
        snprintf(id->codename, sizeof id->codename, "%s", data.cpu_codename);
        id->cores = data.num_cores > 0 ? (unsigned)data.num_cores : 0;
        id->logical =
            data.num_logical_cpus > 0 ? (unsigned)data.num_logical_cpus : 0;
        id->l1d_kib =
            data.l1_data_cache > 0 ? (unsigned)data.l1_data_cache : 0;
        id->l2_kib = data.l2_cache > 0 ? (unsigned)data.l2_cache : 0;
        id->l3_kib = data.l3_cache > 0 ? (unsigned)data.l3_cache : 0;
        id->libcpuid_avx2 = data.flags[CPU_FEATURE_AVX2];
        id->libcpuid_avx512f = data.flags[CPU_FEATURE_AVX512F];
        snprintf(id->source_buf, sizeof id->source_buf, "libcpuid %s",
                 cpuid_lib_version());
        id->source = id->source_buf;
        return;
    }
#endif
    identify_by_cpuid(id);
}

#elif defined(__aarch64__)

/* Linux arm64 hwcap bits (asm/hwcap.h), spelled out to build anywhere. */
#define HWCAP_ASIMD_BIT (1ul << 1)
#define HWCAP_PMULL_BIT (1ul << 4)
#define HWCAP_CRC32_BIT (1ul << 7)
#define HWCAP_SVE_BIT   (1ul << 22)
#define HWCAP2_SVE2_BIT (1ul << 1)

static void
detect_features(void)
{
    unsigned long hwcap = getauxval(AT_HWCAP);
    unsigned long hwcap2 = getauxval(AT_HWCAP2);
    uint64_t f = 0;

    if (hwcap & HWCAP_ASIMD_BIT) {
        f |= SP_CPU(ASIMD);
    }
    if (hwcap & HWCAP_PMULL_BIT) {
        f |= SP_CPU(PMULL);
    }
    if (hwcap & HWCAP_CRC32_BIT) {
        f |= SP_CPU(CRC32);
    }
    if (hwcap & HWCAP_SVE_BIT) {
        f |= SP_CPU(SVE);
    }
    if (hwcap2 & HWCAP2_SVE2_BIT) {
        f |= SP_CPU(SVE2);
    }
    detected = f;
}

#define HWCAP_CPUID_BIT (1ul << 11) /* MIDR_EL1 readable from EL0 */

static const struct {
    unsigned implementer;
    const char *name;
} arm_implementers[] = {
    {0x41, "ARM"},      {0x42, "Broadcom"},  {0x43, "Cavium"},
    {0x46, "Fujitsu"},  {0x48, "HiSilicon"}, {0x4e, "NVIDIA"},
    {0x51, "Qualcomm"}, {0x61, "Apple"},     {0xc0, "Ampere"},
};

static const struct {
    unsigned part;
    const char *name;
} arm_parts[] = {
    {0xd03, "Cortex-A53"},  {0xd05, "Cortex-A55"},  {0xd07, "Cortex-A57"},
    {0xd08, "Cortex-A72"},  {0xd0b, "Cortex-A76"},  {0xd0c, "Neoverse-N1"},
    {0xd40, "Neoverse-V1"}, {0xd49, "Neoverse-N2"}, {0xd4f, "Neoverse-V2"},
};

/* Arm CPUs have no brand string: the implementer and part come from
 * MIDR_EL1, which Linux lets user space read when it sets HWCAP_CPUID. */
static void
identify(void)
{
    struct sp_cpu_info *id = &identity;
    uint64_t midr = 0;
    unsigned implementer, part;

    id->arch = "aarch64";
    id->source = "MIDR_EL1";
    if (getauxval(AT_HWCAP) & HWCAP_CPUID_BIT) {
        __asm__("mrs %0, MIDR_EL1" : "=r"(midr));
    }
    implementer = (unsigned)(midr >> 24) & 0xff;
    part = (unsigned)(midr >> 4) & 0xfff;
    snprintf(id->vendor, sizeof id->vendor, "implementer 0x%02x", implementer);
    for (size_t i = 0; i < sizeof arm_implementers / sizeof *arm_implementers;
         i++) {
        if (arm_implementers[i].implementer == implementer) {
            snprintf(id->vendor, sizeof id->vendor, "%s",
                     arm_implementers[i].name);
        }
    }
    snprintf(id->brand, sizeof id->brand, "part 0x%03x", part);
    for (size_t i = 0;
         implementer == 0x41 && i < sizeof arm_parts / sizeof *arm_parts;
         i++) {
        if (arm_parts[i].part == part) {
            snprintf(id->brand, sizeof id->brand, "%s", arm_parts[i].name);
        }
    }
}

#else

static void
detect_features(void)
{
    detected = 0;
}

static void
identify(void)
{
    identity.arch = "unknown";
    identity.source = "none";
}

#endif

/* Counts and cache sizes the CPU-specific code did not fill in. */
static void
identify_from_sysconf(void)
{
    struct sp_cpu_info *id = &identity;
    long v;

    if (!id->logical && (v = sysconf(_SC_NPROCESSORS_ONLN)) > 0) {
        id->logical = (unsigned)v;
    }
    if (!id->l1d_kib && (v = sysconf(_SC_LEVEL1_DCACHE_SIZE)) > 0) {
        id->l1d_kib = (unsigned)(v / 1024);
    }
    if (!id->l2_kib && (v = sysconf(_SC_LEVEL2_CACHE_SIZE)) > 0) {
        id->l2_kib = (unsigned)(v / 1024);
    }
    if (!id->l3_kib && (v = sysconf(_SC_LEVEL3_CACHE_SIZE)) > 0) {
        id->l3_kib = (unsigned)(v / 1024);
    }
}

/* CPUs pad their brand string with spaces. */
static void
trim(char *s)
{
    size_t len = strlen(s);

    while (len && s[len - 1] == ' ') {
        s[--len] = '\0';
    }
}

static void
identify_once(void)
{
    identify();
    trim(identity.brand);
    identify_from_sysconf();
}

uint64_t
sp_cpu_detect_features(void)
{
    pthread_once(&features_once, detect_features);
    return detected;
}

const struct sp_cpu_info *
sp_cpu_identity(void)
{
    pthread_once(&identity_once, identify_once);
    return &identity;
}
