/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simdpath check: puts every kernel under autovalidate and feeds it seeded
 * random input, so every variant this CPU supports is compared with scalar.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "simdpath/dispatch.h"
#include "simdpath/pktgen.h"
#include "simdpath/emc.h"
#include "simdpath/match.h"
#include "simdpath/random.h"

/* A batch of realistic packets of every shape, some cut short or with
 * flipped bytes, so both the SIMD profiles and their fallback run. */
static void
round_mfex(struct sp_random *rng)
{
    static uint8_t bytes[SP_BATCH_MAX][SP_PKTGEN_MAX];
    struct sp_packet pkts[SP_BATCH_MAX];
    struct sp_packet *ptrs[SP_BATCH_MAX];
    struct sp_flow_key keys[SP_BATCH_MAX];
    uint32_t n = sp_random_below(rng, SP_BATCH_MAX + 1);

    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = (uint32_t)sp_pktgen(
            sp_random_below(rng, SP_PKTGEN_SHAPE_COUNT), rng, bytes[i]);

        switch (sp_random_below(rng, 4)) {
        case 0:
            len = sp_random_below(rng, len + 1);
            break;
        case 1:
            bytes[i][sp_random_below(rng, len)] ^=
                (uint8_t)(1u << sp_random_below(rng, 8));
            break;
        default:
            break;
        }
        pkts[i] = (struct sp_packet){
            .data = bytes[i], .len = len, .in_port = (uint16_t)i};
        ptrs[i] = &pkts[i];
    }
    SP_KERNEL(mfex)(ptrs, n, keys);
}

static void
round_hash(struct sp_random *rng)
{
    static struct sp_flow_key keys[3 * SP_BATCH_MAX + 1];
    static struct sp_flow_key mask;
    uint32_t hashes[3 * SP_BATCH_MAX + 1];
    uint32_t n = sp_random_below(rng, 3 * SP_BATCH_MAX + 2);
    bool masked = sp_random_below(rng, 2);

    sp_random_fill(rng, keys, n * sizeof keys[0]);
    sp_random_fill(rng, &mask, sizeof mask);
    SP_KERNEL(hash)(keys, masked ? &mask : NULL, n, hashes);
}

static void
round_batch_copy(struct sp_random *rng)
{
    void *src[SP_BATCH_MAX];
    void *dst[SP_BATCH_MAX];
    uint32_t n = sp_random_below(rng, SP_BATCH_MAX + 1);
    uint32_t select = (uint32_t)sp_random_next(rng);

    /* Some all-selected rounds: the output action's common case. */
    if (sp_random_below(rng, 4) == 0) {
        select = UINT32_MAX;
    }
    sp_random_fill(rng, src, sizeof src);
    SP_KERNEL(batch_copy)(dst, src, n, select);
}

/* Keys that are the value under a random mask (random bits outside it),
 * one in four with a bit inside it flipped, and random keys to look up. */
static void
round_key_match(struct sp_random *rng)
{
    struct sp_flow_key keys[SP_BATCH_MAX];
    struct sp_match m;
    uint32_t n = sp_random_below(rng, SP_BATCH_MAX + 1);

    sp_random_fill(rng, &m.mask, sizeof m.mask);
    sp_random_fill(rng, &m.key, sizeof m.key);
    sp_random_fill(rng, keys, sizeof keys);
    sp_match_mask_key(&m);
    for (uint32_t i = 0; i < n; i++) {
        sp_match_apply(&m, &keys[i]);
        if (sp_random_below(rng, 4) == 0) {
            keys[i].bytes[sp_random_below(rng, 64)] ^= 0xff;
        }
    }
    SP_KERNEL(key_match)
    (keys, n, (uint32_t)sp_random_next(rng) & sp_batch_lanes(n), &m.mask,
     &m.key);
}

/* A masked set with random fields present, and random frames that are
 * mostly IPv4 (any IHL, TCP/UDP/other, fragments, zero UDP checksums) at
 * random offsets and lengths, often cut short. */
