/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal: miniflow extract, the specification, as static functions that
 * src/scalar/mfex.c runs in its loops and a SIMD kernel may run in a loop
 * of its own (src/neon/mfex.c, for a batch no profile takes).
 *
 * A straight walk down the headers, Ethernet -> VLAN tags -> LLC/SNAP ->
 * MPLS | ARP | IPv4 | IPv6 (extension chain) -> L4, with OVS's meaning
 * (lib/flow.c, miniflow_extract): the key is the flow OVS extracts from
 * the same bytes, field for field, so a rule matches what it matches in
 * OVS. Each step checks that its header is inside what is left of the
 * frame (IP: of the IP total or payload length); where OVS does not trust
 * a header it records none of its fields and the walk ends with a status
 * naming the anomaly. An IP version that does not match the type is one
 * OVS reads on past, as this walk does: its status comes before any later
 * one.
 */
#ifndef SP_GENERIC_MFEX_SCALAR_H
#define SP_GENERIC_MFEX_SCALAR_H

#include <stdbool.h>
#include <string.h>

#include "common/csum.h"
#include "common/proto.h"
#include "simdpath/kernels.h"

#define VLAN_TAGS_MAX 2 /* as OVS's FLOW_MAX_VLAN_HEADERS */

/* Where the walk is: the packet, its key, and the end of the bytes the
 * current layer may use (the frame, then the IP total length). */
struct walk {
    struct sp_packet *pkt;
    struct sp_flow_key *key;
    const uint8_t *p;
    uint32_t end;
};

/* A 16-bit value in network order, for a key field (little-endian hosts,
 * as every simdpath target). */
static uint16_t
be16(uint16_t host)
{
    return (uint16_t)(host << 8 | host >> 8);
}

static bool
is_vlan_type(uint16_t type)
{
    return type == SP_ETH_TYPE_VLAN || type == SP_ETH_TYPE_QINQ;
}

/* The L4 header OVS reads for 'proto', whatever the IP version, as OVS:
 * ports, or type and code. 'proto' is already in the key. */
static uint16_t
parse_l4(struct walk *w, uint32_t ofs, uint8_t proto)
{
    const uint8_t *l4 = w->p + ofs;
    bool type_code = false; /* ICMP, ICMPv6, IGMP */
    uint32_t avail;
    uint32_t need;

    switch (proto) {
    case SP_IPPROTO_TCP:
        need = SP_TCP_HDR_LEN;
        break;
    case SP_IPPROTO_UDP:
        need = SP_UDP_HDR_LEN;
        break;
    case SP_IPPROTO_SCTP:
        need = SP_SCTP_HDR_LEN;
        break;
    case SP_IPPROTO_ICMP:
    case SP_IPPROTO_ICMPV6:
    case SP_IPPROTO_IGMP:
        need = SP_ICMP_MIN_LEN;
        type_code = true;
        break;
    default:
        return SP_MFEX_OK;
    }
    if (ofs >= w->end) {
        return SP_MFEX_L4_TRUNCATED;
    }
    w->pkt->l4_ofs = (uint16_t)ofs;
    avail = w->end - ofs;
    if (avail < need) {
        return SP_MFEX_L4_TRUNCATED;
    }
    if (type_code) {
        w->key->tp_src = be16(l4[0]);
        w->key->tp_dst = be16(l4[1]);
        return SP_MFEX_OK;
    }
    if (proto == SP_IPPROTO_TCP) {
        uint32_t doff = l4[12] >> 4;

        /* OVS takes no TCP field from a header whose length is wrong. */
        if (doff < 5) {
            return SP_MFEX_L4_BAD_HLEN;
        }
        if (doff * 4 > avail) {
            return SP_MFEX_L4_TRUNCATED;
        }
        /* ORed: the top bits are the inner VLAN tag's. */
        w->key->tcp_flags |= be16(sp_load_be16(l4 + 12) & SP_TCP_FLAGS_BITS);
    }
    memcpy(&w->key->tp_src, l4, 2);
    memcpy(&w->key->tp_dst, l4 + 2, 2);
    return SP_MFEX_OK;
}

/* The anomaly for which OVS does not take the IPv4 header at 'ip' (its
 * ipv4_sanity_check), or SP_MFEX_OK with its header and total lengths.
 * OVS also refuses a header more than 64 KiB before the frame's end (its
 * padding length is 16 bits): such frames reach neither its datapath nor
 * its pcap reader, and the SIMD parsers would pay a compare per packet for
 * them, so that check is left out here and for IPv6. */
