/* SPDX-License-Identifier: BSD-3-Clause */
/* Packets of every shape, header by header; lengths and checksums as a
 * sender would write them (checksums are not checked by the parser and
 * left zero). */
#include <stdbool.h>
#include <string.h>

#include "common/csum.h"
#include "common/proto.h"
#include "simdpath/pktgen.h"

#define ETH_MIN_FRAME 60 /* without FCS */
#define PAYLOAD_MAX   200

struct builder {
    uint8_t *buf;
    size_t len;
    struct sp_random *rng;
};

static const char *const shape_names[] = {
#define SP_PKTGEN_SHAPE_NAME(id, name) name,
    SP_PKTGEN_SHAPES(SP_PKTGEN_SHAPE_NAME)
#undef SP_PKTGEN_SHAPE_NAME
};

const char *
sp_pktgen_shape_name(enum sp_pktgen_shape shape)
{
    return shape < SP_PKTGEN_SHAPE_COUNT ? shape_names[shape] : "unknown";
}

static uint8_t *
put(struct builder *b, size_t len)
{
    uint8_t *p = b->buf + b->len;

    memset(p, 0, len);
    b->len += len;
    return p;
}

static void
put_random(struct builder *b, size_t len)
{
    sp_random_fill(b->rng, put(b, len), len);
}

static uint32_t
below(struct builder *b, uint32_t bound)
{
    return sp_random_below(b->rng, bound);
}

static void
eth(struct builder *b, unsigned tags, uint16_t outer_tpid, uint16_t type)
{
    uint8_t *h = put(b, 12);

    sp_random_fill(b->rng, h, 12);
    h[0] &= 0xfe; /* unicast destination, mostly */
    for (unsigned t = 0; t < tags; t++) {
        uint8_t *tag = put(b, 4);

        sp_store_be16(tag, t == 0 ? outer_tpid : SP_ETH_TYPE_VLAN);
        sp_store_be16(tag + 2, below(b, 0x10000));
    }
    sp_store_be16(put(b, 2), type);
}

/* An IPv4 header with 'opt_words' words of options; returns it so the
 * caller fills the total length once the payload is known. */
static uint8_t *
ipv4(struct builder *b, uint8_t proto, unsigned opt_words, uint16_t frag)
{
    uint8_t *ip = put(b, 20 + 4 * opt_words);

    ip[0] = (uint8_t)(0x40 | (5 + opt_words));
    ip[1] = (uint8_t)below(b, 256);
    sp_store_be16(ip + 4, below(b, 0x10000));
    sp_store_be16(ip + 6, frag);
    ip[8] = (uint8_t)(1 + below(b, 255));
    ip[9] = proto;
    sp_random_fill(b->rng, ip + 12, 8);
    memset(ip + 20, 1, 4 * opt_words); /* NOP options */
    return ip;
}

static uint8_t *
ipv6(struct builder *b, uint8_t next)
{
    uint8_t *ip = put(b, 40);
    uint32_t tc_label = below(b, 1u << 28);

    ip[0] = (uint8_t)(0x60 | tc_label >> 24);
    ip[1] = (uint8_t)(tc_label >> 16);
    sp_store_be16(ip + 2, tc_label);
    ip[6] = next;
    ip[7] = (uint8_t)(1 + below(b, 255));
    sp_random_fill(b->rng, ip + 8, 32);
    return ip;
}

/* One IPv6 extension header of 'len' bytes (a multiple of 8). */
static void
ipv6_ext(struct builder *b, uint8_t next, size_t len)
{
    uint8_t *ext = put(b, len);

    ext[0] = next;
    ext[1] = (uint8_t)(len / 8 - 1);
}

static void
ipv6_frag(struct builder *b, uint8_t next, bool later)
{
    uint8_t *ext = put(b, 8);

    ext[0] = next;
    sp_store_be16(ext + 2, later ? (1 + below(b, 0x1fff)) << 3 | below(b, 2)
                                 : 1); /* offset 0, more fragments */
    sp_random_fill(b->rng, ext + 4, 4);
}

