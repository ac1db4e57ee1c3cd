/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cycles per item of the kernels (hash, batch copy, EMC, classifier
 * lookup, IPv4 rewrite, key match) for every variant this CPU runs that has
 * code of its own for the kernel, each as a ratio to scalar from the same run:
 * the variants take turns, one sample each (sp_bench_turns), so that the load
 * of a shared machine hits them alike.
 * Usage: bench_kernels [SAMPLES]
 *
 * Or, for instruction counts: bench_kernels --count VARIANT ITERATIONS
 * [CASE] runs VARIANT's kernel ITERATIONS times on each case (or on CASE
 * alone) and nothing else: no timing, no other variant. The difference of
 * the instructions two such runs execute, over the difference of their
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
#include "common/csum.h"
#include "common/proto.h"
#include "simdpath/classifier.h"
#include "simdpath/dispatch.h"
#include "simdpath/emc.h"
#include "simdpath/match.h"
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

/* A subtable of one rule's look-up: a 5-tuple-like mask, every key
 * matching or every other one. */
struct match_case {
    sp_key_match_fn *fn;
    struct sp_flow_key keys[KEYS];
    struct sp_match match; /* its key: the value under the mask */
    uint32_t hits;
};

static void
run_match(void *ctx)
{
    struct match_case *c = ctx;

    c->hits = c->fn(c->keys, KEYS, UINT32_MAX, &c->match.mask, &c->match.key);
    __asm__ volatile("" ::"r"(c->hits));
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
    uint16_t ttl_word[KEYS]; /* dec_ttl: each header's TTL word... */
    uint16_t csum[KEYS];     /* ...and checksum, put back every run */
};

static void
run_rewrite(void *ctx)
{
    struct rewrite_case *c = ctx;

    c->fn(c->ptrs, KEYS, &c->set);
    /* Else the TTLs run down to 1 and dec_ttl times the expired path. */
    for (unsigned i = 0; c->set.dec_ttl && i < KEYS; i++) {
        sp_store16(c->bytes[i] + 14 + SP_IPV4_TTL_OFS, c->ttl_word[i]);
        sp_store16(c->bytes[i] + 14 + SP_IPV4_CSUM_OFS, c->csum[i]);
    }
    __asm__ volatile("" ::"r"(c->bytes) : "memory");
}

/* Sets of rewrite cases: the TTL; both addresses; TOS, TTL and both;
 * dec_ttl (rule b of docs/perf/e2e.md). */
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
    if (which == 3) {
        c->set = (struct sp_ipv4_set){.dec_ttl = true};
        for (unsigned i = 0; i < KEYS; i++) {
            c->bytes[i][14 + SP_IPV4_TTL_OFS] |= 2; /* none expires */
            c->ttl_word[i] = sp_load16(c->bytes[i] + 14 + SP_IPV4_TTL_OFS);
            c->csum[i] = sp_load16(c->bytes[i] + 14 + SP_IPV4_CSUM_OFS);
        }
    }
}

/* The cases of both modes: name, items per iteration, and how to run one. */
static const struct {
    const char *name;
    enum sp_kernel_id kernel;
    unsigned items;
    void (*run)(void *ctx);
    int arg; /* masked (hash), selection (batch_copy), hits (emc, cls,
              * key_match), set (ipv4_rewrite) */
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
    {"ipv4-dec-ttl", SP_KERNEL_ipv4_rewrite, KEYS, run_rewrite, 3},
    {"match-all", SP_KERNEL_key_match, KEYS, run_match, 1},
    {"match-half", SP_KERNEL_key_match, KEYS, run_match, 0},
};

#define N_CASES (sizeof count_cases / sizeof *count_cases)

static const uint32_t copy_selects[] = {UINT32_MAX, 0x55555555, 0x01010101};

/* Every case's state; the kernels' inputs are drawn once. */
struct cases {
    struct hash_case hc;
    struct copy_case cc;
    struct emc_case ec;
    struct cls_case clc;
    struct rewrite_case rc;
    struct match_case mc;
};

