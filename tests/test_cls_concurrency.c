/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rules added and removed while other threads look up: one writer churns
 * rules (new and emptied subtables, bucket growth, same-match chains,
 * reordering, overflow buckets) while readers look up batches through their
 * own EMC and the classifier, and another thread frees removed rules. Rules
 * present the whole time must always be the answer, a churned key gets NULL or
 * a rule that matches it, and every returned rule is read (ASan catches any
 * use after free). Repeated. The work is a count of rule updates; every
 * CHECKPOINT updates the writer waits until each reader has looked up a
 * batch and the reclaimer has run, so that updates and lookups interleave
 * however the threads are scheduled (valgrind runs one at a time, qemu
 * and a loaded machine run them unevenly).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <urcu-qsbr.h>

#include "datapath/cls_layout.h"
#include "simdpath/emc.h"
#include "simdpath/random.h"
#include "testlib.h"

#define STABLE  64
#define CHURN   400
#define READERS 2
#define ROUNDS  10
/* Rule updates per round, and how many between two waits for the
 * readers and the reclaimer. */
#define UPDATES    20000
#define CHECKPOINT 256
/* A safety net, never reached when the threads run at all. */
#define STALL_SECONDS 300.0

#define STABLE_PORT 1
#define CHURN_PORT  2

struct shared {
    struct sp_cls *cls;
    const struct sp_rule *stable[STABLE];
    int stop;                  /* atomic */
    uint64_t lookups[READERS]; /* atomic: batches, per reader */
    uint64_t reclaims;         /* atomic: sp_cls_reclaim calls */
    uint64_t wrong;            /* atomic */
    char first_error[256];
};

/* Stable rules: IPv4 source i on port 1, priority 100. */
static void
stable_match(uint32_t i, struct sp_match *m)
{
    memset(m, 0, sizeof *m);
    m->mask.in_port = 0xffff;
    m->key.in_port = STABLE_PORT;
    m->mask.dl_type = 0xffff;
    m->key.dl_type = htons(0x0800);
    memset(m->mask.nw_src, 0xff, 4);
    memcpy(m->key.nw_src, &i, 4);
}

static void
stable_key(uint32_t i, struct sp_flow_key *key)
{
    struct sp_match m;

    stable_match(i, &m);
    *key = m.key;
    key->nw_proto = 6;
    key->tp_dst = htons(80);
}

static void
report(struct shared *sh, const char *what, uint32_t i)
{
    if (__atomic_fetch_add(&sh->wrong, 1, __ATOMIC_RELAXED) == 0) {
        snprintf(sh->first_error, sizeof sh->first_error, "%s (key %u)", what,
                 i);
    }
}

struct reader_arg {
    struct shared *sh;
    unsigned index;
};

static void *
reader(void *arg)
{
    const struct reader_arg *ra = arg;
    struct shared *sh = ra->sh;
    struct sp_random rng = {(uint64_t)(uintptr_t)&rng};
    struct sp_emc emc;
    struct sp_err err;

    rcu_register_thread();
    if (sp_emc_init(&emc, 64, 2, &err)) {
        report(sh, "EMC init", 0);
    }
    while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
        struct sp_flow_key keys[SP_BATCH_MAX];
        const struct sp_rule *rules[SP_BATCH_MAX];
        uint32_t hashes[SP_BATCH_MAX], which[SP_BATCH_MAX], found;

        for (uint32_t i = 0; i < SP_BATCH_MAX; i++) {
            which[i] = sp_random_below(&rng, 2 * STABLE);
            if (which[i] < STABLE) {
                stable_key(which[i], &keys[i]);
            } else {
                sp_flow_key_random(&rng, &keys[i]);
                keys[i].in_port = CHURN_PORT;
            }
        }
        found = sp_emc_cls_lookup(&emc, sh->cls, keys, SP_BATCH_MAX, hashes,
                                  rules, &rng, NULL);
        for (uint32_t i = 0; i < SP_BATCH_MAX; i++) {
            const struct sp_rule *r = found >> i & 1 ? rules[i] : NULL;

            if (which[i] < STABLE && r != sh->stable[which[i]]) {
                report(sh, "stable key without its rule", which[i]);
            } else if (r && !sp_match_covers(&r->match, &keys[i])) {
                report(sh, "a rule that does not match", which[i]);
            }
        }
        __atomic_add_fetch(&sh->lookups[ra->index], 1, __ATOMIC_RELEASE);
        /* Done with every rule of this batch. */
        rcu_quiescent_state();
    }
    sp_emc_destroy(&emc);
    rcu_unregister_thread();
    return NULL;
}

