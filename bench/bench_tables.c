/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow table lookups in TSC ticks per packet, every variant this CPU runs,
 * each as a ratio to scalar from the same run:
 * - the classifier (sp_cls_lookup of 32-key batches that all match) for 1,
 *   10 and 100 subtables and up to MAX_RULES rules spread over them, and
 *   how the cost grows from the fewest rules to the most: the two tables
 *   are measured in turns, sample by sample, so the ratio is taken under
 *   the same load of a shared machine;
 * - in the same turns, the memory the most rules' lookups move, alone (the
 *   "memory" rows: the buckets and rules they read, in the same order, no
 *   hashing or comparing), and how that compares to the fewest rules'
 *   whole lookup: what no lookup of these tables could get below here;
 * - the PMD path (sp_emc_cls_lookup: hash, EMC, classifier) at EMC hit
 *   rates from 0 to 100%, and the growth of its cost from the fewest
 *   rules to the most with an EMC that never hits, in turns too;
 * - the memory the classifier takes per rule.
 * Lookups cycle through KEYS distinct keys (16,384 unless given), drawn
 * from the rules uniformly: how many flows are active matters as much as
 * how many rules there are, once the lines those flows read no longer fit
 * in the caches. The fewest rules' tables keep 16,384 keys, or their cost
 * would be the stream of keys from memory rather than the lookup.
 * Usage: bench_tables [SAMPLES [MAX_RULES [KEYS]]] (default 11, 1000000,
 * 16384; KEYS a multiple of 32). A million keys in 100 subtables takes
 * about 1 GiB besides the tables.
 */
#include <arpa/inet.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-qsbr.h>

#include "bench_rules.h"
#include "benchlib.h"
#include "datapath/cls_layout.h"
#include "simdpath/emc.h"
#include "simdpath/random.h"

/* Distinct batches of the fewest rules' tables, and the default for the
 * others. */
#define BATCHES 512

struct tables {
    struct sp_cls *cls;
    struct sp_match *matches; /* rule i's match, to build keys from */
    uint32_t n_rules;
    size_t bytes; /* heap the classifier took */
};

/* Bytes allocated: from the heap and in mmap()ed blocks. */
static size_t
heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd;
}

static void
tables_build(struct tables *t, uint32_t subtables, uint32_t rules)
{
    struct sp_random rng = {rules * 131 + subtables};
    struct sp_err err;
    size_t before;

    t->cls = sp_cls_create(NULL);
    /* Keys are 64-byte aligned types: malloc's 16 bytes are not enough. */
    t->matches = aligned_alloc(64, rules * sizeof *t->matches);
    t->n_rules = rules;
    if (!t->cls || !t->matches) {
        fprintf(stderr, "bench_tables: no memory\n");
        exit(1);
    }
    before = heap_bytes();
    for (uint32_t i = 0; i < rules; i++) {
        sp_bench_match(i % subtables, i, &rng, &t->matches[i]);
        if (!sp_cls_insert(t->cls, &t->matches[i], 1, NULL, &err)) {
            fprintf(stderr, "bench_tables: %s\n", err.msg);
            exit(1);
        }
    }
    sp_cls_reclaim(t->cls);
    t->bytes = heap_bytes() - before;
}

static void
tables_free(struct tables *t)
{
    sp_cls_destroy(t->cls);
    free(t->matches);
}

struct lookup_case {
    struct sp_cls *cls;
    struct sp_emc emc;
    struct sp_random rng;
    struct sp_flow_key (*keys)[SP_BATCH_MAX];
    uint32_t batches, next; /* keys[] has 'batches' batches */
    uint64_t found, hits;
};

static void
run_cls(void *ctx)
{
    struct lookup_case *c = ctx;
    const struct sp_rule *rules[SP_BATCH_MAX];

    c->found += (uint32_t)__builtin_popcount(sp_cls_lookup(
        c->cls, c->keys[c->next], SP_BATCH_MAX, UINT32_MAX, rules));
    c->next = (c->next + 1) % c->batches;
}

static void
run_pmd(void *ctx)
{
    struct lookup_case *c = ctx;
    const struct sp_rule *rules[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];

    c->found += (uint32_t)__builtin_popcount(
        sp_emc_cls_lookup(&c->emc, c->cls, c->keys[c->next], SP_BATCH_MAX,
                          hashes, rules, &c->rng, NULL));
    c->next = (c->next + 1) % c->batches;
}

/* The memory a lookup of the most rules moves, without the lookup: for
 * each batch, subtable by subtable in search order, the keys' first
 * buckets prefetched and then read, and the keys verified there (the
 * slot's key copy, or the rule) prefetched and read, as the kernels'
 * passes do, from addresses worked out beforehand. What no lookup of these
 * tables can beat here. */
