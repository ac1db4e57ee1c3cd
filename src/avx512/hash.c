/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key hash with carry-less multiplication: the whole masked key sits in one
 * 512-bit register, and one pair of VPCLMULQDQ folds its first three
 * 128-bit lanes onto the fourth (each lane times x^d mod P for its distance
 * d to the end). The CRC of the remaining 16 bytes, two crc32 instructions,
 * is the CRC of the key. That replaces eight dependent crc32 steps per key
 * with two, so several keys stream through at once.
 *
 * Needs VPCLMULQDQ on top of AVX-512F/BW/VL/DQ, so it is built only for
 * the avx512vbmi variant, which requires both (meson.build); plain avx512
 * takes the AVX2 code (128-bit PCLMULQDQ), see table.c.
 */
#include <immintrin.h>

#include "common/crc32c_fold.h"
#include "dispatch/isa.h"

void
sp_avx512vbmi_hash(const struct sp_flow_key *keys,
                   const struct sp_flow_key *mask, uint32_t n,
                   uint32_t *hashes)
{
    /* Lane 3 is not multiplied: the others fold onto it. */
    const __m512i fold = _mm512_setr_epi64(
        SP_CRC32C_FOLD_0, SP_CRC32C_FOLD_1, SP_CRC32C_FOLD_2, SP_CRC32C_FOLD_3,
        SP_CRC32C_FOLD_4, SP_CRC32C_FOLD_5, 0, 0);
    /* The CRC's initial value, XORed into the first four bytes. */
    const __m512i init = _mm512_setr_epi64(UINT32_MAX, 0, 0, 0, 0, 0, 0, 0);
    __m512i m = mask ? _mm512_loadu_si512(mask) : _mm512_set1_epi64(-1);

    for (uint32_t i = 0; i < n; i++) {
        __m512i key = _mm512_and_si512(_mm512_loadu_si512(&keys[i]), m);
        __m512i lo, hi, folded;
        __m256i half;
        __m128i rest;
        uint64_t crc;

        key = _mm512_xor_si512(key, init);
        lo = _mm512_clmulepi64_epi128(key, fold, 0x00);
        hi = _mm512_clmulepi64_epi128(key, fold, 0x11);
        /* lo ^ hi ^ lane 3 of the key (the 0x96 truth table is a ^ b ^ c) */
        folded = _mm512_ternarylogic_epi64(
            lo, hi, _mm512_maskz_mov_epi64(0xc0, key), 0x96);
        half = _mm256_xor_si256(_mm512_castsi512_si256(folded),
                                _mm512_extracti64x4_epi64(folded, 1));
        rest = _mm_xor_si128(_mm256_castsi256_si128(half),
                             _mm256_extracti128_si256(half, 1));
        crc = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(rest));
        crc = _mm_crc32_u64(crc, (uint64_t)_mm_extract_epi64(rest, 1));
        hashes[i] = ~(uint32_t)crc;
    }
}