static void
round_ipv4_rewrite(struct sp_random *rng)
{
    static const uint8_t protos[] = {6, 17, 1, 132};
    static uint8_t frames[SP_BATCH_MAX][128];
    struct sp_packet pkts[SP_BATCH_MAX], *ptrs[SP_BATCH_MAX];
    uint32_t n = sp_random_below(rng, SP_BATCH_MAX + 1);
    uint32_t present = sp_random_below(rng, 32);
    struct sp_ipv4_set set = {
        .src = (uint32_t)sp_random_next(rng),
        .dst = (uint32_t)sp_random_next(rng),
        .tos = (uint8_t)sp_random_next(rng),
        .ttl = (uint8_t)sp_random_next(rng),
        .src_mask = present & 1 ? (uint32_t)sp_random_next(rng) : 0,
        .dst_mask = present & 2 ? UINT32_MAX : 0,
        .tos_mask = present & 4 ? 0xfc : 0,
        .ttl_mask = present & 8 ? 0xff : 0,
        .dec_ttl = present & 16,
    };

    for (uint32_t i = 0; i < n; i++) {
        uint8_t *f = frames[i];
        uint32_t l3 = sp_random_below(rng, 4) ? 14 : sp_random_below(rng, 40);

        sp_random_fill(rng, f, sizeof frames[i]);
        f[l3] = (uint8_t)(0x45 + (sp_random_below(rng, 4) ? 0 : f[l3] % 11));
        f[l3 + 6] &= sp_random_below(rng, 4) ? 0x40 : 0xff;
        f[l3 + 7] = sp_random_below(rng, 4) ? 0 : f[l3 + 7];
        f[l3 + 8] = (uint8_t)sp_random_below(rng, 4);
        f[l3 + 9] = protos[sp_random_below(rng, 4)];
        if (sp_random_below(rng, 4) == 0) {
            memset(f + l3 + 20 + 6, 0, 2); /* no UDP checksum */
        }
        pkts[i] = (struct sp_packet){
            .data = f,
            .len = sp_random_below(rng, 2) ? sizeof frames[i]
                                           : sp_random_below(rng, 100),
            .l3_ofs = sp_random_below(rng, 16) ? (uint16_t)l3 : SP_OFS_NONE,
            .l4_ofs = SP_OFS_NONE,
        };
        ptrs[i] = &pkts[i];
    }
    SP_KERNEL(ipv4_rewrite)(ptrs, n, &set);
}

#define CHECK_RULES 2000
/* A bound that a typo cannot turn into a run of days. */
#define CHECK_ROUNDS_MAX 100000000
#define CHECK_MASKS      32

/* The flow tables the lookup rounds use, built once: random rules of a
 * few dozen masks, with overflow buckets however small the tables and key
 * copies in one subtable, so that every bucket layout is checked; an EMC
 * holding some keys, current and stale; and the key each rule was made
 * from, to look up. */
struct tables {
    struct sp_cls *cls;
    struct sp_emc emc;
    const struct sp_rule *rules[CHECK_RULES]; /* NULL: not inserted */
    struct sp_flow_key likes[CHECK_RULES];    /* matches rules[i] */
    const struct sp_cls_subtable *subtables[CHECK_RULES]; /* rules[i]'s */
};

/* Gives key copies to the subtable of rules[0]: looks up the keys of its
 * rules, which outrank every other, so that their lookups end there, and
 * reorders, which gives copies to a subtable answering half the lookups
 * or more. */
static void
give_copies(struct tables *t)
{
    sp_cls_set_copies_min_buckets(t->cls, 0);
    for (uint32_t i = 0; i < CHECK_RULES; i++) {
        const struct sp_rule *got;

        if (t->subtables[i] && t->subtables[i] == t->subtables[0]) {
            sp_cls_lookup(t->cls, &t->likes[i], 1, 1, &got);
        }
    }
    sp_cls_sort(t->cls);
    sp_cls_reclaim(t->cls);
}

