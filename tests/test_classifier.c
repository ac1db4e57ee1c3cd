/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Classifier: every variant of the subtable kernel against scalar, and
 * whole lookups under every variant against a brute-force oracle (linear
 * scan by priority, earlier insertion winning ties) on random rule sets;
 * ties, same-match chains, subtable removal and order; rule validation.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-qsbr.h>

#include "datapath/cls_layout.h"
#include "simdpath/random.h"
#include "testlib.h"

static int
setup(void **state)
{
    sp_test_setup_variants(state);
    return sp_test_rcu_setup(state);
}

struct model {
    const struct sp_rule **rules;
    uint32_t n, cap;
};

static void
model_add(struct model *m, const struct sp_rule *r)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->rules = realloc(m->rules, m->cap * sizeof *m->rules);
        assert_non_null(m->rules);
    }
    m->rules[m->n++] = r;
}

/* The oracle: a linear scan for the highest priority, earliest insertion. */
static const struct sp_rule *
oracle(const struct model *m, const struct sp_flow_key *key)
{
    const struct sp_rule *best = NULL;

    for (uint32_t i = 0; i < m->n; i++) {
        const struct sp_rule *r = m->rules[i];

        if (sp_match_covers(&r->match, key) &&
            (!best || r->priority > best->priority ||
             (r->priority == best->priority && r->seq < best->seq))) {
            best = r;
        }
    }
    return best;
}

static int
by_precedence(const void *a, const void *b)
{
    const struct sp_rule *x = *(const struct sp_rule *const *)a;
    const struct sp_rule *y = *(const struct sp_rule *const *)b;

    if (x->priority != y->priority) {
        return x->priority > y->priority ? -1 : 1;
    }
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* sp_cls_rules lists the model's rules, each once, in precedence order. */
static void
check_listing(struct sp_cls *cls, const struct model *m)
{
    const struct sp_rule **want = malloc((m->n + 1) * sizeof *want);
    const struct sp_rule **got = sp_cls_rules(cls);

    assert_non_null(want);
    assert_non_null(got);
    if (m->n) {
        memcpy(want, m->rules, m->n * sizeof *want);
    }
    qsort(want, m->n, sizeof *want, by_precedence);
    for (uint32_t i = 0; i < m->n; i++) {
        assert_ptr_equal(got[i], want[i]);
    }
    assert_null(got[m->n]);
    free(want);
    free((void *)got);
}

/* Inserts a random rule of one of n_shapes shapes built on a random key. */
static void
add_random_rule(struct sp_cls *cls, struct model *m, struct sp_random *rng,
                const uint32_t *shapes, unsigned n_shapes, uint32_t priorities)
{
    struct sp_flow_key like;
    struct sp_match match;
    struct sp_err err;
    const struct sp_rule *r;

    sp_flow_key_random(rng, &like);
    sp_match_from_shape(shapes[sp_random_below(rng, n_shapes)], &like, &match);
    r = sp_cls_insert(cls, &match, sp_random_below(rng, priorities), NULL,
                      &err);
    if (r) {
        model_add(m, r);
    } else {
        assert_non_null(strstr(err.msg, "same match and priority"));
    }
}

/* Keys: matching-prone ones (random packet keys) and fully random ones. */
static void
random_keys(struct sp_random *rng, struct sp_flow_key *keys, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (sp_random_below(rng, 8)) {
            sp_flow_key_random(rng, &keys[i]);
        } else {
            sp_random_fill(rng, &keys[i], sizeof keys[i]);
        }
    }
}

/* Every variant's kernel on every subtable equals scalar's, with keys and
 * results right before a fence page and guard bytes checked. */
static void
check_kernels(struct sp_cls *cls, struct sp_random *rng)
{
    for (uint32_t s = 0;; s++) {
        const struct sp_cls_subtable *st = sp_cls_subtable_at(cls, s);
        uint32_t n = sp_test_batch_sizes[sp_random_below(
            rng, sp_test_batch_size_count)];
        uint32_t todo = (uint32_t)sp_random_next(rng);
        struct sp_guarded keys_buf, out_buf;
        struct sp_flow_key *keys;
        const struct sp_rule *want[SP_BATCH_MAX];
        uint32_t want_found;

        if (!st) {
            return;
        }
        if (sp_random_below(rng, 2)) {
            todo = UINT32_MAX;
        }
        sp_guarded_alloc(&keys_buf, n * sizeof *keys, 64);
        keys = (struct sp_flow_key *)keys_buf.data;
        random_keys(rng, keys, n);
        want_found = sp_runnable[0]->kernels->classifier(st, st->buckets, keys,
                                                         n, todo, want);
        assert_int_equal(want_found & ~(todo & sp_batch_lanes(n)), 0);
        for (unsigned v = 1; v < sp_n_runnable; v++) {
            const struct sp_rule **got;
            uint32_t found;

            sp_guarded_alloc(&out_buf, n * sizeof *got, sizeof *got);
            got = (const struct sp_rule **)out_buf.data;
            memset(got, 0, n * sizeof *got);
            found = sp_runnable[v]->kernels->classifier(st, st->buckets, keys,
                                                        n, todo, got);
            sp_guarded_check(&out_buf);
            if (found != want_found) {
                fail_msg("%s: found 0x%x, scalar 0x%x (n %u)",
                         sp_runnable[v]->name, found, want_found, n);
            }
            for (uint32_t i = 0; i < n; i++) {
                if ((found >> i & 1) && got[i] != want[i]) {
                    fail_msg("%s: key %u: other rule than scalar",
                             sp_runnable[v]->name, i);
                }
                if (!(found >> i & 1) && got[i]) {
                    fail_msg("%s: wrote rule of unfound key %u",
                             sp_runnable[v]->name, i);
                }
            }
            sp_guarded_free(&out_buf);
        }
        sp_guarded_check(&keys_buf);
        sp_guarded_free(&keys_buf);
    }
}

