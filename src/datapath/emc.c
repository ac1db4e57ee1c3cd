/* SPDX-License-Identifier: BSD-3-Clause */
/* The EMC's table code: sizing, insertion, and the PMD's batch lookup. */
#include <stdlib.h>
#include <string.h>

#include "simdpath/emc.h"

int
sp_emc_init(struct sp_emc *emc, uint32_t entries, uint32_t insert_inv_prob,
            struct sp_err *err)
{
    uint32_t buckets = 1;

    sp_dispatch_init();
    memset(emc, 0, sizeof *emc);
    if (insert_inv_prob == 0) {
        return sp_err_set(err, "EMC insertion probability 1/0: expected "
                               "1/N, N >= 1");
    }
    if (entries > (UINT32_C(1) << 24)) {
        return sp_err_set(err, "EMC size %u: at most %u entries", entries,
                          1u << 24);
    }
    emc->insert_inv_prob = insert_inv_prob;
    if (entries == 0) {
        return 0;
    }
    while (buckets * SP_EMC_WAYS < entries) {
        buckets *= 2;
    }
    entries = buckets * SP_EMC_WAYS;
    emc->sigs = aligned_alloc(32, entries * sizeof emc->sigs[0]);
    emc->gens = calloc(entries, sizeof emc->gens[0]);
    emc->rules = calloc(entries, sizeof emc->rules[0]);
    emc->keys = aligned_alloc(64, entries * sizeof emc->keys[0]);
    if (!emc->sigs || !emc->gens || !emc->rules || !emc->keys) {
        sp_emc_destroy(emc);
        return sp_err_set(err, "EMC of %u entries: no memory", entries);
    }
    memset(emc->sigs, 0, entries * sizeof emc->sigs[0]);
    memset(emc->keys, 0, entries * sizeof emc->keys[0]);
    emc->n_buckets = buckets;
    return 0;
}

void
sp_emc_destroy(struct sp_emc *emc)
{
    free(emc->sigs);
    free(emc->gens);
    free(emc->rules);
    free(emc->keys);
    memset(emc, 0, sizeof *emc);
}

bool
sp_emc_insert(struct sp_emc *emc, uint64_t gen, const struct sp_flow_key *key,
              uint32_t hash, const struct sp_rule *rule, struct sp_random *rng)
{
    uint32_t draw, first, slot = UINT32_MAX;

    if (!emc->n_buckets) {
        return false;
    }
    draw = (uint32_t)(sp_random_next(rng) >> 32);
    if (draw % emc->insert_inv_prob) {
        return false;
    }
    first = (hash & (emc->n_buckets - 1)) * SP_EMC_WAYS;
    for (uint32_t e = first; e < first + SP_EMC_WAYS; e++) {
        if (emc->sigs[e] == hash && !memcmp(&emc->keys[e], key, sizeof *key)) {
            slot = e;
            break;
        }
        if (slot == UINT32_MAX && emc->gens[e] != gen) {
            slot = e;
        }
    }
    if (slot == UINT32_MAX) {
        slot = first + draw / emc->insert_inv_prob % SP_EMC_WAYS;
    }
    emc->sigs[slot] = hash;
    emc->gens[slot] = gen;
    emc->rules[slot] = rule;
    emc->keys[slot] = *key;
    return true;
}

uint32_t
sp_emc_lookup(struct sp_emc *emc, const struct sp_cls *cls,
              const struct sp_flow_key *keys, uint32_t n, uint32_t *hashes,
              const struct sp_rule **rules, uint64_t *gen)
{
    /* Read first: what the classifier returns after is at least as new,
     * so an entry made then is never newer than its generation says. */
    *gen = sp_cls_generation(cls);
    /* Only the EMC reads the hashes: without one, nothing to compute. */
    if (!emc->n_buckets) {
        return 0;
    }
    SP_KERNEL(hash)(keys, NULL, n, hashes);
    return SP_KERNEL(emc)(emc, *gen, keys, hashes, n, rules);
}

uint32_t
sp_emc_cls_misses(struct sp_emc *emc, const struct sp_cls *cls, uint64_t gen,
                  const struct sp_flow_key *keys, uint32_t n, uint32_t hits,
                  const uint32_t *hashes, const struct sp_rule **rules,
                  struct sp_random *rng)
{
    uint32_t misses = sp_batch_lanes(n) & ~hits;
    /* A burst the EMC answered whole needs no classifier call at all. */
    uint32_t found = misses ? sp_cls_lookup(cls, keys, n, misses, rules) : 0;

    for (uint32_t pending = emc->n_buckets ? found : 0; pending;
         pending &= pending - 1) {
        unsigned i = (unsigned)__builtin_ctz(pending);

        sp_emc_insert(emc, gen, &keys[i], hashes[i], rules[i], rng);
    }
    return found;
}

uint32_t
sp_emc_cls_lookup(struct sp_emc *emc, const struct sp_cls *cls,
                  const struct sp_flow_key *keys, uint32_t n, uint32_t *hashes,
                  const struct sp_rule **rules, struct sp_random *rng,
                  uint32_t *emc_hits)
{
    uint64_t gen;
    uint32_t hits = sp_emc_lookup(emc, cls, keys, n, hashes, rules, &gen);
    uint32_t found =
        sp_emc_cls_misses(emc, cls, gen, keys, n, hits, hashes, rules, rng);

    if (emc_hits) {
        *emc_hits = hits;
    }
    return hits | found;
}