static int
tables_build(struct tables *t, struct sp_random *rng)
{
    struct sp_err err;
    uint32_t shapes[CHECK_MASKS];

    t->cls = sp_cls_create(NULL);
    if (!t->cls || sp_emc_init(&t->emc, 256, 1, &err)) {
        sp_cls_destroy(t->cls);
        sp_cli_error("check", "no memory for the flow tables");
        return -1;
    }
    sp_cls_set_overflow_min_buckets(t->cls, 0);
    for (unsigned s = 0; s < CHECK_MASKS; s++) {
        shapes[s] = (uint32_t)sp_random_next(rng);
    }
    for (unsigned r = 0; r < CHECK_RULES; r++) {
        struct sp_match match;
        uint32_t hash;

        sp_flow_key_random(rng, &t->likes[r]);
        sp_match_from_shape(shapes[r % CHECK_MASKS], &t->likes[r], &match);
        /* The shape may have set dl_type or nw_proto: the key must match. */
        sp_match_apply(&match, &t->likes[r]);
        /* The first mask's rules outrank the others (give_copies). */
        t->rules[r] = sp_cls_insert(
            t->cls, &match,
            sp_random_below(rng, 8) + (r % CHECK_MASKS ? 0 : 8), NULL, &err);
        SP_KERNEL(hash)(&t->likes[r], NULL, 1, &hash);
        if (t->rules[r]) {
            sp_emc_insert(&t->emc, 1 + sp_cls_generation(t->cls) % 2,
                          &t->likes[r], hash, t->rules[r], rng);
        }
    }
    for (unsigned r = 0; r < CHECK_RULES; r++) {
        t->subtables[r] =
            t->rules[r] ? sp_cls_rule_subtable(t->rules[r]) : NULL;
    }
    give_copies(t);
    return 0;
}

static void
tables_free(struct tables *t)
{
    sp_emc_destroy(&t->emc);
    sp_cls_destroy(t->cls);
}

/* A random rule's index, in subtable st if not NULL; CHECK_RULES if
 * none was found in a few tries. */
static uint32_t
random_rule(struct sp_random *rng, const struct tables *t,
            const struct sp_cls_subtable *st)
{
    for (unsigned tries = 0; tries < 4 * CHECK_MASKS; tries++) {
        uint32_t r = sp_random_below(rng, CHECK_RULES);

        if (t->rules[r] && (!st || t->subtables[r] == st)) {
            return r;
        }
    }
    return CHECK_RULES;
}

/* A batch of packet-like keys: about half of them a rule's key, from
 * subtable st if not NULL, the others random; some changed in one byte,
 * which makes a rule's key just miss. */
static uint32_t
lookup_keys(struct sp_random *rng, const struct tables *t,
            const struct sp_cls_subtable *st, struct sp_flow_key *keys)
{
    uint32_t n = sp_random_below(rng, SP_BATCH_MAX + 1);

    for (uint32_t i = 0; i < n; i++) {
        uint32_t r =
            sp_random_below(rng, 2) ? random_rule(rng, t, st) : CHECK_RULES;

        if (r < CHECK_RULES) {
            keys[i] = t->likes[r];
        } else {
            sp_flow_key_random(rng, &keys[i]);
        }
        if (sp_random_below(rng, 4) == 0) {
            keys[i].bytes[sp_random_below(rng, 64)] ^= 0x10;
        }
    }
    return n;
}

static void
round_emc(struct sp_random *rng, const struct tables *t)
{
    struct sp_flow_key keys[SP_BATCH_MAX];
    const struct sp_rule *rules[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];
    uint32_t n = lookup_keys(rng, t, NULL, keys);

    SP_KERNEL(hash)(keys, NULL, n, hashes);
    SP_KERNEL(emc)
    (&t->emc, 1 + sp_random_below(rng, 3), keys, hashes, n, rules);
}

