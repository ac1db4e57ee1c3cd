/* SPDX-License-Identifier: BSD-3-Clause */
/* AVX2 helpers of the EMC and subtable lookups: the EMC's signature compare
 * as a bit mask, and a 64-byte key compare. */
#ifndef SP_AVX2_COMPARE_H
#define SP_AVX2_COMPARE_H

#include <immintrin.h>
#include <stdbool.h>

#include "simdpath/flow_key.h"

/* Bit l set when 32-bit lane l of the 8 signatures at sigs (32-byte
 * aligned) equals want. */
static inline uint32_t
sp_avx2_sig_match8(const uint32_t *sigs, uint32_t want)
{
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_load_si256((const __m256i *)sigs),
                           _mm256_set1_epi32((int)want))));
}

/* Whether two keys are equal in all 64 bytes. */
static inline bool
sp_avx2_keys_equal(const struct sp_flow_key *a, const struct sp_flow_key *b)
{
    const __m256i *x = (const __m256i *)a, *y = (const __m256i *)b;
    __m256i diff = _mm256_or_si256(
        _mm256_xor_si256(_mm256_loadu_si256(x), _mm256_loadu_si256(y)),
        _mm256_xor_si256(_mm256_loadu_si256(x + 1),
                         _mm256_loadu_si256(y + 1)));

    return _mm256_testz_si256(diff, diff);
}

#endif /* SP_AVX2_COMPARE_H */
