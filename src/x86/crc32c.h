/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CRC-32C of a 64-byte flow key held in two 256-bit halves, for the x86
 * kernels (built with AVX2, PCLMULQDQ and SSE4.2): the first 48 bytes are
 * folded onto the last 16 with six carry-less multiplies
 * (src/common/crc32c_fold.h), two crc32 steps finish. The hash kernel's value.
 */
#ifndef SP_X86_CRC32C_H
#define SP_X86_CRC32C_H

#include <immintrin.h>
#include <stdint.h>

#include "common/crc32c_fold.h"

/* One 128-bit lane times its two fold constants: lo*k_lo ^ hi*k_hi. */
static inline __m128i
sp_x86_fold_lane(__m128i lane, __m128i k)
{
    return _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00),
                         _mm_clmulepi64_si128(lane, k, 0x11));
}

/* The hash of key bytes 0-31 (lo) and 32-63 (hi), already masked. */
static inline uint32_t
sp_x86_crc32c_key(__m256i lo, __m256i hi)
{
    const __m128i k0 = _mm_set_epi64x(SP_CRC32C_FOLD_1, SP_CRC32C_FOLD_0);
    const __m128i k1 = _mm_set_epi64x(SP_CRC32C_FOLD_3, SP_CRC32C_FOLD_2);
    const __m128i k2 = _mm_set_epi64x(SP_CRC32C_FOLD_5, SP_CRC32C_FOLD_4);
    /* The CRC's initial value, XORed into the first four bytes. */
    const __m256i init = _mm256_setr_epi64x(UINT32_MAX, 0, 0, 0);
    __m128i rest;
    uint64_t crc;

    lo = _mm256_xor_si256(lo, init);
    rest =
        _mm_xor_si128(sp_x86_fold_lane(_mm256_castsi256_si128(lo), k0),
                      sp_x86_fold_lane(_mm256_extracti128_si256(lo, 1), k1));
    rest =
        _mm_xor_si128(rest, sp_x86_fold_lane(_mm256_castsi256_si128(hi), k2));
    rest = _mm_xor_si128(rest, _mm256_extracti128_si256(hi, 1));
    crc = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(rest));
    crc = _mm_crc32_u64(crc, (uint64_t)_mm_extract_epi64(rest, 1));
    return ~(uint32_t)crc;
}

#endif /* SP_X86_CRC32C_H */
