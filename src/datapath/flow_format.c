/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/csum.h"
#include "common/proto.h"
#include "simdpath/flow_format.h"

struct out {
    char *buf;
    size_t size;
    size_t len; /* of the whole text, even past size */
};

static void __attribute__((format(printf, 2, 3)))
put(struct out *o, const char *fmt, ...)
{
    va_list args;
    size_t room = o->len < o->size ? o->size - o->len : 0;
    int n;

    va_start(args, fmt);
    n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, args);
    va_end(args);
    o->len += n > 0 ? (size_t)n : 0;
}

/* "," before every item but the first. */
static void
field(struct out *o, const char *name)
{
    put(o, "%s%s=", o->len ? "," : "", name);
}

/* The number of leading one bits if the mask is a prefix, else -1. */
static int
prefix_len(const uint8_t *mask, size_t len)
{
    size_t bits = 0;

    while (bits < len * 8 && mask[bits / 8] & (0x80 >> bits % 8)) {
        bits++;
    }
    for (size_t b = bits; b < len * 8; b++) {
        if (mask[b / 8] & (0x80 >> b % 8)) {
            return -1;
        }
    }
    return (int)bits;
}

static uint16_t
get16(const void *p)
{
    uint16_t v;

    memcpy(&v, p, 2);
    return ntohs(v);
}

/* Which key fields to write, and with what mask: the caller's, or for an
 * exact key all ones over the fields the key's type and protocol give. */
struct view {
    const struct sp_flow_key *key;
    struct sp_flow_key mask;
    bool exact;
};

static void
put_mac(struct out *o, const char *name, const uint8_t *v, const uint8_t *m)
{
    field(o, name);
    put(o, "%02x:%02x:%02x:%02x:%02x:%02x", v[0], v[1], v[2], v[3], v[4],
        v[5]);
    if (!sp_all_ones(m, 6)) {
        put(o, "/%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
            m[5]);
    }
}

static void
put_ipv4(struct out *o, const char *name, const uint8_t *v, const uint8_t *m)
{
    int prefix = prefix_len(m, 4);

    field(o, name);
    put(o, "%u.%u.%u.%u", v[0], v[1], v[2], v[3]);
    if (prefix < 0) {
        put(o, "/%u.%u.%u.%u", m[0], m[1], m[2], m[3]);
    } else if (prefix < 32) {
        put(o, "/%d", prefix);
    }
}

static void
put_ipv6(struct out *o, const char *name, const uint8_t *v, const uint8_t *m)
{
    char text[INET6_ADDRSTRLEN];
    int prefix = prefix_len(m, 16);

    field(o, name);
    inet_ntop(AF_INET6, v, text, sizeof text);
    put(o, "%s", text);
    if (prefix < 0) {
        inet_ntop(AF_INET6, m, text, sizeof text);
        put(o, "/%s", text);
    } else if (prefix < 128) {
        put(o, "/%d", prefix);
    }
}

/* A number, "/0xMASK" when the mask does not cover 'full'. */
static void
put_num(struct out *o, const char *name, const char *fmt, unsigned v,
        unsigned m, unsigned full)
{
    field(o, name);
    put(o, fmt, v);
    if ((m & full) != full) {
        put(o, "/0x%x", m);
    }
}

static void
put_frag(struct out *o, uint8_t v, uint8_t m)
{
    static const char *const names[4][4] = {
        /* by mask, then value */
        [SP_FRAG_ANY] = {"no", "yes", "no", "yes"},
        [SP_FRAG_LATER] = {"not_later", "not_later", "later", "later"},
        [SP_FRAG_ANY | SP_FRAG_LATER] = {"no", "first", "later", "later"},
    };

    m &= SP_FRAG_ANY | SP_FRAG_LATER;
    if (m) {
        field(o, "ip_frag");
        put(o, "%s", names[m][v & m]);
    }
}

