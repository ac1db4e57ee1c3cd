/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC: every variant of the lookup kernel against scalar and a model on
 * random contents (hits, misses, stale generations, signature collisions);
 * and the table's behaviour: hits after insertion, replacement, disabled,
 * stale entries after a rule is removed, insertion probability.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "simdpath/emc.h"
#include "testlib.h"

static int
setup(void **state)
{
    sp_test_setup_variants(state);
    return sp_test_rcu_setup(state);
}

static uint32_t
hash_of(const struct sp_flow_key *key)
{
    uint32_t h;

    sp_runnable[0]->kernels->hash(key, NULL, 1, &h);
    return h;
}

/* The model: the lowest way of the bucket with the signature, the
 * generation and the key. */
static const struct sp_rule *
model(const struct sp_emc *emc, uint64_t gen, const struct sp_flow_key *key,
      uint32_t hash)
{
    uint32_t first = (hash & (emc->n_buckets - 1)) * SP_EMC_WAYS;

    for (uint32_t e = first; emc->n_buckets && e < first + SP_EMC_WAYS; e++) {
        if (emc->sigs[e] == hash && emc->gens[e] == gen &&
            !memcmp(&emc->keys[e], key, sizeof *key)) {
            return emc->rules[e];
        }
    }
    return NULL;
}

static void
test_random_against_scalar(void **state)
{
    (void)state;
    struct sp_random rng = {11};
    struct sp_err err;

    for (unsigned round = 0; round < 400; round++) {
        uint32_t entries = round % 5 == 4 ? 0 : 8u << (round % 4);
        uint32_t n = sp_test_batch_sizes[round % sp_test_batch_size_count];
        uint64_t gen = 2 + round % 3;
        struct sp_emc emc;
        struct sp_guarded keys_buf, hash_buf, out_buf;
        struct sp_flow_key *keys, pool[48];
        uint32_t *hashes;
        const struct sp_rule *want[SP_BATCH_MAX];
        uint32_t want_hits;

        assert_int_equal(sp_emc_init(&emc, entries, 1, &err), 0);
        for (unsigned p = 0; p < 48; p++) {
            sp_flow_key_random(&rng, &pool[p]);
            /* Half current, the rest stale. */
            sp_emc_insert(&emc, gen - sp_random_below(&rng, 2), &pool[p],
                          hash_of(&pool[p]),
                          (const struct sp_rule *)(uintptr_t)(64 * (p + 1)),
                          &rng);
        }
        sp_guarded_alloc(&keys_buf, n * sizeof *keys, 64);
        sp_guarded_alloc(&hash_buf, n * sizeof *hashes, 4);
        keys = (struct sp_flow_key *)keys_buf.data;
        hashes = (uint32_t *)hash_buf.data;
        for (uint32_t i = 0; i < n; i++) {
            keys[i] = pool[sp_random_below(&rng, 48)];
            if (sp_random_below(&rng, 4) == 0) {
                keys[i].bytes[sp_random_below(&rng, 64)] ^= 1;
            }
            hashes[i] = hash_of(&keys[i]);
            /* A signature collision: same hash, other key. */
            if (emc.n_buckets && sp_random_below(&rng, 8) == 0) {
                uint32_t e = (hashes[i] & (emc.n_buckets - 1)) * SP_EMC_WAYS +
                             sp_random_below(&rng, SP_EMC_WAYS);

                emc.sigs[e] = hashes[i];
                emc.gens[e] = gen;
            }
        }
        want_hits =
            sp_runnable[0]->kernels->emc(&emc, gen, keys, hashes, n, want);
        for (uint32_t i = 0; i < n; i++) {
            const struct sp_rule *m = model(&emc, gen, &keys[i], hashes[i]);

            assert_int_equal(want_hits >> i & 1, m != NULL);
            if (m) {
                assert_ptr_equal(want[i], m);
            }
        }
        for (unsigned v = 1; v < sp_n_runnable; v++) {
            const struct sp_rule **got;
            uint32_t hits;

            sp_guarded_alloc(&out_buf, n * sizeof *got, sizeof *got);
            got = (const struct sp_rule **)out_buf.data;
            memset(got, 0, n * sizeof *got);
            hits =
                sp_runnable[v]->kernels->emc(&emc, gen, keys, hashes, n, got);
            sp_guarded_check(&out_buf);
            if (hits != want_hits) {
                fail_msg("%s: hits 0x%x, scalar 0x%x (round %u)",
                         sp_runnable[v]->name, hits, want_hits, round);
            }
            for (uint32_t i = 0; i < n; i++) {
                assert_ptr_equal(got[i], hits >> i & 1 ? want[i] : NULL);
            }
            sp_guarded_free(&out_buf);
        }
        sp_guarded_check(&keys_buf);
        sp_guarded_check(&hash_buf);
        sp_guarded_free(&keys_buf);
        sp_guarded_free(&hash_buf);
        sp_emc_destroy(&emc);
    }
}

