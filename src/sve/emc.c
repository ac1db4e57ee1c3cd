/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC lookup with SVE: NEON's loop (src/neon/emc.h) with the 64-byte key
 * compares in one vector each from 512 bits, and NEON's below (at 256
 * bits two predicated compares per key took more instructions than NEON's
 * compare of a block: docs/perf/arm.md). The 8 signatures stay in NEON's
 * two compares: their byte per way gives the way's offsets without an
 * index (src/neon/emc.h).
 */
#include "dispatch/isa.h"
#include "neon/emc.h"
#include "sve/compare.h"

uint32_t
sp_sve_emc(const struct sp_emc *emc, uint64_t gen,
           const struct sp_flow_key *keys, const uint32_t *hashes, uint32_t n,
           const struct sp_rule **rules)
{
    if (svcntb() >= 64) {
        return sp_neon_emc_probe(emc, gen, keys, hashes, n, rules,
                                 sp_sve_keys_equal_512,
                                 sp_sve_keys_equal4_512);
    }
    return sp_neon_emc_probe(emc, gen, keys, hashes, n, rules,
                             sp_neon_keys_equal, sp_neon_keys_equal4);
}
