/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract with NEON: the loop of src/generic/mfex.h over the profiles
 * of src/generic/mfex_profile.h. The probe is one masked compare of bytes
 * 12-27; each 16 bytes of the key are one tbl over the 3 or 4 chunks of the
 * first 64 bytes the shape reads, in asm so that the chunks load straight
 * into the table's registers; only the lanes that need it are masked (keep)
 * or ORed (set); IPv6/TCP's flags, past 64 bytes, come from one tbx, and
 * IPv6's traffic class from the probe's bytes. Nothing past SP_MFEX_LEN of
 * the shape, which the packet has, is read, and no packet length but that
 * one is tested.
 */
#include <arm_neon.h>

#include "dispatch/isa.h"
#include "generic/mfex_profile.h"

/* The shapes whose TCP flags lie past the first 64 bytes (IPv6/TCP): they
 * come from one more tbx rather than a fifth chunk of the table. */
#define FLAGS_PAST_64(s) (SP_MFEX_CHUNKS(s) > 4)
/* The chunks of the table: 3 or 4, every one but the last wholly below
 * SP_MFEX_LEN (which permute's loads rely on). */
#define TABLE_CHUNKS(s) (FLAGS_PAST_64(s) ? 4 : SP_MFEX_CHUNKS(s))
#define TABLE_OK(s)                                  \
    (TABLE_CHUNKS(s) >= 3 && TABLE_CHUNKS(s) <= 4 && \
     SP_MFEX_LEN(s) >= 16 * (TABLE_CHUNKS(s) - 1))
static_assert(TABLE_OK(0) && TABLE_OK(1) && TABLE_OK(2) && TABLE_OK(3) &&
                  TABLE_OK(4) && TABLE_OK(5) && TABLE_OK(6) && TABLE_OK(7),
              "every shape's table is 3 or 4 chunks");

/* The 4 permutes of the key's lanes: tbl over the shape's table chunks,
 * an index out of range giving zero. In asm because tbl takes its table
 * in consecutive registers, which GCC 12 assembles with a move per
 * register from wherever it loaded the chunks; here they load into v28-v31
 * directly. A last chunk that reaches past SP_MFEX_LEN is the 16 bytes
 * that end there, moved up by an ext, so that no packet length is tested
 * and nothing past the packet is read: every byte the permute reads is
 * below SP_MFEX_LEN, which the packet has, and the bytes above it in the
 * chunk, which repeat others, are not read. */
#define TBL4(table)                             \
    "tbl %[k0].16b, {" table "}, %[i0].16b\n\t" \
    "tbl %[k1].16b, {" table "}, %[i1].16b\n\t" \
    "tbl %[k2].16b, {" table "}, %[i2].16b\n\t" \
    "tbl %[k3].16b, {" table "}, %[i3].16b\n\t"
#define TBL_OPERANDS                                                         \
    : [k0] "=&w"(k[0]), [k1] "=&w"(k[1]), [k2] "=&w"(k[2]),                 \
      [k3] "=&w"(k[3])                                                      \
    : [p] "r"(p), [tail] "n"(end - 16), [ext] "n"((16 * chunks - end) & 15), \
      [i0] "w"(perm->val[0]), [i1] "w"(perm->val[1]),                       \
      [i2] "w"(perm->val[2]), [i3] "w"(perm->val[3]),                       \
      "m"(*(const uint8_t(*)[SP_MFEX_WINDOW])p)                             \
    : "v28", "v29", "v30", "v31"

static inline __attribute__((always_inline)) void
permute(const uint8_t *p, unsigned shape, const uint8x16x4_t *perm,
        uint8x16_t k[4])
{
    const uint32_t end = SP_MFEX_LEN(shape), chunks = TABLE_CHUNKS(shape);

    if (chunks == 3 && end >= 48) {
        __asm__("ld1 {v28.16b-v30.16b}, [%[p]]\n\t" TBL4("v28.16b-v30.16b")
                    TBL_OPERANDS);
    } else if (chunks == 3) {
        __asm__("ld1 {v28.16b-v29.16b}, [%[p]]\n\t"
                "ldur q30, [%[p], %[tail]]\n\t"
                "ext v30.16b, v30.16b, v30.16b, %[ext]\n\t" TBL4(
                    "v28.16b-v30.16b") TBL_OPERANDS);
    } else if (end >= 64) {
        __asm__("ld1 {v28.16b-v31.16b}, [%[p]]\n\t" TBL4("v28.16b-v31.16b")
                    TBL_OPERANDS);
    } else {
        __asm__("ld1 {v28.16b-v30.16b}, [%[p]]\n\t"
                "ldur q31, [%[p], %[tail]]\n\t"
                "ext v31.16b, v31.16b, v31.16b, %[ext]\n\t" TBL4(
                    "v28.16b-v31.16b") TBL_OPERANDS);
    }
}

/* Key lanes (16 bytes) whose bytes need more than the permute, as
 * constants of the shape. The tables of src/generic/mfex_profiles.c keep
 * every byte the permute fetches but a low nibble (lane 1: the TCP flags;
 * lane 3: the IPv6 flow label) and, in lane 1, the IPv6 traffic class
 * bytes that AVX-512 VBMI takes from in_port and nw_frag; elsewhere keep
 * is zero exactly where the index is out of range, which tbl zeroes by
 * itself. set sets nothing but the VLAN tag-present bit (lane 0) and a
 * later fragment's nw_frag (lane 1).
 * test_profile_layout (tests/test_mfex.c) checks the tables for this. */
