/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The probing passes the SIMD subtable lookups share, after each has hashed
 * every key of the batch and prefetched its first bucket. They go over the
 * whole batch pass by pass, as DPDK's rte_hash bulk lookup does, so that
 * the cache misses of a large table overlap (up to one per key of the
 * batch in flight) instead of queueing one key at a time:
 * 1. (the ISA's) masked keys, hashes, a prefetch of every first bucket;
 * 2. the first bucket's signatures of every key, prefetching the first
 *    candidate's rule, and the second bucket when keys moved out of the
 *    first;
 * 3. the second buckets' signatures, prefetching a candidate's rule for
 *    keys that had none in their first bucket;
 * 4. per key, each candidate slot in probing order (first bucket, then
 *    second): the first whose rule is not NULL and whose key equals the
 *    masked key is the answer, as the scalar specification finds it.
 * Each ISA passes its own signature and key compares; the calls are to
 * constants of always-inlined functions, so they are inlined too.
 */
#ifndef SP_CLS_PROBE_H
#define SP_CLS_PROBE_H

#include <stdbool.h>

#include "simdpath/classifier.h"

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

/* The key of the rule in slot s of b. The pointer may be stale by the time
 * the key is verified (and that rule freed after a grace period): a
 * prefetch of it is harmless, and the verifying pass loads it again. */
static inline void
sp_cls_prefetch_rule(const struct sp_cls_bucket *b, unsigned s)
{
    __builtin_prefetch(__atomic_load_n(&b->rules[s], __ATOMIC_RELAXED));
}

/* Passes 2 to 4 for the keys of 'todo', whose masked keys and hashes the
 * caller computed, prefetching their first buckets. Returns the found
 * mask; rules[i] is written for found keys only. */
static inline __attribute__((always_inline)) uint32_t
sp_cls_probe(const struct sp_cls_buckets *buckets,
             const struct sp_flow_key *masked, const uint32_t *hashes,
             uint32_t todo, const struct sp_rule **rules,
             sp_cls_sig_match_fn *sig_match, sp_cls_keys_equal_fn *keys_equal)
{
    /* Candidate slots of key i, SP_CLS_SECOND on for its second bucket. */
    uint32_t slots[SP_BATCH_MAX];
    const struct sp_cls_bucket *probed[SP_BATCH_MAX][2];
    uint32_t found = 0, moved = 0;

    for (uint32_t p = todo; p; p &= p - 1) {
        unsigned i = (unsigned)__builtin_ctz(p);
        const struct sp_cls_bucket *b0 =
            &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, 0)];

        probed[i][0] = b0;
        slots[i] = sig_match(b0, hashes[i]);
        if (slots[i]) {
            sp_cls_prefetch_rule(b0, (unsigned)__builtin_ctz(slots[i]));
        }
        if (__atomic_load_n(&b0->n_moved, __ATOMIC_ACQUIRE)) {
            probed[i][1] =
                &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, 1)];
            sp_cls_prefetch_bucket(probed[i][1]);
            moved |= UINT32_C(1) << i;
        }
    }
    for (uint32_t p = moved; p; p &= p - 1) {
        unsigned i = (unsigned)__builtin_ctz(p);
        uint32_t second = sig_match(probed[i][1], hashes[i]);

        if (second && !slots[i]) {
            sp_cls_prefetch_rule(probed[i][1],
                                 (unsigned)__builtin_ctz(second));
        }
        slots[i] |= second << SP_CLS_SECOND;
    }
    for (uint32_t p = todo; p; p &= p - 1) {
        unsigned i = (unsigned)__builtin_ctz(p);

        for (uint32_t m = slots[i]; m; m &= m - 1) {
            unsigned s = (unsigned)__builtin_ctz(m);
            const struct sp_rule *r = __atomic_load_n(
                &probed[i][s / SP_CLS_SECOND]->rules[s % SP_CLS_SECOND],
                __ATOMIC_ACQUIRE);

            if (r && keys_equal(&r->match.key, &masked[i])) {
                rules[i] = r;
                found |= UINT32_C(1) << i;
                break;
            }
        }
    }
    return found;
}

#endif /* SP_CLS_PROBE_H */
