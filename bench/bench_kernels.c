/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cycles per item of the foundation kernels (hash, batch_copy) for every
 * variant this CPU runs, each as a ratio to scalar from the same run.
 * Usage: bench_kernels [SAMPLES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "simdpath/dispatch.h"
#include "simdpath/random.h"

#define KEYS 32

struct hash_case {
    sp_hash_fn *fn;
    struct sp_flow_key keys[KEYS];
    struct sp_flow_key mask;
    bool masked;
    uint32_t hashes[KEYS];
};

static void
run_hash(void *ctx)
{
    struct hash_case *c = ctx;

    c->fn(c->keys, c->masked ? &c->mask : NULL, KEYS, c->hashes);
    __asm__ volatile("" ::"r"(c->hashes) : "memory");
}

struct copy_case {
    sp_batch_copy_fn *fn;
    void *src[SP_BATCH_MAX];
    void *dst[SP_BATCH_MAX];
    uint32_t select;
};

static void
run_copy(void *ctx)
{
    struct copy_case *c = ctx;

    c->fn(c->dst, c->src, SP_BATCH_MAX, c->select);
    __asm__ volatile("" ::"r"(c->dst) : "memory");
}

static void
row(const char *kernel, const char *what, const char *variant, double ticks,
    unsigned items, double scalar)
{
    double per = ticks / items;

    printf("%-11s %-22s %-10s %10.2f %9.2f %8.2fx\n", kernel, what, variant,
           per, per / sp_ticks_per_ns(), scalar / ticks);
}

int
main(int argc, char **argv)
{
    unsigned samples = argc > 1 ? (unsigned)atoi(argv[1]) : 31;
    static struct hash_case hc;
    static struct copy_case cc;
    struct sp_random rng = {1};
    static const struct {
        const char *name;
        uint32_t select;
    } selections[] = {
        {"all 32 selected", UINT32_MAX},
        {"half (alternate)", 0x55555555},
        {"1 in 8", 0x01010101},
    };

    if (samples < 3) {
        samples = 3;
    }
    sp_random_fill(&rng, hc.keys, sizeof hc.keys);
    memset(&hc.mask, 0, sizeof hc.mask);
    memset(&hc.mask.blocks[1], 0xff, 40); /* a 5-tuple-like mask */
    sp_random_fill(&rng, cc.src, sizeof cc.src);
    printf("TSC %.3f ticks/ns; median of %u samples; ratio = scalar "
           "ticks / variant ticks (same run)\n",
           sp_ticks_per_ns(), samples);
    printf("%-11s %-22s %-10s %10s %9s %9s\n", "kernel", "case", "variant",
           "ticks/item", "ns/item", "vs scalar");
    for (int masked = 0; masked < 2; masked++) {
        double scalar = 0;

        hc.masked = masked;
        for (unsigned i = 0; i < sp_variant_count(); i++) {
            const struct sp_variant *v = sp_variant_get(i);
            double t;

            if (!sp_variant_allowed(v) ||
                sp_variant_provider(v, SP_KERNEL_hash) != v) {
                continue;
            }
            hc.fn = v->kernels->hash;
            t = sp_bench_median(run_hash, &hc, 2000, samples);
            scalar = i ? scalar : t;
            row("hash", masked ? "32 keys, masked" : "32 keys, no mask",
                v->name, t, KEYS, scalar);
        }
    }
    for (size_t s = 0; s < sizeof selections / sizeof *selections; s++) {
        double scalar = 0;
        unsigned items = (unsigned)__builtin_popcount(selections[s].select);

        cc.select = selections[s].select;
        for (unsigned i = 0; i < sp_variant_count(); i++) {
            const struct sp_variant *v = sp_variant_get(i);
            double t;

            if (!sp_variant_allowed(v) ||
                sp_variant_provider(v, SP_KERNEL_batch_copy) != v) {
                continue;
            }
            cc.fn = v->kernels->batch_copy;
            t = sp_bench_median(run_copy, &cc, 5000, samples);
            scalar = i ? scalar : t;
            row("batch_copy", selections[s].name, v->name, t, items, scalar);
        }
    }
    return 0;
}
