/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract with AVX2: the loop of src/generic/mfex.h over the profiles
 * of src/generic/mfex_profile.h. pshufb only shuffles within 16-byte lanes, so
 * each 16 bytes of the key are shuffled out of one or two 16-byte windows of
 * the packet that hold every byte the profile's permute puts there
 * (SP_MFEX_WIN_A and SP_MFEX_WIN_B, with their controls in the profile). Every
 * window ends within SP_MFEX_LEN(shape) bytes, which a packet of the shape
 * has, so nothing past the packet's end is read and short packets need no
 * copy.
 */
#include <immintrin.h>

#include "dispatch/isa.h"
#include "generic/mfex_profile.h"

/* A profile's vectors for a run of its shape: probe, the controls of
 * windows A and B of each key half, keep and set. */
struct loaded_profile {
    __m256i probe_mask, probe_value;
    __m256i ctrl[2][2]; /* [window A or B][key half] */
    __m256i keep[2], set[2];
};

static inline struct loaded_profile
load_profile(const struct sp_mfex_profile *prof)
{
    const __m256i *keep = (const __m256i *)prof->keep;
    const __m256i *set = (const __m256i *)prof->set;
    struct loaded_profile lp = {
        .probe_mask = _mm256_load_si256((const __m256i *)prof->probe_mask),
        .probe_value = _mm256_load_si256((const __m256i *)prof->probe_value),
    };

    for (unsigned h = 0; h < 2; h++) {
        for (unsigned w = 0; w < 2; w++) {
            lp.ctrl[w][h] =
                _mm256_load_si256((const __m256i *)prof->avx2_ctrl[w] + h);
        }
        lp.keep[h] = keep[h];
        lp.set[h] = set[h];
    }
    return lp;
}

static inline bool
probe_matches(const struct loaded_profile *lp, const uint8_t *p)
{
    __m256i head = _mm256_loadu_si256((const __m256i *)p);
    __m256i eq = _mm256_cmpeq_epi8(_mm256_and_si256(head, lp->probe_mask),
                                   lp->probe_value);

    return _mm256_movemask_epi8(eq) == -1;
}

/* Key half h (lanes 2h, 2h+1) from its windows. */
static inline __m256i
key_half(const struct loaded_profile *lp, unsigned shape, unsigned h,
         const uint8_t *p)
{
    const uint32_t a0 = SP_MFEX_WIN_A(shape, 2 * h);
    const uint32_t a1 = SP_MFEX_WIN_A(shape, 2 * h + 1);
    const uint32_t b0 = SP_MFEX_WIN_B(shape, 2 * h);
    const uint32_t b1 = SP_MFEX_WIN_B(shape, 2 * h + 1);
    __m256i k =
        _mm256_shuffle_epi8(_mm256_loadu2_m128i((const __m128i *)(p + a1),
                                                (const __m128i *)(p + a0)),
                            lp->ctrl[0][h]);

    if (SP_MFEX_HAS_WIN_B(shape, h)) {
        __m256i b = _mm256_loadu2_m128i((const __m128i *)(p + b1),
                                        (const __m128i *)(p + b0));

        k = _mm256_or_si256(k, _mm256_shuffle_epi8(b, lp->ctrl[1][h]));
    }
    return k;
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

static inline void
build_key(const struct loaded_profile *lp, unsigned shape,
          const struct sp_packet *pkt, struct sp_flow_key *key)
{
    const uint8_t *p = pkt->data;
    __m256i lo = key_half(lp, shape, 0, p);
    __m256i hi = key_half(lp, shape, 1, p);

    lo = _mm256_or_si256(_mm256_and_si256(lo, lp->keep[0]), lp->set[0]);
    hi = _mm256_or_si256(_mm256_and_si256(hi, lp->keep[1]), lp->set[1]);
    if (shape & SP_MFEX_SHAPE_IPV6) {
        lo = add_ipv6_tclass(lo, p + SP_MFEX_L3_OFS(shape));
    }
    _mm256_storeu_si256((__m256i *)key, lo);
    _mm256_storeu_si256((__m256i *)key + 1, hi);
    key->in_port = pkt->in_port;
}

#define MFEX_INLINE_SCALAR
#define MFEX_WHOLE_BATCH sp_avx2_mfex_whole_batch
#define MFEX_LANES       sp_avx2_mfex_lanes
#define MFEX_FN          sp_avx2_mfex
#include "generic/mfex.h"