/* Stores (hash, gen, key, rule) in slot e. */
static void
put(struct sp_emc *emc, uint32_t e, uint32_t hash, uint64_t gen,
    const struct sp_flow_key *key, uintptr_t rule)
{
    emc->sigs[e] = hash;
    emc->gens[e] = gen;
    emc->keys[e] = *key;
    emc->rules[e] = (const struct sp_rule *)rule;
}

/* The SIMD kernels test keys in blocks (NEON four at a time, one test of
 * the block's first candidates) and each key alone when that fails: every
 * combination of five cases for five keys (a block and one after it), each
 * in its own bucket: a hit in the first candidate; one behind a stale
 * candidate or behind another key with the same signature; a candidate
 * that is another key; no candidate. Every variant as the model. */
static void
test_blocks(void **state)
{
    (void)state;
    enum { KEYS = 5, CASES = 5 };
    struct sp_random rng = {13};
    const uint64_t gen = 7;
    struct sp_emc emc;
    struct sp_err err;
    unsigned combos = 1;

    for (unsigned j = 0; j < KEYS; j++) {
        combos *= CASES;
    }
    assert_int_equal(sp_emc_init(&emc, 8 * SP_EMC_WAYS, 1, &err), 0);
    for (unsigned combo = 0; combo < combos; combo++) {
        struct sp_flow_key keys[KEYS], other;
        uint32_t hashes[KEYS], c = combo;
        const struct sp_rule *got[KEYS];

        memset(emc.gens, 0, 8 * SP_EMC_WAYS * sizeof emc.gens[0]);
        for (unsigned j = 0; j < KEYS; j++, c /= CASES) {
            uint32_t e = j * SP_EMC_WAYS;
            uint32_t h =
                (uint32_t)(sp_random_next(&rng) >> 32) * SP_EMC_WAYS + j;

            sp_flow_key_random(&rng, &keys[j]);
            hashes[j] = h;
            other = keys[j];
            other.bytes[sp_random_below(&rng, 64)] ^= 0x10;
            switch (c % CASES) {
            case 0:
                put(&emc, e + 2, h, gen, &keys[j], 64 * (e + 2));
                break;
            case 1:
                put(&emc, e + 1, h, gen - 1, &keys[j], 64 * (e + 1));
                put(&emc, e + 6, h, gen, &keys[j], 64 * (e + 6));
                break;
            case 2:
                put(&emc, e, h, gen, &other, 64 * e);
                put(&emc, e + 7, h, gen, &keys[j], 64 * (e + 7));
                break;
            case 3:
                put(&emc, e + 4, h, gen, &other, 64 * (e + 4));
                break;
            default:
                break;
            }
        }
        for (unsigned v = 0; v < sp_n_runnable; v++) {
            uint32_t hits;

            memset(got, 0, sizeof got);
            hits = sp_runnable[v]->kernels->emc(&emc, gen, keys, hashes, KEYS,
                                                got);
            for (unsigned j = 0; j < KEYS; j++) {
                const struct sp_rule *m =
                    model(&emc, gen, &keys[j], hashes[j]);

                if ((hits >> j & 1) != (m != NULL) || got[j] != m) {
                    fail_msg("%s: cases %u, key %u: hit %u, rule %p, "
                             "model %p",
                             sp_runnable[v]->name, combo, j, hits >> j & 1,
                             (const void *)got[j], (const void *)m);
                }
            }
            assert_int_equal(hits >> KEYS, 0);
        }
    }
    sp_emc_destroy(&emc);
}

