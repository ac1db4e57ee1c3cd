/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC lookup with NEON (the loop of src/generic/emc.h): the bucket's 8
 * signatures in two 128-bit compares (compare.h), then the candidate ways
 * in order: generation, and the 64-byte key in four 128-bit XORs folded
 * into one test.
 */
#include "dispatch/isa.h"
#include "generic/emc.h"
#include "neon/compare.h"

uint32_t
sp_neon_emc(const struct sp_emc *emc, uint64_t gen,
            const struct sp_flow_key *keys, const uint32_t *hashes, uint32_t n,
            const struct sp_rule **rules)
{
    return sp_emc_probe(emc, gen, keys, hashes, n, rules, sp_neon_sig_match,
                        sp_neon_keys_equal);
}
