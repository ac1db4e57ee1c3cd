/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract, the specification: a straight walk down the headers,
 * Ethernet -> VLAN tags -> ARP | IPv4 | IPv6 (extension chain) -> L4.
 * Each step first checks that its header is inside what is left of the
 * frame (IP: of the IP total or payload length), records its fields, then
 * moves on; the first check that fails sets the status and ends the walk.
 */
#include <stdbool.h>
#include <string.h>

#include "common/csum.h"
#include "common/proto.h"
#include "dispatch/isa.h"

#define VLAN_TAGS_MAX 2 /* outer tag recorded, inner one parsed past */

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

/* TCP, UDP, SCTP, ICMP or ICMPv6 at 'ofs'; 'proto' already in the key. */
static uint16_t
parse_l4(struct walk *w, uint32_t ofs, uint8_t proto, bool ipv6)
{
    const uint8_t *l4 = w->p + ofs;
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
        need = ipv6 ? 0 : SP_ICMP_HDR_LEN;
        break;
    case SP_IPPROTO_ICMPV6:
        need = ipv6 ? SP_ICMP_HDR_LEN : 0;
        break;
    default:
        need = 0;
        break;
    }
    if (need == 0 || ofs >= w->end) {
        return need == 0 ? SP_MFEX_OK : SP_MFEX_L4_TRUNCATED;
    }
    w->pkt->l4_ofs = (uint16_t)ofs;
    avail = w->end - ofs;
    if (avail < need) {
        return SP_MFEX_L4_TRUNCATED;
    }
    if (need == SP_ICMP_HDR_LEN) {
        w->key->tp_src = be16(l4[0]);
        w->key->tp_dst = be16(l4[1]);
        return SP_MFEX_OK;
    }
    memcpy(&w->key->tp_src, l4, 2);
    memcpy(&w->key->tp_dst, l4 + 2, 2);
    if (proto == SP_IPPROTO_TCP) {
        uint32_t doff = l4[12] >> 4;

        w->key->tcp_flags = be16(sp_load_be16(l4 + 12) & 0x0fff);
        if (doff < 5) {
            return SP_MFEX_L4_BAD_HLEN;
        }
        if (doff * 4 > avail) {
            return SP_MFEX_L4_TRUNCATED;
        }
    }
    return SP_MFEX_OK;
}

/* The fixed part of an IP header: present, and of the version its
 * Ethernet type promised. */
static uint16_t
check_ip_header(const uint8_t *ip, uint32_t avail, uint32_t len,
                unsigned version)
{
    if (avail < len) {
        return SP_MFEX_L3_TRUNCATED;
    }
    return ip[0] >> 4 == version ? SP_MFEX_OK : SP_MFEX_L3_BAD_VERSION;
}

static uint16_t
parse_ipv4(struct walk *w, uint32_t ofs)
{
    const uint8_t *ip = w->p + ofs;
    struct sp_flow_key *key = w->key;
    uint32_t avail = w->end - ofs;
    uint16_t status = check_ip_header(ip, avail, SP_IPV4_HDR_LEN, 4);
    uint32_t hlen, total;
    uint16_t frag;

    if (status != SP_MFEX_OK) {
        return status;
    }
    hlen = (ip[0] & 0x0fu) * 4;
    if (hlen < SP_IPV4_HDR_LEN) {
        return SP_MFEX_L3_BAD_HLEN;
    }
    if (hlen > avail) {
        return SP_MFEX_L3_TRUNCATED;
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
        }
    }
    total = sp_load_be16(ip + 2);
    if (total < hlen) {
        return SP_MFEX_L3_BAD_LEN;
    }
    if (total > avail) {
        return SP_MFEX_L3_TRUNCATED;
    }
    if (key->nw_frag & SP_FRAG_LATER) {
        return SP_MFEX_OK;
    }
    w->end = ofs + total; /* Ethernet padding is not L4 payload */
    return parse_l4(w, ofs + hlen, key->nw_proto, false);
}

static bool
is_ipv6_ext(uint8_t next)
{
    return next == SP_IPPROTO_HOPOPTS || next == SP_IPPROTO_ROUTING ||
           next == SP_IPPROTO_FRAGMENT || next == SP_IPPROTO_DSTOPTS;
}

