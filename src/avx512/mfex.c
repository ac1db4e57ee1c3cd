/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract with AVX-512 profiles (see mfex_profile.h). The first
 * 32 bytes of a packet (it has at least 42) are probed; for a match, the
 * bytes the profile's permute reads are loaded with masked loads, which
 * never touch a byte past them; the key is one two-register byte permute,
 * one AND/OR (vpternlog) and one store.
 *
 * This file is built twice: plain (AVX-512 F/BW/VL/DQ) as sp_avx512_mfex,
 * which emulates the byte permute with two vpermi2w word permutes and
 * masked shifts, and with -mavx512vbmi as sp_avx512vbmi_mfex, which uses
 * vpermi2b.
 */
#include <immintrin.h>

#include "isa.h"
#include "mfex_profile.h"

#ifdef __AVX512VBMI__
#define MFEX_FN sp_avx512vbmi_mfex
#else
#define MFEX_FN sp_avx512_mfex
#endif

/* key byte j = packet byte perm[j], from lo (bytes 0-63) and hi (64-127). */
static inline __m512i
permute_bytes(__m512i lo, __m512i hi, __m512i perm)
{
#ifdef __AVX512VBMI__
    return _mm512_permutex2var_epi8(lo, perm, hi);
#else
    /* Each 16-bit lane k gathers the word holding packet byte perm[2k]
     * (even) and the one holding perm[2k+1] (odd), shifts the wanted byte
     * into place, and the two are merged byte by byte. */
    const __m512i low_byte = _mm512_set1_epi16(0x00ff);
    __m512i even_idx = _mm512_srli_epi16(_mm512_and_si512(perm, low_byte), 1);
    __m512i odd_idx = _mm512_srli_epi16(perm, 9);
    __m512i even = _mm512_permutex2var_epi16(lo, even_idx, hi);
    __m512i odd = _mm512_permutex2var_epi16(lo, odd_idx, hi);
    __mmask32 even_from_high =
        _mm512_test_epi16_mask(perm, _mm512_set1_epi16(0x0001));
    __mmask32 odd_from_low =
        _mm512_testn_epi16_mask(perm, _mm512_set1_epi16(0x0100));

    even = _mm512_mask_srli_epi16(even, even_from_high, even, 8);
    odd = _mm512_mask_slli_epi16(odd, odd_from_low, odd, 8);
    return _mm512_mask_blend_epi8(UINT64_C(0xaaaaaaaaaaaaaaaa), even, odd);
#endif
}

/* A profile's vectors, kept in registers for a run of its shape. */
struct loaded_profile {
    __m256i probe_mask, probe_value;
    __m512i perm, keep, set;
};

static inline struct loaded_profile
load_profile(unsigned shape)
{
    const struct sp_mfex_profile *prof = &sp_mfex_profiles[shape];

    return (struct loaded_profile){
        .probe_mask = _mm256_load_si256((const __m256i *)prof->probe_mask),
        .probe_value = _mm256_load_si256((const __m256i *)prof->probe_value),
        .perm = _mm512_load_si512(prof->perm),
        .keep = _mm512_load_si512(prof->keep),
        .set = _mm512_load_si512(prof->set),
    };
}

static inline bool
probe_matches(const struct loaded_profile *lp, const uint8_t *p)
{
    __m256i head = _mm256_loadu_si256((const __m256i *)p);

    return !_mm256_cmpneq_epi8_mask(_mm256_and_si256(head, lp->probe_mask),
                                    lp->probe_value);
}

/* Bits 0..n-1 of a load mask; none when n <= 0. */
static inline __mmask64
bytes_below(int n)
{
    return n <= 0 ? 0 : n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
}

/* The IPv6 traffic class in key byte 21, from header bytes b0 b1 (at
 * p + l3): each word of their 16-byte chunk swapped into b0 << 8 | b1 and
 * shifted left by 4 has it in its high byte. */
static inline __m512i
add_ipv6_tclass(__m512i k, const uint8_t *ip)
{
    __m512i w = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)ip));

    w = _mm512_slli_epi16(_mm512_shuffle_epi8(w, _mm512_set1_epi16(1)), 4);
    return _mm512_mask_mov_epi8(k, UINT64_C(1) << SP_KEY_OFS(nw_tos), w);
}

static inline void
build_key(const struct loaded_profile *lp, unsigned shape, const uint8_t *p,
          uint32_t len, struct sp_flow_key *key)
{
    /* Only the bytes the permute reads, all below SP_MFEX_LEN <= len:
     * len itself is not needed. */
    const int read = SP_MFEX_LEN(shape);
    __m512i lo = _mm512_maskz_loadu_epi8(bytes_below(read), p);
    __m512i hi = read > 64
                     ? _mm512_maskz_loadu_epi8(bytes_below(read - 64), p + 64)
                     : _mm512_setzero_si512();
    __m512i k = permute_bytes(lo, hi, lp->perm);

    (void)len;
    /* (k & keep) | set */
    k = _mm512_ternarylogic_epi64(k, lp->keep, lp->set, 0xea);
    if (shape & SP_MFEX_SHAPE_IPV6) {
        k = add_ipv6_tclass(k, p + SP_MFEX_L3_OFS(shape));
    }
    _mm512_storeu_si512(key, k);
}

#include "mfex_loop.h"