/* A classifier with one rule per IPv4 source 0..count-1. */
static struct sp_cls *
source_rules(uint32_t count, const struct sp_rule **rules)
{
    struct sp_cls *cls = sp_cls_create(NULL);
    struct sp_match m;
    struct sp_err err;

    memset(&m, 0, sizeof m);
    m.mask.dl_type = 0xffff;
    m.key.dl_type = htons(0x0800);
    memset(m.mask.nw_src, 0xff, 4);
    for (uint32_t i = 0; i < count; i++) {
        memcpy(m.key.nw_src, &i, 4);
        rules[i] = sp_cls_insert(cls, &m, 1, NULL, &err);
        assert_non_null(rules[i]);
    }
    return cls;
}

static void
source_key(uint32_t i, struct sp_flow_key *key)
{
    memset(key, 0, sizeof *key);
    key->dl_type = htons(0x0800);
    memcpy(key->nw_src, &i, 4);
    key->tp_dst = htons(80);
}

/* EMC hits for key i under the classifier's generation? */
static bool
emc_hits(const struct sp_emc *emc, const struct sp_cls *cls, uint32_t i,
         const struct sp_rule **rule)
{
    struct sp_flow_key key;
    uint32_t hash;

    source_key(i, &key);
    hash = hash_of(&key);
    return SP_KERNEL(emc)(emc, sp_cls_generation(cls), &key, &hash, 1, rule);
}

/* Looks up keys first..first+n-1 through EMC and classifier; checks that
 * each found its own rule. */
static void
lookup_sources(struct sp_emc *emc, struct sp_cls *cls,
               const struct sp_rule **rules, uint32_t first, uint32_t n,
               struct sp_random *rng)
{
    struct sp_flow_key keys[SP_BATCH_MAX];
    const struct sp_rule *got[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];
    uint32_t emc_hits;

    for (uint32_t i = 0; i < n; i++) {
        source_key(first + i, &keys[i]);
    }
    assert_int_equal(
        sp_emc_cls_lookup(emc, cls, keys, n, hashes, got, rng, &emc_hits),
        sp_batch_lanes(n));
    /* What the EMC answered is a part of what was found. */
    assert_int_equal(emc_hits & ~sp_batch_lanes(n), 0);
    for (uint32_t i = 0; i < n; i++) {
        assert_ptr_equal(got[i], rules[first + i]);
    }
}

/* Under every variant of the EMC kernel: hits after insertion, random
 * replacement in a full bucket, and no hit on anything after a removal. */
static void
test_hits_replacement_stale(void **state)
{
    (void)state;
    struct sp_random rng = {3};
    struct sp_err err;

    for (unsigned v = 0; v < sp_n_runnable; v++) {
        const struct sp_rule *rules[32], *got;
        struct sp_cls *cls = source_rules(32, rules);
        struct sp_flow_key key;
        struct sp_emc emc;
        uint32_t cached = 0, hash;

        sp_test_force("emc", sp_runnable[v]->name);
        /* One bucket of 8 ways: 32 keys compete for it. */
        assert_int_equal(sp_emc_init(&emc, 8, 1, &err), 0);
        assert_int_equal(emc.n_buckets, 1);
        assert_false(emc_hits(&emc, cls, 0, &got));
        lookup_sources(&emc, cls, rules, 0, 4, &rng);
        for (uint32_t i = 0; i < 4; i++) {
            assert_true(emc_hits(&emc, cls, i, &got));
            assert_ptr_equal(got, rules[i]);
        }
        /* Again: hits, and the entries are not duplicated. */
        lookup_sources(&emc, cls, rules, 0, 4, &rng);
        /* The rest fill the bucket, then replace random ways; the last
         * one inserted is always there. */
        lookup_sources(&emc, cls, rules, 4, 28, &rng);
        for (uint32_t i = 0; i < 32; i++) {
            if (emc_hits(&emc, cls, i, &got)) {
                assert_ptr_equal(got, rules[i]);
                cached++;
            }
        }
        assert_int_equal(cached, SP_EMC_WAYS);
        assert_true(emc_hits(&emc, cls, 31, &got));
        /* A removal makes every entry stale: never the removed rule. */
        sp_cls_remove(cls, rules[31]);
        for (uint32_t i = 0; i < 32; i++) {
            assert_false(emc_hits(&emc, cls, i, &got));
        }
        source_key(31, &key);
        assert_int_equal(
            sp_emc_cls_lookup(&emc, cls, &key, 1, &hash, &got, &rng, NULL), 0);
        lookup_sources(&emc, cls, rules, 0, 31, &rng);
        sp_emc_destroy(&emc);
        sp_cls_destroy(cls);
    }
    sp_dispatch_reset();
}