struct floor_case {
    const uint64_t **buckets; /* [batch][subtable][key] */
    const uint64_t **rules;   /* [batch][key]: the key verified */
    uint16_t *found_in;       /* [batch][key]: subtable of its rule, or none */
    uint32_t subtables, batches, next;
    uint64_t sum;
};

/* What a lookup of a key whose rule is 'rule' verifies it with: the key
 * copy of rule's slot, in one of the buckets of hash or an overflow
 * bucket, or the rule. */
static const uint64_t *
verified(const struct sp_cls_buckets *bk, uint32_t hash,
         const struct sp_rule *rule)
{
    for (uint32_t c = 0; bk->lines > 1 && c < sp_cls_candidate_count(bk);
         c++) {
        const struct sp_cls_bucket *b = sp_cls_candidate(bk, hash, c);

        for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
            if (b->rules[s] == rule) {
                return sp_cls_key_copy(b, s)->blocks;
            }
        }
    }
    return (const uint64_t *)rule;
}

static void
floor_build(struct floor_case *f, const struct lookup_case *c)
{
    f->subtables = sp_cls_subtable_count(c->cls);
    f->batches = c->batches;
    f->buckets = malloc((size_t)f->batches * f->subtables * SP_BATCH_MAX *
                        sizeof *f->buckets);
    f->rules = malloc((size_t)f->batches * SP_BATCH_MAX * sizeof *f->rules);
    f->found_in =
        malloc((size_t)f->batches * SP_BATCH_MAX * sizeof *f->found_in);
    if (!f->buckets || !f->rules || !f->found_in) {
        fprintf(stderr, "bench_tables: no memory\n");
        exit(1);
    }
    for (uint32_t b = 0; b < f->batches; b++) {
        const struct sp_rule *rules[SP_BATCH_MAX];
        uint32_t found =
            sp_cls_lookup(c->cls, c->keys[b], SP_BATCH_MAX, UINT32_MAX, rules);

        for (uint32_t k = 0; k < SP_BATCH_MAX; k++) {
            f->found_in[b * SP_BATCH_MAX + k] = UINT16_MAX;
        }
        for (uint32_t j = 0; j < f->subtables; j++) {
            const struct sp_cls_subtable *st = sp_cls_subtable_at(c->cls, j);
            const struct sp_cls_buckets *bk = st->buckets;
            uint32_t hashes[SP_BATCH_MAX];

            SP_KERNEL(hash)(c->keys[b], &st->mask, SP_BATCH_MAX, hashes);
            for (uint32_t k = 0; k < SP_BATCH_MAX; k++) {
                f->buckets[((size_t)b * f->subtables + j) * SP_BATCH_MAX + k] =
                    (const uint64_t *)sp_cls_bucket(bk, hashes[k], 0);
                if (found >> k & 1 && !memcmp(&rules[k]->match.mask, &st->mask,
                                              sizeof st->mask)) {
                    f->rules[b * SP_BATCH_MAX + k] =
                        verified(bk, hashes[k], rules[k]);
                    f->found_in[b * SP_BATCH_MAX + k] = (uint16_t)j;
                }
            }
        }
    }
    f->next = 0;
}

static void
floor_free(struct floor_case *f)
{
    free(f->buckets);
    free(f->rules);
    free(f->found_in);
}

static void
run_floor(struct floor_case *f)
{
    const uint64_t **rules = &f->rules[f->next * SP_BATCH_MAX];
    const uint16_t *found_in = &f->found_in[f->next * SP_BATCH_MAX];

    for (uint32_t j = 0; j < f->subtables; j++) {
        const uint64_t **buckets =
            &f->buckets[((size_t)f->next * f->subtables + j) * SP_BATCH_MAX];

        for (uint32_t k = 0; k < SP_BATCH_MAX; k++) {
            __builtin_prefetch(buckets[k]);
        }
        for (uint32_t k = 0; k < SP_BATCH_MAX; k++) {
            f->sum += *(const volatile uint64_t *)buckets[k];
            if (found_in[k] == j) {
                __builtin_prefetch(rules[k]);
            }
        }
        for (uint32_t k = 0; k < SP_BATCH_MAX; k++) {
            if (found_in[k] == j) {
                f->sum += *(const volatile uint64_t *)rules[k];
            }
        }
    }
    f->next = (f->next + 1) % f->batches;
}

