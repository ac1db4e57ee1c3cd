/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protocol constants: header lengths, offsets, Ethernet types and IP
 * protocol numbers, as the RFCs and IEEE 802.1Q define them. One copy for
 * the parsers, the rewrite kernels, the actions and the rule checks.
 */
#ifndef SP_PROTO_H
#define SP_PROTO_H

/* Ethernet (IEEE 802.3, 802.1Q) */
#define SP_ETH_HDR_LEN   14
#define SP_ETH_ADDRS_LEN 12 /* destination and source */
#define SP_VLAN_HDR_LEN  4

#define SP_ETH_TYPE_IPV4    0x0800
#define SP_ETH_TYPE_ARP     0x0806
#define SP_ETH_TYPE_RARP    0x8035
#define SP_ETH_TYPE_VLAN    0x8100
#define SP_ETH_TYPE_QINQ    0x88a8
#define SP_ETH_TYPE_IPV6    0x86dd
#define SP_ETH_TYPE_MPLS    0x8847
#define SP_ETH_TYPE_MPLS_MC 0x8848
#define SP_ETH_TYPE_LLDP    0x88cc /* one no rule shorthand names */
/* Below this the type field is an 802.3 length (IEEE 802.3 3.2.6). */
#define SP_ETH_TYPE_MIN 0x0600
/* OpenFlow's dl_type for an 802.3 frame without a SNAP Ethernet type
 * (OFP_DL_TYPE_NOT_ETH_TYPE). */
#define SP_ETH_TYPE_NONE 0x05ff

/* 802.2 LLC with a SNAP header of the Ethernet organisation (RFC 1042):
 * AA AA 03, OUI 00 00 00, then an Ethernet type. */
#define SP_LLC_SNAP_LEN 8

/* MPLS (RFC 3032): label stack entries of 4 bytes, bottom of stack bit */
#define SP_MPLS_LSE_LEN     4
#define SP_MPLS_LABEL_SHIFT 12
#define SP_MPLS_TC_SHIFT    9
#define SP_MPLS_BOS_SHIFT   8

/* ARP for IPv4 over Ethernet (RFC 826) */
#define SP_ARP_LEN 28

/* IPv4 (RFC 791): the header without options, and its fields' offsets */
#define SP_IPV4_HDR_LEN     20
#define SP_IPV4_TTL_OFS     8
#define SP_IPV4_PROTO_OFS   9
#define SP_IPV4_CSUM_OFS    10
#define SP_IPV4_SRC_OFS     12
#define SP_IPV4_DST_OFS     16
#define SP_IPV4_FRAG_OFFSET 0x1fff /* of the flags and fragment offset */
#define SP_IPV4_FRAG_MF     0x2000

/* IPv6 (RFC 8200) */
#define SP_IPV6_HDR_LEN     40
#define SP_IPV6_EXT_HDR_LEN 8      /* the shortest extension header */
#define SP_IPV6_FRAG_OFFSET 0xfff8 /* of the fragment header's word 1 */

/* IP protocol numbers (IANA) */
#define SP_IPPROTO_HOPOPTS  0
#define SP_IPPROTO_ICMP     1
#define SP_IPPROTO_IGMP     2
#define SP_IPPROTO_TCP      6
#define SP_IPPROTO_UDP      17
#define SP_IPPROTO_ROUTING  43
#define SP_IPPROTO_FRAGMENT 44
#define SP_IPPROTO_ICMPV6   58
#define SP_IPPROTO_AH       51
#define SP_IPPROTO_DSTOPTS  60
#define SP_IPPROTO_SCTP     132

/* L4 headers (TCP without options) */
#define SP_TCP_HDR_LEN  20
#define SP_UDP_HDR_LEN  8
#define SP_SCTP_HDR_LEN 12
#define SP_ICMP_HDR_LEN 4
/* Where their checksums are, from the start of the header */
#define SP_TCP_CSUM_OFS 16
#define SP_UDP_CSUM_OFS 6
/* What OVS requires before it takes ICMP, ICMPv6 and IGMP type and code:
 * the 4 bytes above and the 4 that follow them. */
#define SP_ICMP_MIN_LEN 8

#endif /* SP_PROTO_H */
