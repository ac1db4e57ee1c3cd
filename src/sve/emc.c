/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC lookup with SVE: NEON's loop (src/neon/emc.h) with the 64-byte key
 * compare in one vector (512 bits) or two (256), and NEON's at 128 bits.
 * The 8 signatures stay in NEON's two compares: their byte per way gives
 * the way's offsets without an index (src/neon/emc.h).
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
                                 sp_sve_keys_equal_512);
    }
    if (svcntb() >= 32) {
        return sp_neon_emc_probe(emc, gen, keys, hashes, n, rules,
                                 sp_sve_keys_equal_256);
    }
    return sp_neon_emc_probe(emc, gen, keys, hashes, n, rules,
                             sp_neon_keys_equal);
}
