/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract with NEON: the loop of src/generic/mfex.h over the profiles
 * of src/generic/mfex_profile.h. The window is up to five q registers, the
 * chunks the shape reads; the probe is two masked compares; each 16 bytes of
 * the key are one tbl over the first 64 bytes and, for shapes that read the
 * fifth chunk, one tbx over it (tbl gives zero and tbx keeps the byte for an
 * index out of range, so SP_MFEX_PERM_ZERO lanes stay zero). The chunk a
 * packet ends in is its last 16 bytes moved down with a tbl: nothing past its
 * end is read.
 */
#include <arm_neon.h>

#include "dispatch/isa.h"
#include "generic/mfex_profile.h"

/* Chunk c of the packet (bytes 16c..16c+15); bytes past len are zero.
 * len >= 16. */
static inline __attribute__((always_inline)) uint8x16_t
load_chunk(const uint8_t *p, uint32_t len, uint32_t c)
{
    uint32_t start = 16 * c;

    if (start + 16 <= len) {
        return vld1q_u8(p + start);
    }
    if (start >= len) {
        return vdupq_n_u8(0);
    }
    return vqtbl1q_u8(vld1q_u8(p + len - 16),
                      vld1q_u8(sp_mfex_shift_down + (start + 16 - len)));
}

/* A profile's vectors, kept in registers for a run of its shape. */
struct loaded_profile {
    uint8x16_t probe_mask[2], probe_value[2];
    uint8x16_t perm[4], keep[4], set[4];
};

static inline __attribute__((always_inline)) struct loaded_profile
load_profile(const struct sp_mfex_profile *prof)
{
    struct loaded_profile lp;

    /* Unrolled, here and below: a loop kept the profile on the stack and
     * rebuilt the table tuple of every tbl. */
#pragma GCC unroll 4
    for (unsigned q = 0; q < 2; q++) {
        lp.probe_mask[q] = vld1q_u8(prof->probe_mask + 16 * q);
        lp.probe_value[q] = vld1q_u8(prof->probe_value + 16 * q);
    }
#pragma GCC unroll 4
    for (unsigned q = 0; q < 4; q++) {
        lp.perm[q] = vld1q_u8(prof->perm + 16 * q);
        lp.keep[q] = vld1q_u8(prof->keep + 16 * q);
        lp.set[q] = vld1q_u8(prof->set + 16 * q);
    }
    return lp;
}

static inline __attribute__((always_inline)) bool
probe_matches(const struct loaded_profile *lp, const uint8_t *p)
{
    uint8x16_t eq = vdupq_n_u8(0xff);

#pragma GCC unroll 4
    for (unsigned q = 0; q < 2; q++) {
        uint8x16_t head = vandq_u8(vld1q_u8(p + 16 * q), lp->probe_mask[q]);

        eq = vandq_u8(eq, vceqq_u8(head, lp->probe_value[q]));
    }
    return vminvq_u8(eq) == 0xff;
}

/* Each 16 bytes of the key: one tbl over the window's first 64 bytes, and
 * one tbx over the fifth chunk for the shapes that read it. */
static inline __attribute__((always_inline)) void
build_key(const struct loaded_profile *lp, unsigned shape,
          const struct sp_packet *pkt, struct sp_flow_key *key)
{
    const uint8_t *p = pkt->data;
    const uint32_t len = pkt->len;
    const uint32_t chunks = SP_MFEX_CHUNKS(shape);
    const uint8x16_t window_base = vdupq_n_u8(64);
    uint8x16x4_t w;
    uint8x16_t tail = vdupq_n_u8(0);

#pragma GCC unroll 4
    for (uint32_t c = 0; c < 4; c++) {
        w.val[c] = c >= chunks          ? vdupq_n_u8(0)
                   : len >= 16 * c + 16 ? vld1q_u8(p + 16 * c)
                                        : load_chunk(p, len, c);
    }
    if (chunks > 4) {
        tail = load_chunk(p, len, 4);
    }
#pragma GCC unroll 4
    for (unsigned q = 0; q < 4; q++) {
        /* A table of the chunks the shape reads (an index past them gives
         * zero as one past 64 does): no zero registers to keep. */
        uint8x16_t k =
            chunks <= 2
                ? vqtbl2q_u8((uint8x16x2_t){{w.val[0], w.val[1]}}, lp->perm[q])
            : chunks == 3
                ? vqtbl3q_u8((uint8x16x3_t){{w.val[0], w.val[1], w.val[2]}},
                             lp->perm[q])
                : vqtbl4q_u8(w, lp->perm[q]);

        if (chunks > 4) {
            k = vqtbx1q_u8(k, tail, vsubq_u8(lp->perm[q], window_base));
        }
        k = vorrq_u8(vandq_u8(k, lp->keep[q]), lp->set[q]);
        vst1q_u8(key->bytes + 16 * q, k);
    }
    key->in_port = pkt->in_port;
    if (shape & SP_MFEX_SHAPE_IPV6) {
        key->nw_tos = sp_mfex_ipv6_tclass(p + SP_MFEX_L3_OFS(shape));
    }
}

#define MFEX_FN sp_neon_mfex
#include "generic/mfex.h"
