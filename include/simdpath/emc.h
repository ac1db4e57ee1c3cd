/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exact match cache (EMC), one per PMD thread: full 64-byte keys mapped
 * to the rule the classifier found for them. Set-associative: a key's hash
 * picks a bucket of SP_EMC_WAYS slots, whose signatures (the key's full
 * 32-bit hash) are contiguous so one SIMD compare tests them all, then one
 * 64-byte key compare confirms.
 *
 * An entry is valid only under the classifier generation it was made in
 * (sp_cls_generation): any insert or remove in the classifier invalidates
 * every entry, so an entry never names a deleted rule (whose memory may be
 * gone) nor hides a newly added higher-priority one.
 *
 * Not thread-safe: only its PMD thread uses it.
 */
#ifndef SP_EMC_H
#define SP_EMC_H

#include <stdbool.h>
#include <stdint.h>

#include "simdpath/classifier.h"
#include "simdpath/random.h"

#define SP_EMC_WAYS                8
#define SP_EMC_DEFAULT_ENTRIES     8192
#define SP_EMC_DEFAULT_INSERT_PROB 100 /* insert 1 miss in N */

/* Struct of arrays, entry e = bucket * SP_EMC_WAYS + way. Slot e is empty
 * or stale when gens[e] differs from the current generation (0 never is
 * one). */
struct sp_emc {
    uint32_t n_buckets; /* a power of two; 0: disabled */
    uint32_t insert_inv_prob;
    uint32_t *sigs;               /* 32-byte aligned */
    uint64_t *gens;               /* classifier generation of the entry */
    const struct sp_rule **rules; /* what the key matched */
    struct sp_flow_key *keys;     /* full keys */
};

/* Sizes an EMC: 'entries' rounded up to a power of two of at least
 * SP_EMC_WAYS (0 disables it), inserting 1 miss in insert_inv_prob (>= 1).
 * Returns -1 with the reason in err (when not NULL) on a bad value or no
 * memory. */
int sp_emc_init(struct sp_emc *emc, uint32_t entries, uint32_t insert_inv_prob,
                struct sp_err *err);
void sp_emc_destroy(struct sp_emc *emc);

/*
 * Offers (key, rule) found under generation 'gen': with probability
 * 1/insert_inv_prob (one draw from rng) it is stored. Replacement: the slot
 * already holding this key, else the first empty or stale slot of the
 * bucket, else the way picked by the same draw (random replacement).
 * Returns whether it stored the entry.
 */
bool sp_emc_insert(struct sp_emc *emc, uint64_t gen,
                   const struct sp_flow_key *key, uint32_t hash,
                   const struct sp_rule *rule, struct sp_random *rng);

/*
 * The whole lookup of a batch as a PMD does it: hash (unmasked keys), EMC,
 * classifier for the misses, EMC insertion of what the classifier found.
 * Returns the mask of keys that matched a rule; rules[i] is set for those.
 * hashes receives the n key hashes (with the EMC disabled it is not
 * written: nothing hashes); *emc_hits (if not NULL) the keys the EMC
 * answered. Same threading rules as sp_cls_lookup.
 */
uint32_t sp_emc_cls_lookup(struct sp_emc *emc, const struct sp_cls *cls,
                           const struct sp_flow_key *keys, uint32_t n,
                           uint32_t *hashes, const struct sp_rule **rules,
                           struct sp_random *rng, uint32_t *emc_hits);

/* sp_emc_cls_lookup in two steps, for a caller that times them apart:
 * the hash and EMC of the batch under generation *gen (read here), which
 * returns the hits, then the classifier for the other keys and their EMC
 * insertion, which returns the keys it found. */
uint32_t sp_emc_lookup(struct sp_emc *emc, const struct sp_cls *cls,
                       const struct sp_flow_key *keys, uint32_t n,
                       uint32_t *hashes, const struct sp_rule **rules,
                       uint64_t *gen);
uint32_t sp_emc_cls_misses(struct sp_emc *emc, const struct sp_cls *cls,
                           uint64_t gen, const struct sp_flow_key *keys,
                           uint32_t n, uint32_t hits, const uint32_t *hashes,
                           const struct sp_rule **rules,
                           struct sp_random *rng);

#endif /* SP_EMC_H */