static uint16_t
parse_ipv6(struct walk *w, uint32_t ofs)
{
    const uint8_t *ip = w->p + ofs;
    struct sp_flow_key *key = w->key;
    uint32_t avail = w->end - ofs;
    uint16_t status = check_ip_header(ip, avail, SP_IPV6_HDR_LEN, 6);
    uint32_t payload, word;
    uint8_t next;

    if (status != SP_MFEX_OK) {
        return status;
    }
    word = (uint32_t)ip[0] << 24 | (uint32_t)ip[1] << 16 |
           (uint32_t)ip[2] << 8 | ip[3];
    key->nw_tos = (uint8_t)(word >> 20);
    memcpy((uint8_t *)&key->ipv6_label + 1, ip + 1, 3);
    ((uint8_t *)&key->ipv6_label)[1] &= 0x0f;
    key->nw_ttl = ip[7];
    next = ip[6];
    key->nw_proto = next;
    memcpy(key->nw_src, ip + 8, 16);
    memcpy(key->nw_dst, ip + 24, 16);
    payload = sp_load_be16(ip + 4);
    if (payload > avail - SP_IPV6_HDR_LEN) {
        return SP_MFEX_L3_TRUNCATED;
    }
    w->end = ofs + SP_IPV6_HDR_LEN + payload;
    ofs += SP_IPV6_HDR_LEN;
    for (unsigned count = 0; is_ipv6_ext(next); count++) {
        const uint8_t *ext = w->p + ofs;
        uint32_t ext_len;

        if (count == SP_MFEX_IPV6_EXT_MAX) {
            return SP_MFEX_EXT_TOO_LONG;
        }
        if (w->end - ofs < SP_IPV6_EXT_HDR_LEN) {
            return SP_MFEX_EXT_TRUNCATED;
        }
        ext_len = next == SP_IPPROTO_FRAGMENT ? SP_IPV6_EXT_HDR_LEN
                                              : (ext[1] + 1u) * 8;
        if (w->end - ofs < ext_len) {
            return SP_MFEX_EXT_TRUNCATED;
        }
        if (next == SP_IPPROTO_FRAGMENT) {
            key->nw_frag = SP_FRAG_ANY;
            if (sp_load_be16(ext + 2) & SP_IPV6_FRAG_OFFSET) {
                key->nw_frag |= SP_FRAG_LATER;
            }
        }
        next = ext[0];
        key->nw_proto = next;
        ofs += ext_len;
        if (key->nw_frag & SP_FRAG_LATER) {
            return SP_MFEX_OK;
        }
    }
    return parse_l4(w, ofs, next, true);
}

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
        if (pkt->len - ofs < SP_VLAN_HDR_LEN) {
            return SP_MFEX_L2_TRUNCATED;
        }
        if (tags == 0) {
            key->vlan_tci = be16(sp_load_be16(w->p + ofs) | SP_VLAN_PRESENT);
        }
        type = sp_load_be16(w->p + ofs + 2);
        ofs += SP_VLAN_HDR_LEN;
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
        return parse_arp(w, ofs);
    case SP_ETH_TYPE_MPLS:
    case SP_ETH_TYPE_MPLS_MC:
        return SP_MFEX_L2_MPLS;
    default:
        return SP_MFEX_OK;
    }
}

static inline void
parse_packet(struct sp_packet *pkt, struct sp_flow_key *key)
{
    struct walk w = {pkt, key, pkt->data, pkt->len};

    memset(key, 0, sizeof *key);
    key->in_port = pkt->in_port;
    pkt->l3_ofs = SP_OFS_NONE;
    pkt->l4_ofs = SP_OFS_NONE;
    pkt->status = parse_frame(&w);
}

void
sp_scalar_mfex(struct sp_packet *const *pkts, uint32_t n,
               struct sp_flow_key *keys)
{
    for (uint32_t i = 0; i < n; i++) {
        parse_packet(pkts[i], &keys[i]);
    }
}

void
sp_scalar_mfex_lanes(struct sp_packet *const *pkts, uint32_t lanes,
                     struct sp_flow_key *keys)
{
    while (lanes) {
        unsigned i = (unsigned)__builtin_ctz(lanes);

        parse_packet(pkts[i], &keys[i]);
        lanes &= lanes - 1;
    }
}
