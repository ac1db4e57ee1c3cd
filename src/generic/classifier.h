/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The probing passes the SIMD subtable lookups share, after each has hashed
 * every key of the batch and prefetched its first bucket. They go over the
 * whole batch pass by pass, as DPDK's rte_hash bulk lookup does, so that
 * the cache misses of a large table overlap (up to one per key of the
 * batch in flight) instead of queueing one key at a time:
 * 1. (the ISA's) masked keys, hashes, a prefetch of every first bucket;
 * 2. the first bucket's signatures of every key, prefetching the first
 *    candidate's key (its copy, or its rule) and its rule's line after
 *    the match, and the second bucket when the key's bit is set in the
 *    first's moved_hint;
 * 3. the second buckets' signatures, prefetching a candidate's key for
 *    keys that had none in their first bucket;
 * 4. per key, each candidate slot in probing order (first bucket, then
 *    second): the first whose rule is not NULL and whose key equals the
 *    masked key (sp_cls_slot_rule) is the answer, as the scalar
 *    specification finds it; for a key found in neither, whose bit is
 *    set in its first bucket's moved_hint, the overflow buckets if they
 *    hold any.
 * Each ISA passes its own signature and key compares; the calls are to
 * constants of always-inlined functions, so they are inlined too.
 *
 * Instantiated by src/neon/classifier.c and, through src/x86/classifier.h,
 * src/avx2/classifier.c and src/avx512/classifier.c. Caller in the
 * datapath: sp_cls_lookup (src/datapath/cls_lookup.c), through
 * SP_KERNEL(classifier), once per subtable in priority order, for the
 * keys sp_emc_cls_lookup (src/datapath/emc.c) did not find in the EMC.
 */
#ifndef SP_GENERIC_CLASSIFIER_H
#define SP_GENERIC_CLASSIFIER_H

#include <stdbool.h>

#include "datapath/cls_layout.h"

/* Bit s set when signature s of bucket b equals hash. */
typedef uint32_t sp_cls_sig_match_fn(const struct sp_cls_bucket *b,
                                     uint32_t hash);
/* Whether two masked keys are equal in all 64 bytes. */
typedef bool sp_cls_keys_equal_fn(const struct sp_flow_key *a,
                                  const struct sp_flow_key *b);

/* Candidate bit of a key's first slot in its second bucket: bits 0-4 are
 * the slots of its first bucket, so bit order is probing order. */
#define SP_CLS_SECOND 8

/* A bucket: its one cache line. */
static inline void
sp_cls_prefetch_bucket(const struct sp_cls_bucket *b)
{
    __builtin_prefetch(b);
}

/* The key slot s of b is verified with (its copy, or the key of its
 * rule), and the rule's line after its match: priority, actions and aux,
 * which the caller reads of every rule found, a miss of its own in a
 * large table that then overlaps the key's. The rule pointer may be stale
 * by the time the key is verified (and that rule freed after a grace
 * period): a prefetch of it is harmless, and the verifying pass loads it
 * again. */
static inline void
sp_cls_prefetch_key(const struct sp_cls_bucket *b, unsigned s, bool copies)
{
    const struct sp_rule *r = __atomic_load_n(&b->rules[s], __ATOMIC_RELAXED);

    if (r) {
        __builtin_prefetch(copies ? (const void *)sp_cls_key_copy(b, s) : r);
        __builtin_prefetch(&r->priority);
    }
}

/* Whether slot s of b no longer holds r, which the caller loaded (acquire)
 * before it read the slot's key copy. The copy may be rewritten while it
 * is read (r removed and another rule placed there), but the writer
 * empties the slot first: a pointer that did not change vouches for the
 * copy, and one that did leaves r's own key to compare, valid until the
 * next quiescent state. */
static inline bool
sp_cls_slot_changed(const struct sp_cls_bucket *b, unsigned s,
                    const struct sp_rule *r)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&b->rules[s], __ATOMIC_RELAXED) != r;
}

/* The rule of slot s of b if its key equals masked, else NULL. */
static inline __attribute__((always_inline)) const struct sp_rule *
sp_cls_slot_rule(const struct sp_cls_bucket *b, unsigned s,
                 const struct sp_flow_key *masked, bool copies,
                 sp_cls_keys_equal_fn *keys_equal)
{
    const struct sp_rule *r = __atomic_load_n(&b->rules[s], __ATOMIC_ACQUIRE);
    bool equal;

    if (!r) {
        return NULL;
    }
    if (copies) {
        equal = keys_equal(sp_cls_key_copy(b, s), masked);
        if (sp_cls_slot_changed(b, s, r)) {
            equal = keys_equal(&r->match.key, masked);
        }
    } else {
        equal = keys_equal(&r->match.key, masked);
    }
    return equal ? r : NULL;
}