/* Whether an exact key's L4 fields are ICMP type and code: OVS names them
 * so for ICMP over IPv4 and ICMPv6 over IPv6 only. */
static bool
is_icmp(const struct sp_flow_key *k)
{
    uint16_t type = get16(&k->dl_type);

    return (k->nw_proto == SP_IPPROTO_ICMP && type == SP_ETH_TYPE_IPV4) ||
           (k->nw_proto == SP_IPPROTO_ICMPV6 && type == SP_ETH_TYPE_IPV6);
}

static bool
is_arp_type(uint16_t type)
{
    return type == SP_ETH_TYPE_ARP || type == SP_ETH_TYPE_RARP;
}

static bool
is_mpls_type(uint16_t type)
{
    return type == SP_ETH_TYPE_MPLS || type == SP_ETH_TYPE_MPLS_MC;
}

/* The exact mask of a key: the fields its type and protocol give it, as
 * OVS's flow_wildcards_init_for_packet. */
static void
exact_mask(const struct sp_flow_key *key, struct sp_flow_key *mask)
{
    uint16_t type = get16(&key->dl_type);

    memset(mask, 0, sizeof *mask);
    memset(mask->bytes, 0xff, SP_KEY_OFS(in_port) + 2);
    /* The inner tag's mask with the outer tag, as OVS's: "no inner tag"
     * is part of a tagged packet's flow. */
    if (key->vlan_tci) {
        sp_key_set_vlan_tci1(mask, 0xffff);
    }
    if (is_arp_type(type)) {
        mask->nw_proto = 0xff;
        memset(mask->nw_src, 0xff, SP_ARP_HA_OFS + SP_ETH_ADDR_LEN);
        memset(mask->nw_dst, 0xff, SP_ARP_HA_OFS + SP_ETH_ADDR_LEN);
        return;
    }
    if (is_mpls_type(type)) {
        mask->mpls_lse = UINT32_MAX;
        return;
    }
    if (type != SP_ETH_TYPE_IPV4 && type != SP_ETH_TYPE_IPV6) {
        return;
    }
    mask->nw_proto = mask->nw_tos = mask->nw_ttl = mask->nw_frag = 0xff;
    if (type == SP_ETH_TYPE_IPV4) {
        memset(mask->nw_src, 0xff, 4);
        memset(mask->nw_dst, 0xff, 4);
    } else {
        memset(mask->nw_src, 0xff, 32);
        mask->ipv6_label |= htonl(SP_IPV6_LABEL_BITS);
    }
    if (key->nw_frag & SP_FRAG_LATER) {
        return;
    }
    switch (key->nw_proto) {
    case SP_IPPROTO_TCP:
        mask->tcp_flags |= htons(SP_TCP_FLAGS_BITS);
        /* fall through */
    case SP_IPPROTO_UDP:
    case SP_IPPROTO_SCTP:
    case SP_IPPROTO_IGMP:
    case SP_IPPROTO_ICMP:
    case SP_IPPROTO_ICMPV6:
        mask->tp_src = mask->tp_dst = 0xffff;
        break;
    default:
        break;
    }
}

/* "tcp", "udp6", "arp", ... when the type (and protocol) are exact. */
static const char *
shorthand(const struct sp_flow_key *k, const struct sp_flow_key *m,
          bool *has_proto)
{
    static const struct {
        uint8_t proto;
        const char *v4, *v6;
    } protos[] = {
        {6, "tcp", "tcp6"}, {17, "udp", "udp6"}, {132, "sctp", "sctp6"},
        {1, "icmp", NULL},  {58, NULL, "icmp6"},
    };
    uint16_t type = get16(&k->dl_type);
    bool v6 = type == SP_ETH_TYPE_IPV6;

    *has_proto = false;
    if (m->dl_type != 0xffff) {
        return NULL;
    }
    switch (type) {
    case SP_ETH_TYPE_ARP:
        return "arp";
    case SP_ETH_TYPE_RARP:
        return "rarp";
    case SP_ETH_TYPE_MPLS:
        return "mpls";
    case SP_ETH_TYPE_MPLS_MC:
        return "mplsm";
    default:
        break;
    }
    if (type != SP_ETH_TYPE_IPV4 && !v6) {
        return NULL;
    }
    for (size_t i = 0;
         m->nw_proto == 0xff && i < sizeof protos / sizeof *protos; i++) {
        const char *name = v6 ? protos[i].v6 : protos[i].v4;

        if (protos[i].proto == k->nw_proto && name) {
            *has_proto = true;
            return name;
        }
    }
    return v6 ? "ipv6" : "ip";
}