static uint16_t
check_ipv4(const uint8_t *ip, uint32_t avail, uint32_t *hlen, uint32_t *total)
{
    if (avail < SP_IPV4_HDR_LEN) {
        return SP_MFEX_L3_TRUNCATED;
    }
    *hlen = (ip[0] & 0x0fu) * 4;
    if (*hlen < SP_IPV4_HDR_LEN) {
        return SP_MFEX_L3_BAD_HLEN;
    }
    if (*hlen > avail) {
        return SP_MFEX_L3_TRUNCATED;
    }
    *total = sp_load_be16(ip + 2);
    if (*total < *hlen) {
        return SP_MFEX_L3_BAD_LEN;
    }
    if (*total > avail) {
        return SP_MFEX_L3_TRUNCATED;
    }
    return SP_MFEX_OK;
}

/* The status of an IP header of the wrong version that OVS parses on: that
 * anomaly comes before any after it. */
static uint16_t
after_version(const uint8_t *ip, unsigned version, uint16_t status)
{
    return ip[0] >> 4 == version ? status : SP_MFEX_L3_BAD_VERSION;
}

/* parse_l4, after an IP header of 'version': a tail call when the version
 * is right, as it nearly always is. */
static inline uint16_t
parse_l4_after(struct walk *w, uint32_t ofs, uint8_t proto, const uint8_t *ip,
               unsigned version)
{
    if (__builtin_expect(ip[0] >> 4 == version, 1)) {
        return parse_l4(w, ofs, proto);
    }
    parse_l4(w, ofs, proto);
    return SP_MFEX_L3_BAD_VERSION;
}

static uint16_t
parse_ipv4(struct walk *w, uint32_t ofs)
{
    const uint8_t *ip = w->p + ofs;
    struct sp_flow_key *key = w->key;
    uint32_t hlen, total;
    uint16_t status = check_ipv4(ip, w->end - ofs, &hlen, &total);
    uint16_t frag;

    if (status != SP_MFEX_OK) {
        return status;
    }
    key->nw_tos = ip[1];
    key->nw_ttl = ip[8];
    key->nw_proto = ip[9];
    memcpy(key->nw_src, ip + 12, 4);
    memcpy(key->nw_dst, ip + 16, 4);
    frag = sp_load_be16(ip + 6);
    if (frag & (SP_IPV4_FRAG_MF | SP_IPV4_FRAG_OFFSET)) {
        key->nw_frag = SP_FRAG_ANY;
        if (frag & SP_IPV4_FRAG_OFFSET) {
            key->nw_frag |= SP_FRAG_LATER;
            return after_version(ip, 4, SP_MFEX_OK);
        }
    }
    w->end = ofs + total; /* Ethernet padding is not L4 payload */
    return parse_l4_after(w, ofs + hlen, key->nw_proto, ip, 4);
}

/* The length of the extension header 'ext' of type 'next', or 0 when
 * 'next' is not one OVS parses past. */
static uint32_t
ipv6_ext_len(uint8_t next, const uint8_t *ext)
{
    switch (next) {
    case SP_IPPROTO_HOPOPTS:
    case SP_IPPROTO_ROUTING:
    case SP_IPPROTO_DSTOPTS:
        return (ext[1] + 1u) * 8;
    case SP_IPPROTO_AH:
        return (ext[1] + 2u) * 4; /* in 4-byte words, RFC 4302 */
    case SP_IPPROTO_FRAGMENT:
        return SP_IPV6_EXT_HDR_LEN;
    default:
        return 0;
    }
}

/* The extension headers OVS parses past, as a set of protocol numbers
 * (all below 64): one test per header instead of five. */
#define IPV6_EXT_SET                                                         \
    (UINT64_C(1) << SP_IPPROTO_HOPOPTS | UINT64_C(1) << SP_IPPROTO_ROUTING | \
     UINT64_C(1) << SP_IPPROTO_FRAGMENT | UINT64_C(1) << SP_IPPROTO_AH |     \
     UINT64_C(1) << SP_IPPROTO_DSTOPTS)

static bool
is_ipv6_ext(uint8_t next)
{
    return next < 64 && (IPV6_EXT_SET >> next & 1);
}

/* Walks the extension chain from 'ofs' as OVS's parse_ipv6_ext_hdrs__:
 * false when one is cut short. On success *next is the L4 protocol (that
 * of the fragment header for a later fragment, as OVS) and *ofs its
 * offset. No length limits the chain but the packet's. */
