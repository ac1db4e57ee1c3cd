/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC lookup with SVE (the loop of src/generic/emc.h): from 256 bits on,
 * the bucket's 8 signatures in one compare, then the candidate ways in
 * order: generation, and the 64-byte key in one vector (512 bits) or two
 * (256); at 128 bits NEON's compares (compare.h).
 */
#include "dispatch/isa.h"
#include "generic/emc.h"
#include "sve/compare.h"

static_assert(SP_EMC_WAYS == 8, "sig_match compares 8 signatures");

static inline __attribute__((always_inline)) uint32_t
sig_match(const uint32_t *sigs, uint32_t hash)
{
    return sp_sve_sig_match(sigs, SP_EMC_WAYS, hash);
}

uint32_t
sp_sve_emc(const struct sp_emc *emc, uint64_t gen,
           const struct sp_flow_key *keys, const uint32_t *hashes, uint32_t n,
           const struct sp_rule **rules)
{
    if (svcntb() >= 64) {
        return sp_emc_probe(emc, gen, keys, hashes, n, rules, sig_match,
                            sp_sve_keys_equal_512);
    }
    if (svcntb() >= 32) {
        return sp_emc_probe(emc, gen, keys, hashes, n, rules, sig_match,
                            sp_sve_keys_equal_256);
    }
    return sp_emc_probe(emc, gen, keys, hashes, n, rules, sp_neon_sig_match,
                        sp_neon_keys_equal);
}
