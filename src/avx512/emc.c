/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC lookup with AVX-512 (the loop of src/generic/emc.h): the bucket's 8
 * signatures in one compare into a mask register, then the candidate ways
 * in order: generation, and the 64-byte key in one 512-bit compare.
 */
#include "avx512/compare.h"
#include "dispatch/isa.h"
#include "generic/emc.h"

uint32_t
sp_avx512_emc(const struct sp_emc *emc, uint64_t gen,
              const struct sp_flow_key *keys, const uint32_t *hashes,
              uint32_t n, const struct sp_rule **rules)
{
    return sp_emc_probe(emc, gen, keys, hashes, n, rules, sp_avx512_sig_match8,
                        sp_avx512_keys_equal);
}