/* Keys looked up and keys the oracle matched: the random rules must match a
 * good share of the keys, or the comparison proves little. */
static uint64_t looked_up, oracle_matched;

/* Whole lookups, under every variant, equal the oracle. */
static void
check_lookups(struct sp_cls *cls, const struct model *m, struct sp_random *rng,
              unsigned batches)
{
    for (unsigned b = 0; b < batches; b++) {
        struct sp_flow_key keys[SP_BATCH_MAX];
        uint32_t n = sp_random_below(rng, SP_BATCH_MAX + 1);
        const struct sp_rule *want[SP_BATCH_MAX];

        random_keys(rng, keys, n);
        looked_up += n;
        for (uint32_t i = 0; i < n; i++) {
            want[i] = oracle(m, &keys[i]);
            oracle_matched += want[i] != NULL;
        }
        for (unsigned v = 0; v < sp_n_runnable; v++) {
            const struct sp_rule *got[SP_BATCH_MAX];
            uint32_t found;

            sp_test_force("classifier", sp_runnable[v]->name);
            found = sp_cls_lookup(cls, keys, n, UINT32_MAX, got);
            for (uint32_t i = 0; i < n; i++) {
                const struct sp_rule *r = found >> i & 1 ? got[i] : NULL;

                if (r != want[i]) {
                    fail_msg("%s: key %u: rule %p (priority %d), oracle %p "
                             "(priority %d)",
                             sp_runnable[v]->name, i, (const void *)r,
                             r ? (int)r->priority : -1, (const void *)want[i],
                             want[i] ? (int)want[i]->priority : -1);
                }
            }
        }
    }
    sp_dispatch_reset();
}

static void
remove_random(struct sp_cls *cls, struct model *m, struct sp_random *rng,
              uint32_t count)
{
    for (uint32_t k = 0; k < count && m->n; k++) {
        uint32_t i = sp_random_below(rng, m->n);

        sp_cls_remove(cls, m->rules[i]);
        m->rules[i] = m->rules[--m->n];
    }
}

static void
test_random_against_oracle(void **state)
{
    (void)state;
    static const struct {
        uint32_t rules, shapes, priorities;
    } cases[] = {
        {1, 1, 1},    {10, 1, 4},     {10, 10, 1},   {100, 10, 3},
        {300, 40, 8}, {1000, 100, 1}, {2000, 8, 16}, {600, 256, 1000},
    };
    struct sp_random rng = {7};

    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct sp_cls *cls = sp_cls_create(NULL);
        struct model m = {0};
        uint32_t shapes[256];

        assert_non_null(cls);
        /* Copies for a subtable with half the hits, however small, so
         * that the oracle checks lookups in both layouts; overflow buckets
         * in every other case, however small the table. */
        sp_cls_set_copies_min_buckets(cls, 0);
        if (c % 2) {
            sp_cls_set_overflow_min_buckets(cls, 0);
        }
        for (uint32_t s = 0; s < cases[c].shapes; s++) {
            shapes[s] = (uint32_t)sp_random_next(&rng);
        }
        for (uint32_t r = 0; r < cases[c].rules; r++) {
            add_random_rule(cls, &m, &rng, shapes, cases[c].shapes,
                            cases[c].priorities);
        }
        assert_int_equal(sp_cls_rule_count(cls), m.n);
        check_listing(cls, &m);
        check_kernels(cls, &rng);
        check_lookups(cls, &m, &rng, 40);
        /* Removals (and emptied subtables), then a reorder by hits. */
        remove_random(cls, &m, &rng, m.n / 2 + 1);
        assert_int_equal(sp_cls_rule_count(cls), m.n);
        check_listing(cls, &m);
        check_lookups(cls, &m, &rng, 20);
        sp_cls_sort(cls);
        check_kernels(cls, &rng);
        check_lookups(cls, &m, &rng, 20);
        remove_random(cls, &m, &rng, m.n);
        assert_int_equal(sp_cls_subtable_count(cls), 0);
        check_listing(cls, &m);
        check_lookups(cls, &m, &rng, 2);
        sp_cls_destroy(cls);
        free(m.rules);
    }
    if (oracle_matched * 4 < looked_up) {
        fail_msg("only %llu of %llu keys matched a rule",
                 (unsigned long long)oracle_matched,
                 (unsigned long long)looked_up);
    }
}

static void
ip_match(struct sp_match *m, uint8_t dst_prefix, uint8_t dst)
{
    memset(m, 0, sizeof *m);
    m->mask.dl_type = 0xffff;
    m->key.dl_type = htons(0x0800);
    if (dst_prefix) {
        m->mask.nw_dst[0] = (uint8_t)(0xff00 >> dst_prefix);
        m->key.nw_dst[0] = dst & m->mask.nw_dst[0];
    }
}

/* An IPv4 key to destination dst.0.0.0, every other field 0. */
static void
ip_key(struct sp_flow_key *key, uint8_t dst)
{
    memset(key, 0, sizeof *key);
    key->dl_type = htons(0x0800);
    key->nw_dst[0] = dst;
}

/* The rule m at priority, which the classifier must take. */
static const struct sp_rule *
insert_ok(struct sp_cls *cls, const struct sp_match *m, uint32_t priority)
{
    struct sp_err err;
    const struct sp_rule *rule = sp_cls_insert(cls, m, priority, NULL, &err);

    assert_non_null(rule);
    return rule;
}

/* Equal priorities: the rule inserted first wins, in any subtable order;
 * same-match rules of other priorities queue behind the best one. */