#define KEEP_LANE(s, q)                                                \
    (((q) == 1 && ((s) & (SP_MFEX_SHAPE_TCP | SP_MFEX_SHAPE_IPV6))) || \
     ((q) == 3 && ((s)&SP_MFEX_SHAPE_IPV6)))
#define SET_LANE(s, q)                         \
    (((q) == 0 && ((s)&SP_MFEX_SHAPE_VLAN)) || \
     ((q) == 1 && ((s)&SP_MFEX_SHAPE_LATER_FRAG)))
/* Every byte a probe tests lies in bytes 12-27 (the Ethernet type, behind
 * a tag or not, to the IPv4 protocol behind one; test_profile_layout checks
 * it), so the probe is one 16-byte compare there. */
#define PROBE_OFS 12

/* A profile's vectors, kept in registers for a run of its shape. */
struct loaded_profile {
    uint8x16_t probe_mask, probe_value;
    uint8x16x4_t perm, keep, set;
};

/* One load per lane, not a four-register ld1: a shape uses keep and set on
 * one or two lanes, whose loads alone then remain, and the permute's
 * indexes go to any registers rather than four consecutive ones moved
 * where the asm wants them. */
static inline __attribute__((always_inline)) uint8x16x4_t
load_lanes(const uint8_t *t)
{
    return (uint8x16x4_t){
        {vld1q_u8(t), vld1q_u8(t + 16), vld1q_u8(t + 32), vld1q_u8(t + 48)}};
}

static inline __attribute__((always_inline)) struct loaded_profile
load_profile(const struct sp_mfex_profile *prof)
{
    return (struct loaded_profile){
        .probe_mask = vld1q_u8(prof->probe_mask + PROBE_OFS),
        .probe_value = vld1q_u8(prof->probe_value + PROBE_OFS),
        .perm = load_lanes(prof->perm),
        .keep = load_lanes(prof->keep),
        .set = load_lanes(prof->set),
    };
}

/* (bytes ^ value) & mask is zero. */
static inline __attribute__((always_inline)) bool
probe_matches(const struct loaded_profile *lp, const uint8_t *p)
{
    uint8x16_t diff = vandq_u8(
        veorq_u8(vld1q_u8(p + PROBE_OFS), lp->probe_value), lp->probe_mask);

    return vmaxvq_u32(vreinterpretq_u32_u8(diff)) == 0;
}

/* The key: the permute, then what it cannot do (see above). */
static inline __attribute__((always_inline)) void
build_key(const struct loaded_profile *lp, unsigned shape,
          const struct sp_packet *pkt, struct sp_flow_key *key)
{
    const uint8_t *p = pkt->data;
    uint8x16_t k[4];

    permute(p, shape, &lp->perm, k);
    if (FLAGS_PAST_64(shape)) {
        /* A tbx over the 16 bytes that end at SP_MFEX_LEN, with the
         * indexes moved down by their start: an index into them fetches
         * the byte it names (for one below 64 the same as the tbl did),
         * one below them wraps out of range and its byte stays. */
        const uint8_t tail = SP_MFEX_LEN(shape) - 16;

        k[1] = vqtbx1q_u8(k[1], vld1q_u8(p + tail),
                          vsubq_u8(lp->perm.val[1], vdupq_n_u8(tail)));
    }
#pragma GCC unroll 4
    for (unsigned q = 0; q < 4; q++) {
        if (KEEP_LANE(shape, q)) {
            k[q] = vandq_u8(k[q], lp->keep.val[q]);
        }
        if (SET_LANE(shape, q)) {
            k[q] = vorrq_u8(k[q], lp->set.val[q]);
        }
    }
    if (shape & SP_MFEX_SHAPE_IPV6) {
        /* The traffic class, bits 4-11 of the IPv6 header's first two
         * bytes, which lie in the probe's 16 bytes at an even offset: the
         * 16-bit lane there byte-swapped and shifted right by 4 has it in
         * its low byte, moved into nw_tos (key byte 21). */
        const unsigned at = SP_MFEX_L3_OFS(shape) - PROBE_OFS;
        uint16x8_t words =
            vreinterpretq_u16_u8(vrev16q_u8(vld1q_u8(p + PROBE_OFS)));

        static_assert(SP_MFEX_L3_OFS(0) % 2 == 0 &&
                          SP_MFEX_L3_OFS(SP_MFEX_SHAPE_VLAN) % 2 == 0,
                      "the IPv6 header at an even offset");
        k[1] =
            vcopyq_laneq_u8(k[1], SP_KEY_OFS(nw_tos) - 16,
                            vreinterpretq_u8_u16(vshrq_n_u16(words, 4)), at);
    }
#pragma GCC unroll 4
    for (unsigned q = 0; q < 4; q++) {
        vst1q_u8(key->bytes + 16 * q, k[q]);
    }
    key->in_port = pkt->in_port;
}

#define MFEX_INLINE_SCALAR
#define MFEX_WHOLE_BATCH sp_neon_mfex_whole_batch
#define MFEX_LANES       sp_neon_mfex_lanes
#define MFEX_FN          sp_neon_mfex
#include "generic/mfex.h"
