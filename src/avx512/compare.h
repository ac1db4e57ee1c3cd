/* SPDX-License-Identifier: BSD-3-Clause */
/* AVX-512 helpers of the EMC and subtable lookups: the EMC's signature
 * compare into a mask register, and a 64-byte key compare. */
#ifndef SP_AVX512_COMPARE_H
#define SP_AVX512_COMPARE_H

#include <immintrin.h>
#include <stdbool.h>

#include "simdpath/flow_key.h"

/* Bit l set when 32-bit lane l of the 8 signatures at sigs (32-byte
 * aligned) equals want. */
static inline uint32_t
sp_avx512_sig_match8(const uint32_t *sigs, uint32_t want)
{
    return _mm256_cmpeq_epi32_mask(_mm256_load_si256((const __m256i *)sigs),
                                   _mm256_set1_epi32((int)want));
}

/* Whether two keys are equal in all 64 bytes: one 512-bit compare. */
static inline bool
sp_avx512_keys_equal(const struct sp_flow_key *a, const struct sp_flow_key *b)
{
    return !_mm512_cmpneq_epi64_mask(_mm512_loadu_si512(a),
                                     _mm512_loadu_si512(b));
}

#endif /* SP_AVX512_COMPARE_H */
