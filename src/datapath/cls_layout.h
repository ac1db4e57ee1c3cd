/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The classifier's bucket layout: what its lookup kernels read and its
 * table code (cls_place.c) writes. Private to the library: the classifier
 * in src/datapath and the kernel's generic loop (src/generic/classifier.h,
 * which every ISA's classifier.c includes) see it; the public interface,
 * simdpath/classifier.h, names these structs only. Tests and benchmarks
 * that look inside buckets include it through an explicit include path.
 *
 * Readers take no lock (the concurrency contract in simdpath/classifier.h):
 * everything a lookup reads here is written by single atomic stores, in an
 * order cls_place.c explains.
 */
#ifndef SP_CLS_LAYOUT_H
#define SP_CLS_LAYOUT_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simdpath/classifier.h"

/* A subtable's hash table: buckets of SP_CLS_SLOTS entries, signatures (the
 * full 32-bit hash of the masked key) stored contiguously so one SIMD
 * compare tests all of them, then the masked key is compared. A key has two
 * candidate buckets (sp_cls_bucket_index): it goes to the first unless that
 * is full, and its bit in the first's moved_hint (sp_cls_moved_bit) is set
 * when it has to go to its second one, so a lookup reads the second only
 * when its key's bit is set. A bucket is one cache line, signatures, hint
 * and rule pointers together: a probe of a subtable that does not hold the
 * key reads that line only, and one that does finds the rule pointer in
 * it. A NULL rule is an empty slot. */
#define SP_CLS_SLOTS 5

struct sp_cls_bucket {
    uint32_t sigs[SP_CLS_SLOTS];
    uint32_t moved_hint; /* the bits of the keys of this bucket living in
                          * their second one or in an overflow bucket, and
                          * of some that did: cleared when the last of them
                          * leaves */
    const struct sp_rule *rules[SP_CLS_SLOTS];
} __attribute__((aligned(64)));

/* A key's bit in its first bucket's moved_hint, from the top five bits of
 * its hash, which pick no first bucket of a table under 2^27 buckets. With
 * one key moved out of a bucket (the usual case; docs/perf/classifier.md),
 * a lookup of another key reads the second bucket 1 time in 32 instead of
 * every time. */
static inline uint32_t
sp_cls_moved_bit(uint32_t hash)
{
    return UINT32_C(1) << (hash >> 27);
}

/* Whether the key of this hash may live outside its first bucket b (an
 * acquire load: before the probe of its second bucket). Most buckets have
 * no moved keys: testing the hint first costs them no more than that. */
static inline bool
sp_cls_may_have_moved(const struct sp_cls_bucket *b, uint32_t hash)
{
    uint32_t hint = __atomic_load_n(&b->moved_hint, __ATOMIC_ACQUIRE);

    return __builtin_expect(hint != 0, 0) && (hint & sp_cls_moved_bit(hash));
}

static_assert(sizeof(struct sp_cls_bucket) == 64,
              "a bucket is one cache line");

/* A large subtable that answers most lookups (sp_cls_sort) keeps a copy of
 * each slot's masked key after its bucket's line, so that a lookup
 * verifies the key in the same 4 KiB as the bucket it has just read rather
 * than in the rule, elsewhere: on a large table that costs a fraction of a
 * line from memory instead of a whole one (docs/perf/classifier.md). The
 * others keep buckets of one line, six times denser, which is what their
 * lookups, mostly misses, read.
 *
 * A slot's copy is written only while the slot is empty, after a release
 * fence, and its rule published after it; a lookup reads the rule pointer,
 * the copy, then the pointer again, and if that changed it compares the
 * rule's own key instead (sp_cls_slot_changed in src/generic/classifier.h). */
#define SP_CLS_LINES_COPIES (1 + SP_CLS_SLOTS)

/* No subtable gets copies unless sp_cls_set_copies_min_buckets says from
 * which size on: the datapath reads every found rule's line after its
 * match (its actions and counters), which the kernels prefetch with the
 * key, so a copy saves it no page, while the buckets span six times the
 * memory (docs/perf/pmd-loop.md). Small subtables gain nothing from them
 * in any case: their rules stay in the caches (docs/perf/classifier.md). */
#define SP_CLS_COPIES_MIN_BUCKETS UINT32_MAX

/* A key whose two buckets are both full goes to an overflow bucket, after
 * the last one, and sets its bit in its first bucket's moved_hint as a key
 * in its second bucket does: a lookup scans the overflow buckets only for a
 * key found in neither of its buckets whose bit is set, while the overflow
 * holds any. Without them a table doubles the first time a key finds
 * both its buckets full; with them, once they are full too, at about
 * twice the load, so lookups that miss read half the buckets
 * (docs/perf/classifier.md). Tables of fewer buckets stay in the caches and
 * never get them (sp_cls_set_overflow_min_buckets changes that). */
#define SP_CLS_OVERFLOW_BUCKETS     8
#define SP_CLS_OVERFLOW_MIN_BUCKETS 1024