static void
test_ties_and_chains(void **state)
{
    (void)state;
    struct sp_cls *cls = sp_cls_create(NULL);
    struct sp_match wide, narrow;
    struct sp_flow_key key;
    const struct sp_rule *r_narrow, *r_wide, *r_low, *got;
    struct sp_err err;

    ip_match(&narrow, 8, 10);
    ip_match(&wide, 0, 0);
    ip_key(&key, 10);
    r_narrow = insert_ok(cls, &narrow, 5);
    r_wide = insert_ok(cls, &wide, 5);
    r_low = insert_ok(cls, &narrow, 1);
    assert_null(sp_cls_insert(cls, &narrow, 5, NULL, &err));
    assert_non_null(strstr(err.msg, "same match and priority"));
    assert_ptr_equal(sp_cls_find(cls, &narrow, 1), r_low);
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        sp_test_force("classifier", sp_runnable[v]->name);
        /* Both orders of the two subtables: hits decide it. */
        for (int round = 0; round < 2; round++) {
            assert_int_equal(sp_cls_lookup(cls, &key, 1, 1, &got), 1);
            assert_ptr_equal(got, r_narrow);
            sp_cls_sort(cls);
        }
    }
    sp_cls_remove(cls, r_narrow);
    assert_int_equal(sp_cls_lookup(cls, &key, 1, 1, &got), 1);
    assert_ptr_equal(got, r_wide);
    sp_cls_remove(cls, r_wide);
    assert_int_equal(sp_cls_lookup(cls, &key, 1, 1, &got), 1);
    assert_ptr_equal(got, r_low);
    assert_int_equal(sp_cls_subtable_count(cls), 1);
    sp_cls_remove(cls, r_low);
    assert_int_equal(sp_cls_subtable_count(cls), 0);
    assert_int_equal(sp_cls_lookup(cls, &key, 1, 1, &got), 0);
    sp_dispatch_reset();
    sp_cls_destroy(cls);
}

/* Keys to 0.0.0.0 .. 255.0.0.0 looked up in one batch after another,
 * against the oracle. */
static void
check_destinations(struct sp_cls *cls, const struct model *m)
{
    for (unsigned first = 0; first < 256; first += SP_BATCH_MAX) {
        struct sp_flow_key keys[SP_BATCH_MAX];
        const struct sp_rule *got[SP_BATCH_MAX];
        uint32_t found;

        for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
            ip_key(&keys[i], (uint8_t)(first + i));
        }
        found = sp_cls_lookup(cls, keys, SP_BATCH_MAX, UINT32_MAX, got);
        for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
            const struct sp_rule *want = oracle(m, &keys[i]);

            assert_int_equal(found >> i & 1, want != NULL);
            if (want) {
                assert_ptr_equal(got[i], want);
            }
        }
    }
}

/* check_destinations under every variant of the classifier kernel. */
static void
check_all_destinations(struct sp_cls *cls, const struct model *m)
{
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        sp_test_force("classifier", sp_runnable[v]->name);
        check_destinations(cls, m);
    }
    sp_dispatch_reset();
}

/* Removes r from the classifier and the model; then st (unless NULL: the
 * last rule's, freed with it) has 'sole' as its sole rule, and every
 * destination is looked up as the model says. */
static void
remove_and_check(struct sp_cls *cls, struct model *m, const struct sp_rule *r,
                 const struct sp_cls_subtable *st, const struct sp_rule *sole)
{
    uint32_t kept = 0;

    sp_cls_remove(cls, r);
    for (uint32_t i = 0; i < m->n; i++) {
        if (m->rules[i] != r) {
            m->rules[kept++] = m->rules[i];
        }
    }
    m->n = kept;
    if (st) {
        assert_ptr_equal(st->sole, sole);
    }
    check_all_destinations(cls, m);
}

/* A subtable of one rule is looked up by comparing with that rule (its
 * 'sole'), which follows every insertion and removal: a second rule, or
 * one of another priority on the same match, turns it off; a removal
 * down to one rule makes that one the sole rule. */
static void
test_sole_rule(void **state)
{
    (void)state;
    struct sp_cls *cls = sp_cls_create(NULL);
    const struct sp_rule *a, *b, *a_low;
    const struct sp_cls_subtable *st;
    struct model m = {0};
    struct sp_match ma, mb;

    ip_match(&ma, 4, 0x10);
    ip_match(&mb, 4, 0x20);
    a = insert_ok(cls, &ma, 5);
    model_add(&m, a);
    st = sp_cls_rule_subtable(a);
    assert_ptr_equal(st->sole, a);
    check_all_destinations(cls, &m);
    b = insert_ok(cls, &mb, 5);
    model_add(&m, b);
    assert_null(st->sole);
    check_all_destinations(cls, &m);
    remove_and_check(cls, &m, a, st, b);
    /* The same match at another priority: two rules in one slot. */
    a = insert_ok(cls, &ma, 5);
    model_add(&m, a);
    a_low = insert_ok(cls, &ma, 1);
    model_add(&m, a_low);
    remove_and_check(cls, &m, b, st, NULL);
    remove_and_check(cls, &m, a, st, a_low);
    remove_and_check(cls, &m, a_low, NULL, NULL);
    assert_int_equal(sp_cls_subtable_count(cls), 0);
    free(m.rules);
    sp_cls_destroy(cls);
}

/* Keys made to match rule r, its bits under its mask over random ones:
 * every other one, or all of them ('all'). */
static void
keys_near(struct sp_random *rng, const struct sp_rule *r,
          struct sp_flow_key *keys, uint32_t n, bool all)
{
    random_keys(rng, keys, n);
    for (uint32_t i = 0; i < n; i++) {
        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS && (all || i % 2); b++) {
            keys[i].blocks[b] =
                (keys[i].blocks[b] & ~r->match.mask.blocks[b]) |
                r->match.key.blocks[b];
        }
    }
}

/* A classifier of one rule is looked up by sp_cls_lookup_sole as the
 * oracle and sp_cls_lookup say, whatever blocks its mask uses (none, one,
 * several, in_port's alone), also for keys of one in_port said to be so;
 * with no rule, two subtables or two rules in one it looks up nothing and
 * says so. */