static void
force(const char *spec)
{
    struct sp_err err;

    if (sp_dispatch_set_impl(spec, &err)) {
        fprintf(stderr, "bench_tables: %s\n", err.msg);
        exit(1);
    }
}

/* The contestants of rows(): variant index[k % n] of the kernel on case
 * cases[k / n], and after those the memory floor if there is one. */
struct turns {
    const char *kernel; /* NULL: every kernel */
    void (*fn)(void *);
    struct lookup_case *cases[2];
    struct floor_case *floor;
    unsigned index[SP_VARIANT_MAX], n, n_lookups;
};

static void
begin_turn(void *ctx, unsigned k)
{
    const struct turns *t = ctx;
    char spec[64];

    if (k == t->n_lookups) {
        return;
    }
    snprintf(spec, sizeof spec, "%s%s%s", t->kernel ? t->kernel : "",
             t->kernel ? "=" : "", sp_variant_get(t->index[k % t->n])->name);
    force(spec);
}

static void
run_turn(void *ctx, unsigned k)
{
    const struct turns *t = ctx;

    if (k == t->n_lookups) {
        run_floor(t->floor);
    } else {
        t->fn(t->cases[k / t->n]);
    }
}

/* The median over the samples of mine[s] / theirs[s]. */
static double
median_ratio(const double *mine, const double *theirs, unsigned samples)
{
    double *r = calloc(samples, sizeof *r), m;

    for (unsigned s = 0; s < samples; s++) {
        r[s] = mine[s] / theirs[s];
    }
    m = sp_median(r, samples);
    free(r);
    return m;
}

/* Runs fn under each variant of 'kernel' (or of every kernel if NULL) and
 * prints a row per variant. The variants take turns, one sample each
 * (sp_bench_turns), so that noise from other jobs on a shared machine
 * hits them alike and the ratios stay comparable; each sample follows as
 * many untimed runs of its own, or the variant after scalar's long turn
 * measured up to 15% slower on large tables with the same code. If base
 * is not NULL, it is sampled in the same rounds under every variant too,
 * and growth[] gets the median of the per-round ratios c / base (by
 * registration index); so is the memory floor of c if floor is not NULL,
 * with a row of its own, and floor_growth[] gets the ratios floor /
 * base. */
static void
rows(const char *what, const char *kernel, void (*fn)(void *),
     struct lookup_case *c, struct lookup_case *base, struct floor_case *floor,
     unsigned reps, unsigned samples, double *growth, double *floor_growth)
{
    struct turns t = {
        .kernel = kernel, .fn = fn, .cases = {c, base}, .floor = floor};
    double median[2 * SP_VARIANT_MAX + 1];
    double *all =
        calloc((size_t)(2 * SP_VARIANT_MAX + 1) * samples, sizeof *all);
    double scalar = 0;

    for (unsigned i = 0; i < sp_variant_count(); i++) {
        const struct sp_variant *v = sp_variant_get(i);

        if (sp_variant_allowed(v) &&
            (!kernel || sp_variant_provider(v, SP_KERNEL_classifier) == v)) {
            t.index[t.n++] = i;
        }
    }
    t.n_lookups = (base ? 2 : 1) * t.n;
    sp_bench_turns(&(struct sp_bench_turns){.begin = begin_turn,
                                            .run = run_turn,
                                            .ctx = &t,
                                            .n = t.n_lookups + !!floor,
                                            .reps = reps,
                                            .samples = samples,
                                            .warmup = reps},
                   median, all);
    for (unsigned k = 0; k < t.n; k++) {
        const struct sp_variant *v = sp_variant_get(t.index[k]);
        const double *theirs = &all[(t.n + k) * samples];
        double per = median[k] / SP_BATCH_MAX;

        scalar = k ? scalar : per;
        if (base) {
            growth[t.index[k]] =
                median_ratio(&all[k * samples], theirs, samples);
        }
        if (base && floor) {
            floor_growth[t.index[k]] =
                median_ratio(&all[t.n_lookups * samples], theirs, samples);
        }
        printf("%-34s %-8s %9.1f %8.1f %8.2fx\n", what, v->name, per,
               per / sp_ticks_per_ns(), scalar / per);
    }
    if (floor) {
        double per = median[t.n_lookups] / SP_BATCH_MAX;

        printf("%-34s %-8s %9.1f %8.1f\n", what, "memory", per,
               per / sp_ticks_per_ns());
    }
    free(all);
    sp_dispatch_reset();
}