static void
cases_init(struct cases *cs)
{
    struct sp_random rng = {1};

    sp_random_fill(&rng, cs->hc.keys, sizeof cs->hc.keys);
    memset(&cs->hc.mask.blocks[1], 0xff, 40); /* a 5-tuple-like mask */
    sp_random_fill(&rng, cs->cc.src, sizeof cs->cc.src);
    memset(&cs->mc.match.mask.blocks[1], 0xff, 40);
    sp_random_fill(&rng, cs->mc.keys, sizeof cs->mc.keys);
    for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
        cs->mc.match.key.blocks[b] =
            cs->mc.keys[0].blocks[b] & cs->mc.match.mask.blocks[b];
    }
}

/* Sets case k up to run variant v's kernel; returns its context or NULL
 * (the error printed). */
static void *
case_setup(struct cases *cs, size_t k, const struct sp_variant *v)
{
    int arg = count_cases[k].arg;

    switch (count_cases[k].kernel) {
    case SP_KERNEL_hash:
        cs->hc.masked = arg;
        cs->hc.fn = v->kernels->hash;
        return &cs->hc;
    case SP_KERNEL_batch_copy:
        cs->cc.select = copy_selects[arg];
        cs->cc.fn = v->kernels->batch_copy;
        return &cs->cc;
    case SP_KERNEL_emc:
        return emc_setup(&cs->ec, v->kernels->emc,
                         sp_variant_get(0)->kernels->hash, arg)
                   ? NULL
                   : &cs->ec;
    case SP_KERNEL_classifier:
        return cls_setup(&cs->clc, v->name, arg) ? NULL : &cs->clc;
    case SP_KERNEL_ipv4_rewrite:
        rewrite_setup(&cs->rc, v->kernels->ipv4_rewrite, arg);
        return &cs->rc;
    case SP_KERNEL_key_match:
        /* Every key the value under the mask, or every other one. */
        for (unsigned i = 0; i < KEYS; i++) {
            sp_match_apply(&cs->mc.match, &cs->mc.keys[i]);
            cs->mc.keys[i].nw_dst[0] ^= (uint8_t)(!arg && i % 2);
        }
        cs->mc.fn = v->kernels->key_match;
        return &cs->mc;
    default:
        return NULL;
    }
}

/* Points the set-up case k at variant v's kernel, its inputs kept. */
static void
case_switch(struct cases *cs, size_t k, const struct sp_variant *v)
{
    char spec[64];

    switch (count_cases[k].kernel) {
    case SP_KERNEL_hash:
        cs->hc.fn = v->kernels->hash;
        break;
    case SP_KERNEL_batch_copy:
        cs->cc.fn = v->kernels->batch_copy;
        break;
    case SP_KERNEL_emc:
        cs->ec.fn = v->kernels->emc;
        break;
    case SP_KERNEL_classifier:
        snprintf(spec, sizeof spec, "classifier=%s", v->name);
        sp_dispatch_set_impl(spec, NULL);
        break;
    case SP_KERNEL_ipv4_rewrite:
        cs->rc.fn = v->kernels->ipv4_rewrite;
        break;
    case SP_KERNEL_key_match:
        cs->mc.fn = v->kernels->key_match;
        break;
    default:
        break;
    }
}

static void
case_teardown(struct cases *cs, size_t k)
{
    if (count_cases[k].kernel == SP_KERNEL_emc) {
        sp_emc_destroy(&cs->ec.emc);
    } else if (count_cases[k].kernel == SP_KERNEL_classifier) {
        sp_cls_destroy(cs->clc.cls);
        sp_dispatch_reset();
    }
}

