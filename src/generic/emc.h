/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The lookup loop the SIMD EMC kernels share: per key, its bucket's 8
 * signatures compared at once, then the candidate ways in order: the
 * first with the current generation and an equal key is the hit, as the
 * scalar specification (src/scalar/emc.c) finds it. Each ISA passes its
 * signature and key compares; the calls are to constants of
 * always-inlined functions, so they are inlined too.
 *
 * Instantiated by src/avx2/emc.c and src/avx512/emc.c (Arm's loop is
 * src/neon/emc.h).
 * Caller in the datapath: sp_emc_cls_lookup (src/datapath/emc.c), through
 * SP_KERNEL(emc), for every burst process_burst (src/datapath/datapath.c)
 * receives; the EMC's misses then go to the classifier.
 */
#ifndef SP_GENERIC_EMC_H
#define SP_GENERIC_EMC_H

#include "generic/classifier.h"
#include "simdpath/emc.h"

/* Bit l set when signature l of the 8 at sigs equals hash. */
typedef uint32_t sp_emc_sig_match_fn(const uint32_t *sigs, uint32_t hash);

static inline __attribute__((always_inline)) uint32_t
sp_emc_probe(const struct sp_emc *emc, uint64_t gen,
             const struct sp_flow_key *keys, const uint32_t *hashes,
             uint32_t n, const struct sp_rule **rules,
             sp_emc_sig_match_fn *sig_match, sp_cls_keys_equal_fn *keys_equal)
{
    uint32_t hits = 0;

    if (!emc->n_buckets) {
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t first = (hashes[i] & (emc->n_buckets - 1)) * SP_EMC_WAYS;

        for (uint32_t ways = sig_match(&emc->sigs[first], hashes[i]); ways;
             ways &= ways - 1) {
            uint32_t e = first + (uint32_t)__builtin_ctz(ways);

            if (emc->gens[e] == gen && keys_equal(&emc->keys[e], &keys[i])) {
                rules[i] = emc->rules[e];
                hits |= UINT32_C(1) << i;
                break;
            }
        }
    }
    return hits;
}

#endif /* SP_GENERIC_EMC_H */