static void
put_l3(struct out *o, const struct sp_flow_key *k, const struct sp_flow_key *m,
       bool has_proto)
{
    uint16_t type = get16(&k->dl_type);

    if (type == SP_ETH_TYPE_IPV6) {
        if (sp_any_set(m->nw_src, 16)) {
            put_ipv6(o, "ipv6_src", k->nw_src, m->nw_src);
        }
        if (sp_any_set(m->nw_dst, 16)) {
            put_ipv6(o, "ipv6_dst", k->nw_dst, m->nw_dst);
        }
        if (m->ipv6_label & htonl(SP_IPV6_LABEL_BITS)) {
            put_num(o, "ipv6_label", "0x%05x",
                    ntohl(k->ipv6_label) & SP_IPV6_LABEL_BITS,
                    ntohl(m->ipv6_label) & SP_IPV6_LABEL_BITS,
                    SP_IPV6_LABEL_BITS);
        }
    } else {
        if (sp_any_set(m->nw_src, 4)) {
            put_ipv4(o, "nw_src", k->nw_src, m->nw_src);
        }
        if (sp_any_set(m->nw_dst, 4)) {
            put_ipv4(o, "nw_dst", k->nw_dst, m->nw_dst);
        }
    }
    if (m->nw_proto && !has_proto) {
        put_num(o, "nw_proto", "%u", k->nw_proto, m->nw_proto, 0xff);
    }
    if (m->nw_tos & 0xfc) {
        put_num(o, "nw_tos", "%u", k->nw_tos & 0xfcu, m->nw_tos & 0xfcu, 0xfc);
    }
    if (m->nw_tos & 0x03) {
        put_num(o, "nw_ecn", "%u", k->nw_tos & 0x03u, m->nw_tos & 0x03u, 3);
    }
    if (m->nw_ttl) {
        put_num(o, "nw_ttl", "%u", k->nw_ttl, m->nw_ttl, 0xff);
    }
    put_frag(o, k->nw_frag, m->nw_frag);
}

static void
put_l4(struct out *o, const struct sp_flow_key *k, const struct sp_flow_key *m)
{
    bool icmp = is_icmp(k);

    if (m->tp_src) {
        put_num(o, icmp ? "icmp_type" : "tp_src", "%u", get16(&k->tp_src),
                get16(&m->tp_src), 0xffff);
    }
    if (m->tp_dst) {
        put_num(o, icmp ? "icmp_code" : "tp_dst", "%u", get16(&k->tp_dst),
                get16(&m->tp_dst), 0xffff);
    }
    if (m->tcp_flags & htons(SP_TCP_FLAGS_BITS)) {
        put_num(o, "tcp_flags", "0x%03x",
                get16(&k->tcp_flags) & SP_TCP_FLAGS_BITS,
                get16(&m->tcp_flags) & SP_TCP_FLAGS_BITS, SP_TCP_FLAGS_BITS);
    }
}

