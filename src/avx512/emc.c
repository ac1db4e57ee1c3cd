/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC lookup with AVX-512: the bucket's 8 signatures in one compare into a
 * mask register, then the candidate ways in order: generation, and the
 * 64-byte key in one 512-bit compare.
 */
#include <immintrin.h>

#include "isa.h"
#include "simdpath/emc.h"

uint32_t
sp_avx512_emc(const struct sp_emc *emc, uint64_t gen,
              const struct sp_flow_key *keys, const uint32_t *hashes,
              uint32_t n, const struct sp_rule **rules)
{
    uint32_t hits = 0;

    if (!emc->n_buckets) {
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t first = (hashes[i] & (emc->n_buckets - 1)) * SP_EMC_WAYS;
        __m256i sigs = _mm256_load_si256((const __m256i *)&emc->sigs[first]);
        uint32_t ways =
            _mm256_cmpeq_epi32_mask(sigs, _mm256_set1_epi32((int)hashes[i]));
        __m512i key = _mm512_loadu_si512(&keys[i]);

        for (; ways; ways &= ways - 1) {
            uint32_t e = first + (uint32_t)__builtin_ctz(ways);

            if (emc->gens[e] == gen &&
                !_mm512_cmpneq_epi64_mask(_mm512_load_si512(&emc->keys[e]),
                                          key)) {
                rules[i] = emc->rules[e];
                hits |= UINT32_C(1) << i;
                break;
            }
        }
    }
    return hits;
}
