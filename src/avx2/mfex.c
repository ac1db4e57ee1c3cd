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

#define CHUNKS (SP_MFEX_WINDOW / 16)

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

/* A profile's probe, keep and set vectors, kept in registers while
 * packets keep matching it (the compiler reloads them from the profile
 * after every store otherwise); the shuffle controls are memory operands.
 */
struct loaded_profile {
    const struct sp_mfex_profile *prof;
    __m256i probe_mask, probe_value;
    __m256i keep[2], set[2];
};

static inline struct loaded_profile
load_profile(const struct sp_mfex_profile *prof)
{
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

/* The probe reads the first 32 bytes, all in the packet: len >= 42. */
static inline bool
probe_matches(const struct loaded_profile *lp, __m256i head, uint32_t len)
{
    __m256i eq = _mm256_cmpeq_epi8(_mm256_and_si256(head, lp->probe_mask),
                                   lp->probe_value);

    return len >= lp->prof->min_len && _mm256_movemask_epi8(eq) == -1;
}

#include "mfex_take.h"

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

/* The key from the shuffles, keep and set. */
static inline void
build_key(const struct loaded_profile *lp, const uint8_t *win,
          struct sp_flow_key *key)
{
    const struct sp_mfex_profile *prof = lp->prof;
    __m256i lo = _mm256_setzero_si256();
    __m256i hi = _mm256_setzero_si256();

    /* Only the chunks the profile reads: the others' controls are all
     * zeroing. Highest first, falling through to chunk 0. */
    switch (prof->chunks) {
    case 5:
        shuffle_chunk(prof, win, 4, &lo, &hi);
        /* fall through */
    case 4:
        shuffle_chunk(prof, win, 3, &lo, &hi);
        /* fall through */
    default:
        shuffle_chunk(prof, win, 2, &lo, &hi);
        shuffle_chunk(prof, win, 1, &lo, &hi);
        shuffle_chunk(prof, win, 0, &lo, &hi);
    }
    lo = _mm256_or_si256(_mm256_and_si256(lo, lp->keep[0]), lp->set[0]);
    hi = _mm256_or_si256(_mm256_and_si256(hi, lp->keep[1]), lp->set[1]);
    _mm256_storeu_si256((__m256i *)key, lo);
    _mm256_storeu_si256((__m256i *)key + 1, hi);
}

void
sp_avx2_mfex(struct sp_packet *const *pkts, uint32_t n,
             struct sp_flow_key *keys)
{
    struct loaded_profile lp = load_profile(&sp_mfex_profiles[0]);
    uint32_t slow = 0; /* packets for the scalar parser, after the loop */

    for (uint32_t i = 0; i < n; i++) {
        struct sp_packet *pkt = pkts[i];
        const uint8_t *p = pkt->data;
        const uint8_t *win = p; /* prof->chunks readable chunks */
        uint32_t len = pkt->len;
        uint8_t copy[SP_MFEX_WINDOW] __attribute__((aligned(16)));

        if (len < SP_MFEX_MIN_LEN || !take_packet(&lp, p, len)) {
            slow |= UINT32_C(1) << i;
            continue;
        }
        if (len < 16 * (uint32_t)lp.prof->chunks) {
            for (uint32_t c = 0; c < lp.prof->chunks; c++) {
                _mm_store_si128((__m128i *)(copy + 16 * c),
                                load_chunk(p, len, c));
            }
            win = copy;
        }
        build_key(&lp, win, &keys[i]);
        sp_mfex_profile_finish(lp.prof, pkt, &keys[i]);
    }
    sp_scalar_mfex_lanes(pkts, slow, keys);
}
