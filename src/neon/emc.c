/* SPDX-License-Identifier: BSD-3-Clause */
/* EMC lookup with NEON: the loop of emc.h with NEON's key compares. */
#include "dispatch/isa.h"
#include "neon/compare.h"
#include "neon/emc.h"

uint32_t
sp_neon_emc(const struct sp_emc *emc, uint64_t gen,
            const struct sp_flow_key *keys, const uint32_t *hashes, uint32_t n,
            const struct sp_rule **rules)
{
    return sp_neon_emc_probe(emc, gen, keys, hashes, n, rules,
                             sp_neon_keys_equal, sp_neon_keys_equal4);
}