static void
test_lookup_sole(void **state)
{
    (void)state;
    struct sp_random rng = {11};
    uint64_t matched = 0;

    for (unsigned c = 0; c < 300; c++) {
        struct sp_cls *cls = sp_cls_create(NULL);
        uint32_t shape = (uint32_t)sp_random_next(&rng), found = 0;
        struct sp_flow_key keys[SP_BATCH_MAX];
        struct model m = {0};
        struct sp_match match = {0};
        const struct sp_rule *r;

        assert_null(sp_cls_lookup_sole(cls, keys, 0, false, &found));
        if (c > 1) {
            add_random_rule(cls, &m, &rng, &shape, 1, 1);
        } else {
            /* Every key; in_port 3 alone. */
            match.key.in_port = c ? 3 : 0;
            match.mask.in_port = c ? UINT16_MAX : 0;
            model_add(&m, insert_ok(cls, &match, 0));
        }
        for (unsigned b = 0; b < 8; b++) {
            uint32_t n = sp_random_below(&rng, SP_BATCH_MAX + 1);
            const struct sp_rule *got[SP_BATCH_MAX];
            uint32_t want;

            bool one_port = b % 2;

            /* Half the bursts with every key made to match (a burst of
             * one flow), half of those then with one key off by a bit
             * under the mask. */
            keys_near(&rng, m.rules[0], keys, n, b >= 4);
            for (unsigned k = 0; b >= 6 && n && k < SP_FLOW_KEY_BLOCKS; k++) {
                uint64_t mask = m.rules[0]->match.mask.blocks[k];

                if (mask) {
                    keys[sp_random_below(&rng, n)].blocks[k] ^= mask & -mask;
                    break;
                }
            }
            /* One port: key 0's, or key 1's, which is near the rule. */
            for (uint32_t i = 0; i < n && one_port; i++) {
                keys[i].in_port = keys[b % 4 == 1 || n < 2 ? 0 : 1].in_port;
            }
            r = sp_cls_lookup_sole(cls, keys, n, one_port, &found);
            assert_ptr_equal(r, m.rules[0]);
            want = sp_cls_lookup(cls, keys, n, UINT32_MAX, got);
            assert_int_equal(found, want);
            for (uint32_t i = 0; i < n; i++) {
                assert_int_equal(found >> i & 1, oracle(&m, &keys[i]) != NULL);
            }
            matched += (uint64_t)__builtin_popcount(found);
        }
        /* Another mask (another subtable), or the same at another
         * priority (two rules in one). */
        match = m.rules[0]->match;
        if (c % 2) {
            match.mask.in_port ^= 0xffff;
            match.key.in_port &= match.mask.in_port;
        }
        r = insert_ok(cls, &match, 7);
        assert_null(
            sp_cls_lookup_sole(cls, keys, SP_BATCH_MAX, false, &found));
        sp_cls_remove(cls, r);
        assert_ptr_equal(sp_cls_lookup_sole(cls, keys, 0, false, &found),
                         m.rules[0]);
        sp_cls_destroy(cls);
        free(m.rules);
    }
    assert_true(matched > 300 * 8 * 4);
}

/* The lookups the subtable of r answered. */
static uint64_t
hits_of(const struct sp_rule *r)
{
    return sp_cls_subtable_hits(sp_cls_rule_subtable(r));
}

/* A key's search ends once its best rule outranks every subtable left,
 * and not before: a subtable whose highest priority equals the best is
 * still searched, an earlier-inserted rule may be there. Which subtables
 * were searched shows in their hit counts. */
static void
test_search_stops(void **state)
{
    (void)state;
    struct sp_match m8, m4, m2, m0, other;
    struct sp_flow_key key, low_only;

    ip_match(&m8, 8, 10);
    ip_match(&m4, 4, 10);
    ip_match(&m2, 2, 10);
    ip_match(&m0, 0, 0);
    ip_match(&other, 8, 11);
    ip_key(&key, 10);
    ip_key(&low_only, 0x20);
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        struct sp_cls *cls = sp_cls_create(NULL);
        const struct sp_rule *first = insert_ok(cls, &m4, 9);
        const struct sp_rule *tie = insert_ok(cls, &m8, 9);
        const struct sp_rule *low = insert_ok(cls, &m0, 3);
        const struct sp_rule *got;

        sp_test_force("classifier", sp_runnable[v]->name);
        assert_int_equal(sp_cls_lookup(cls, &key, 1, 1, &got), 1);
        assert_ptr_equal(got, first);
        assert_int_equal(hits_of(first), 1);
        assert_int_equal(hits_of(tie), 1);
        assert_int_equal(hits_of(low), 0);
        assert_int_equal(sp_cls_lookup(cls, &low_only, 1, 1, &got), 1);
        assert_ptr_equal(got, low);
        assert_int_equal(hits_of(low), 1);
        sp_cls_destroy(cls);

        /* Found below the highest priority: the subtables of that
         * priority are all searched, those below it not. */
        cls = sp_cls_create(NULL);
        insert_ok(cls, &other, 9);
        first = insert_ok(cls, &m4, 7);
        tie = insert_ok(cls, &m0, 7);
        low = insert_ok(cls, &m2, 3);
        assert_int_equal(sp_cls_lookup(cls, &key, 1, 1, &got), 1);
        assert_ptr_equal(got, first);
        assert_int_equal(hits_of(first), 1);
        assert_int_equal(hits_of(tie), 1);
        assert_int_equal(hits_of(low), 0);
        sp_cls_destroy(cls);
    }
    sp_dispatch_reset();
}

/* n lookups of key in cls, from a thread of their own; found counts the
 * ones that found a rule. */
struct lookups {
    struct sp_cls *cls;
    const struct sp_flow_key *key;
    unsigned n, found;
};

static void *
look_up(void *arg)
{
    struct lookups *l = arg;
    const struct sp_rule *got;

    rcu_register_thread();
    for (unsigned i = 0; i < l->n; i++) {
        l->found += sp_cls_lookup(l->cls, l->key, 1, 1, &got);
    }
    rcu_unregister_thread();
    return NULL;
}

