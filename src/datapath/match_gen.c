/* SPDX-License-Identifier: BSD-3-Clause */
/* Seeded keys and matches for self-checks, tests and benchmarks. */
#include <arpa/inet.h>
#include <string.h>

#include "common/proto.h"
#include "simdpath/match.h"
#include "simdpath/random.h"

void
sp_flow_key_random(struct sp_random *rng, struct sp_flow_key *key)
{
    static const uint16_t types[] = {SP_ETH_TYPE_IPV4, SP_ETH_TYPE_IPV4,
                                     SP_ETH_TYPE_IPV6, SP_ETH_TYPE_ARP,
                                     SP_ETH_TYPE_LLDP};
    static const uint8_t protos[] = {6, 17, 1};
    uint16_t type = types[sp_random_below(rng, 5)];
    unsigned addr_len = type == SP_ETH_TYPE_IPV6   ? 16
                        : type == SP_ETH_TYPE_LLDP ? 0
                                                   : 4;

    memset(key, 0, sizeof *key);
    key->dl_dst[5] = (uint8_t)sp_random_below(rng, 4);
    key->dl_src[5] = (uint8_t)sp_random_below(rng, 4);
    key->dl_type = htons(type);
    key->vlan_tci = sp_random_below(rng, 2) ? htons(0x1000 | 10) : 0;
    key->in_port = (uint16_t)sp_random_below(rng, 4);
    if (!addr_len) {
        return;
    }
    for (unsigned i = 0; i < addr_len; i++) {
        key->nw_src[i] = (uint8_t)sp_random_below(rng, 4);
        key->nw_dst[i] = (uint8_t)sp_random_below(rng, 4);
    }
    if (type == SP_ETH_TYPE_ARP) {
        key->nw_proto = (uint8_t)(1 + sp_random_below(rng, 2));
        return;
    }
    key->nw_proto = protos[sp_random_below(rng, 3)];
    if (type == SP_ETH_TYPE_IPV6 && key->nw_proto == 1) {
        key->nw_proto = 58;
    }
    key->nw_tos = (uint8_t)(sp_random_below(rng, 4) << 2);
    key->nw_ttl = (uint8_t)(63 + sp_random_below(rng, 2));
    key->tp_src = htons((uint16_t)sp_random_below(rng, 4));
    key->tp_dst = htons((uint16_t)(80 + sp_random_below(rng, 4)));
    if (key->nw_proto == 6) {
        key->tcp_flags = htons((uint16_t)sp_random_below(rng, 0x40));
    }
    if (type == SP_ETH_TYPE_IPV6) {
        key->ipv6_label = htonl(sp_random_below(rng, 4));
    }
}

/* The first 'bits' bits of an address mask of 'len' bytes. */
static void
prefix(uint8_t *mask, unsigned len, unsigned bits)
{
    for (unsigned i = 0; i < len; i++) {
        unsigned b = bits > 8 * i ? bits - 8 * i : 0;

        mask[i] = b >= 8 ? 0xff : (uint8_t)(0xff00 >> b);
    }
}

/*
 * Shape bits: 0-1 L3 (none, IPv4, IPv6, ARP); 2 in_port; 3 dl_dst;
 * 4 vlan_tci; 5-9 and 10-14 destination and source prefix lengths (bits
 * for IPv4 and ARP, 4 bits each for IPv6); 15-16 L4 (none, TCP, UDP,
 * ICMP); 17 tp_dst; 18 tp_src; 19 nw_tos.
 */
void
sp_match_from_shape(uint32_t shape, const struct sp_flow_key *like,
                    struct sp_match *out)
{
    static const uint16_t l3_types[] = {0, SP_ETH_TYPE_IPV4, SP_ETH_TYPE_IPV6,
                                        SP_ETH_TYPE_ARP};
    static const uint8_t l4_protos[] = {0, 6, 17, 1};
    unsigned l3 = shape & 3, l4 = shape >> 15 & 3;
    struct sp_flow_key *mask = &out->mask, *key = &out->key;

    memset(mask, 0, sizeof *mask);
    *key = *like;
    mask->in_port = shape >> 2 & 1 ? 0xffff : 0;
    memset(mask->dl_dst, shape >> 3 & 1 ? 0xff : 0, SP_ETH_ADDR_LEN);
    mask->vlan_tci = shape >> 4 & 1 ? 0xffff : 0;
    if (l3) {
        unsigned len = l3 == 2 ? 16 : 4;

        mask->dl_type = 0xffff;
        key->dl_type = htons(l3_types[l3]);
        prefix(mask->nw_dst, len, (shape >> 5 & 31) * len / 4);
        prefix(mask->nw_src, len, (shape >> 10 & 31) * len / 4);
    }
    if ((l3 == 1 || l3 == 2) && l4) {
        mask->nw_proto = 0xff;
        key->nw_proto = l4 == 3 && l3 == 2 ? 58 : l4_protos[l4];
        mask->tp_dst = shape >> 17 & 1 ? 0xffff : 0;
        mask->tp_src = shape >> 18 & 1 ? 0xffff : 0;
    }
    if ((l3 == 1 || l3 == 2) && shape >> 19 & 1) {
        mask->nw_tos = 0xfc;
    }
    sp_match_mask_key(out);
}
