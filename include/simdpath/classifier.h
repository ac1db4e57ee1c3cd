/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The classifier: rules with priorities and wildcards, in tuple-space
 * subtables (one per distinct mask). The layouts the classifier kernel
 * reads are plain structs declared here; everything else is private to
 * src/datapath/classifier.c.
 *
 * Semantics (OpenFlow): the highest-priority matching rule wins; among
 * matching rules of equal priority the one inserted first (lowest seq)
 * wins, on every ISA.
 *
 * Concurrency (liburcu, QSBR flavour):
 * - Lookups (sp_cls_lookup, sp_cls_generation, and sp_emc_cls_lookup in
 *   emc.h) take no lock. They must run on a thread registered with
 *   rcu_register_thread() and online; the rules they return stay valid
 *   until that thread's next rcu_quiescent_state() (or rcu_thread_offline).
 *   A PMD thread reports one quiescent state per poll loop, after it has
 *   finished with every rule of the loop's batches.
 * - Updates (sp_cls_insert, sp_cls_remove, sp_cls_find, sp_cls_sort,
 *   sp_cls_reclaim) take the classifier's mutex and may wait for a grace
 *   period (synchronize_rcu): call them from any thread that is not inside
 *   a lookup (an unregistered thread, or a registered one, which QSBR puts
 *   offline while it waits). Never from a PMD thread between its quiescent
 *   states while it holds rule pointers.
 * - Rule lifetime: the classifier allocates and owns every rule. A removed
 *   rule is unlinked at once and freed after a grace period, in batches of
 *   SP_CLS_RECLAIM_BATCH (or at sp_cls_reclaim / sp_cls_destroy); the
 *   actions destructor given to sp_cls_create is called on its actions
 *   then, never earlier.
 */
#ifndef SP_CLASSIFIER_H
#define SP_CLASSIFIER_H

#include <assert.h>
#include <stdint.h>

#include "simdpath/dispatch.h"
#include "simdpath/match.h"

/* Defined by the actions; the classifier only stores the pointer. */
struct sp_actions;

struct sp_rule {
    struct sp_match match; /* key already ANDed with mask */
    uint32_t priority;     /* higher wins */
    uint64_t seq;          /* insertion order: equal priorities, lower wins */
    const struct sp_actions *actions;
};

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

/* Smaller subtables never get copies: their rules stay in the caches, and
 * copies would only cost memory and a few instructions per key (see
 * docs/perf/classifier.md; sp_cls_set_copies_min_buckets changes it). */
#define SP_CLS_COPIES_MIN_BUCKETS 32768

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

/* Removed rules and replaced tables wait in a list; once it holds this
 * many, one synchronize_rcu() frees them all. */
#define SP_CLS_RECLAIM_BATCH 256

struct sp_cls;

typedef void sp_actions_free_fn(const struct sp_actions *actions);

/* A new, empty classifier; free_actions (may be NULL) is called on a removed
 * rule's actions once no lookup can see the rule. NULL on no memory. */
struct sp_cls *sp_cls_create(sp_actions_free_fn *free_actions);

/* Frees the classifier and every rule in it (calling free_actions). No
 * lookup may be running or start on it. */
void sp_cls_destroy(struct sp_cls *cls);

/* Adds a rule: the match is checked with sp_match_validate(). Returns the
 * rule (owned by the classifier) or NULL with the reason in err (invalid
 * match, a rule with the same match and priority exists, no memory). */
const struct sp_rule *sp_cls_insert(struct sp_cls *cls,
                                    const struct sp_match *match,
                                    uint32_t priority,
                                    const struct sp_actions *actions,
                                    struct sp_err *err);

/* Removes a rule sp_cls_insert returned; it is freed after a grace period. */
void sp_cls_remove(struct sp_cls *cls, const struct sp_rule *rule);

/* The rule with exactly this match and priority, or NULL. */
const struct sp_rule *sp_cls_find(struct sp_cls *cls,
                                  const struct sp_match *match,
                                  uint32_t priority);

/* Reorders subtables by hit counts within equal highest priority (and
 * halves the counts, so the order follows recent traffic), and gives key
 * copies to a subtable of SP_CLS_COPIES_MIN_BUCKETS buckets or more with
 * at least half the (halved) hit counts, taking them from one under a
 * quarter (without memory for the new buckets, a subtable keeps its
 * layout). Call it now and then, as sp_dp_maintain does. */
void sp_cls_sort(struct sp_cls *cls);

/* The fewest buckets a subtable must have to get key copies from
 * sp_cls_sort (SP_CLS_COPIES_MIN_BUCKETS unless set; 0: any). */
void sp_cls_set_copies_min_buckets(struct sp_cls *cls, uint32_t min_buckets);

/* The fewest buckets a subtable's table must have to get overflow buckets
 * (SP_CLS_OVERFLOW_MIN_BUCKETS unless set; 0: any), from its next growth
 * or change of layout on. */
void sp_cls_set_overflow_min_buckets(struct sp_cls *cls, uint32_t min_buckets);

/* Waits for a grace period and frees everything removed so far. */
void sp_cls_reclaim(struct sp_cls *cls);

uint32_t sp_cls_rule_count(struct sp_cls *cls);
uint32_t sp_cls_subtable_count(struct sp_cls *cls);

/* The lookups st answered (halved by each sp_cls_sort()). */
uint64_t sp_cls_subtable_hits(const struct sp_cls_subtable *st);

/* The subtable holding rule (valid as long as the rule). */
const struct sp_cls_subtable *sp_cls_rule_subtable(const struct sp_rule *rule);

/* The i-th subtable in search order, or NULL past the end (for dumps and
 * tests; valid like a looked-up rule, or while no update runs). */
const struct sp_cls_subtable *sp_cls_subtable_at(const struct sp_cls *cls,
                                                 uint32_t i);

/* Bumped after every insert and remove: an EMC entry made under an older
 * generation is never used. */
uint64_t sp_cls_generation(const struct sp_cls *cls);

/* Looks up the keys of 'todo' (bits of the first n <= SP_BATCH_MAX keys)
 * through the classifier kernel. Returns the keys that matched; rules[i] is
 * set for those only. Lock-free; see the concurrency contract above. */
uint32_t sp_cls_lookup(const struct sp_cls *cls,
                       const struct sp_flow_key *keys, uint32_t n,
                       uint32_t todo, const struct sp_rule **rules);

#endif /* SP_CLASSIFIER_H */