/* Each thread counts its hits in a stripe of its own: the count of a
 * subtable adds them all up, and sorting halves them all. */
static void
test_hits_of_every_thread(void **state)
{
    (void)state;
    struct sp_cls *cls = sp_cls_create(NULL);
    struct sp_match m;
    struct sp_flow_key key;
    const struct sp_rule *rule, *got;
    struct lookups l = {.cls = cls, .key = &key, .n = 6};
    pthread_t other;

    ip_match(&m, 8, 10);
    ip_key(&key, 10);
    rule = insert_ok(cls, &m, 1);
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(sp_cls_lookup(cls, &key, 1, 1, &got), 1);
    }
    assert_int_equal(pthread_create(&other, NULL, look_up, &l), 0);
    assert_int_equal(pthread_join(other, NULL), 0);
    assert_int_equal(l.found, 6);
    assert_int_equal(hits_of(rule), 10);
    sp_cls_sort(cls);
    assert_int_equal(hits_of(rule), 5);
    sp_cls_destroy(cls);
}

/* Sources i * SPREAD: CRC-32C is linear, so sequential keys spread evenly
 * over the buckets and none would ever move to its second one. */
#define SPREAD 2654435761u

static unsigned actions_freed;

static void
count_free(const struct sp_actions *actions)
{
    (void)actions;
    actions_freed++;
}

/* Checks each first bucket's count of moved keys and moved_hint against
 * the keys in the table: the hint has the bit of every key living
 * elsewhere, and is 0 when none does. Returns how many keys moved. */
static uint32_t
expect_moved_hints(const struct sp_cls_buckets *b)
{
    uint32_t *counts = calloc(b->mask + 1, sizeof *counts);
    uint32_t *bits = calloc(b->mask + 1, sizeof *bits);
    uint32_t moved = 0;

    assert_non_null(counts);
    assert_non_null(bits);
    for (uint32_t i = 0; i < sp_cls_bucket_count(b); i++) {
        const struct sp_cls_bucket *bucket = sp_cls_bucket_at(b, i);

        for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
            uint32_t home = sp_cls_bucket_index(bucket->sigs[s], b->mask, 0);

            if (bucket->rules[s] && home != i) {
                counts[home]++;
                bits[home] |= sp_cls_moved_bit(bucket->sigs[s]);
                moved++;
            }
        }
    }
    for (uint32_t i = 0; i <= b->mask; i++) {
        uint32_t hint = sp_cls_bucket_at(b, i)->moved_hint;

        assert_int_equal(b->n_moved[i], counts[i]);
        assert_int_equal(hint & bits[i], bits[i]);
        if (!counts[i]) {
            assert_int_equal(hint, 0);
        }
    }
    free(counts);
    free(bits);
    return moved;
}

/* Growth to many buckets, removal, and the actions destructor called once
 * per removed or destroyed rule. */
static void
test_growth_and_lifetime(void **state)
{
    (void)state;
    struct sp_cls *cls = sp_cls_create(count_free);
    static const struct sp_rule *rules[20000];
    static int token;
    struct sp_match m;
    struct sp_err err;

    actions_freed = 0;
    memset(&m, 0, sizeof m);
    memset(&m.mask.nw_src, 0xff, 4);
    m.mask.dl_type = 0xffff;
    m.key.dl_type = htons(0x0800);
    for (uint32_t i = 0; i < 20000; i++) {
        memcpy(m.key.nw_src, &(uint32_t){i * SPREAD}, 4);
        rules[i] = sp_cls_insert(cls, &m, i % 7, (const void *)&token, &err);
        assert_non_null(rules[i]);
    }
    assert_int_equal(sp_cls_subtable_count(cls), 1);
    /* Some keys live in their second bucket. */
    assert_true(expect_moved_hints(sp_cls_subtable_at(cls, 0)->buckets) > 0);
    for (uint32_t i = 0; i < 20000; i += 2) {
        sp_cls_remove(cls, rules[i]);
    }
    expect_moved_hints(sp_cls_subtable_at(cls, 0)->buckets);
    sp_cls_reclaim(cls);
    assert_int_equal(actions_freed, 10000);
    /* Every variant finds the odd ones, moved or not, and not the even. */
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        sp_test_force("classifier", sp_runnable[v]->name);
        for (uint32_t first = 0; first < 20000; first += SP_BATCH_MAX) {
            struct sp_flow_key keys[SP_BATCH_MAX];
            const struct sp_rule *got[SP_BATCH_MAX];

            memset(keys, 0, sizeof keys);
            for (uint32_t k = 0; k < SP_BATCH_MAX; k++) {
                keys[k].dl_type = htons(0x0800);
                memcpy(keys[k].nw_src, &(uint32_t){(first + k) * SPREAD}, 4);
            }
            assert_int_equal(
                sp_cls_lookup(cls, keys, SP_BATCH_MAX, UINT32_MAX, got),
                0xaaaaaaaa);
            for (uint32_t k = 1; k < SP_BATCH_MAX; k += 2) {
                assert_ptr_equal(got[k], rules[first + k]);
            }
        }
    }
    sp_dispatch_reset();
    sp_cls_destroy(cls);
    assert_int_equal(actions_freed, 20000);
}

static void
expect_invalid(const struct sp_match *m, const char *message)
{
    struct sp_err err;
    struct sp_cls *cls = sp_cls_create(NULL);

    assert_int_equal(sp_match_validate(m, &err), -1);
    if (!strstr(err.msg, message)) {
        fail_msg("error '%s' lacks '%s'", err.msg, message);
    }
    err.msg[0] = '\0';
    assert_null(sp_cls_insert(cls, m, 1, NULL, &err));
    assert_non_null(strstr(err.msg, message));
    sp_cls_destroy(cls);
}

