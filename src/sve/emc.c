/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC lookup with SVE (the loop of src/generic/emc.h): the bucket's 8
 * signatures under one whilelt predicate (one compare from 256 bits on,
 * two at 128), then the candidate ways in order: generation, and the
 * 64-byte key compare of compare.h.
 */
#include "dispatch/isa.h"
#include "generic/emc.h"
#include "sve/compare.h"

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
    return sp_emc_probe(emc, gen, keys, hashes, n, rules, sig_match,
                        sp_sve_keys_equal);
}