static void
fill_keys(struct lookup_case *c, const struct tables *t, uint32_t hot,
          unsigned hit_pct)
{
    for (uint32_t b = 0; b < c->batches; b++) {
        for (uint32_t k = 0; k < SP_BATCH_MAX; k++) {
            bool from_hot = sp_random_below(&c->rng, 100) < hit_pct;
            uint32_t i =
                from_hot ? sp_random_below(&c->rng, hot)
                         : hot + sp_random_below(&c->rng, t->n_rules - hot);

            sp_bench_key_for(&t->matches[i], &c->rng, &c->keys[b][k]);
            if (from_hot) {
                /* The same key each time, so the EMC can hold it. */
                sp_bench_key_for(&t->matches[i], &(struct sp_random){i},
                                 &c->keys[b][k]);
            }
        }
    }
}

/* What the datapath's maintenance (sp_dp_maintain) does after traffic: a
 * pass of lookups over every batch, then sp_cls_sort, which may give the
 * subtable answering most of them key copies; the memory that takes
 * counts in t->bytes. */
static void
maintain(struct lookup_case *c, struct tables *t)
{
    size_t before;

    for (uint32_t b = 0; b < c->batches; b++) {
        run_cls(c);
    }
    before = heap_bytes();
    sp_cls_sort(t->cls);
    sp_cls_reclaim(t->cls);
    t->bytes += heap_bytes() - before;
}