/* A match on dl_type (0: none) and nw_proto (-1: none). */
static void
base_match(struct sp_match *m, uint16_t dl_type, int proto)
{
    memset(m, 0, sizeof *m);
    if (dl_type) {
        m->mask.dl_type = 0xffff;
        m->key.dl_type = htons(dl_type);
    }
    if (proto >= 0) {
        m->mask.nw_proto = 0xff;
        m->key.nw_proto = (uint8_t)proto;
    }
}

/* Invalid matches are refused with the field named; valid ones pass. */
/* Every variant's lookup of a batch of copies of 'key' in the one-bucket
 * table b: all found as 'want', or none if want is NULL. */
static void
expect_bucket(const struct sp_cls_subtable *st, const struct sp_cls_buckets *b,
              const struct sp_flow_key *key, const struct sp_rule *want)
{
    struct sp_flow_key keys[SP_BATCH_MAX];

    for (uint32_t i = 0; i < SP_BATCH_MAX; i++) {
        keys[i] = *key;
    }
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        const struct sp_rule *got[SP_BATCH_MAX] = {NULL};
        uint32_t found = sp_runnable[v]->kernels->classifier(
            st, b, keys, SP_BATCH_MAX, UINT32_MAX, got);

        assert_int_equal(found, want ? UINT32_MAX : 0);
        for (uint32_t i = 0; i < SP_BATCH_MAX; i++) {
            assert_ptr_equal(got[i], want);
        }
    }
}

/* The SIMD signature compares load a bucket's first 32 bytes, moved_hint and
 * half of a rule pointer included: those bytes never make a candidate, and
 * the key is found in each slot, with either layout; with key copies, the
 * copy is what is compared. */
static void
test_bucket_layout(void **state)
{
    (void)state;
    struct sp_cls *cls = sp_cls_create(NULL);
    size_t size = sizeof(struct sp_cls_buckets) +
                  SP_CLS_LINES_COPIES * sizeof(struct sp_cls_bucket);
    struct sp_cls_buckets *b = aligned_alloc(64, size);
    const struct sp_cls_subtable *st;
    const struct sp_rule *rule;
    struct sp_match m;
    struct sp_err err;
    uint32_t h;

    assert_non_null(cls);
    assert_non_null(b);
    memset(&m, 0, sizeof m);
    m.mask.dl_type = 0xffff;
    m.key.dl_type = htons(0x0800);
    memset(m.mask.nw_src, 0xff, 4);
    m.key.nw_src[3] = 1;
    rule = sp_cls_insert(cls, &m, 1, NULL, &err);
    assert_non_null(rule);
    st = sp_cls_subtable_at(cls, 0);
    sp_runnable[0]->kernels->hash(&rule->match.key, NULL, 1, &h);

    for (uint32_t lines = 1; lines <= SP_CLS_LINES_COPIES;
         lines += SP_CLS_SLOTS) {
        memset(b, 0, size);
        b->lines = lines;
        for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
            b->b[0].sigs[s] = h + 1;
        }
        b->b[0].moved_hint = h;
        /* Never dereferenced: no signature matches. */
        b->b[0].rules[0] =
            (const struct sp_rule *)(uintptr_t)((uint64_t)h << 32 | h);
        expect_bucket(st, b, &rule->match.key, NULL);

        for (unsigned slot = 0; slot < SP_CLS_SLOTS; slot++) {
            memset(b, 0, size);
            b->lines = lines;
            for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
                b->b[0].sigs[s] = h;
            }
            b->b[0].rules[slot] = rule;
            if (lines > 1) {
                *sp_cls_key_copy(&b->b[0], slot) = rule->match.key;
            }
            expect_bucket(st, b, &rule->match.key, rule);
            if (lines > 1) {
                sp_cls_key_copy(&b->b[0], slot)->nw_src[3] ^= 1;
                expect_bucket(st, b, &rule->match.key, NULL);
            }
        }
    }
    free(b);
    sp_cls_destroy(cls);
}

/* Rule i of the layout test: IPv4 source (subtable 0) or destination
 * (subtable 1) equal to i + 1. */
static void
layout_match(unsigned subtable, uint32_t i, struct sp_match *m)
{
    uint32_t addr = htonl(i + 1);

    memset(m, 0, sizeof *m);
    m->mask.dl_type = 0xffff;
    m->key.dl_type = htons(0x0800);
    memset(subtable ? m->mask.nw_dst : m->mask.nw_src, 0xff, 4);
    memcpy(subtable ? m->key.nw_dst : m->key.nw_src, &addr, 4);
}

/* Every variant finds rules[i] for the key of layout_match(subtable, i),
 * for i from 0 to n - 1 (NULL: no rule). */
static void
expect_layout_rules(struct sp_cls *cls, unsigned subtable,
                    const struct sp_rule **rules, uint32_t n)
{
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        sp_test_force("classifier", sp_runnable[v]->name);
        for (uint32_t first = 0; first < n; first += SP_BATCH_MAX) {
            uint32_t count =
                n - first < SP_BATCH_MAX ? n - first : SP_BATCH_MAX;
            struct sp_flow_key keys[SP_BATCH_MAX];
            const struct sp_rule *got[SP_BATCH_MAX];
            uint32_t found;

            for (uint32_t k = 0; k < count; k++) {
                struct sp_match m;

                layout_match(subtable, first + k, &m);
                keys[k] = m.key;
            }
            found = sp_cls_lookup(cls, keys, count, UINT32_MAX, got);
            for (uint32_t k = 0; k < count; k++) {
                const struct sp_rule *r = found >> k & 1 ? got[k] : NULL;

                if (r != rules[first + k]) {
                    fail_msg("%s: subtable %u, key %u: rule %p, want %p",
                             sp_runnable[v]->name, subtable, first + k,
                             (const void *)r, (const void *)rules[first + k]);
                }
            }
        }
    }
    sp_dispatch_reset();
}

/* The lines per bucket of the subtable whose mask has an IPv4 source
 * (subtable 0) or destination (1). */
