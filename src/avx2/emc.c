/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EMC lookup with AVX2: the bucket's 8 signatures in one 256-bit compare,
 * then the candidate ways in order: generation, and the 64-byte key in two
 * 256-bit compares.
 */
#include <immintrin.h>

#include "isa.h"
#include "simdpath/emc.h"

uint32_t
sp_avx2_emc(const struct sp_emc *emc, uint64_t gen,
            const struct sp_flow_key *keys, const uint32_t *hashes, uint32_t n,
            const struct sp_rule **rules)
{
    uint32_t hits = 0;

    if (!emc->n_buckets) {
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t first = (hashes[i] & (emc->n_buckets - 1)) * SP_EMC_WAYS;
        __m256i sigs = _mm256_load_si256((const __m256i *)&emc->sigs[first]);
        __m256i want = _mm256_set1_epi32((int)hashes[i]);
        uint32_t ways = (uint32_t)_mm256_movemask_ps(
            _mm256_castsi256_ps(_mm256_cmpeq_epi32(sigs, want)));
        __m256i k0 = _mm256_loadu_si256((const __m256i *)&keys[i]);
        __m256i k1 = _mm256_loadu_si256((const __m256i *)&keys[i] + 1);

        for (; ways; ways &= ways - 1) {
            uint32_t e = first + (uint32_t)__builtin_ctz(ways);
            const __m256i *k = (const __m256i *)&emc->keys[e];
            __m256i diff = _mm256_or_si256(
                _mm256_xor_si256(_mm256_load_si256(k), k0),
                _mm256_xor_si256(_mm256_load_si256(k + 1), k1));

            if (emc->gens[e] == gen && _mm256_testz_si256(diff, diff)) {
                rules[i] = emc->rules[e];
                hits |= UINT32_C(1) << i;
                break;
            }
        }
    }
    return hits;
}