int
main(int argc, char **argv)
{
    unsigned samples = argc > 1 ? (unsigned)atoi(argv[1]) : 11;
    uint32_t max_rules = argc > 2 ? (uint32_t)atoi(argv[2]) : 1000000;
    uint32_t keys =
        argc > 3 ? (uint32_t)atoi(argv[3]) : BATCHES * SP_BATCH_MAX;
    static const uint32_t subtable_counts[] = {1, 10, 100};
    static const uint32_t rule_counts[] = {1,     10,     100,    1000,
                                           10000, 100000, 1000000};
    static const unsigned hit_rates[] = {0, 25, 50, 75, 90, 100};
    struct lookup_case c = {.rng = {5}, .batches = keys / SP_BATCH_MAX},
                       fewest = {.rng = {6}, .batches = BATCHES};
    struct sp_err err;
    /* Per subtable count: the most rules, and the growth of the cost from
     * the fewest to those (0 if only one size was measured). */
    uint32_t most[3] = {0};
    double growth[3][SP_VARIANT_MAX] = {{0}};
    /* And how much more than the fewest rules' lookup the memory floor of
     * the most rules' alone takes, and the growth of the PMD path's lookup
     * (hash, EMC, classifier) with no EMC hits. */
    double floor_growth[3][SP_VARIANT_MAX] = {{0}};
    double pmd_growth[3][SP_VARIANT_MAX] = {{0}};

    if (samples < 3) {
        samples = 3;
    }
    if (!keys || keys % SP_BATCH_MAX) {
        fprintf(stderr,
                "bench_tables: KEYS must be a positive multiple of %u\n",
                SP_BATCH_MAX);
        return 2;
    }
    rcu_register_thread();
    c.keys = aligned_alloc(64, c.batches * sizeof *c.keys);
    fewest.keys = aligned_alloc(64, fewest.batches * sizeof *fewest.keys);
    if (!c.keys || !fewest.keys) {
        fprintf(stderr, "bench_tables: no memory for %u keys\n", keys);
        return 1;
    }
    /* Empty EMCs that take an entry once in 2^32 misses: every key goes
     * on to the classifier. */
    if (sp_emc_init(&c.emc, SP_EMC_DEFAULT_ENTRIES, UINT32_MAX, &err) ||
        sp_emc_init(&fewest.emc, SP_EMC_DEFAULT_ENTRIES, UINT32_MAX, &err)) {
        fprintf(stderr, "bench_tables: %s\n", err.msg);
        return 1;
    }
    sp_bench_print_picks();
    printf("TSC %.3f ticks/ns; median of %u samples; ratio = scalar ticks / "
           "variant ticks (same run)\n",
           sp_ticks_per_ns(), samples);
    printf("lookups cycle through %u distinct keys (the fewest rules' "
           "tables: %u)\n",
           keys, BATCHES * SP_BATCH_MAX);
    printf("%-34s %-8s %9s %8s %9s\n", "classifier, 32-key batches", "variant",
           "ticks/pkt", "ns/pkt", "vs scalar");
    for (size_t s = 0; s < 3; s++) {
        uint32_t subtables = subtable_counts[s];
        struct tables small = {0};

        for (size_t r = 0; r < 7; r++) {
            if (rule_counts[r] >= subtables && rule_counts[r] <= max_rules) {
                most[s] = rule_counts[r];
            }
        }
        for (size_t r = 0; r < 7; r++) {
            uint32_t rules = rule_counts[r];
            /* The fewest rules' table stays, to be measured again in turns
             * with the most rules'. */
            bool first = !small.cls;
            struct tables t;
            struct lookup_case *lc = first ? &fewest : &c;
            char what[64];

            if (rules < subtables || rules > max_rules) {
                continue;
            }
            tables_build(&t, subtables, rules);
            lc->cls = t.cls;
            fill_keys(lc, &t, 0, 0);
            maintain(lc, &t);
            snprintf(what, sizeof what, "%3u subtables %7u rules %4zu B/r",
                     subtables, rules, t.bytes / rules);
            if (!first && rules == most[s]) {
                struct floor_case floor;

                floor_build(&floor, lc);
                rows(what, "classifier", run_cls, lc, &fewest, &floor, 1000,
                     samples, growth[s], floor_growth[s]);
                floor_free(&floor);
                snprintf(what, sizeof what, "%3u subtables %7u rules PMD path",
                         subtables, rules);
                rows(what, NULL, run_pmd, lc, &fewest, NULL, 1000, samples,
                     pmd_growth[s], NULL);
            } else {
                rows(what, "classifier", run_cls, lc, NULL, NULL, 1000,
                     samples, NULL, NULL);
            }
            if (first) {
                small = t;
            } else {
                tables_free(&t);
            }
        }
        if (small.cls) {
            tables_free(&small);
        }
    }
    printf("\ngrowth of ticks/pkt from the fewest to the most rules "
           "(measured in turns), and of the most rules' memory alone:\n");
    for (size_t s = 0; s < 3; s++) {
        for (unsigned i = 0; i < sp_variant_count(); i++) {
            if (growth[s][i] > 0) {
                printf("  %3u subtables, %u to %u rules, %-8s %5.2fx, memory "
                       "%5.2fx\n",
                       subtable_counts[s], subtable_counts[s], most[s],
                       sp_variant_get(i)->name, growth[s][i],
                       floor_growth[s][i]);
            }
        }
    }
    printf("and of the PMD path's (hash, EMC that never hits, classifier):\n");
    for (size_t s = 0; s < 3; s++) {
        for (unsigned i = 0; i < sp_variant_count(); i++) {
            if (pmd_growth[s][i] > 0) {
                printf("  %3u subtables, %u to %u rules, %-10s %5.2fx\n",
                       subtable_counts[s], subtable_counts[s], most[s],
                       sp_variant_get(i)->name, pmd_growth[s][i]);
            }
        }
    }
    sp_emc_destroy(&c.emc);
    sp_emc_destroy(&fewest.emc);
    printf("\n%-34s %-8s %9s %8s %9s\n", "PMD path (hash+EMC+classifier)",
           "variant", "ticks/pkt", "ns/pkt", "vs scalar");
    for (size_t h = 0; h < sizeof hit_rates / sizeof hit_rates[0]; h++) {
        uint32_t rules = max_rules < 100000 ? max_rules : 100000;
        uint32_t hot = rules / 2 < 2048 ? rules / 2 : 2048;
        struct tables t;
        char what[64];

        tables_build(&t, 10, rules);
        c.cls = t.cls;
        /* Hot keys cached once; misses are never inserted. */
        if (sp_emc_init(&c.emc, SP_EMC_DEFAULT_ENTRIES, UINT32_MAX, &err)) {
            fprintf(stderr, "bench_tables: %s\n", err.msg);
            return 1;
        }
        c.emc.insert_inv_prob = 1;
        for (uint32_t i = 0; i < hot; i++) {
            const struct sp_rule *rule;
            struct sp_flow_key key;
            uint32_t hash;

            sp_bench_key_for(&t.matches[i], &(struct sp_random){i}, &key);
            sp_cls_lookup(t.cls, &key, 1, 1, &rule);
            SP_KERNEL(hash)(&key, NULL, 1, &hash);
            sp_emc_insert(&c.emc, sp_cls_generation(t.cls), &key, hash, rule,
                          &c.rng);
        }
        c.emc.insert_inv_prob = UINT32_MAX;
        fill_keys(&c, &t, hot, hit_rates[h]);
        maintain(&c, &t);
        snprintf(what, sizeof what, "10 subtables %6u rules, %3u%% hits",
                 rules, hit_rates[h]);
        rows(what, NULL, run_pmd, &c, NULL, NULL, 1000, samples, NULL, NULL);
        sp_emc_destroy(&c.emc);
        tables_free(&t);
    }
    free(c.keys);
    free(fewest.keys);
    rcu_unregister_thread();
    return 0;
}
