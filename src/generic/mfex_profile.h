/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal: the packet shapes the SIMD miniflow extract parsers handle
 * without branching on headers ("profiles", as OVS's AVX-512 MFEX). A
 * profile is static data:
 *
 *  - probe_mask / probe_value over the first 32 bytes: a packet has the
 *    shape when (bytes & mask) == value (Ethernet types, IPv4 version+IHL,
 *    "not a fragment", IPv6 version, L4 protocol);
 *  - perm: for each of the 64 key bytes, the packet byte it comes from
 *    (SP_MFEX_PERM_ZERO: none) within the first SP_MFEX_WINDOW bytes,
 *    and the same as pshufb controls within AVX2's 16-byte windows;
 *  - keep / set: after the permute, key = (bytes & keep) | set; keep is
 *    zero where perm is SP_MFEX_PERM_ZERO, 0x0f where only a low nibble
 *    belongs to the key (TCP flags, IPv6 flow label), and set adds the
 *    VLAN "tag present" bit.
 *
 * Lengths cannot be checked by a mask: sp_mfex_profile_lengths_ok() checks
 * them, and a packet that fails goes to the scalar parser. The metadata
 * are written by sp_mfex_profile_finish(); in_port, which is not a packet
 * byte, and the IPv6 traffic class, which straddles two, by each parser. The
 * parsers run one loop per shape (src/generic/mfex.h) so that all of this is
 * constants and straight-line code.
 */
#ifndef SP_MFEX_PROFILE_H
#define SP_MFEX_PROFILE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/csum.h"
#include "common/proto.h"
#include "simdpath/kernels.h"

#define SP_MFEX_PROBE_LEN 32 /* every byte a probe tests is below 28 */
#define SP_MFEX_WINDOW    80 /* packet bytes a permute may read */
#define SP_MFEX_PERM_ZERO 0xff
#define SP_MFEX_PROFILES  9
#define SP_MFEX_MIN_LEN   42 /* the shortest profile: Ethernet/IPv4/UDP */

/* A profile's index is its shape, as sp_mfex_profile_guess() computes it:
 * these bits. Everything but the byte tables follows from the shape, as
 * constants the parsers fold when they specialise a loop per shape.
 * SP_MFEX_SHAPE_LATER_FRAG alone is an IPv4 fragment other than the
 * first (no L4 header: the key has no ports and nw_frag "later"), without
 * a tag; it has the geometry of IPv4/UDP, shape 0, whose 8-byte "L4
 * header" it needs in the frame so that the permute's windows stay the
 * same. */
#define SP_MFEX_SHAPE_TCP        1
#define SP_MFEX_SHAPE_IPV6       2
#define SP_MFEX_SHAPE_VLAN       4
#define SP_MFEX_SHAPE_LATER_FRAG 8
#define SP_MFEX_L3_OFS(s)        ((s)&SP_MFEX_SHAPE_VLAN ? 18u : 14u)
#define SP_MFEX_L3_LEN(s)        ((s)&SP_MFEX_SHAPE_IPV6 ? 40u : 20u)
#define SP_MFEX_L4_OFS(s)        (SP_MFEX_L3_OFS(s) + SP_MFEX_L3_LEN(s))
/* Through the L4 header; every byte the permute reads is below it. */
#define SP_MFEX_LEN(s) (SP_MFEX_L4_OFS(s) + ((s)&SP_MFEX_SHAPE_TCP ? 20u : 8u))
/* The 16-byte chunks the permute reads: through the last byte of the ports
 * or of the TCP flags. */
#define SP_MFEX_CHUNKS(s) \
    ((SP_MFEX_L4_OFS(s) + ((s)&SP_MFEX_SHAPE_TCP ? 13u : 3u)) / 16 + 1)

/* AVX2's pshufb works within 16-byte lanes, so each key lane q (bytes
 * 16q..16q+15) is shuffled out of one or two 16-byte windows of the packet
 * that hold every byte the permute puts there: window A at
 * SP_MFEX_WIN_A(shape, q), window B at SP_MFEX_WIN_B for what A misses
 * (the type behind a tag, TCP flags, the IPv6 flow label; where a lane
 * needs no window B it is window A again). Key half h (lanes 2h, 2h+1)
 * needs window B when SP_MFEX_HAS_WIN_B(shape, h). Every window ends
 * within SP_MFEX_LEN(shape), so a packet of the shape has its bytes.
 * IPv4: lane 0 [0, 16), 1 [l3, l3+16), 2 (destination) [l3+4, l3+20),
 * 3 (ports) [l4-8, l4+8). IPv6: lanes 2 and 3 [l3+16, l3+32) and
 * [l3+28, l3+44) for the addresses and ports. */
#define SP_MFEX_WIN_A(s, q)                                               \
    ((q) == 0   ? 0u                                                      \
     : (q) == 1 ? SP_MFEX_L3_OFS(s)                                       \
     : (q) == 2 ? SP_MFEX_L3_OFS(s) + ((s)&SP_MFEX_SHAPE_IPV6 ? 16u : 4u) \
     : (s)&SP_MFEX_SHAPE_IPV6 ? SP_MFEX_L3_OFS(s) + 28u                   \
                              : SP_MFEX_L4_OFS(s) - 8u)
#define SP_MFEX_WIN_B(s, q)                                       \
    ((q) == 0   ? ((s)&SP_MFEX_SHAPE_VLAN ? 2u : 0u)              \
     : (q) == 1 ? ((s)&SP_MFEX_SHAPE_TCP ? SP_MFEX_L4_OFS(s) + 4u \
                                         : SP_MFEX_L3_OFS(s))     \
     : (q) == 3 && ((s)&SP_MFEX_SHAPE_IPV6) ? SP_MFEX_L3_OFS(s)   \
                                            : SP_MFEX_WIN_A(s, q))
#define SP_MFEX_HAS_WIN_B(s, h)                                       \
    ((h) == 0 ? ((s) & (SP_MFEX_SHAPE_VLAN | SP_MFEX_SHAPE_TCP)) != 0 \
              : ((s)&SP_MFEX_SHAPE_IPV6) != 0)

struct sp_mfex_profile {
    uint8_t probe_mask[SP_MFEX_PROBE_LEN];
    uint8_t probe_value[SP_MFEX_PROBE_LEN];
    uint8_t perm[64];
    /* perm as pshufb controls within AVX2's windows A and B. */
    uint8_t avx2_ctrl[2][64];
    uint8_t keep[64];
    uint8_t set[64];
} __attribute__((aligned(64)));

/* The profiles (src/generic/mfex_profiles.c), indexed by shape. */
extern const struct sp_mfex_profile sp_mfex_profiles[SP_MFEX_PROFILES];

/* shuffle indexes 0..15 then 16 bytes of 0x80: loading 16 bytes at offset
 * s gives the pshufb/tbl control that moves bytes down by s and zeroes the
 * rest, to place the tail of a short packet. */
extern const uint8_t sp_mfex_shift_down[32];

/* The IPv4 header at ip is a fragment other than the first: it has a
 * fragment offset, MF or not. */
static inline bool
sp_mfex_ipv4_later_frag(const uint8_t *ip)
{
    return sp_load_be16(ip + 6) & SP_IPV4_FRAG_OFFSET;
}

/* The only profile a packet can match, from its Ethernet type, IPv4
 * version, header length and fragment fields, and L4 protocol bytes, or
 * SP_MFEX_PROFILES when it matches none: the probe then checks every byte
 * the profile depends on (and the length checks a later fragment's
 * offset). Turning the other packets away here spares them loading a
 * profile and probing it. Reads bytes 12..27 only: len >= SP_MFEX_MIN_LEN.
 */
static inline unsigned
sp_mfex_profile_guess(const uint8_t *p)
{
    unsigned vlan = p[12] == 0x81 && p[13] == 0x00;
    const uint8_t *type = p + 12 + 4 * vlan;
    const uint8_t *ip = type + 2;
    unsigned ipv6 = type[0] == 0x86 && type[1] == 0xdd;
    bool ipv4_no_options = type[0] == 0x08 && type[1] == 0x00 && ip[0] == 0x45;
    /* ... and not a fragment (no MF, offset 0). */
    bool ipv4 = ipv4_no_options && !(ip[6] & 0x3f) && !ip[7];
    /* IPv4 protocol at byte 9, IPv6 next header at byte 6. */
    uint8_t proto = ip[9 - 3 * ipv6];

    if (!(ipv4 || ipv6) || (proto != 6 && proto != 17)) {
        /* Untagged, any protocol. */
        return !vlan && ipv4_no_options && sp_mfex_ipv4_later_frag(ip)
                   ? SP_MFEX_SHAPE_LATER_FRAG
                   : SP_MFEX_PROFILES;
    }
    return SP_MFEX_SHAPE_VLAN * vlan + SP_MFEX_SHAPE_IPV6 * ipv6 +
           SP_MFEX_SHAPE_TCP * (proto == 6);
}

/* The checks no mask can do: the IP length fields and the TCP data offset
 * agree with the frame, as the scalar parser requires for "ok". ip_bytes,
 * the IP header and payload the length field claims, must lie within
 * [SP_MFEX_LEN - l3 offset, len - l3 offset]: one unsigned compare of
 * 'spare', the L4 bytes past the L4 header. The TCP data offset must lie
 * within [5, TCP bytes / 4], that is 4 * doff - 20 <= spare, one more.
 * For TCP both are made 4 times larger, which takes the data offset's
 * nibble as it lies in its byte (16 * doff): one instruction less per
 * packet, in 64 bits so nothing overflows; UDP, with no data offset,
 * compares them as they are, in 32 bits, three less. The caller has
 * checked len >= SP_MFEX_LEN(shape), so every byte read here exists. */
static inline bool
sp_mfex_profile_lengths_ok(unsigned shape, const uint8_t *p, uint32_t len)
{
    if (shape & SP_MFEX_SHAPE_LATER_FRAG) {
        /* A fragment offset (no mask tests "not zero"), and a total length
         * within [header, len - l3]: in 32 bits, one below the header
         * wraps. */
        const uint8_t *ip = p + SP_MFEX_L3_OFS(shape);

        return sp_mfex_ipv4_later_frag(ip) &&
               (uint32_t)sp_load_be16(ip + 2) - SP_MFEX_L3_LEN(shape) <=
                   len - SP_MFEX_L4_OFS(shape);
    }
    const uint64_t l3 = SP_MFEX_L3_OFS(shape);
    const uint64_t min_len = SP_MFEX_LEN(shape);
    /* IPv6's payload length leaves out its 40-byte header. */
    uint64_t ip_bytes = shape & SP_MFEX_SHAPE_IPV6
                            ? sp_load_be16(p + l3 + 4) + 40
                            : sp_load_be16(p + l3 + 2);
    uint64_t spare4 = 4 * ip_bytes - 4 * (min_len - l3);

    if (!(shape & SP_MFEX_SHAPE_TCP)) {
        /* In 32 bits: an ip_bytes below the least wraps to more than any
         * len - min_len. */
        return (uint32_t)ip_bytes - (uint32_t)(min_len - l3) <=
               len - (uint32_t)min_len;
    }
    if (spare4 > 4 * (uint64_t)len - 4 * min_len) {
        return false;
    }
    uint64_t doff16 = p[SP_MFEX_L4_OFS(shape) + 12] & 0xf0;

    return doff16 - 80 <= spare4;
}

/* The IPv6 traffic class, which straddles the first two bytes of the
 * header: no byte permute yields it, each parser adds it to the key. */
static inline uint8_t
sp_mfex_ipv6_tclass(const uint8_t *ip)
{
    return (uint8_t)(ip[0] << 4 | ip[1] >> 4);
}

/* l3_ofs, l4_ofs and status follow one another, and the two bytes after
 * status are padding before 'owner'. */
static_assert(offsetof(struct sp_packet, l4_ofs) ==
                      offsetof(struct sp_packet, l3_ofs) + 2 &&
                  offsetof(struct sp_packet, status) ==
                      offsetof(struct sp_packet, l3_ofs) + 4 &&
                  offsetof(struct sp_packet, owner) >=
                      offsetof(struct sp_packet, l3_ofs) + 8,
              "sp_packet metadata layout");

/* The packet's metadata, as one 8-byte store of constants (the last two
 * bytes are padding): faster than three (docs/perf/mfex.md). */
static inline void
sp_mfex_profile_finish(unsigned shape, struct sp_packet *pkt)
{
    const uint16_t meta[4] = {
        SP_MFEX_L3_OFS(shape),
        shape & SP_MFEX_SHAPE_LATER_FRAG ? SP_OFS_NONE : SP_MFEX_L4_OFS(shape),
        SP_MFEX_OK, 0};

    memcpy(&pkt->l3_ofs, meta, sizeof meta);
}

#endif /* SP_MFEX_PROFILE_H */
