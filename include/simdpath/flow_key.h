/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow key ("miniflow"): one 64-byte cache line with a fixed place for
 * every L2-L4 field a rule can match. Fixed places make a masked key one
 * 512-bit AND and an equality test one 512-bit compare; a classifier
 * subtable is described by which of the 8 u64 blocks its mask touches.
 *
 * Byte order: every field is in network byte order exactly as on the wire,
 * except in_port (host order). Fields a packet does not have are zero.
 *
 * The first 14 bytes mirror an Ethernet header (dst, src, type), so the SIMD
 * parsers move them with one unshuffled copy.
 */
#ifndef SP_FLOW_KEY_H
#define SP_FLOW_KEY_H

#include <arpa/inet.h>
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define SP_FLOW_KEY_BLOCKS 8
#define SP_ETH_ADDR_LEN    6

/* vlan_tci carries this bit whenever a tag was present (OVS convention), so
 * "vlan_tci=0" means untagged; the wire DEI bit is not kept. */
#define SP_VLAN_PRESENT 0x1000
#define SP_VLAN_VID     0x0fff
#define SP_VLAN_PCP     0xe000

/* The inner VLAN tag (OVS's vlan_tci1, with the same present bit) has no
 * field of its own, as 16 bits no other field uses on any packet do not
 * exist together: its VID is the top 12 bits of ipv6_label, its PCP and
 * present bit the top 4 of tcp_flags. sp_key_vlan_tci1() and
 * sp_key_set_vlan_tci1() put it together and apart. */
#define SP_VLAN1_LABEL_SHIFT 20     /* VID: ipv6_label bits 31..20 */
#define SP_VLAN1_FLAGS_BITS  0xf000 /* PCP, present: tcp_flags 15..12 */
#define SP_TCP_FLAGS_BITS    0x0fff /* what tcp_flags has of TCP's */
#define SP_IPV6_LABEL_BITS   0x000fffff

/* nw_frag values. */
#define SP_FRAG_ANY   0x01 /* the packet is a fragment */
#define SP_FRAG_LATER 0x02 /* ...and not the first one: no L4 fields */

struct sp_flow_key {
    union {
        struct {
            uint8_t dl_dst[SP_ETH_ADDR_LEN]; /*  0 */
            uint8_t dl_src[SP_ETH_ADDR_LEN]; /*  6 */
            uint16_t dl_type;                /* 12: after VLAN tags */
            uint16_t vlan_tci;               /* 14: outer tag | PRESENT */
            uint16_t in_port;                /* 16: host byte order */
            uint16_t tcp_flags;              /* 18: low 12 bits; vlan1 */
            uint8_t nw_proto;                /* 20: IP proto; ARP opcode */
            uint8_t nw_tos;                  /* 21: DSCP|ECN, IPv6 TC */
            uint8_t nw_ttl;                  /* 22: TTL or hop limit */
            uint8_t nw_frag;                 /* 23: SP_FRAG_* */
            /* IPv6 source; IPv4 and ARP SPA use its first 4 bytes, ARP SHA
             * the 6 bytes after them; MPLS its first 4 for the top label
             * stack entry, whole, as OVS keeps it (an MPLS frame has no
             * L3 fields). */
            union {
                uint8_t nw_src[16]; /* 24 */
                uint32_t mpls_lse;  /* network order */
            };
            /* IPv6 destination; likewise IPv4/ARP TPA, then ARP THA. */
            uint8_t nw_dst[16]; /* 40 */
            uint32_t ipv6_label; /* 56: low 20 bits; vlan1 */
            uint16_t tp_src; /* 60: L4 port, ICMP type */
            uint16_t tp_dst; /* 62: L4 port, ICMP code */
        };
        uint64_t blocks[SP_FLOW_KEY_BLOCKS];
        uint8_t bytes[64];
    };
} __attribute__((aligned(64)));

/* Offsets inside nw_src/nw_dst used by ARP. */
#define SP_ARP_HA_OFS 4

#define SP_KEY_OFS(field) offsetof(struct sp_flow_key, field)

static_assert(sizeof(struct sp_flow_key) == 64, "key is one cache line");
static_assert(_Alignof(struct sp_flow_key) == 64, "key is line aligned");
static_assert(SP_KEY_OFS(dl_dst) == 0, "dl_dst");
static_assert(SP_KEY_OFS(dl_src) == 6, "dl_src");
static_assert(SP_KEY_OFS(dl_type) == 12, "dl_type");
static_assert(SP_KEY_OFS(vlan_tci) == 14, "vlan_tci");
static_assert(SP_KEY_OFS(in_port) == 16, "in_port");
static_assert(SP_KEY_OFS(tcp_flags) == 18, "tcp_flags");
static_assert(SP_KEY_OFS(nw_proto) == 20, "nw_proto");
static_assert(SP_KEY_OFS(nw_tos) == 21, "nw_tos");
static_assert(SP_KEY_OFS(nw_ttl) == 22, "nw_ttl");
static_assert(SP_KEY_OFS(nw_frag) == 23, "nw_frag");
static_assert(SP_KEY_OFS(nw_src) == 24, "nw_src");
static_assert(SP_KEY_OFS(nw_dst) == 40, "nw_dst");
static_assert(SP_KEY_OFS(ipv6_label) == 56, "ipv6_label");
static_assert(SP_KEY_OFS(mpls_lse) == 24, "mpls_lse");
static_assert(SP_KEY_OFS(tp_src) == 60, "tp_src");
static_assert(SP_KEY_OFS(tp_dst) == 62, "tp_dst");

/* The inner tag of a key (or mask), in host order, as vlan_tci's. */
static inline uint16_t
sp_key_vlan_tci1(const struct sp_flow_key *k)
{
    uint16_t flags = ntohs(k->tcp_flags);
    uint32_t label = ntohl(k->ipv6_label);

    return (uint16_t)((flags & SP_VLAN1_FLAGS_BITS) |
                      label >> SP_VLAN1_LABEL_SHIFT);
}

/* Sets the inner tag bits of a key (or mask) to 'tci', host order. */
static inline void
sp_key_set_vlan_tci1(struct sp_flow_key *k, uint16_t tci)
{
    uint16_t flags = ntohs(k->tcp_flags) & SP_TCP_FLAGS_BITS;
    uint32_t label = ntohl(k->ipv6_label) & SP_IPV6_LABEL_BITS;

    k->tcp_flags = htons((uint16_t)(flags | (tci & SP_VLAN1_FLAGS_BITS)));
    k->ipv6_label =
        htonl(label | (uint32_t)(tci & SP_VLAN_VID) << SP_VLAN1_LABEL_SHIFT);
}

/* Which 8-byte block a field starts in. */
#define SP_KEY_BLOCK(field) (SP_KEY_OFS(field) / 8)

#endif /* SP_FLOW_KEY_H */