static void
tcp(struct builder *b, unsigned opt_words)
{
    uint8_t *h = put(b, 20 + 4 * opt_words);

    sp_random_fill(b->rng, h, 14);
    h[12] = (uint8_t)((5 + opt_words) << 4 | (h[12] & 0x0f));
    memset(h + 20, 1, 4 * opt_words);
}

static void
udp(struct builder *b, size_t payload)
{
    uint8_t *h = put(b, 8);

    sp_random_fill(b->rng, h, 4);
    sp_store_be16(h + 4, 8 + payload);
}

static void
l4(struct builder *b, uint8_t proto, size_t payload)
{
    switch (proto) {
    case 6:
        tcp(b, below(b, 4) == 0 ? below(b, 11) : 0);
        break;
    case 17:
        udp(b, payload);
        break;
    case 132:
        put_random(b, 12);
        break;
    default: /* ICMP, ICMPv6: type, code, checksum, rest */
        put_random(b, 8);
        break;
    }
}

static void
arp(struct builder *b)
{
    uint8_t *a = put(b, 28);

    sp_store_be16(a, 1);
    sp_store_be16(a + 2, SP_ETH_TYPE_IPV4);
    a[4] = 6;
    a[5] = 4;
    sp_store_be16(a + 6, 1 + below(b, 2));
    sp_random_fill(b->rng, a + 8, 20);
}

/* Payload, the IP length fields, then Ethernet padding. */
static void
finish(struct builder *b, uint8_t *ip4, uint8_t *ip6, size_t payload)
{
    put_random(b, payload);
    if (ip4) {
        sp_store_be16(ip4 + 2, (uint32_t)(b->buf + b->len - ip4));
    }
    if (ip6) {
        sp_store_be16(ip6 + 4, (uint32_t)(b->buf + b->len - ip6 - 40));
    }
    if (b->len < ETH_MIN_FRAME) {
        put(b, ETH_MIN_FRAME - b->len);
    }
}

/* IPv4 with a given L4 protocol, optional tags and options. */
static void
ipv4_packet(struct builder *b, unsigned tags, uint8_t proto,
            unsigned opt_words, uint16_t frag, size_t payload)
{
    uint8_t *ip;

    eth(b, tags, tags > 1 ? SP_ETH_TYPE_QINQ : SP_ETH_TYPE_VLAN,
        SP_ETH_TYPE_IPV4);
    ip = ipv4(b, proto, opt_words, frag);
    if (!(frag & 0x1fff)) {
        l4(b, proto, payload);
    }
    finish(b, ip, NULL, payload);
}

static void
ipv6_packet(struct builder *b, unsigned tags, uint8_t proto, size_t payload)
{
    uint8_t *ip;

    eth(b, tags, tags > 1 ? SP_ETH_TYPE_QINQ : SP_ETH_TYPE_VLAN,
        SP_ETH_TYPE_IPV6);
    ip = ipv6(b, proto);
    l4(b, proto, payload);
    finish(b, NULL, ip, payload);
}

static bool
is_vlan(enum sp_pktgen_shape shape)
{
    return shape == SP_PKTGEN_VLAN_IPV4_UDP ||
           shape == SP_PKTGEN_VLAN_IPV4_TCP ||
           shape == SP_PKTGEN_VLAN_IPV6_UDP ||
           shape == SP_PKTGEN_VLAN_IPV6_TCP;
}

static bool
is_tcp(enum sp_pktgen_shape shape)
{
    return shape == SP_PKTGEN_IPV4_TCP || shape == SP_PKTGEN_VLAN_IPV4_TCP ||
           shape == SP_PKTGEN_IPV6_TCP || shape == SP_PKTGEN_VLAN_IPV6_TCP;
}

