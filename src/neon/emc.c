/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC lookup with NEON: the bucket's 8 signatures in two 128-bit compares
 * (compare.h), then the candidate ways in order: generation, and the
 * 64-byte key in four 128-bit XORs folded into one test.
 */
#include "isa.h"
#include "neon/compare.h"
#include "simdpath/emc.h"

uint32_t
sp_neon_emc(const struct sp_emc *emc, uint64_t gen,
            const struct sp_flow_key *keys, const uint32_t *hashes, uint32_t n,
            const struct sp_rule **rules)
{
    uint32_t hits = 0;

    if (!emc->n_buckets) {
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t first = (hashes[i] & (emc->n_buckets - 1)) * SP_EMC_WAYS;
        uint32_t ways = sp_neon_sig_match(&emc->sigs[first], hashes[i]);

        for (; ways; ways &= ways - 1) {
            uint32_t e = first + (uint32_t)__builtin_ctz(ways);

            if (emc->gens[e] == gen &&
                sp_neon_keys_equal(&emc->keys[e], &keys[i])) {
                rules[i] = emc->rules[e];
                hits |= UINT32_C(1) << i;
                break;
            }
        }
    }
    return hits;
}