/* The rule of an overflow bucket whose key equals masked (whose hash is
 * 'hash'), or NULL, in buckets of 'lines' lines. Only for keys whose bit
 * is set in their first bucket's moved_hint (set before a moved key's slot
 * is filled, read before this): rare, so no prefetching. */
static inline __attribute__((always_inline)) const struct sp_rule *
sp_cls_overflow_rule(const struct sp_cls_buckets *buckets, uint32_t hash,
                     const struct sp_flow_key *masked,
                     sp_cls_sig_match_fn *sig_match,
                     sp_cls_keys_equal_fn *keys_equal, uint32_t lines)
{
    if (!__atomic_load_n(&buckets->n_overflow, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    for (uint32_t k = 0; k < buckets->n_overflow_buckets; k++) {
        const struct sp_cls_bucket *b =
            sp_cls_overflow_bucket(buckets, k, lines);

        for (uint32_t m = sig_match(b, hash); m; m &= m - 1) {
            const struct sp_rule *r = sp_cls_slot_rule(
                b, (unsigned)__builtin_ctz(m), masked, lines > 1, keys_equal);

            if (r) {
                return r;
            }
        }
    }
    return NULL;
}

/* Passes 2 to 4 for the keys of 'todo', whose masked keys and hashes the
 * caller computed, prefetching their first buckets, in buckets of 'lines'
 * lines (buckets->lines as a constant: the kernels compile one copy per
 * layout, with no test of it per key). Returns the found mask; rules[i]
 * is written for found keys only. */
static inline __attribute__((always_inline)) uint32_t
sp_cls_probe(const struct sp_cls_buckets *buckets,
             const struct sp_flow_key *masked, const uint32_t *hashes,
             uint32_t todo, const struct sp_rule **rules,
             sp_cls_sig_match_fn *sig_match, sp_cls_keys_equal_fn *keys_equal,
             uint32_t lines)
{
    /* Candidate slots of key i, SP_CLS_SECOND on for its second bucket. */
    uint32_t slots[SP_BATCH_MAX];
    const struct sp_cls_bucket *probed[SP_BATCH_MAX][2];
    uint32_t found = 0, moved = 0;
    bool copies = lines > 1;

    for (uint32_t p = todo; p; p &= p - 1) {
        unsigned i = (unsigned)__builtin_ctz(p);
        const struct sp_cls_bucket *b0 =
            sp_cls_bucket_lines(buckets, hashes[i], 0, lines);

        probed[i][0] = b0;
        slots[i] = sig_match(b0, hashes[i]);
        if (slots[i]) {
            sp_cls_prefetch_key(b0, (unsigned)__builtin_ctz(slots[i]), copies);
        }
        if (sp_cls_may_have_moved(b0, hashes[i])) {
            probed[i][1] = sp_cls_bucket_lines(buckets, hashes[i], 1, lines);
            sp_cls_prefetch_bucket(probed[i][1]);
            moved |= UINT32_C(1) << i;
        }
    }
    for (uint32_t p = moved; p; p &= p - 1) {
        unsigned i = (unsigned)__builtin_ctz(p);
        uint32_t second = sig_match(probed[i][1], hashes[i]);

        if (second && !slots[i]) {
            sp_cls_prefetch_key(probed[i][1], (unsigned)__builtin_ctz(second),
                                copies);
        }
        slots[i] |= second << SP_CLS_SECOND;
    }
    for (uint32_t p = todo; p; p &= p - 1) {
        unsigned i = (unsigned)__builtin_ctz(p);

        for (uint32_t m = slots[i]; m; m &= m - 1) {
            unsigned s = (unsigned)__builtin_ctz(m);
            const struct sp_rule *r = sp_cls_slot_rule(
                probed[i][s / SP_CLS_SECOND], s % SP_CLS_SECOND, &masked[i],
                copies, keys_equal);

            if (r) {
                rules[i] = r;
                found |= UINT32_C(1) << i;
                break;
            }
        }
        if (moved & ~found & UINT32_C(1) << i) {
            const struct sp_rule *r = sp_cls_overflow_rule(
                buckets, hashes[i], &masked[i], sig_match, keys_equal, lines);

            if (r) {
                rules[i] = r;
                found |= UINT32_C(1) << i;
            }
        }
    }
    return found;
}

#endif /* SP_GENERIC_CLASSIFIER_H */