static void
put_arp(struct out *o, const struct sp_flow_key *k,
        const struct sp_flow_key *m)
{
    const uint8_t *sha = k->nw_src + SP_ARP_HA_OFS;
    const uint8_t *tha = k->nw_dst + SP_ARP_HA_OFS;

    if (m->nw_proto) {
        put_num(o, "arp_op", "%u", k->nw_proto, m->nw_proto, 0xff);
    }
    if (sp_any_set(m->nw_src, 4)) {
        put_ipv4(o, "arp_spa", k->nw_src, m->nw_src);
    }
    if (sp_any_set(m->nw_dst, 4)) {
        put_ipv4(o, "arp_tpa", k->nw_dst, m->nw_dst);
    }
    if (sp_any_set(m->nw_src + SP_ARP_HA_OFS, SP_ETH_ADDR_LEN)) {
        put_mac(o, "arp_sha", sha, m->nw_src + SP_ARP_HA_OFS);
    }
    if (sp_any_set(m->nw_dst + SP_ARP_HA_OFS, SP_ETH_ADDR_LEN)) {
        put_mac(o, "arp_tha", tha, m->nw_dst + SP_ARP_HA_OFS);
    }
}

/* A VLAN TCI with its mask, when it has one. */
static void
put_tci(struct out *o, const char *name, uint16_t v, uint16_t m)
{
    if (m) {
        field(o, name);
        put(o, "0x%04x", v);
        if (m != 0xffff) {
            put(o, "/0x%04x", m);
        }
    }
}

/* The top label stack entry's fields, as OVS names them. */
static void
put_mpls(struct out *o, const struct sp_flow_key *k,
         const struct sp_flow_key *m)
{
    static const struct {
        const char *name;
        unsigned shift, bits;
    } parts[] = {
        {"mpls_label", SP_MPLS_LABEL_SHIFT, 20},
        {"mpls_tc", SP_MPLS_TC_SHIFT, 3},
        {"mpls_ttl", 0, 8},
        {"mpls_bos", SP_MPLS_BOS_SHIFT, 1},
    };
    uint32_t v = ntohl(k->mpls_lse), mask = ntohl(m->mpls_lse);

    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        unsigned full = (1u << parts[i].bits) - 1;
        unsigned pm = mask >> parts[i].shift & full;

        if (pm) {
            put_num(o, parts[i].name, "%u", v >> parts[i].shift & full, pm,
                    full);
        }
    }
}

int
sp_flow_format(const struct sp_flow_key *key, const struct sp_flow_key *mask,
               char *buf, size_t size)
{
    struct out o = {buf, size, 0};
    struct sp_flow_key exact;
    const struct sp_flow_key *m = mask;
    const char *short_name;
    bool has_proto;

    if (!m) {
        exact_mask(key, &exact);
        m = &exact;
    }
    if (size) {
        buf[0] = '\0';
    }
    short_name = shorthand(key, m, &has_proto);
    if (short_name) {
        put(&o, "%s", short_name);
    }
    if (m->in_port) {
        put_num(&o, "in_port", "%u", key->in_port, m->in_port, 0xffff);
    }
    if (sp_any_set(m->dl_src, 6)) {
        put_mac(&o, "dl_src", key->dl_src, m->dl_src);
    }
    if (sp_any_set(m->dl_dst, 6)) {
        put_mac(&o, "dl_dst", key->dl_dst, m->dl_dst);
    }
    if (m->dl_type && !short_name) {
        put_num(&o, "dl_type", "0x%04x", get16(&key->dl_type),
                get16(&m->dl_type), 0xffff);
    }
    put_tci(&o, "vlan_tci", get16(&key->vlan_tci), get16(&m->vlan_tci));
    put_tci(&o, "vlan_tci1", sp_key_vlan_tci1(key), sp_key_vlan_tci1(m));
    if (is_arp_type(get16(&key->dl_type))) {
        put_arp(&o, key, m);
    } else if (is_mpls_type(get16(&key->dl_type))) {
        put_mpls(&o, key, m);
    } else {
        put_l3(&o, key, m, has_proto);
        put_l4(&o, key, m);
    }
    return (int)o.len;
}
