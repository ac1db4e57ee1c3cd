/* SPDX-License-Identifier: BSD-3-Clause */
/* EMC lookup, the specification: the ways of the key's bucket in order. */
#include <string.h>

#include "dispatch/isa.h"
#include "simdpath/emc.h"

uint32_t
sp_scalar_emc(const struct sp_emc *emc, uint64_t gen,
              const struct sp_flow_key *keys, const uint32_t *hashes,
              uint32_t n, const struct sp_rule **rules)
{
    uint32_t hits = 0;

    if (!emc->n_buckets) {
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t first = (hashes[i] & (emc->n_buckets - 1)) * SP_EMC_WAYS;

        for (uint32_t e = first; e < first + SP_EMC_WAYS; e++) {
            if (emc->sigs[e] == hashes[i] && emc->gens[e] == gen &&
                !memcmp(&emc->keys[e], &keys[i], sizeof keys[i])) {
                rules[i] = emc->rules[e];
                hits |= UINT32_C(1) << i;
                break;
            }
        }
    }
    return hits;
}