/* bench_kernels --count VARIANT ITERATIONS [CASE]. */
static int
count_mode(int argc, char **argv)
{
    static struct cases cs;
    const struct sp_variant *v;
    unsigned long iterations;
    unsigned ran = 0;

    if (sp_bench_count_args("bench_kernels", argc, argv, &v, &iterations)) {
        return 2;
    }
    cases_init(&cs);
    for (size_t k = 0; k < N_CASES; k++) {
        void *ctx;

        if (argc == 5 && strcmp(argv[4], count_cases[k].name)) {
            continue;
        }
        ctx = case_setup(&cs, k, v);
        if (!ctx) {
            return 1;
        }
        for (unsigned long i = 0; i < iterations; i++) {
            count_cases[k].run(ctx);
        }
        case_teardown(&cs, k);
        printf("%s %s %u items/iteration\n", count_cases[k].name, v->name,
               count_cases[k].items);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "bench_kernels: unknown CASE '%s'; cases:", argv[4]);
        for (size_t k = 0; k < N_CASES; k++) {
            fprintf(stderr, " %s", count_cases[k].name);
        }
        fprintf(stderr, "\n");
        return 2;
    }
    return 0;
}

/* The contestants of one case in the timing mode: the variants with code
 * of their own for its kernel, scalar first. */
struct turns {
    struct cases *cs;
    size_t k;
    void *ctx;
    const struct sp_variant *variants[SP_VARIANT_MAX];
};

static void
begin_turn(void *ctx, unsigned i)
{
    struct turns *t = ctx;

    case_switch(t->cs, t->k, t->variants[i]);
}

static void
run_turn(void *ctx, unsigned i)
{
    struct turns *t = ctx;

    (void)i;
    count_cases[t->k].run(t->ctx);
}

int
main(int argc, char **argv)
{
    unsigned samples = argc > 1 ? (unsigned)atoi(argv[1]) : 31;
    static struct cases cs;
    int rc = 0;

    rcu_register_thread();
    if (argc > 1 && !strcmp(argv[1], "--count")) {
        rc = count_mode(argc, argv);
        rcu_unregister_thread();
        return rc;
    }
    if (samples < 3) {
        samples = 3;
    }
    cases_init(&cs);
    sp_bench_print_picks();
    printf("TSC %.3f ticks/ns; median of %u samples, the variants taking "
           "turns; ratio = scalar ticks / variant ticks (same run)\n",
           sp_ticks_per_ns(), samples);
    printf("%-13s %-20s %-10s %10s %9s %9s\n", "kernel", "case", "variant",
           "ticks/item", "ns/item", "vs scalar");
    for (size_t k = 0; k < N_CASES && !rc; k++) {
        enum sp_kernel_id kernel = count_cases[k].kernel;
        struct turns t = {.cs = &cs, .k = k};
        double median[SP_VARIANT_MAX];
        unsigned n = 0;
        /* About the same time per sample for every case. */
        unsigned reps = 64000 / count_cases[k].items;

        for (unsigned i = 0; i < sp_variant_count(); i++) {
            const struct sp_variant *v = sp_variant_get(i);

            if (sp_variant_allowed(v) && sp_variant_provider(v, kernel) == v) {
                t.variants[n++] = v;
            }
        }
        t.ctx = case_setup(&cs, k, t.variants[0]);
        if (!t.ctx) {
            rc = 1;
            break;
        }
        sp_bench_turns(&(struct sp_bench_turns){.begin = begin_turn,
                                                .run = run_turn,
                                                .ctx = &t,
                                                .n = n,
                                                .reps = reps,
                                                .samples = samples,
                                                .warmup = reps / 8},
                       median, NULL);
        case_teardown(&cs, k);
        for (unsigned i = 0; i < n; i++) {
            double per = median[i] / count_cases[k].items;

            printf("%-13s %-20s %-10s %10.2f %9.2f %8.2fx\n",
                   sp_kernel_name(kernel), count_cases[k].name,
                   t.variants[i]->name, per, per / sp_ticks_per_ns(),
                   median[0] / median[i]);
        }
    }
    rcu_unregister_thread();
    return rc;
}