/* The subtable of a random rule, so that subtables are checked as often
 * as they have rules, and keys that its rules match among others. */
static void
round_classifier(struct sp_random *rng, const struct tables *t)
{
    struct sp_flow_key keys[SP_BATCH_MAX];
    const struct sp_rule *rules[SP_BATCH_MAX];
    uint32_t r = random_rule(rng, t, NULL), n;
    const struct sp_cls_subtable *st;

    if (r == CHECK_RULES) {
        return;
    }
    st = t->subtables[r];
    n = lookup_keys(rng, t, st, keys);
    SP_KERNEL(classifier)
    (st, sp_cls_subtable_buckets(st), keys, n, (uint32_t)sp_random_next(rng),
     rules);
}

/* Prints one line per kernel and variant; returns the mismatches. */
static uint64_t
report(unsigned long rounds)
{
    uint64_t total = 0;

    printf("%-13s %-10s %12s %12s\n", "kernel", "variant", "checks",
           "mismatches");
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        for (unsigned i = 1; i < sp_variant_count(); i++) {
            const struct sp_variant *v = sp_variant_get(i);
            const struct sp_variant *p = sp_variant_provider(v, k);
            uint64_t bad = sp_autovalidate_mismatches(k, i);

            if (!sp_variant_allowed(v)) {
                printf("%-13s %-10s %25s\n", sp_kernel_name(k), v->name,
                       sp_variant_supported(v) ? "above --max-simd"
                                               : "not supported here");
            } else if (p != v) {
                printf("%-13s %-10s %25s%s\n", sp_kernel_name(k), v->name,
                       "runs the code of ", p->name);
            } else {
                printf("%-13s %-10s %12llu %12llu\n", sp_kernel_name(k),
                       v->name,
                       (unsigned long long)sp_autovalidate_checks(k, i),
                       (unsigned long long)bad);
            }
            total += bad;
        }
    }
    printf("%lu rounds per kernel: %s (%llu mismatches)\n", rounds,
           total ? "FAIL" : "PASS", (unsigned long long)total);
    return total;
}

int
sp_cmd_check(int argc, char **argv)
{
    static const struct option options[] = {
        {"rounds", required_argument, NULL, 'r'},
        {"seed", required_argument, NULL, 's'},
        {NULL, 0, NULL, 0},
    };
    unsigned long rounds = 20000, seed = 1;
    struct sp_random rng;
    struct sp_err err;
    static struct tables tables;
    uint64_t bad;
    int opt;

    optind = 0;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt == 'r' &&
            sp_cli_parse_uint("--rounds", optarg, CHECK_ROUNDS_MAX, &rounds)) {
            return SP_EXIT_USAGE;
        }
        if (opt == 's' &&
            sp_cli_parse_uint("--seed", optarg, ULONG_MAX, &seed)) {
            return SP_EXIT_USAGE;
        }
        if (opt == '?') {
            return SP_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        sp_cli_error("check", "unexpected argument '%s'", argv[optind]);
        return SP_EXIT_USAGE;
    }
    if (sp_dispatch_set_impl("autovalidate", &err)) {
        sp_cli_error("check", "%s", err.msg);
        return SP_EXIT_FAILURE;
    }
    rng.state = seed;
    if (tables_build(&tables, &rng)) {
        return SP_EXIT_FAILURE;
    }
    sp_autovalidate_reset();
    printf("self-check: every supported variant against scalar, seed %lu\n",
           seed);
    for (unsigned long r = 0; r < rounds; r++) {
        round_mfex(&rng);
        round_hash(&rng);
        round_emc(&rng, &tables);
        round_classifier(&rng, &tables);
        round_batch_copy(&rng);
        round_ipv4_rewrite(&rng);
        round_key_match(&rng);
    }
    bad = report(rounds);
    tables_free(&tables);
    return bad ? SP_EXIT_FAILURE : SP_EXIT_OK;
}
