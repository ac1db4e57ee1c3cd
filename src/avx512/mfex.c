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

/* A profile's vectors and masks, kept in registers while packets keep
 * matching it (the compiler reloads them from the profile after every
 * store otherwise). */
struct loaded_profile {
    const struct sp_mfex_profile *prof;
    __m256i probe_mask, probe_value;
    __m512i perm, keep, set;
    __mmask64 lo_bytes, hi_bytes;
    uint32_t min_len;
};

static inline struct loaded_profile
load_profile(const struct sp_mfex_profile *prof)
{
    return (struct loaded_profile){
        .prof = prof,
        .probe_mask = _mm256_load_si256((const __m256i *)prof->probe_mask),
        .probe_value = _mm256_load_si256((const __m256i *)prof->probe_value),
        .perm = _mm512_load_si512(prof->perm),
        .keep = _mm512_load_si512(prof->keep),
        .set = _mm512_load_si512(prof->set),
        .lo_bytes = prof->lo_bytes,
        .hi_bytes = prof->hi_bytes,
        .min_len = prof->min_len,
    };
}

/* The probe reads the first 32 bytes, all in the packet: len >= 42. */
static inline bool
probe_matches(const struct loaded_profile *lp, __m256i head, uint32_t len)
{
    return len >= lp->min_len &&
           !_mm256_cmpneq_epi8_mask(_mm256_and_si256(head, lp->probe_mask),
                                    lp->probe_value);
}

#include "mfex_take.h"

void
MFEX_FN(struct sp_packet *const *pkts, uint32_t n, struct sp_flow_key *keys)
{
    struct loaded_profile lp = load_profile(&sp_mfex_profiles[0]);
    uint32_t slow = 0; /* packets for the scalar parser, after the loop */

    for (uint32_t i = 0; i < n; i++) {
        struct sp_packet *pkt = pkts[i];
        const uint8_t *p = pkt->data;
        uint32_t len = pkt->len;
        __m512i lo, hi, key;

        if (len < SP_MFEX_MIN_LEN || !take_packet(&lp, p, len)) {
            slow |= UINT32_C(1) << i;
            continue;
        }
        /* Only the bytes the permute reads, all below min_len <= len. */
        lo = _mm512_maskz_loadu_epi8(lp.lo_bytes, p);
        hi = _mm512_maskz_loadu_epi8(lp.hi_bytes, p + 64);
        key = permute_bytes(lo, hi, lp.perm);

        /* (key & keep) | set */
        key = _mm512_ternarylogic_epi64(key, lp.keep, lp.set, 0xea);
        _mm512_storeu_si512(&keys[i], key);
        sp_mfex_profile_finish(lp.prof, pkt, &keys[i]);
    }
    sp_scalar_mfex_lanes(pkts, slow, keys);
}
