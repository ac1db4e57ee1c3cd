/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key hash with PCLMULQDQ and the SSE4.2 crc32 instruction, which every
 * AVX2 CPU has: the masked key is loaded as two 256-bit halves, its first
 * three 128-bit lanes are folded onto the fourth with six carry-less
 * multiplies (src/crc32c_fold.h), and two crc32 steps finish it. That
 * replaces a chain of eight dependent crc32 steps per key.
 */
#include <immintrin.h>

#include "crc32c_fold.h"
#include "isa.h"

/* One 128-bit lane times its two fold constants: lo*k_lo ^ hi*k_hi. */
static inline __m128i
fold_lane(__m128i lane, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00),
                         _mm_clmulepi64_si128(lane, k, 0x11));
}

void
sp_avx2_hash(const struct sp_flow_key *keys, const struct sp_flow_key *mask,
             uint32_t n, uint32_t *hashes)
{
    const __m128i k0 = _mm_set_epi64x(SP_CRC32C_FOLD_1, SP_CRC32C_FOLD_0);
    const __m128i k1 = _mm_set_epi64x(SP_CRC32C_FOLD_3, SP_CRC32C_FOLD_2);
    const __m128i k2 = _mm_set_epi64x(SP_CRC32C_FOLD_5, SP_CRC32C_FOLD_4);
    /* The CRC's initial value, XORed into the first four bytes. */
    const __m256i init = _mm256_setr_epi64x(UINT32_MAX, 0, 0, 0);
    const __m256i *m = (const __m256i *)mask;
    __m256i m0 = mask ? _mm256_load_si256(m) : _mm256_set1_epi64x(-1);
    __m256i m1 = mask ? _mm256_load_si256(m + 1) : _mm256_set1_epi64x(-1);

    for (uint32_t i = 0; i < n; i++) {
        const __m256i *key = (const __m256i *)&keys[i];
        __m256i a = _mm256_and_si256(_mm256_load_si256(key), m0);
        __m256i b = _mm256_and_si256(_mm256_load_si256(key + 1), m1);
        __m128i rest;
        uint64_t crc;

        a = _mm256_xor_si256(a, init);
        rest = _mm_xor_si128(fold_lane(_mm256_castsi256_si128(a), k0),
                             fold_lane(_mm256_extracti128_si256(a, 1), k1));
        rest = _mm_xor_si128(rest, fold_lane(_mm256_castsi256_si128(b), k2));
        rest = _mm_xor_si128(rest, _mm256_extracti128_si256(b, 1));
        crc = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(rest));
        crc = _mm_crc32_u64(crc, (uint64_t)_mm_extract_epi64(rest, 1));
        hashes[i] = ~(uint32_t)crc;
    }
}
