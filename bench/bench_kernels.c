/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cycles per item of the foundation kernels (hash, batch_copy) for every
 * variant this CPU runs, each as a ratio to scalar from the same run.
 * Usage: bench_kernels [SAMPLES]
 *
 * Or, for instruction counts: bench_kernels --count VARIANT ITERATIONS
 * [CASE] runs VARIANT's kernel ITERATIONS times on each case (hash, batch
 * copy, EMC, classifier lookup, IPv4 rewrite; or on CASE alone)
 * and nothing else: no timing, no other variant. The difference of the
 * instructions two such runs execute, over the difference of their
 * ITERATIONS times the items per iteration (printed per case), is the
 * kernel's instructions per item, start-up and set-up cancelled out
 * (docs/perf/arm.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-qsbr.h>

#include "bench_rules.h"
#include "benchlib.h"
#include "simdpath/classifier.h"
#include "simdpath/dispatch.h"
#include "simdpath/emc.h"
#include "simdpath/pktgen.h"
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

/* An EMC holding KEYS keys, and KEYS keys to look up: all of them (hits)
 * or others (misses). */
struct emc_case {
    sp_emc_fn *fn;
    struct sp_emc emc;
    struct sp_flow_key keys[KEYS];
    uint32_t hashes[KEYS];
    const struct sp_rule *rules[KEYS];
};

static void
run_emc(void *ctx)
{
    struct emc_case *c = ctx;

    c->fn(&c->emc, 1, c->keys, c->hashes, KEYS, c->rules);
    __asm__ volatile("" ::"r"(c->rules) : "memory");
}

/* The EMC filled with KEYS random keys, then the keys to look up: those
 * (hits) or fresh ones (misses). */
static int
emc_setup(struct emc_case *c, sp_emc_fn *fn, sp_hash_fn *hash, bool hit)
{
    struct sp_random rng = {7};
    struct sp_err err;

    if (sp_emc_init(&c->emc, 8192, 1, &err)) {
        fprintf(stderr, "bench_kernels: %s\n", err.msg);
        return -1;
    }
    c->fn = fn;
    sp_random_fill(&rng, c->keys, sizeof c->keys);
    hash(c->keys, NULL, KEYS, c->hashes);
    for (unsigned i = 0; i < KEYS; i++) {
        sp_emc_insert(&c->emc, 1, &c->keys[i], c->hashes[i],
                      (const struct sp_rule *)&c->keys[i], &rng);
    }
    if (!hit) {
        sp_random_fill(&rng, c->keys, sizeof c->keys);
        hash(c->keys, NULL, KEYS, c->hashes);
    }
    return 0;
}

/* A classifier of CLS_RULES rules in one subtable, looked up through
 * sp_cls_lookup with the classifier kernel forced, for KEYS keys that
 * match a rule each (hits) or random keys (misses). */
#define CLS_RULES 1000

struct cls_case {
    struct sp_cls *cls;
    struct sp_flow_key keys[KEYS];
    const struct sp_rule *rules[KEYS];
};

static void
run_cls(void *ctx)
{
    struct cls_case *c = ctx;

    sp_cls_lookup(c->cls, c->keys, KEYS, UINT32_MAX, c->rules);
    __asm__ volatile("" ::"r"(c->rules) : "memory");
}

static int
cls_setup(struct cls_case *c, const char *variant, bool hit)
{
    static struct sp_match matches[CLS_RULES];
    struct sp_random rng = {11};
    struct sp_err err;
    char spec[64];

    snprintf(spec, sizeof spec, "classifier=%s", variant);
    c->cls = sp_cls_create(NULL);
    if (!c->cls || sp_dispatch_set_impl(spec, &err)) {
        fprintf(stderr, "bench_kernels: %s\n", c->cls ? err.msg : "no memory");
        return -1;
    }
    for (uint32_t i = 0; i < CLS_RULES; i++) {
        sp_bench_match(0, i, &rng, &matches[i]);
        if (!sp_cls_insert(c->cls, &matches[i], 1, NULL, &err)) {
            fprintf(stderr, "bench_kernels: %s\n", err.msg);
            return -1;
        }
    }
    for (unsigned k = 0; k < KEYS; k++) {
        if (hit) {
            sp_bench_key_for(&matches[k * 31], &rng, &c->keys[k]);
        } else {
            sp_random_fill(&rng, &c->keys[k], sizeof c->keys[k]);
        }
    }
    return 0;
}

/* KEYS IPv4/UDP packets and a rewrite that sets, every time, the same
 * fields to the same values (dec_ttl would change the packets' path as
 * their TTLs ran out). */
struct rewrite_case {
    sp_ipv4_rewrite_fn *fn;
    uint8_t bytes[KEYS][SP_PKTGEN_MAX];
    struct sp_packet pkts[KEYS];
    struct sp_packet *ptrs[KEYS];
    struct sp_ipv4_set set;
};

static void
run_rewrite(void *ctx)
{
    struct rewrite_case *c = ctx;

    c->fn(c->ptrs, KEYS, &c->set);
    __asm__ volatile("" ::"r"(c->bytes) : "memory");
}

/* Sets of rewrite cases: the TTL; both addresses; TOS, TTL and both. */
static void
rewrite_setup(struct rewrite_case *c, sp_ipv4_rewrite_fn *fn, int which)
{
    struct sp_random rng = {13};

    c->fn = fn;
    for (unsigned i = 0; i < KEYS; i++) {
        c->pkts[i] = (struct sp_packet){
            .data = c->bytes[i],
            .len = (uint32_t)sp_pktgen(SP_PKTGEN_IPV4_UDP, &rng, c->bytes[i]),
            .l3_ofs = 14,
            .l4_ofs = 34,
        };
        c->ptrs[i] = &c->pkts[i];
    }
    c->set = (struct sp_ipv4_set){.ttl = 64, .ttl_mask = 0xff};
    if (which >= 1) {
        c->set.src = 0x0100000a;
        c->set.src_mask = UINT32_MAX;
        c->set.dst = 0x0200000a;
        c->set.dst_mask = UINT32_MAX;
        c->set.ttl_mask = 0;
    }
    if (which == 2) {
        c->set.tos = 0x28;
        c->set.tos_mask = 0xfc;
        c->set.ttl_mask = 0xff;
    }
}

/* The cases of --count: name, items per iteration, and how to run one. */
static const struct {
    const char *name;
    enum sp_kernel_id kernel;
    unsigned items;
    void (*run)(void *ctx);
    int arg; /* masked (hash), selection (batch_copy), hits (emc, cls),
              * set (ipv4_rewrite) */
} count_cases[] = {
    {"hash-nomask", SP_KERNEL_hash, KEYS, run_hash, 0},
    {"hash-masked", SP_KERNEL_hash, KEYS, run_hash, 1},
    {"copy-all", SP_KERNEL_batch_copy, 32, run_copy, 0},
    {"copy-half", SP_KERNEL_batch_copy, 16, run_copy, 1},
    {"copy-1in8", SP_KERNEL_batch_copy, 4, run_copy, 2},
    {"emc-hit", SP_KERNEL_emc, KEYS, run_emc, 1},
    {"emc-miss", SP_KERNEL_emc, KEYS, run_emc, 0},
    {"cls-hit", SP_KERNEL_classifier, KEYS, run_cls, 1},
    {"cls-miss", SP_KERNEL_classifier, KEYS, run_cls, 0},
    {"ipv4-ttl", SP_KERNEL_ipv4_rewrite, KEYS, run_rewrite, 0},
    {"ipv4-addrs", SP_KERNEL_ipv4_rewrite, KEYS, run_rewrite, 1},
    {"ipv4-tos-ttl-addrs", SP_KERNEL_ipv4_rewrite, KEYS, run_rewrite, 2},
};

static const uint32_t copy_selects[] = {UINT32_MAX, 0x55555555, 0x01010101};

/* bench_kernels --count VARIANT ITERATIONS [CASE]. */
static int
count_mode(int argc, char **argv)
{
    static struct hash_case hc;
    static struct copy_case cc;
    static struct emc_case ec;
    static struct cls_case clc;
    static struct rewrite_case rc;
    struct sp_random rng = {1};
    const struct sp_variant *v;
    unsigned long iterations;
    unsigned ran = 0;

    if (sp_bench_count_args("bench_kernels", argc, argv, &v, &iterations)) {
        return 2;
    }
    sp_random_fill(&rng, hc.keys, sizeof hc.keys);
    memset(&hc.mask.blocks[1], 0xff, 40);
    hc.fn = v->kernels->hash;
    sp_random_fill(&rng, cc.src, sizeof cc.src);
    cc.fn = v->kernels->batch_copy;
    for (size_t k = 0; k < sizeof count_cases / sizeof *count_cases; k++) {
        void *ctx = &hc;

        if (argc == 5 && strcmp(argv[4], count_cases[k].name)) {
            continue;
        }
        if (count_cases[k].kernel == SP_KERNEL_hash) {
            hc.masked = count_cases[k].arg;
        } else if (count_cases[k].kernel == SP_KERNEL_batch_copy) {
            cc.select = copy_selects[count_cases[k].arg];
            ctx = &cc;
        } else if (count_cases[k].kernel == SP_KERNEL_emc) {
            if (emc_setup(&ec, v->kernels->emc,
                          sp_variant_get(0)->kernels->hash,
                          count_cases[k].arg)) {
                return 1;
            }
            ctx = &ec;
        } else if (count_cases[k].kernel == SP_KERNEL_ipv4_rewrite) {
            rewrite_setup(&rc, v->kernels->ipv4_rewrite, count_cases[k].arg);
            ctx = &rc;
        } else {
            if (cls_setup(&clc, v->name, count_cases[k].arg)) {
                return 1;
            }
            ctx = &clc;
        }
        for (unsigned long i = 0; i < iterations; i++) {
            count_cases[k].run(ctx);
        }
        if (count_cases[k].kernel == SP_KERNEL_emc) {
            sp_emc_destroy(&ec.emc);
        } else if (count_cases[k].kernel == SP_KERNEL_classifier) {
            sp_cls_destroy(clc.cls);
        }
        printf("%s %s %u items/iteration\n", count_cases[k].name, v->name,
               count_cases[k].items);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "bench_kernels: unknown CASE '%s'; cases:", argv[4]);
        for (size_t k = 0; k < sizeof count_cases / sizeof *count_cases; k++) {
            fprintf(stderr, " %s", count_cases[k].name);
        }
        fprintf(stderr, "\n");
        return 2;
    }
    return 0;
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

    if (argc > 1 && !strcmp(argv[1], "--count")) {
        int rc;

        rcu_register_thread();
        rc = count_mode(argc, argv);
        rcu_unregister_thread();
        return rc;
    }
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
