/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract with NEON profiles (see mfex_profile.h). The 80-byte
 * window is five q registers; the probe is two masked compares; each 16
 * bytes of the key are one tbl over the first 64 bytes and one tbx over
 * the last 16 (tbl gives zero and tbx keeps the byte for an index out of
 * range, so SP_MFEX_PERM_ZERO lanes stay zero). Packets shorter than the
 * window are first copied into a local one without reading past their
 * end: whole chunks directly, the chunk the packet ends in as the packet's
 * last 16 bytes moved down with a tbl.
 */
#include <arm_neon.h>

#include "isa.h"
#include "mfex_profile.h"

#define CHUNKS (SP_MFEX_WINDOW / 16)

/* Chunk c of the packet (bytes 16c..16c+15); bytes past len are zero.
 * len >= 16. */
static inline uint8x16_t
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

static inline bool
probe_matches(const struct sp_mfex_profile *prof, const uint8x16x4_t *w,
              uint32_t len)
{
    uint8x16_t eq = vdupq_n_u8(0xff);

    for (unsigned c = 0; c < SP_MFEX_PROBE_LEN / 16; c++) {
        uint8x16_t mask = vld1q_u8(prof->probe_mask + 16 * c);
        uint8x16_t value = vld1q_u8(prof->probe_value + 16 * c);

        eq = vandq_u8(eq, vceqq_u8(vandq_u8(w->val[c], mask), value));
    }
    return len >= prof->min_len && vminvq_u8(eq) == 0xff;
}

void
sp_neon_mfex(struct sp_packet *const *pkts, uint32_t n,
             struct sp_flow_key *keys)
{
    const uint8x16_t window_base = vdupq_n_u8(64);
    /* Traffic comes in runs of one shape: try the last profile first. */
    const struct sp_mfex_profile *prof = &sp_mfex_profiles[0];
    uint32_t slow = 0; /* packets for the scalar parser, after the loop */

    for (uint32_t i = 0; i < n; i++) {
        struct sp_packet *pkt = pkts[i];
        const uint8_t *p = pkt->data;
        uint32_t len = pkt->len;
        uint8x16x4_t w;
        uint8x16_t tail;

        if (len < SP_MFEX_MIN_LEN) {
            slow |= UINT32_C(1) << i;
            continue;
        }
        if (len >= SP_MFEX_WINDOW) {
            w = vld1q_u8_x4(p);
            tail = vld1q_u8(p + 64);
        } else {
            for (uint32_t c = 0; c < 4; c++) {
                w.val[c] = load_chunk(p, len, c);
            }
            tail = load_chunk(p, len, 4);
        }
        if (!probe_matches(prof, &w, len)) {
            prof = &sp_mfex_profiles[sp_mfex_profile_guess(p)];
        }
        if (!probe_matches(prof, &w, len) ||
            !sp_mfex_profile_lengths_ok(prof, p, len)) {
            slow |= UINT32_C(1) << i;
            continue;
        }
        for (unsigned q = 0; q < 4; q++) {
            uint8x16_t perm = vld1q_u8(prof->perm + 16 * q);
            uint8x16_t key = vqtbl4q_u8(w, perm);

            key = vqtbx1q_u8(key, tail, vsubq_u8(perm, window_base));
            key = vandq_u8(key, vld1q_u8(prof->keep + 16 * q));
            key = vorrq_u8(key, vld1q_u8(prof->set + 16 * q));
            vst1q_u8(keys[i].bytes + 16 * q, key);
        }
        sp_mfex_profile_finish(prof, pkt, &keys[i]);
    }
    sp_scalar_mfex_lanes(pkts, slow, keys);
}
