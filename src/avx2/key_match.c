/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key match with AVX2: a key in two 256-bit halves, each ANDed with the
 * mask and XORed with the value, ORed and tested in one vptest; from the
 * last key of 'todo' down, as the specification (src/scalar/key_match.c).
 */
#include <immintrin.h>

#include "dispatch/isa.h"

uint32_t
sp_avx2_key_match(const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                  const struct sp_flow_key *mask,
                  const struct sp_flow_key *value)
{
    const __m256i *m = (const __m256i *)mask, *v = (const __m256i *)value;
    __m256i m0 = _mm256_loadu_si256(m), m1 = _mm256_loadu_si256(m + 1);
    __m256i v0 = _mm256_loadu_si256(v), v1 = _mm256_loadu_si256(v + 1);
    uint32_t hit = 0;

    todo &= sp_batch_lanes(n);
    for (unsigned i = sp_batch_end(todo); i-- > 0;) {
        const __m256i *k = (const __m256i *)&keys[i];
        __m256i differ = _mm256_or_si256(
            _mm256_xor_si256(_mm256_and_si256(_mm256_loadu_si256(k), m0), v0),
            _mm256_xor_si256(_mm256_and_si256(_mm256_loadu_si256(k + 1), m1),
                             v1));

        hit = hit * 2 + (uint32_t)_mm256_testz_si256(differ, differ);
    }
    return hit & todo;
}
