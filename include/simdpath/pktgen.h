/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Builds realistic packets of every shape the parser knows, with seeded
 * random addresses, ports, flags and payload: for tests, the self-check and
 * benchmarks. Every packet is at least 60 bytes (Ethernet padding added),
 * like a frame received without its FCS.
 */
#ifndef SP_PKTGEN_H
#define SP_PKTGEN_H

#include <stddef.h>
#include <stdint.h>

#include "simdpath/random.h"

/* Room for the largest packet sp_pktgen() builds. */
#define SP_PKTGEN_MAX 1024

/* X(id, name): the shapes; the first eight are the SIMD profiles' ones. */
#define SP_PKTGEN_SHAPES(X)                                       \
    X(IPV4_UDP, "eth/ipv4/udp")                                   \
    X(IPV4_TCP, "eth/ipv4/tcp")                                   \
    X(VLAN_IPV4_UDP, "eth/vlan/ipv4/udp")                         \
    X(VLAN_IPV4_TCP, "eth/vlan/ipv4/tcp")                         \
    X(IPV6_UDP, "eth/ipv6/udp")                                   \
    X(IPV6_TCP, "eth/ipv6/tcp")                                   \
    X(VLAN_IPV6_UDP, "eth/vlan/ipv6/udp")                         \
    X(VLAN_IPV6_TCP, "eth/vlan/ipv6/tcp")                         \
    X(QINQ_IPV4_UDP, "eth/qinq/ipv4/udp")                         \
    X(QINQ_IPV6_TCP, "eth/qinq/ipv6/tcp")                         \
    X(IPV4_OPTS_TCP, "eth/ipv4+options/tcp+options")              \
    X(IPV4_SCTP, "eth/ipv4/sctp")                                 \
    X(IPV4_ICMP, "eth/ipv4/icmp")                                 \
    X(IPV4_FRAG_FIRST, "eth/ipv4/first fragment/udp")             \
    X(IPV4_FRAG_LATER, "eth/ipv4/later fragment")                 \
    X(IPV4_OTHER, "eth/ipv4/gre")                                 \
    X(IPV6_ICMP, "eth/ipv6/icmpv6")                               \
    X(IPV6_SCTP, "eth/ipv6/sctp")                                 \
    X(IPV6_EXT_TCP, "eth/ipv6/hop-by-hop,routing,dest/tcp")       \
    X(IPV6_FRAG_FIRST, "eth/ipv6/first fragment/udp")             \
    X(IPV6_FRAG_LATER, "eth/ipv6/later fragment")                 \
    X(IPV6_LONG_CHAIN, "eth/ipv6/too many extension headers/udp") \
    X(ARP, "eth/arp")                                             \
    X(MPLS, "eth/mpls")                                           \
    X(OTHER, "eth/other type")

enum sp_pktgen_shape {
#define SP_PKTGEN_SHAPE_ENUM(id, name) SP_PKTGEN_##id,
    SP_PKTGEN_SHAPES(SP_PKTGEN_SHAPE_ENUM)
#undef SP_PKTGEN_SHAPE_ENUM
        SP_PKTGEN_SHAPE_COUNT
};

/* The shapes the SIMD parsers have a profile for come first. */
#define SP_PKTGEN_PROFILE_SHAPES 8

const char *sp_pktgen_shape_name(enum sp_pktgen_shape shape);

/* Writes one packet of 'shape' to buf (SP_PKTGEN_MAX bytes) and returns
 * its length. Random choices come from rng. */
size_t sp_pktgen(enum sp_pktgen_shape shape, struct sp_random *rng,
                 uint8_t *buf);

#endif /* SP_PKTGEN_H */
