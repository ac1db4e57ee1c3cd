/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract with AVX-512: the loop of src/generic/mfex.h over the
 * profiles of src/generic/mfex_profile.h. The first 32 bytes of a packet (it
 * has at least 42) are probed; for a match, the first 64 bytes (or all of a
 * shorter shape's, through a 256-bit masked load that never touches a byte
 * past them) go through one byte permute into the key, one AND/OR (vpternlog)
 * applies keep and set, and masked word broadcasts from memory add in_port
 * and, past byte 64, IPv6's TCP flags; one store.
 *
 * This file is built twice: plain (AVX-512 F/BW/VL/DQ) as sp_avx512_mfex,
 * which emulates the byte permute with two vpermw word permutes and
 * masked shifts, and with -mavx512vbmi as sp_avx512vbmi_mfex, which uses
 * vpermb.
 */
#include <immintrin.h>

#include "common/csum.h"
#include "dispatch/isa.h"
#include "generic/mfex_profile.h"

#ifdef __AVX512VBMI__
#define MFEX_FN sp_avx512vbmi_mfex
#else
#define MFEX_FN sp_avx512_mfex
#endif

/* The byte permute of a profile, prepared once per run of its shape. */
struct byte_permute {
#ifdef __AVX512VBMI__
    __m512i perm;
#else
    /* Each 16-bit lane k gathers the word holding packet byte perm[2k]
     * (even) and the one holding perm[2k+1] (odd); the wanted bytes are
     * then shifted into place and merged. */
    __m512i even_idx, odd_idx;
    __mmask32 even_from_high, odd_from_low;
#endif
};

static inline struct byte_permute
prepare_permute(__m512i perm)
{
#ifdef __AVX512VBMI__
    return (struct byte_permute){.perm = perm};
#else
    return (struct byte_permute){
        .even_idx = _mm512_srli_epi16(
            _mm512_and_si512(perm, _mm512_set1_epi16(0x00ff)), 1),
        .odd_idx = _mm512_srli_epi16(perm, 9),
        .even_from_high =
            _mm512_test_epi16_mask(perm, _mm512_set1_epi16(0x0001)),
        .odd_from_low =
            _mm512_testn_epi16_mask(perm, _mm512_set1_epi16(0x0100)),
    };
#endif
}

/* key byte j = packet byte perm[j], of the first 64 (indexes wrap). */
static inline __m512i
permute_bytes(const struct byte_permute *bp, __m512i bytes)
{
#ifdef __AVX512VBMI__
    return _mm512_permutexvar_epi8(bp->perm, bytes);
#else
    __m512i even = _mm512_permutexvar_epi16(bp->even_idx, bytes);
    __m512i odd = _mm512_permutexvar_epi16(bp->odd_idx, bytes);

    even = _mm512_mask_srli_epi16(even, bp->even_from_high, even, 8);
    odd = _mm512_mask_slli_epi16(odd, bp->odd_from_low, odd, 8);
    return _mm512_mask_blend_epi8(UINT64_C(0xaaaaaaaaaaaaaaaa), even, odd);
#endif
}

/* A profile's vectors, kept in registers for a run of its shape. */
struct loaded_profile {
    __m256i probe_mask, probe_value;
    struct byte_permute permute;
    __m512i keep, set;
};

static inline struct loaded_profile
load_profile(const struct sp_mfex_profile *prof)
{
    return (struct loaded_profile){
        .probe_mask = _mm256_load_si256((const __m256i *)prof->probe_mask),
        .probe_value = _mm256_load_si256((const __m256i *)prof->probe_value),
        .permute = prepare_permute(_mm512_load_si512(prof->perm)),
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

/* Bits 0..n-1 of a load mask, n < 64. */
static inline uint64_t
bytes_below(unsigned n)
{
    return (UINT64_C(1) << n) - 1;
}

/* The first 64 bytes of p, or its first n (32 < n < 64, a constant) and
 * zeros: nothing past them is read. A masked load only in 256 bits:
 * 512-bit ones are slower on AMD Zen 5 (docs/perf/mfex.md). */
static inline __m512i
load_first(const uint8_t *p, unsigned n)
{
    __m256i head, tail;

    if (n >= 64) {
        return _mm512_loadu_si512(p);
    }
    head = _mm256_loadu_si256((const __m256i *)p);
    tail = _mm256_maskz_loadu_epi8((__mmask32)bytes_below(n - 32), p + 32);
    return _mm512_inserti64x4(_mm512_castsi256_si512(head), tail, 1);
}

/* Word w of k from the 2 bytes at p, broadcast from memory: from a
 * general register it is a slow transfer on AMD. */
static inline __m512i
set_word(__m512i k, unsigned w, const void *p)
{
    return _mm512_mask_set1_epi16(k, 1u << w, (short)sp_load16(p));
}

/* The IPv6 traffic class in key byte 21, before keep and set. The
 * permute left header bytes b0 and b1 in key bytes 16 and 23, the ends of
 * one quadword (see src/generic/mfex_profiles.c): taken 8 bits from its bit
 * 60, wrapping around, they are b1's high nibble then b0's low one, the
 * traffic class. */
static inline __m512i
add_ipv6_tclass(__m512i k)
{
    const __mmask64 tos = UINT64_C(1) << SP_KEY_OFS(nw_tos);

#ifdef __AVX512VBMI__
    return _mm512_mask_multishift_epi64_epi8(k, tos, _mm512_set1_epi8(60), k);
#else
    /* Rotated left by 44, bits 60-63 land in 40-43 and 0-3 in 44-47:
     * byte 21. */
    return _mm512_mask_mov_epi8(k, tos, _mm512_rol_epi64(k, 44));
#endif
}

static inline void
build_key(const struct loaded_profile *lp, unsigned shape,
          const struct sp_packet *pkt, struct sp_flow_key *key)
{
    /* Every key byte but IPv6's TCP flags comes from the first 64 bytes:
     * from the first SP_MFEX_LEN bytes, which a packet of the shape has,
     * when that is less. The flags then take a word broadcast instead of
     * a second load and a two-source permute. */
    const unsigned l4 = SP_MFEX_L4_OFS(shape);
    const uint8_t *p = pkt->data;
    __m512i k = permute_bytes(&lp->permute, load_first(p, SP_MFEX_LEN(shape)));

    if (shape & SP_MFEX_SHAPE_IPV6) {
        k = add_ipv6_tclass(k);
    }
    if ((shape & SP_MFEX_SHAPE_TCP) && l4 + 14 > 64) {
        k = set_word(k, SP_KEY_OFS(tcp_flags) / 2, p + l4 + 12);
    }
    /* (k & keep) | set, then in_port. */
    k = _mm512_ternarylogic_epi64(k, lp->keep, lp->set, 0xea);
    k = set_word(k, SP_KEY_OFS(in_port) / 2, &pkt->in_port);
    _mm512_storeu_si512(key, k);
}

/* The packets no profile takes go to AVX2's copy of the scalar loops: the
 * same loops built with AVX-512's flags (which zero each key with one
 * 64-byte store) ran IPv6 shapes at 0.94-0.98x scalar's speed, AVX2's at
 * 1.3-1.5x (docs/perf/kernels.md). */
#define MFEX_WHOLE_BATCH sp_avx2_mfex_whole_batch
#define MFEX_LANES       sp_avx2_mfex_lanes
#include "generic/mfex.h"