/* A disabled EMC never hits or stores; lookups still answer. */
static void
test_disabled(void **state)
{
    (void)state;
    const struct sp_rule *rules[32], *got, *found[SP_BATCH_MAX];
    struct sp_cls *cls = source_rules(32, rules);
    struct sp_random rng = {5};
    struct sp_flow_key key, keys[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX], hits;
    struct sp_emc emc;
    struct sp_err err;

    assert_int_equal(sp_emc_init(&emc, 0, 1, &err), 0);
    source_key(1, &key);
    assert_false(sp_emc_insert(&emc, sp_cls_generation(cls), &key,
                               hash_of(&key), rules[1], &rng));
    lookup_sources(&emc, cls, rules, 0, 32, &rng);
    /* Nothing reads the hashes without an EMC, so none is computed. */
    for (uint32_t i = 0; i < SP_BATCH_MAX; i++) {
        source_key(i, &keys[i]);
        hashes[i] = UINT32_C(0xdeadbeef);
    }
    assert_int_equal(sp_emc_cls_lookup(&emc, cls, keys, SP_BATCH_MAX, hashes,
                                       found, &rng, &hits),
                     UINT32_MAX);
    assert_int_equal(hits, 0);
    for (uint32_t i = 0; i < SP_BATCH_MAX; i++) {
        assert_ptr_equal(found[i], rules[i]);
        assert_int_equal(hashes[i], UINT32_C(0xdeadbeef));
    }
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        uint32_t hash = hash_of(&key);

        assert_int_equal(
            sp_runnable[v]->kernels->emc(&emc, 1, &key, &hash, 1, &got), 0);
    }
    sp_emc_destroy(&emc);
    sp_cls_destroy(cls);
}

/* Sizes round up to whole buckets; 1 in N offers is stored. */
static void
test_sizing_and_probability(void **state)
{
    (void)state;
    struct sp_random rng = {9};
    struct sp_flow_key key;
    struct sp_emc emc;
    struct sp_err err;
    unsigned stored = 0;

    assert_int_equal(sp_emc_init(&emc, 1, 1, &err), 0);
    assert_int_equal(emc.n_buckets, 1);
    sp_emc_destroy(&emc);
    assert_int_equal(sp_emc_init(&emc, SP_EMC_DEFAULT_ENTRIES,
                                 SP_EMC_DEFAULT_INSERT_PROB, &err),
                     0);
    assert_int_equal(emc.n_buckets * SP_EMC_WAYS, 8192);
    for (unsigned i = 0; i < 100000; i++) {
        source_key(i, &key);
        stored += sp_emc_insert(&emc, 1, &key, hash_of(&key),
                                (const struct sp_rule *)&emc, &rng);
    }
    if (stored < 800 || stored > 1200) {
        fail_msg("1/100 insertion stored %u of 100000", stored);
    }
    sp_emc_destroy(&emc);
    assert_int_equal(sp_emc_init(&emc, 1000, 1, &err), 0);
    assert_int_equal(emc.n_buckets * SP_EMC_WAYS, 1024);
    sp_emc_destroy(&emc);
    assert_int_equal(sp_emc_init(&emc, 64, 0, &err), -1);
    assert_non_null(strstr(err.msg, "N >= 1"));
}

/* A caller that does not want the reason passes no sp_err: refused all
 * the same, nothing written through NULL. */
static void
test_init_without_err(void **state)
{
    (void)state;
    struct sp_emc emc;

    assert_int_equal(sp_emc_init(&emc, 64, 0, NULL), -1);
    assert_int_equal(sp_emc_init(&emc, (UINT32_C(1) << 24) + 1, 1, NULL), -1);
    assert_int_equal(emc.n_buckets, 0);
    assert_int_equal(sp_emc_init(&emc, 64, 1, NULL), 0);
    sp_emc_destroy(&emc);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_scalar),
        cmocka_unit_test(test_blocks),
        cmocka_unit_test(test_hits_replacement_stale),
        cmocka_unit_test(test_disabled),
        cmocka_unit_test(test_sizing_and_probability),
        cmocka_unit_test(test_init_without_err),
    };

    return cmocka_run_group_tests_name("emc", tests, setup,
                                       sp_test_rcu_teardown);
}
