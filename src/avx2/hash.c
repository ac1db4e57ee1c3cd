/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key hash with PCLMULQDQ and the SSE4.2 crc32 instruction, which every
 * AVX2 CPU has: the masked key is loaded as two 256-bit halves, its first
 * three 128-bit lanes are folded onto the fourth with six carry-less
 * multiplies (src/common/crc32c_fold.h), and two crc32 steps finish it. That
 * replaces a chain of eight dependent crc32 steps per key.
 */
#include <immintrin.h>

#include "dispatch/isa.h"
#include "x86/crc32c.h"

void
sp_avx2_hash(const struct sp_flow_key *keys, const struct sp_flow_key *mask,
             uint32_t n, uint32_t *hashes)
{
    const __m256i *m = (const __m256i *)mask;
    __m256i m0 = mask ? _mm256_loadu_si256(m) : _mm256_set1_epi64x(-1);
    __m256i m1 = mask ? _mm256_loadu_si256(m + 1) : _mm256_set1_epi64x(-1);

    for (uint32_t i = 0; i < n; i++) {
        const __m256i *key = (const __m256i *)&keys[i];

        hashes[i] = sp_x86_crc32c_key(
            _mm256_and_si256(_mm256_loadu_si256(key), m0),
            _mm256_and_si256(_mm256_loadu_si256(key + 1), m1));
    }
}