struct sp_cls_buckets {
    uint32_t mask;  /* bucket count - 1, a power of two minus one */
    uint32_t lines; /* per bucket: 1, or SP_CLS_LINES_COPIES with copies */
    uint32_t n_overflow_buckets; /* after b[mask]: 0 or
                                  * SP_CLS_OVERFLOW_BUCKETS */
    uint32_t n_overflow;         /* keys in them (atomic) */
    uint32_t *n_moved; /* per first bucket (mask + 1), the keys moved out
                        * of it, after the buckets: the writer's count,
                        * which clears moved_hint, never read by lookups */
    struct sp_cls_bucket b[];
};

/* Bucket i, i up to mask + n_overflow_buckets (overflow buckets last), in
 * buckets of 'lines' lines (the kernels pass their layout as a
 * constant). */
static inline struct sp_cls_bucket *
sp_cls_bucket_at_lines(const struct sp_cls_buckets *buckets, size_t i,
                       uint32_t lines)
{
    return (struct sp_cls_bucket *)&buckets->b[i * lines];
}

/* Bucket i. */
static inline struct sp_cls_bucket *
sp_cls_bucket_at(const struct sp_cls_buckets *buckets, uint32_t i)
{
    return sp_cls_bucket_at_lines(buckets, i, buckets->lines);
}

/* How many buckets there are, overflow buckets included. */
static inline uint32_t
sp_cls_bucket_count(const struct sp_cls_buckets *buckets)
{
    return buckets->mask + 1 + buckets->n_overflow_buckets;
}

/* Overflow bucket k, in buckets of 'lines' lines. */
static inline struct sp_cls_bucket *
sp_cls_overflow_bucket(const struct sp_cls_buckets *buckets, uint32_t k,
                       uint32_t lines)
{
    return sp_cls_bucket_at_lines(buckets, (size_t)buckets->mask + 1 + k,
                                  lines);
}

/* Slot s's key copy, in buckets of SP_CLS_LINES_COPIES lines. */
static inline struct sp_flow_key *
sp_cls_key_copy(const struct sp_cls_bucket *b, unsigned s)
{
    return (struct sp_flow_key *)(b + 1) + s;
}

/* A subtable's hits are counted in stripes, one per looking-up thread (up
 * to this many), each on a cache line of its own: PMD threads that shared
 * one counter took its line from each other at every batch, and two of
 * them looked up 1.3-1.9 times as long per packet as with a classifier
 * each (bench_threads). */
#define SP_CLS_HIT_STRIPES 16

struct sp_cls_hit_stripe {
    _Alignas(64) uint64_t n; /* relaxed atomic */
};

/* One mask's rules. The kernel reads mask, block_map and the buckets the
 * caller passes; the other members are the classifier's bookkeeping. */
struct sp_cls_subtable {
    struct sp_flow_key mask;
    uint8_t block_map;              /* bit b: mask uses key block b */
    struct sp_cls_buckets *buckets; /* RCU-published; replaced on growth
                                     * and change of layout */
    uint32_t n_rules;
    uint32_t max_priority; /* of its rules */
    uint32_t n_at_max;     /* rules with max_priority */
    /* RCU-published: the subtable's one rule, NULL while it has more (or,
     * briefly, while one is removed); lookups compare it directly. */
    const struct sp_rule *sole;
    /* Lookups answered here: sp_cls_subtable_hits(). */
    struct sp_cls_hit_stripe hits[SP_CLS_HIT_STRIPES];
};

/* Candidate bucket 'which' (0 or 1) of a masked-key hash. */
static inline uint32_t
sp_cls_bucket_index(uint32_t hash, uint32_t mask, unsigned which)
{
    return (which ? (hash >> 16 | hash << 16) ^ 0x5bd1e995u : hash) & mask;
}

/* That bucket, in buckets of 'lines' lines. */
static inline struct sp_cls_bucket *
sp_cls_bucket_lines(const struct sp_cls_buckets *buckets, uint32_t hash,
                    unsigned which, uint32_t lines)
{
    return sp_cls_bucket_at_lines(
        buckets, sp_cls_bucket_index(hash, buckets->mask, which), lines);
}

/* That bucket. */
static inline struct sp_cls_bucket *
sp_cls_bucket(const struct sp_cls_buckets *buckets, uint32_t hash,
              unsigned which)
{
    return sp_cls_bucket_lines(buckets, hash, which, buckets->lines);
}

/* The buckets a key may live in, in the order keys are placed in them and
 * looked for: candidate 0 is its first bucket, 1 its second, and from
 * SP_CLS_FIRST_OVERFLOW on the overflow buckets. */
#define SP_CLS_FIRST_OVERFLOW 2

static inline uint32_t
sp_cls_candidate_count(const struct sp_cls_buckets *buckets)
{
    return SP_CLS_FIRST_OVERFLOW + buckets->n_overflow_buckets;
}

static inline struct sp_cls_bucket *
sp_cls_candidate(const struct sp_cls_buckets *buckets, uint32_t hash,
                 uint32_t c)
{
    return c < SP_CLS_FIRST_OVERFLOW
               ? sp_cls_bucket(buckets, hash, c)
               : sp_cls_overflow_bucket(buckets, c - SP_CLS_FIRST_OVERFLOW,
                                        buckets->lines);
}

#endif /* SP_CLS_LAYOUT_H */
