/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two lookup threads on two CPUs, as two PMD threads: the TSC ticks per
 * packet of each, looking up in one classifier they share and, to compare,
 * in a classifier each with the same rules; and of one thread alone. For
 * 1, 10 and 100 subtables of one rule, whose lines stay in each CPU's
 * caches, so that what the threads share is what can slow them. Each
 * thread times its own samples of 32-key batches, and the two start each
 * sample together. The selected classifier variant.
 * Usage: bench_threads [SAMPLES] (default 11). Pins its threads to the
 * first two CPUs it may run on; exits 77 (skipped) with fewer.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <urcu-qsbr.h>

#include "bench_rules.h"
#include "benchlib.h"
#include "simdpath/classifier.h"

#define BATCHES 512
#define REPS    1000 /* batches per sample */

struct looker {
    const struct sp_cls *cls;
    struct sp_flow_key (*keys)[SP_BATCH_MAX]; /* BATCHES batches */
    int cpu;
    unsigned samples;
    pthread_barrier_t *start; /* shared with the other thread, or NULL */
    double ticks;             /* median per packet */
    uint64_t found;
};

static void *
look_up(void *arg)
{
    struct looker *l = arg;
    const struct sp_rule *rules[SP_BATCH_MAX];
    double *t = calloc(l->samples, sizeof *t);
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(l->cpu, &set);
    if (!t || pthread_setaffinity_np(pthread_self(), sizeof set, &set)) {
        fprintf(stderr, "bench_threads: cannot run on CPU %d\n", l->cpu);
        exit(1);
    }
    rcu_register_thread();
    /* Sample 0 warms caches, predictors and clocks up. */
    for (unsigned s = 0; s <= l->samples; s++) {
        uint64_t start;

        if (l->start) {
            pthread_barrier_wait(l->start);
        }
        start = sp_ticks();
        for (unsigned r = 0; r < REPS; r++) {
            l->found += (uint32_t)__builtin_popcount(
                sp_cls_lookup(l->cls, l->keys[r % BATCHES], SP_BATCH_MAX,
                              UINT32_MAX, rules));
        }
        if (s) {
            t[s - 1] = (double)(sp_ticks() - start) / REPS / SP_BATCH_MAX;
        }
        rcu_quiescent_state();
    }
    rcu_unregister_thread();
    l->ticks = sp_median(t, l->samples);
    free(t);
    return NULL;
}

/* Runs the lookers of l[0..n) at once (n is 1 or 2). */
static void
run(struct looker *l, unsigned n)
{
    pthread_barrier_t start;
    pthread_t th[2];

    pthread_barrier_init(&start, NULL, n);
    for (unsigned i = 0; i < n; i++) {
        l[i].start = n > 1 ? &start : NULL;
        if (pthread_create(&th[i], NULL, look_up, &l[i])) {
            fprintf(stderr, "bench_threads: no thread\n");
            exit(1);
        }
    }
    for (unsigned i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
    }
    pthread_barrier_destroy(&start);
}

/* A classifier of one rule in each of 'subtables' subtables. */
static struct sp_cls *
build(uint32_t subtables, struct sp_match *m)
{
    struct sp_cls *cls = sp_cls_create(NULL);
    struct sp_err err;

    if (!cls) {
        fprintf(stderr, "bench_threads: no memory\n");
        exit(1);
    }
    for (uint32_t s = 0; s < subtables; s++) {
        if (!sp_cls_insert(cls, &m[s], 1, NULL, &err)) {
            fprintf(stderr, "bench_threads: %s\n", err.msg);
            exit(1);
        }
    }
    return cls;
}

/* BATCHES batches of keys, each matching one of the rules m[0..n). */
static void
fill(struct sp_flow_key (*keys)[SP_BATCH_MAX], const struct sp_match *m,
     uint32_t n, struct sp_random *rng)
{
    for (uint32_t b = 0; b < BATCHES; b++) {
        for (uint32_t k = 0; k < SP_BATCH_MAX; k++) {
            sp_bench_key_for(&m[sp_random_below(rng, n)], rng, &keys[b][k]);
        }
    }
}

int
main(int argc, char **argv)
{
    static const uint32_t subtable_counts[] = {1, 10, 100};
    unsigned samples = argc > 1 ? (unsigned)atoi(argv[1]) : 11;
    struct sp_flow_key(*keys[2])[SP_BATCH_MAX];
    struct sp_random rng = {7};
    struct sp_match m[100];
    int cpus[2], n_cpus = 0;
    cpu_set_t allowed;

    if (samples < 3) {
        samples = 3;
    }
    if (sched_getaffinity(0, sizeof allowed, &allowed)) {
        perror("bench_threads: sched_getaffinity");
        return 1;
    }
    for (int c = 0; c < CPU_SETSIZE && n_cpus < 2; c++) {
        if (CPU_ISSET(c, &allowed)) {
            cpus[n_cpus++] = c;
        }
    }
    if (n_cpus < 2) {
        printf("bench_threads: skipped, needs two CPUs and may run on "
               "%d\n",
               n_cpus);
        return 77;
    }
    for (unsigned i = 0; i < 2; i++) {
        keys[i] = aligned_alloc(64, BATCHES * sizeof *keys[i]);
        if (!keys[i]) {
            fprintf(stderr, "bench_threads: no memory\n");
            return 1;
        }
    }
    rcu_register_thread();
    for (uint32_t s = 0; s < 100; s++) {
        sp_bench_match(s, s, &rng, &m[s]);
    }
    printf("TSC %.3f ticks/ns; median of %u samples of %u 32-key batches "
           "per thread; CPUs %d and %d\n",
           sp_ticks_per_ns(), samples, REPS, cpus[0], cpus[1]);
    printf("%-22s %8s %17s %17s %8s\n", "ticks/pkt", "alone", "one classifier",
           "one each", "ratio");
    for (size_t i = 0; i < 3; i++) {
        uint32_t n = subtable_counts[i];
        struct sp_cls *shared = build(n, m), *other = build(n, m);
        struct looker alone = {.cls = shared,
                               .keys = keys[0],
                               .cpu = cpus[0],
                               .samples = samples};
        struct looker both[2] = {alone, alone}, each[2] = {alone, alone};
        char what[40];

        both[1].keys = each[1].keys = keys[1];
        both[1].cpu = each[1].cpu = cpus[1];
        each[1].cls = other;
        fill(keys[0], m, n, &rng);
        fill(keys[1], m, n, &rng);
        run(&alone, 1);
        run(both, 2);
        run(each, 2);
        if (alone.found + both[0].found + both[1].found + each[0].found +
                each[1].found !=
            (uint64_t)5 * (samples + 1) * REPS * SP_BATCH_MAX) {
            fprintf(stderr, "bench_threads: a key found no rule\n");
            return 1;
        }
        snprintf(what, sizeof what, "%3u subtable(s), 1 rule", n);
        printf(
            "%-22s %8.1f %8.1f %8.1f %8.1f %8.1f %7.2fx\n", what, alone.ticks,
            both[0].ticks, both[1].ticks, each[0].ticks, each[1].ticks,
            (both[0].ticks + both[1].ticks) / (each[0].ticks + each[1].ticks));
        sp_cls_destroy(shared);
        sp_cls_destroy(other);
    }
    printf("ratio: ticks of the two threads on one classifier / on one "
           "each\n");
    for (unsigned i = 0; i < 2; i++) {
        free(keys[i]);
    }
    rcu_unregister_thread();
    return 0;
}
