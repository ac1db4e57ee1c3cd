/* SPDX-License-Identifier: BSD-3-Clause */
/* simdpath impls: the registry as a table, and the CPU that decided it. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "simdpath/cpu.h"
#include "simdpath/dispatch.h"

static void
print_cpu(FILE *out)
{
    const struct sp_cpu_info *id = sp_cpu_identity();
    uint64_t detected = sp_cpu_detect_features();
    uint64_t used = sp_dispatch_features();
    char features[1024];

    fprintf(out, "CPU:      %s, %s%s%s\n", id->arch, id->vendor,
            id->brand[0] ? ", " : "", id->brand);
    if (id->codename[0]) {
        fprintf(out, "          codename %s (libcpuid's name)\n",
                id->codename);
    }
    fprintf(out,
            "          %u cores, %u logical; L1d %u KiB, L2 %u KiB, "
            "L3 %u KiB (from %s)\n",
            id->cores, id->logical, id->l1d_kib, id->l2_kib, id->l3_kib,
            id->source);
    sp_cpu_format_features(used, features, sizeof features);
    fprintf(out, "Features: %s\n", features[0] ? features : "(none)");
    if (detected != used) {
        sp_cpu_format_features(detected & ~used, features, sizeof features);
        fprintf(out, "Hidden:   %s\n", features);
    }
#if defined(__x86_64__)
    fprintf(out, "          (decided from CPUID and XGETBV)\n");
    if (!strncmp(id->source, "libcpuid", 8)) {
        bool real = used & SP_CPU(AVX512F);

        fprintf(out, "          libcpuid says avx2 %s, avx512f %s%s\n",
                id->libcpuid_avx2 ? "yes" : "no",
                id->libcpuid_avx512f ? "yes" : "no",
                real != id->libcpuid_avx512f
                    ? " (wrong: libcpuid 0.6.2 misses AVX-512 on AMD; "
                      "not used)"
                    : "");
    }
#elif defined(__aarch64__)
    fprintf(out, "          (decided from getauxval(AT_HWCAP))\n");
#endif
}

static void
print_variants(FILE *out)
{
    unsigned max = sp_dispatch_max_simd();

    fprintf(out, "\nVariants (max SIMD width: %s%s):\n", max ? "" : "no cap",
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
        fprintf(out, "  %-10s %3u bits  %-13s needs: %s\n", v->name, v->width,
                state, needs[0] ? needs : "-");
    }
    fprintf(out, "  not compiled in this build:");
    for (unsigned i = 0, shown = 0; sp_isa_name(i); i++) {
        if (sp_isa_absence(i)) {
            fprintf(out, "%s %s (%s)", shown++ ? "," : "", sp_isa_name(i),
                    sp_isa_absence(i));
        }
    }
    fputs("\n\n", out);
}

/* One cell: "yes", "no cpu", "capped", or "=X" when the variant runs X's
 * code; '*' marks the variant in use. */
static void
print_cell(FILE *out, enum sp_kernel_id k, const struct sp_variant *v,
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
    fprintf(out, " %-11s", cell);
}

void
sp_cli_print_kernels(FILE *out)
{
    static const char *const modes[] = {"auto", "forced", "autovalidate"};

    fprintf(out,
            "Kernels (yes: own code; =X: runs X's code; no cpu: the CPU "
            "lacks it;\n         capped: above --max-simd; *: in use):\n");
    fprintf(out, "  %-13s", "kernel");
    for (unsigned i = 0; i < sp_variant_count(); i++) {
        fprintf(out, " %-11s", sp_variant_get(i)->name);
    }
    fprintf(out, " active\n");
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        const struct sp_variant *active;
        enum sp_choice_mode mode = sp_dispatch_choice(k, &active);

        fprintf(out, "  %-13s", sp_kernel_name(k));
        for (unsigned i = 0; i < sp_variant_count(); i++) {
            print_cell(out, k, sp_variant_get(i), active);
        }
        if (active) {
            fprintf(out, " %s (%s)\n", active->name, modes[mode]);
        } else {
            fprintf(out, " %s\n", modes[mode]);
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
    print_cpu(stdout);
    print_variants(stdout);
    sp_cli_print_kernels(stdout);
    return SP_EXIT_OK;
}
