/* SPDX-License-Identifier: BSD-3-Clause */
/* simdpath impls: the registry as a table, and the CPU that decided it. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "simdpath/cpu.h"
#include "simdpath/dispatch.h"

static void
print_cpu(void)
{
    const struct sp_cpu_info *id = sp_cpu_identity();
    uint64_t detected = sp_cpu_detect_features();
    uint64_t used = sp_dispatch_features();
    char features[1024];

    printf("CPU:      %s, %s%s%s\n", id->arch, id->vendor,
           id->brand[0] ? ", " : "", id->brand);
    if (id->codename[0]) {
        printf("          codename %s (libcpuid's name)\n", id->codename);
    }
    printf("          %u cores, %u logical; L1d %u KiB, L2 %u KiB, "
           "L3 %u KiB (from %s)\n",
           id->cores, id->logical, id->l1d_kib, id->l2_kib, id->l3_kib,
           id->source);
    sp_cpu_format_features(used, features, sizeof features);
    printf("Features: %s\n", features[0] ? features : "(none)");
    if (detected != used) {
        sp_cpu_format_features(detected & ~used, features, sizeof features);
        printf("Hidden:   %s\n", features);
    }
#if defined(__x86_64__)
    printf("          (decided from CPUID and XGETBV)\n");
    if (!strncmp(id->source, "libcpuid", 8)) {
        bool real = used & SP_CPU(AVX512F);

        printf("          libcpuid says avx2 %s, avx512f %s%s\n",
               id->libcpuid_avx2 ? "yes" : "no",
               id->libcpuid_avx512f ? "yes" : "no",
               real != id->libcpuid_avx512f
                   ? " (wrong: libcpuid 0.6.2 misses AVX-512 on AMD; "
                     "not used)"
                   : "");
    }
#elif defined(__aarch64__)
    printf("          (decided from getauxval(AT_HWCAP))\n");
#endif
}

static void
print_variants(void)
{
    unsigned max = sp_dispatch_max_simd();

    printf("\nVariants (max SIMD width: %s%s):\n", max ? "" : "no cap",
           max == 128   ? "128"
           : max == 256 ? "256"
           : max == 512 ? "512"
                        : "");
    for (unsigned i = 0; i < sp_variant_count(); i++) {
        const struct sp_variant *v = sp_variant_get(i);
        char needs[512];
        const char *state = !sp_variant_supported(v) ? "not supported"
                            : !sp_variant_allowed(v) ? "above the cap"
                                                     : "supported";

        sp_cpu_format_features(v->requires, needs, sizeof needs);
        printf("  %-10s %3u bits  %-13s needs: %s\n", v->name, v->width, state,
               needs[0] ? needs : "-");
    }
    printf("  not compiled in this build:");
    for (unsigned i = 0; sp_isa_name(i); i++) {
        if (!sp_variant_find(sp_isa_name(i))) {
            printf(" %s", sp_isa_name(i));
        }
    }
    putchar('\n');
}

/* One cell: "yes", "no cpu", "capped", or "=X" when the variant runs X's
 * code; '*' marks the variant in use. */
static void
print_cell(enum sp_kernel_id k, const struct sp_variant *v,
           const struct sp_variant *active)
{
    const struct sp_variant *provider = sp_variant_provider(v, k);
    char cell[32];

    if (provider != v) {
        snprintf(cell, sizeof cell, "=%s", provider->name);
    } else if (!sp_variant_supported(v)) {
        snprintf(cell, sizeof cell, "no cpu");
    } else if (!sp_variant_allowed(v)) {
        snprintf(cell, sizeof cell, "capped");
    } else {
        snprintf(cell, sizeof cell, "yes");
    }
    if (active == v) {
        strcat(cell, "*");
    }
    printf(" %-11s", cell);
}

static void
print_kernels(void)
{
    static const char *const modes[] = {"auto", "forced", "autovalidate"};

    printf("\nKernels (yes: own code; =X: runs X's code; no cpu: the CPU "
           "lacks it;\n         capped: above --max-simd; *: in use):\n");
    printf("  %-13s", "kernel");
    for (unsigned i = 0; i < sp_variant_count(); i++) {
        printf(" %-11s", sp_variant_get(i)->name);
    }
    printf(" active\n");
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        const struct sp_variant *active;
        enum sp_choice_mode mode = sp_dispatch_choice(k, &active);

        printf("  %-13s", sp_kernel_name(k));
        for (unsigned i = 0; i < sp_variant_count(); i++) {
            print_cell(k, sp_variant_get(i), active);
        }
        if (active) {
            printf(" %s (%s)\n", active->name, modes[mode]);
        } else {
            printf(" %s\n", modes[mode]);
        }
    }
}

int
sp_cmd_impls(int argc, char **argv)
{
    if (argc > 1) {
        sp_cli_error("impls", "unexpected argument '%s'", argv[1]);
        return SP_EXIT_USAGE;
    }
    print_cpu();
    print_variants();
    print_kernels();
    return SP_EXIT_OK;
}