/* Frees what the writer removed, from a thread of its own, as a
 * maintenance thread may: sp_cls_reclaim takes the classifier's lock. */
static void *
reclaimer(void *arg)
{
    struct shared *sh = arg;

    while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
        sp_cls_reclaim(sh->cls);
        __atomic_add_fetch(&sh->reclaims, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static double
seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits until every reader has looked up a batch and the reclaimer has
 * run since the last call (seen[] and seen[READERS] hold their counts
 * then). False if they stalled for STALL_SECONDS. */
static bool
wait_for_others(struct shared *sh, uint64_t seen[READERS + 1])
{
    double give_up = seconds() + STALL_SECONDS;

    for (unsigned t = 0; t <= READERS; t++) {
        uint64_t *count = t < READERS ? &sh->lookups[t] : &sh->reclaims;
        uint64_t now;

        while ((now = __atomic_load_n(count, __ATOMIC_ACQUIRE)) == seen[t]) {
            if (seconds() > give_up) {
                return false;
            }
            sched_yield();
        }
        seen[t] = now;
    }
    return true;
}

/* 'ops' random rule updates, waiting for the other threads every
 * CHECKPOINT of them. */
static void
churn(struct shared *sh, struct sp_random *rng, uint32_t ops)
{
    static const struct sp_rule *live[CHURN];
    uint64_t seen[READERS + 1] = {0};
    uint32_t n_live = 0;
    uint32_t shapes[24];

    for (unsigned s = 0; s < 24; s++) {
        shapes[s] = (uint32_t)sp_random_next(rng) | 1u << 2; /* in_port */
    }
    for (uint32_t done = 0; done < ops; done++) {
        if (done % CHECKPOINT == 0 && !wait_for_others(sh, seen)) {
            fail_msg("after %u updates the readers or the reclaimer made "
                     "no progress for %.0f s",
                     done, STALL_SECONDS);
        }
        uint32_t op = sp_random_below(rng, 16);
        struct sp_match m;
        struct sp_err err;
        const struct sp_rule *r;
        uint32_t priority = sp_random_below(rng, 200);

        if (op == 0) {
            sp_cls_sort(sh->cls);
            continue;
        }
        if (n_live == CHURN || (n_live && op < 7)) {
            uint32_t i = sp_random_below(rng, n_live);

            sp_cls_remove(sh->cls, live[i]);
            live[i] = live[--n_live];
            continue;
        }
        if (op < 10) {
            /* The stable subtable: growth under the readers, and rules
             * behind a stable one in its same-match chain. */
            stable_match(sp_random_below(rng, 4 * STABLE), &m);
            if (op < 8) {
                m.key.in_port = CHURN_PORT;
            } else if (m.key.nw_src[0] >= STABLE ||
                       m.key.nw_src[1] | m.key.nw_src[2]) {
                continue;
            } else {
                priority %= 100; /* below the stable rule's */
            }
        } else {
            struct sp_flow_key like;

            sp_flow_key_random(rng, &like);
            like.in_port = CHURN_PORT;
            sp_match_from_shape(shapes[sp_random_below(rng, 24)], &like, &m);
        }
        r = sp_cls_insert(sh->cls, &m, priority, NULL, &err);
        if (r) {
            live[n_live++] = r;
        }
    }
    while (n_live) {
        sp_cls_remove(sh->cls, live[--n_live]);
    }
}

static_assert(STABLE % SP_BATCH_MAX == 0, "whole batches of stable keys");

/* Looks every stable rule up and reorders: the stable subtable, then the
 * only one, answered every lookup and gets key copies, so the churn that
 * follows inserts into and removes from buckets with copies while the
 * readers compare them. */
static void
give_stable_copies(struct sp_cls *cls, const struct sp_rule **stable)
{
    sp_cls_set_copies_min_buckets(cls, 0);
    rcu_register_thread();
    for (uint32_t first = 0; first < STABLE; first += SP_BATCH_MAX) {
        struct sp_flow_key keys[SP_BATCH_MAX];
        const struct sp_rule *got[SP_BATCH_MAX];

        for (uint32_t k = 0; k < SP_BATCH_MAX; k++) {
            struct sp_match m;

            stable_match(first + k, &m);
            keys[k] = m.key;
        }
        assert_int_equal(
            sp_cls_lookup(cls, keys, SP_BATCH_MAX, UINT32_MAX, got),
            UINT32_MAX);
        assert_ptr_equal(got[0], stable[first]);
    }
    sp_cls_sort(cls);
    rcu_unregister_thread();
    assert_int_equal(sp_cls_subtable_at(cls, 0)->buckets->lines,
                     SP_CLS_LINES_COPIES);
}

static void
test_churn_while_looking_up(void **state)
{
    (void)state;
    struct sp_random rng = {21};
    uint64_t total_ops = 0, total_lookups = 0;
    /* Rounds whose stable subtable still had its key copies at the end
     * (the churned subtables take hits too, and may take them away). */
    unsigned with_copies = 0;

    for (unsigned round = 0; round < ROUNDS; round++) {
        static struct shared sh;
        pthread_t threads[READERS], reclaim_thread;
        struct reader_arg args[READERS];
        struct sp_err err;

        memset(&sh, 0, sizeof sh);
        sh.cls = sp_cls_create(NULL);
        assert_non_null(sh.cls);
        /* Overflow buckets however small the tables, so that the churn
         * fills and empties them under the readers. */
        sp_cls_set_overflow_min_buckets(sh.cls, 0);
        for (uint32_t i = 0; i < STABLE; i++) {
            struct sp_match m;

            stable_match(i, &m);
            sh.stable[i] = sp_cls_insert(sh.cls, &m, 100, NULL, &err);
            assert_non_null(sh.stable[i]);
        }
        assert_true(sp_cls_subtable_at(sh.cls, 0)->buckets->n_overflow > 0);
        give_stable_copies(sh.cls, sh.stable);
        for (unsigned t = 0; t < READERS; t++) {
            args[t] = (struct reader_arg){&sh, t};
            assert_int_equal(
                pthread_create(&threads[t], NULL, reader, &args[t]), 0);
        }
        assert_int_equal(pthread_create(&reclaim_thread, NULL, reclaimer, &sh),
                         0);
        churn(&sh, &rng, UPDATES);
        total_ops += UPDATES;
        __atomic_store_n(&sh.stop, 1, __ATOMIC_RELEASE);
        for (unsigned t = 0; t < READERS; t++) {
            pthread_join(threads[t], NULL);
        }
        pthread_join(reclaim_thread, NULL);
        for (unsigned t = 0; t < READERS; t++) {
            total_lookups += sh.lookups[t];
        }
        if (sh.wrong) {
            fail_msg("round %u: %llu wrong answers; first: %s", round,
                     (unsigned long long)sh.wrong, sh.first_error);
        }
        assert_int_equal(sp_cls_rule_count(sh.cls), STABLE);
        with_copies += sp_cls_subtable_at(sh.cls, 0)->buckets->lines > 1;
        sp_cls_destroy(sh.cls);
    }
    print_message("%llu rule updates, %llu batches looked up, %u of %u "
                  "rounds ending with key copies\n",
                  (unsigned long long)total_ops,
                  (unsigned long long)total_lookups, with_copies, ROUNDS);
    /* Each checkpoint saw a batch from every reader. */
    assert_true(total_lookups >=
                (uint64_t)ROUNDS * READERS * (UPDATES / CHECKPOINT));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_churn_while_looking_up),
    };

    return cmocka_run_group_tests_name("cls_concurrency", tests, NULL, NULL);
}