static bool
walk_ipv6_ext(struct walk *w, uint32_t *ofs, uint8_t *next, uint8_t *frag)
{
    while (is_ipv6_ext(*next)) {
        const uint8_t *ext = w->p + *ofs;
        uint32_t ext_len;

        if (w->end - *ofs < SP_IPV6_EXT_HDR_LEN) {
            return false;
        }
        ext_len = ipv6_ext_len(*next, ext);
        if (w->end - *ofs < ext_len) {
            return false;
        }
        *ofs += ext_len;
        if (*next == SP_IPPROTO_FRAGMENT && sp_load_be16(ext + 2)) {
            *frag = SP_FRAG_ANY;
            if (sp_load_be16(ext + 2) & SP_IPV6_FRAG_OFFSET) {
                *frag |= SP_FRAG_LATER;
                return true; /* nw_proto stays "fragment" */
            }
        }
        *next = ext[0];
    }
    return true;
}

static uint16_t
parse_ipv6(struct walk *w, uint32_t ofs)
{
    const uint8_t *ip = w->p + ofs;
    struct sp_flow_key *key = w->key;
    uint32_t avail = w->end - ofs;
    uint32_t payload, word;
    uint8_t next, frag = 0;

    if (avail < SP_IPV6_HDR_LEN) {
        return SP_MFEX_L3_TRUNCATED;
    }
    payload = sp_load_be16(ip + 4);
    if (payload > avail - SP_IPV6_HDR_LEN) {
        return SP_MFEX_L3_TRUNCATED;
    }
    word = (uint32_t)ip[0] << 24 | (uint32_t)ip[1] << 16 |
           (uint32_t)ip[2] << 8 | ip[3];
    key->nw_tos = (uint8_t)(word >> 20);
    /* Bytes 1-3, byte 1's high nibble the inner VLAN tag's. */
    ((uint8_t *)&key->ipv6_label)[1] |= ip[1] & 0x0f;
    memcpy((uint8_t *)&key->ipv6_label + 2, ip + 2, 2);
    key->nw_ttl = ip[7];
    next = ip[6];
    memcpy(key->nw_src, ip + 8, 16);
    memcpy(key->nw_dst, ip + 24, 16);
    w->end = ofs + SP_IPV6_HDR_LEN + payload;
    ofs += SP_IPV6_HDR_LEN;
    if (!walk_ipv6_ext(w, &ofs, &next, &frag)) {
        /* OVS keeps the addresses of a packet whose chain is cut short,
         * and nothing after them. */
        memset(&key->nw_proto, 0, 4);
        key->ipv6_label &= ~htonl(SP_IPV6_LABEL_BITS);
        return after_version(ip, 6, SP_MFEX_EXT_TRUNCATED);
    }
    key->nw_proto = next;
    key->nw_frag = frag;
    if (frag & SP_FRAG_LATER) {
        return after_version(ip, 6, SP_MFEX_OK);
    }
    return parse_l4_after(w, ofs, next, ip, 6);
}

/* ARP or RARP: OVS takes the fields of Ethernet/IPv4 sizes only. */
static uint16_t
parse_arp(struct walk *w, uint32_t ofs)
{
    const uint8_t *arp = w->p + ofs;
    struct sp_flow_key *key = w->key;
    uint16_t op;

    if (w->end - ofs < SP_ARP_LEN) {
        return SP_MFEX_ARP_TRUNCATED;
    }
    /* Ethernet hardware, IPv4 protocol, 6- and 4-byte addresses. */
    if (sp_load_be16(arp) != 1 || sp_load_be16(arp + 2) != SP_ETH_TYPE_IPV4 ||
        arp[4] != 6 || arp[5] != 4) {
        return SP_MFEX_ARP_UNSUPPORTED;
    }
    op = sp_load_be16(arp + 6);
    key->nw_proto = op <= UINT8_MAX ? (uint8_t)op : 0;
    memcpy(key->nw_src + SP_ARP_HA_OFS, arp + 8, 6);
    memcpy(key->nw_src, arp + 14, 4);
    memcpy(key->nw_dst + SP_ARP_HA_OFS, arp + 18, 6);
    memcpy(key->nw_dst, arp + 24, 4);
    return SP_MFEX_OK;
}

/* The label stack: the top entry in the key, the rest parsed past. */
static uint16_t
parse_mpls(struct walk *w, uint32_t ofs)
{
    if (w->end - ofs >= SP_MPLS_LSE_LEN) {
        memcpy(&w->key->mpls_lse, w->p + ofs, SP_MPLS_LSE_LEN);
    }
    return SP_MFEX_L2_MPLS;
}

/* The type of an 802.3 frame (a length before 'ofs'), as OVS's
 * parse_ethertype: a SNAP header's Ethernet type, the header
 * SP_LLC_SNAP_LEN bytes long, or SP_ETH_TYPE_NONE. */