static uint32_t
layout_lines(struct sp_cls *cls, unsigned subtable)
{
    for (uint32_t i = 0; i < sp_cls_subtable_count(cls); i++) {
        const struct sp_cls_subtable *st = sp_cls_subtable_at(cls, i);

        if ((subtable ? st->mask.nw_dst[0] : st->mask.nw_src[0]) == 0xff) {
            return st->buckets->lines;
        }
    }
    fail_msg("no subtable %u", subtable);
    return 0;
}

/* The buckets of the only subtable. */
static const struct sp_cls_buckets *
only_buckets(struct sp_cls *cls)
{
    assert_int_equal(sp_cls_subtable_count(cls), 1);
    return sp_cls_subtable_at(cls, 0)->buckets;
}

/* With overflow buckets from the first bucket on, a one-bucket table keeps
 * SP_CLS_SLOTS keys in its bucket and the others in the overflow, counted
 * in n_moved and n_overflow and marked in moved_hint; every variant finds
 * them, in both layouts, before and after removals, and one key more than
 * fits grows the table. */
static void
test_overflow_buckets(void **state)
{
    (void)state;
    enum { FIT = SP_CLS_SLOTS * (1 + SP_CLS_OVERFLOW_BUCKETS) };
    static const struct sp_rule *rules[FIT + 2];
    struct sp_cls *cls = sp_cls_create(NULL);
    struct sp_err err;
    uint32_t removed = 0, kept = FIT;

    assert_non_null(cls);
    sp_cls_set_overflow_min_buckets(cls, 0);
    sp_cls_set_copies_min_buckets(cls, 0);
    for (uint32_t i = 0; i < FIT; i++) {
        struct sp_match m;

        layout_match(0, i, &m);
        rules[i] = sp_cls_insert(cls, &m, 1, NULL, &err);
        assert_non_null(rules[i]);
    }
    assert_ptr_equal(sp_cls_rule_subtable(rules[FIT - 1]),
                     sp_cls_subtable_at(cls, 0));
    assert_int_equal(only_buckets(cls)->mask, 0);
    assert_int_equal(only_buckets(cls)->n_overflow_buckets,
                     SP_CLS_OVERFLOW_BUCKETS);
    assert_int_equal(only_buckets(cls)->n_overflow, FIT - SP_CLS_SLOTS);
    assert_int_equal(expect_moved_hints(only_buckets(cls)),
                     FIT - SP_CLS_SLOTS);
    expect_layout_rules(cls, 0, rules, FIT + 1);

    /* Every fourth key goes: the first SP_CLS_SLOTS were in the bucket. */
    for (uint32_t i = 0; i < FIT; i += 4) {
        sp_cls_remove(cls, rules[i]);
        rules[i] = NULL;
        removed += i >= SP_CLS_SLOTS;
        kept--;
    }
    assert_int_equal(only_buckets(cls)->n_overflow,
                     FIT - SP_CLS_SLOTS - removed);
    assert_int_equal(expect_moved_hints(only_buckets(cls)),
                     FIT - SP_CLS_SLOTS - removed);
    expect_layout_rules(cls, 0, rules, FIT + 1);

    /* Key copies, overflow buckets included: the keys that left the
     * bucket make room for some from the overflow. */
    sp_cls_sort(cls);
    assert_int_equal(only_buckets(cls)->lines, SP_CLS_LINES_COPIES);
    assert_int_equal(only_buckets(cls)->mask, 0);
    assert_int_equal(only_buckets(cls)->n_overflow, kept - SP_CLS_SLOTS);
    expect_layout_rules(cls, 0, rules, FIT + 1);

    /* All back, and two more: the table grows. */
    for (uint32_t i = 0; i < FIT + 2; i++) {
        struct sp_match m;

        if (!rules[i]) {
            layout_match(0, i, &m);
            rules[i] = sp_cls_insert(cls, &m, 1, NULL, &err);
            assert_non_null(rules[i]);
        }
    }
    assert_true(only_buckets(cls)->mask > 0);
    expect_layout_rules(cls, 0, rules, FIT + 2);
    sp_cls_destroy(cls);
}

/* Key copies go to a subtable large enough that answers at least half
 * the lookups and leave one that answers under a quarter; lookups,
 * insertions and removals work the same in either layout. */
static void
test_layout_follows_hits(void **state)
{
    (void)state;
    enum { N = 3000 };
    static const struct sp_rule *rules[2][N];
    struct sp_cls *cls = sp_cls_create(NULL);
    struct sp_err err;

    assert_non_null(cls);
    for (unsigned t = 0; t < 2; t++) {
        for (uint32_t i = 0; i < N / 2; i++) {
            struct sp_match m;

            layout_match(t, i, &m);
            rules[t][i] = sp_cls_insert(cls, &m, 1, NULL, &err);
            assert_non_null(rules[t][i]);
        }
    }
    assert_int_equal(layout_lines(cls, 0), 1);
    assert_int_equal(layout_lines(cls, 1), 1);

    /* Subtable 0 answers every lookup, but is too small for copies, until
     * the threshold goes. */
    expect_layout_rules(cls, 0, rules[0], N / 2);
    sp_cls_sort(cls);
    assert_int_equal(layout_lines(cls, 0), 1);
    sp_cls_set_copies_min_buckets(cls, 0);
    expect_layout_rules(cls, 0, rules[0], N / 2);
    sp_cls_sort(cls);
    assert_int_equal(layout_lines(cls, 0), SP_CLS_LINES_COPIES);
    assert_int_equal(layout_lines(cls, 1), 1);
    expect_layout_rules(cls, 0, rules[0], N);
    expect_layout_rules(cls, 1, rules[1], N);

    /* Growth with copies, and removals. */
    for (uint32_t i = N / 2; i < N; i++) {
        struct sp_match m;

        layout_match(0, i, &m);
        rules[0][i] = sp_cls_insert(cls, &m, 1, NULL, &err);
        assert_non_null(rules[0][i]);
    }
    for (uint32_t i = 0; i < N; i += 3) {
        sp_cls_remove(cls, rules[0][i]);
        rules[0][i] = NULL;
    }
    assert_int_equal(layout_lines(cls, 0), SP_CLS_LINES_COPIES);
    expect_layout_rules(cls, 0, rules[0], N);

    /* Then subtable 1 answers nearly all: the copies move to it. */
    for (unsigned r = 0; r < 10; r++) {
        expect_layout_rules(cls, 1, rules[1], N / 2);
    }
    sp_cls_sort(cls);
    assert_int_equal(layout_lines(cls, 0), 1);
    assert_int_equal(layout_lines(cls, 1), SP_CLS_LINES_COPIES);
    expect_layout_rules(cls, 0, rules[0], N);
    expect_layout_rules(cls, 1, rules[1], N);
    sp_cls_destroy(cls);
}

