/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract with AVX2 profiles (see mfex_profile.h). pshufb only
 * shuffles within 16-byte lanes, so the window is the 16-byte chunks the
 * profile reads (3 to 5): each is broadcast to both lanes and shuffled with
 * the profile's controls for that chunk, and the results are ORed. A packet
 * that ends inside the last of them is first copied without reading past
 * its end: whole chunks directly, the chunk it ends in as its last 16 bytes
 * shifted down (no vpmaskmov, whose fault suppression qemu and valgrind do
 * not honour).
 */
#include <immintrin.h>

#include "isa.h"
#include "mfex_profile.h"

/* Chunk c of the packet (bytes 16c..16c+15); bytes past len are zero.
 * len >= 16. */
static inline __m128i
load_chunk(const uint8_t *p, uint32_t len, uint32_t c)
{
    uint32_t start = 16 * c;

    if (start + 16 <= len) {
        return _mm_loadu_si128((const __m128i *)(p + start));
    }
    if (start >= len) {
        return _mm_setzero_si128();
    }
    return _mm_shuffle_epi8(
        _mm_loadu_si128((const __m128i *)(p + len - 16)),
        _mm_loadu_si128(
            (const __m128i *)(sp_mfex_shift_down + (start + 16 - len))));
}

/* A profile's probe, keep and set vectors, kept in registers for a run of
 * its shape; the shuffle controls are memory operands. */
struct loaded_profile {
    const struct sp_mfex_profile *prof;
    __m256i probe_mask, probe_value;
    __m256i keep[2], set[2];
};

static inline struct loaded_profile
load_profile(unsigned shape)
{
    const struct sp_mfex_profile *prof = &sp_mfex_profiles[shape];
    const __m256i *keep = (const __m256i *)prof->keep;
    const __m256i *set = (const __m256i *)prof->set;

    return (struct loaded_profile){
        .prof = prof,
        .probe_mask = _mm256_load_si256((const __m256i *)prof->probe_mask),
        .probe_value = _mm256_load_si256((const __m256i *)prof->probe_value),
        .keep = {keep[0], keep[1]},
        .set = {set[0], set[1]},
    };
}

static inline bool
probe_matches(const struct loaded_profile *lp, const uint8_t *p)
{
    __m256i head = _mm256_loadu_si256((const __m256i *)p);
    __m256i eq = _mm256_cmpeq_epi8(_mm256_and_si256(head, lp->probe_mask),
                                   lp->probe_value);

    return _mm256_movemask_epi8(eq) == -1;
}

/* Chunk c of win shuffled into both key halves: loaded once for both. */
static inline void
shuffle_chunk(const struct sp_mfex_profile *prof, const uint8_t *win,
              uint32_t c, __m256i *lo, __m256i *hi)
{
    __m256i chunk = _mm256_broadcastsi128_si256(
        _mm_loadu_si128((const __m128i *)(win + 16 * c)));
    const __m256i *ctrl = (const __m256i *)prof->shuffle[c];

    *lo = _mm256_or_si256(*lo, _mm256_shuffle_epi8(chunk, ctrl[0]));
    *hi = _mm256_or_si256(*hi, _mm256_shuffle_epi8(chunk, ctrl[1]));
}

/* The IPv6 traffic class in key byte 21, from header bytes b0 b1 (at
 * ip): each word of their 16-byte chunk swapped into b0 << 8 | b1 and
 * shifted left by 4 has it in its high byte. */
static inline __m256i
add_ipv6_tclass(__m256i lo, const uint8_t *ip)
{
    const __m256i byte_21 =
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                         0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    __m256i w =
        _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)ip));

    w = _mm256_slli_epi16(_mm256_shuffle_epi8(w, _mm256_set1_epi16(1)), 4);
    return _mm256_blendv_epi8(lo, w, byte_21);
}

/* The key from the shuffles of the chunks the shape reads (the others'
 * controls are all zeroing), keep and set. */
static inline void
build_key(const struct loaded_profile *lp, unsigned shape, const uint8_t *p,
          uint32_t len, struct sp_flow_key *key)
{
    const uint32_t chunks = SP_MFEX_CHUNKS(shape);
    uint8_t copy[SP_MFEX_WINDOW] __attribute__((aligned(16)));
    const uint8_t *win = p;
    __m256i lo = _mm256_setzero_si256();
    __m256i hi = _mm256_setzero_si256();

    if (len < 16 * chunks) {
        for (uint32_t c = 0; c < chunks; c++) {
            _mm_store_si128((__m128i *)(copy + 16 * c), load_chunk(p, len, c));
        }
        win = copy;
    }
#pragma GCC unroll 5
    for (uint32_t c = 0; c < chunks; c++) {
        shuffle_chunk(lp->prof, win, c, &lo, &hi);
    }
    lo = _mm256_or_si256(_mm256_and_si256(lo, lp->keep[0]), lp->set[0]);
    hi = _mm256_or_si256(_mm256_and_si256(hi, lp->keep[1]), lp->set[1]);
    if (shape & SP_MFEX_SHAPE_IPV6) {
        lo = add_ipv6_tclass(lo, win + SP_MFEX_L3_OFS(shape));
    }
    _mm256_storeu_si256((__m256i *)key, lo);
    _mm256_storeu_si256((__m256i *)key + 1, hi);
}

#define MFEX_FN sp_avx2_mfex
#include "mfex_loop.h"