static uint16_t
llc_type(const struct walk *w, uint32_t ofs)
{
    static const uint8_t snap[6] = {0xaa, 0xaa, 0x03, 0, 0, 0};
    const uint8_t *llc = w->p + ofs;
    uint16_t type;

    if (w->end - ofs < SP_LLC_SNAP_LEN || memcmp(llc, snap, sizeof snap)) {
        return SP_ETH_TYPE_NONE;
    }
    type = sp_load_be16(llc + 6);
    return type >= SP_ETH_TYPE_MIN ? type : SP_ETH_TYPE_NONE;
}

static uint16_t
parse_frame(struct walk *w)
{
    struct sp_packet *pkt = w->pkt;
    struct sp_flow_key *key = w->key;
    uint32_t ofs = SP_ETH_HDR_LEN;
    uint16_t type;

    if (pkt->len < SP_ETH_HDR_LEN) {
        return SP_MFEX_L2_TRUNCATED;
    }
    memcpy(key->dl_dst, w->p, 2 * SP_ETH_ADDR_LEN);
    type = sp_load_be16(w->p + 12);
    for (unsigned tags = 0; tags < VLAN_TAGS_MAX && is_vlan_type(type);
         tags++) {
        uint16_t tci;

        /* A tag cut short is not parsed: its TPID is the type, as OVS. */
        if (pkt->len - ofs < SP_VLAN_HDR_LEN) {
            key->dl_type = be16(type);
            return SP_MFEX_L2_TRUNCATED;
        }
        tci = sp_load_be16(w->p + ofs) | SP_VLAN_PRESENT;
        if (tags == 0) {
            key->vlan_tci = be16(tci);
        } else {
            /* Where flow_key.h puts the inner tag; both fields are still
             * zero. */
            key->tcp_flags = be16(tci & SP_VLAN1_FLAGS_BITS);
            key->ipv6_label =
                htonl((uint32_t)(tci & SP_VLAN_VID) << SP_VLAN1_LABEL_SHIFT);
        }
        type = sp_load_be16(w->p + ofs + 2);
        ofs += SP_VLAN_HDR_LEN;
    }
    if (__builtin_expect(type < SP_ETH_TYPE_MIN, 0)) {
        type = llc_type(w, ofs);
        ofs += type == SP_ETH_TYPE_NONE ? 0 : SP_LLC_SNAP_LEN;
    }
    key->dl_type = be16(type);
    switch (type) {
    case SP_ETH_TYPE_IPV4:
    case SP_ETH_TYPE_IPV6:
        if (ofs < pkt->len) {
            pkt->l3_ofs = (uint16_t)ofs;
        }
        return type == SP_ETH_TYPE_IPV4 ? parse_ipv4(w, ofs)
                                        : parse_ipv6(w, ofs);
    case SP_ETH_TYPE_ARP:
    case SP_ETH_TYPE_RARP:
        return parse_arp(w, ofs);
    case SP_ETH_TYPE_MPLS:
    case SP_ETH_TYPE_MPLS_MC:
        return parse_mpls(w, ofs);
    default:
        return SP_MFEX_OK;
    }
}

/* Returns 1 if the packet's status is not SP_MFEX_OK, else 0. */
static inline uint32_t
parse_packet(struct sp_packet *pkt, struct sp_flow_key *key)
{
    struct walk w = {pkt, key, pkt->data, pkt->len};

    memset(key, 0, sizeof *key);
    key->in_port = pkt->in_port;
    pkt->l3_ofs = SP_OFS_NONE;
    pkt->l4_ofs = SP_OFS_NONE;
    pkt->status = parse_frame(&w);
    return pkt->status != SP_MFEX_OK;
}

/* The parser on n packets, and on the packets whose bits are set in lanes:
 * the loops of src/scalar/mfex.c, and of a SIMD kernel that runs them in
 * its own code (src/neon/mfex.c). Each returns how many it left with a
 * status other than SP_MFEX_OK. */
static inline uint32_t
parse_packets(struct sp_packet *const *pkts, uint32_t n,
              struct sp_flow_key *keys)
{
    uint32_t errors = 0;

    for (uint32_t i = 0; i < n; i++) {
        errors += parse_packet(pkts[i], &keys[i]);
    }
    return errors;
}

static inline uint32_t
parse_lanes(struct sp_packet *const *pkts, uint32_t lanes,
            struct sp_flow_key *keys)
{
    uint32_t errors = 0;

    while (lanes) {
        unsigned i = (unsigned)__builtin_ctz(lanes);

        errors += parse_packet(pkts[i], &keys[i]);
        lanes &= lanes - 1;
    }
    return errors;
}

#endif /* SP_GENERIC_MFEX_SCALAR_H */