static void
test_validation(void **state)
{
    (void)state;
    struct sp_match m;
    struct sp_err err;

    base_match(&m, 0x0800, 6);
    m.mask.tp_dst = 0xffff;
    m.key.tp_dst = htons(80);
    assert_int_equal(sp_match_validate(&m, &err), 0);

    base_match(&m, 0x0800, -1);
    m.mask.tp_dst = 0xffff;
    expect_invalid(&m, "tp_dst: needs an exact nw_proto");
    base_match(&m, 0, 6);
    expect_invalid(&m, "nw_proto: needs an exact dl_type");
    base_match(&m, 0x0800, 47);
    m.mask.tp_src = 0xffff;
    expect_invalid(&m, "tp_src: needs nw_proto tcp, udp, sctp");
    base_match(&m, 0x0800, 17);
    m.mask.tcp_flags = htons(0x0002);
    expect_invalid(&m, "tcp_flags: needs nw_proto tcp (6), not 17");
    base_match(&m, 0x0800, 6);
    m.mask.tcp_flags = htons(0xf000); /* the inner VLAN tag's */
    assert_int_equal(sp_match_validate(&m, &err), 0);
    base_match(&m, 0x86dd, -1);
    m.mask.ipv6_label = htonl(0x00100000); /* the inner VLAN tag's */
    assert_int_equal(sp_match_validate(&m, &err), 0);
    /* The inner tag needs no dl_type. */
    base_match(&m, 0, -1);
    sp_key_set_vlan_tci1(&m.mask, 0xffff);
    assert_int_equal(sp_match_validate(&m, &err), 0);
    base_match(&m, 0x0800, -1);
    m.mask.ipv6_label = htonl(1);
    expect_invalid(&m, "ipv6_label: needs dl_type ipv6");
    base_match(&m, 0x0800, -1);
    m.mask.nw_frag = 0x04;
    expect_invalid(&m, "ip_frag: the mask has bits outside the field");
    base_match(&m, 0x0800, -1);
    m.mask.nw_dst[4] = 0xff;
    expect_invalid(&m, "nw_dst: the mask has bits outside the field");
    base_match(&m, 0x0806, -1);
    m.mask.nw_src[SP_ARP_HA_OFS] = 0xff;
    assert_int_equal(sp_match_validate(&m, &err), 0);
    m.mask.nw_src[12] = 0xff;
    expect_invalid(&m, "arp_sha: the mask has bits outside the field");
    base_match(&m, 0x0806, 6);
    m.mask.tp_dst = 0xffff;
    expect_invalid(&m, "tp_dst: needs dl_type ip or ipv6, not 0x0806");
    base_match(&m, 0x88cc, -1);
    m.mask.nw_dst[0] = 0xff;
    expect_invalid(&m,
                   "nw_dst: needs dl_type ip, ipv6, arp or rarp, not 0x88cc");
    base_match(&m, 0x0806, -1);
    m.mask.nw_ttl = 0xff;
    expect_invalid(&m, "nw_ttl: needs dl_type ip or ipv6, not 0x0806");
    base_match(&m, 0, -1);
    m.mask.dl_type = htons(0xff00);
    m.key.dl_type = htons(0x0800);
    m.mask.nw_src[0] = 0xff;
    expect_invalid(&m, "nw_src: needs an exact dl_type");
    /* ICMP over IPv6 and IGMP: type and code, as OVS extracts them. */
    base_match(&m, 0x86dd, 1);
    m.mask.tp_src = 0xffff;
    assert_int_equal(sp_match_validate(&m, &err), 0);
    base_match(&m, 0x0800, 2);
    m.mask.tp_dst = 0xffff;
    assert_int_equal(sp_match_validate(&m, &err), 0);
    base_match(&m, 0x86dd, 58);
    m.mask.tp_src = 0xffff;
    assert_int_equal(sp_match_validate(&m, &err), 0);
    base_match(&m, 0x0800, -1);
    m.mask.nw_src[0] = 0xf0;
    m.key.nw_src[0] = 0x0f;
    expect_invalid(&m, "nw_src: the value has bits outside the mask");
    base_match(&m, 0x86dd, -1);
    m.key.nw_dst[15] = 1;
    expect_invalid(&m, "ipv6_dst: the value has bits outside the mask");
    base_match(&m, 0, -1);
    m.mask.dl_dst[0] = 0x01;
    m.key.dl_dst[0] = 0x01;
    m.key.in_port = 3;
    expect_invalid(&m, "in_port: the value has bits outside the mask");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_against_oracle),
        cmocka_unit_test(test_ties_and_chains),
        cmocka_unit_test(test_sole_rule),
        cmocka_unit_test(test_lookup_sole),
        cmocka_unit_test(test_search_stops),
        cmocka_unit_test(test_hits_of_every_thread),
        cmocka_unit_test(test_growth_and_lifetime),
        cmocka_unit_test(test_bucket_layout),
        cmocka_unit_test(test_layout_follows_hits),
        cmocka_unit_test(test_overflow_buckets),
        cmocka_unit_test(test_validation),
    };

    return cmocka_run_group_tests_name("classifier", tests, setup,
                                       sp_test_rcu_teardown);
}