size_t
sp_pktgen(enum sp_pktgen_shape shape, struct sp_random *rng, uint8_t *buf)
{
    struct builder b = {buf, 0, rng};
    size_t payload = below(&b, PAYLOAD_MAX);
    uint8_t *ip;

    switch (shape) {
    case SP_PKTGEN_IPV4_UDP:
    case SP_PKTGEN_IPV4_TCP:
    case SP_PKTGEN_VLAN_IPV4_UDP:
    case SP_PKTGEN_VLAN_IPV4_TCP:
        /* Don't-fragment set or not: both are "not a fragment". */
        ipv4_packet(&b, is_vlan(shape), is_tcp(shape) ? 6 : 17, 0,
                    below(&b, 2) ? 0x4000 : 0, payload);
        break;
    case SP_PKTGEN_IPV6_UDP:
    case SP_PKTGEN_IPV6_TCP:
    case SP_PKTGEN_VLAN_IPV6_UDP:
    case SP_PKTGEN_VLAN_IPV6_TCP:
        ipv6_packet(&b, is_vlan(shape), is_tcp(shape) ? 6 : 17, payload);
        break;
    case SP_PKTGEN_QINQ_IPV4_UDP:
        ipv4_packet(&b, 2, 17, 0, 0, payload);
        break;
    case SP_PKTGEN_QINQ_IPV6_TCP:
        ipv6_packet(&b, 2, 6, payload);
        break;
    case SP_PKTGEN_IPV4_OPTS_TCP:
        ipv4_packet(&b, 0, 6, 1 + below(&b, 10), 0, payload);
        break;
    case SP_PKTGEN_IPV4_SCTP:
        ipv4_packet(&b, 0, 132, 0, 0, payload);
        break;
    case SP_PKTGEN_IPV4_ICMP:
        ipv4_packet(&b, 0, 1, 0, 0, payload);
        break;
    case SP_PKTGEN_IPV4_FRAG_FIRST:
        ipv4_packet(&b, 0, 17, 0, 0x2000, payload);
        break;
    case SP_PKTGEN_IPV4_FRAG_LATER:
        ipv4_packet(&b, 0, 17, 0,
                    (uint16_t)(1 + below(&b, 0x1fff)) |
                        (below(&b, 2) ? 0x2000 : 0),
                    payload);
        break;
    case SP_PKTGEN_IPV4_OTHER:
        ipv4_packet(&b, 0, 47, 0, 0, payload);
        break;
    case SP_PKTGEN_IPV6_ICMP:
        ipv6_packet(&b, 0, 58, payload);
        break;
    case SP_PKTGEN_IPV6_SCTP:
        ipv6_packet(&b, 0, 132, payload);
        break;
    case SP_PKTGEN_IPV6_EXT_TCP:
        eth(&b, 0, 0, SP_ETH_TYPE_IPV6);
        ip = ipv6(&b, 0);
        ipv6_ext(&b, 43, 8 * (1 + below(&b, 3)));
        ipv6_ext(&b, 60, 8 * (1 + below(&b, 3)));
        ipv6_ext(&b, 6, 8);
        l4(&b, 6, payload);
        finish(&b, NULL, ip, payload);
        break;
    case SP_PKTGEN_IPV6_FRAG_FIRST:
    case SP_PKTGEN_IPV6_FRAG_LATER:
        eth(&b, 0, 0, SP_ETH_TYPE_IPV6);
        ip = ipv6(&b, 44);
        ipv6_frag(&b, 17, shape == SP_PKTGEN_IPV6_FRAG_LATER);
        if (shape == SP_PKTGEN_IPV6_FRAG_FIRST) {
            l4(&b, 17, payload);
        }
        finish(&b, NULL, ip, payload);
        break;
    case SP_PKTGEN_IPV6_LONG_CHAIN:
        eth(&b, 0, 0, SP_ETH_TYPE_IPV6);
        ip = ipv6(&b, 60);
        for (unsigned i = 0; i < 10; i++) {
            ipv6_ext(&b, i == 9 ? 17 : 60, 8);
        }
        l4(&b, 17, payload);
        finish(&b, NULL, ip, payload);
        break;
    case SP_PKTGEN_ARP:
        eth(&b, below(&b, 2), SP_ETH_TYPE_VLAN, SP_ETH_TYPE_ARP);
        arp(&b);
        finish(&b, NULL, NULL, 0);
        break;
    case SP_PKTGEN_MPLS:
        eth(&b, 0, 0, 0x8847);
        put_random(&b, 4);
        finish(&b, NULL, NULL, payload);
        break;
    case SP_PKTGEN_OTHER:
    case SP_PKTGEN_SHAPE_COUNT:
        eth(&b, 0, 0, 0x9000 + below(&b, 0x1000));
        finish(&b, NULL, NULL, payload);
        break;
    }
    return b.len;
}
