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
 *    and the same as one pshufb control per 16-byte chunk;
 *  - keep / set: after the permute, key = (bytes & keep) | set; keep is
 *    zero where perm is SP_MFEX_PERM_ZERO, 0x0f where only a low nibble
 *    belongs to the key (TCP flags, IPv6 flow label), and set adds the
 *    VLAN "tag present" bit.
 *
 * Lengths cannot be checked by a mask: sp_mfex_profile_lengths_ok() checks
 * them, and a packet that fails goes to the scalar parser. The fields no
 * byte permute yields (in_port, the IPv6 traffic class that straddles two
 * bytes) and the metadata are written by sp_mfex_profile_finish().
 */
#ifndef SP_MFEX_PROFILE_H
#define SP_MFEX_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "simdpath/kernels.h"

#define SP_MFEX_PROBE_LEN 32 /* every byte a probe tests is below 28 */
#define SP_MFEX_WINDOW    80 /* packet bytes a permute may read */
#define SP_MFEX_PERM_ZERO 0xff
#define SP_MFEX_PROFILES  8
#define SP_MFEX_MIN_LEN   42 /* the shortest profile: Ethernet/IPv4/UDP */

struct sp_mfex_profile {
    uint8_t probe_mask[SP_MFEX_PROBE_LEN];
    uint8_t probe_value[SP_MFEX_PROBE_LEN];
    uint8_t perm[64];
    /* perm as pshufb controls, one per 16-byte chunk of the packet. */
    uint8_t shuffle[SP_MFEX_WINDOW / 16][64];
    uint8_t keep[64];
    uint8_t set[64];
    uint8_t l3_ofs;
    uint8_t l4_ofs;
    uint8_t min_len;    /* through the L4 header */
    uint8_t ip_len_ofs; /* the IPv4 total or IPv6 payload length */
    uint8_t ip_len_add; /* added to it: the IP bytes it says there are */
    uint8_t chunks;     /* 16-byte chunks of the packet perm reads */
    /* The bytes perm reads, all below min_len: [0, 64) and [64, 80). */
    uint64_t lo_bytes;
    uint64_t hi_bytes;
    bool ipv6;
    bool tcp;
} __attribute__((aligned(64)));

/* The profiles (src/scalar/mfex_profiles.c), indexed as
 * sp_mfex_profile_guess() computes: 4 * vlan + 2 * ipv6 + tcp. */
extern const struct sp_mfex_profile sp_mfex_profiles[SP_MFEX_PROFILES];

/* shuffle indexes 0..15 then 16 bytes of 0x80: loading 16 bytes at offset
 * s gives the pshufb/tbl control that moves bytes down by s and zeroes the
 * rest, to place the tail of a short packet. */
extern const uint8_t sp_mfex_shift_down[32];

static inline uint32_t
sp_mfex_get_be16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

/* The only profile a packet can match, from its Ethernet type and L4
 * protocol bytes, without a branch; the probe then checks every byte the
 * profile depends on. Reads bytes 12..27 only: len >= SP_MFEX_MIN_LEN. */
static inline unsigned
sp_mfex_profile_guess(const uint8_t *p)
{
    unsigned vlan = p[12] == 0x81 && p[13] == 0x00;
    const uint8_t *type = p + 12 + 4 * vlan;
    unsigned ipv6 = type[0] == 0x86 && type[1] == 0xdd;
    /* IPv4 protocol at byte 9, IPv6 next header at byte 6. */
    unsigned tcp = type[2 + 9 - 3 * ipv6] == 6;

    return 4 * vlan + 2 * ipv6 + tcp;
}

/* The checks no mask can do: the IP length fields and the TCP data offset
 * agree with the frame, as the scalar parser requires for "ok". ip_bytes,
 * the IP header and payload the length field claims, must lie within
 * [min_len - l3_ofs, len - l3_ofs], and the TCP data offset within
 * [5, TCP bytes / 4]: one unsigned compare each. The caller has checked
 * len >= prof->min_len, so every byte read here exists. */
static inline bool
sp_mfex_profile_lengths_ok(const struct sp_mfex_profile *prof,
                           const uint8_t *p, uint32_t len)
{
    uint32_t ip_bytes =
        sp_mfex_get_be16(p + prof->ip_len_ofs) + prof->ip_len_add;
    uint32_t ip_min = prof->min_len - prof->l3_ofs;

    if (ip_bytes - ip_min > len - prof->min_len) {
        return false;
    }
    if (prof->tcp) {
        uint32_t doff = p[prof->l4_ofs + 12] >> 4;
        uint32_t ip_hlen = prof->l4_ofs - prof->l3_ofs;

        return doff - 5 <= ((ip_bytes - ip_hlen) >> 2) - 5;
    }
    return true;
}

static inline void
sp_mfex_profile_finish(const struct sp_mfex_profile *prof,
                       struct sp_packet *pkt, struct sp_flow_key *key)
{
    key->in_port = pkt->in_port;
    if (prof->ipv6) {
        const uint8_t *ip = pkt->data + prof->l3_ofs;

        key->nw_tos = (uint8_t)(ip[0] << 4 | ip[1] >> 4);
    }
    pkt->l3_ofs = prof->l3_ofs;
    pkt->l4_ofs = prof->l4_ofs;
    pkt->status = SP_MFEX_OK;
}

#endif /* SP_MFEX_PROFILE_H */
