/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rule validation: what a match may contain before the classifier accepts
 * it. Fields are named as docs/flow-syntax.md names them, which depends on
 * the dl_type (nw_src is ipv6_src for IPv6, arp_spa/arp_sha for ARP and
 * RARP, its first word the MPLS fields for MPLS).
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/proto.h"
#include "simdpath/dispatch.h"
#include "simdpath/match.h"

/* What the dl_type and nw_proto of a match say, when matched exactly. */
struct context {
    const struct sp_match *m;
    int dl_type; /* -1: not exact */
    int proto;   /* -1: not exact */
};

static bool
is_ip(const struct context *c)
{
    return c->dl_type == SP_ETH_TYPE_IPV4 || c->dl_type == SP_ETH_TYPE_IPV6;
}

/* ARP or RARP, whose fields are the same. */
static bool
is_arp(const struct context *c)
{
    return c->dl_type == SP_ETH_TYPE_ARP || c->dl_type == SP_ETH_TYPE_RARP;
}

static bool
is_mpls(const struct context *c)
{
    return c->dl_type == SP_ETH_TYPE_MPLS || c->dl_type == SP_ETH_TYPE_MPLS_MC;
}

/* The MPLS field a mask of the label stack entry starts with. */
static const char *
mpls_name(uint32_t mask)
{
    return mask & 0xfffff000 ? "mpls_label"
           : mask & 0xe00    ? "mpls_tc"
           : mask & 0x100    ? "mpls_bos"
                             : "mpls_ttl";
}

static bool
is_icmp(const struct context *c)
{
    return (c->dl_type == SP_ETH_TYPE_IPV4 && c->proto == SP_IPPROTO_ICMP) ||
           (c->dl_type == SP_ETH_TYPE_IPV6 && c->proto == SP_IPPROTO_ICMPV6);
}

/* The syntax name of the field holding key byte 'ofs'. */
static const char *
field_name(const struct context *c, unsigned ofs)
{
    static const struct {
        unsigned end; /* first byte past the field */
        const char *name;
    } fields[] = {
        {6, "dl_dst"},      {12, "dl_src"},  {14, "dl_type"},
        {16, "vlan_tci"},   {18, "in_port"}, {20, "tcp_flags"},
        {21, "nw_proto"},   {22, "nw_tos"},  {23, "nw_ttl"},
        {24, "ip_frag"},    {40, "nw_src"},  {56, "nw_dst"},
        {60, "ipv6_label"}, {62, "tp_src"},  {64, "tp_dst"},
    };
    bool dst = ofs >= SP_KEY_OFS(nw_dst);
    unsigned i = 0;

    if (ofs >= SP_KEY_OFS(nw_src) && ofs < SP_KEY_OFS(ipv6_label)) {
        unsigned at = (ofs - SP_KEY_OFS(nw_src)) % 16;

        if (is_arp(c)) {
            return at < SP_ARP_HA_OFS ? (dst ? "arp_tpa" : "arp_spa")
                                      : (dst ? "arp_tha" : "arp_sha");
        }
        if (c->dl_type == SP_ETH_TYPE_IPV6) {
            return dst ? "ipv6_dst" : "ipv6_src";
        }
    }
    if (ofs == SP_KEY_OFS(nw_proto) && is_arp(c)) {
        return "arp_op";
    }
    if (ofs >= SP_KEY_OFS(mpls_lse) && ofs < SP_KEY_OFS(mpls_lse) + 4 &&
        is_mpls(c)) {
        return mpls_name(ntohl(c->m->mask.mpls_lse));
    }
    /* The fields the inner VLAN tag shares: its when the mask has none of
     * the other field's bits. */
    if ((ofs == SP_KEY_OFS(tcp_flags) || ofs == SP_KEY_OFS(tcp_flags) + 1) &&
        !(c->m->mask.tcp_flags & htons(SP_TCP_FLAGS_BITS))) {
        return "vlan_tci1";
    }
    if (ofs >= SP_KEY_OFS(ipv6_label) && ofs < SP_KEY_OFS(tp_src) &&
        !(c->m->mask.ipv6_label & htonl(SP_IPV6_LABEL_BITS))) {
        return "vlan_tci1";
    }
    if (ofs >= SP_KEY_OFS(tp_src) && is_icmp(c)) {
        return ofs >= SP_KEY_OFS(tp_dst) ? "icmp_code" : "icmp_type";
    }
    while (ofs >= fields[i].end) {
        i++;
    }
    return fields[i].name;
}

/* The first of bytes [ofs, ofs + len) the mask touches, or ofs + len:
 * where a field sharing a key field starts (arp_tha in nw_dst). */
static unsigned
first_used(const struct context *c, unsigned ofs, unsigned len)
{
    while (len && !c->m->mask.bytes[ofs]) {
        ofs++;
        len--;
    }
    return ofs;
}

/* Whether the mask touches any of bytes [ofs, ofs + len). */
static bool
uses(const struct context *c, unsigned ofs, unsigned len)
{
    return first_used(c, ofs, len) < ofs + len;
}

#define USES(c, field) \
    uses(c, SP_KEY_OFS(field), sizeof(((struct sp_flow_key *)0)->field))

/* The mask bits each field may have, for this match's dl_type. */
static void
valid_bits(const struct context *c, struct sp_flow_key *valid)
{
    memset(valid, 0xff, sizeof *valid);
    valid->nw_frag = SP_FRAG_ANY | SP_FRAG_LATER;
    if (c->dl_type == SP_ETH_TYPE_IPV4) {
        memset(valid->nw_src + 4, 0, 12);
        memset(valid->nw_dst + 4, 0, 12);
    } else if (is_mpls(c)) {
        memset(valid->nw_src + 4, 0, 12);
        memset(valid->nw_dst, 0, 16);
    } else if (is_arp(c)) {
        memset(valid->nw_src + SP_ARP_HA_OFS + SP_ETH_ADDR_LEN, 0, 6);
        memset(valid->nw_dst + SP_ARP_HA_OFS + SP_ETH_ADDR_LEN, 0, 6);
    }
}

/* Reports the field holding key byte ofs, whose message follows. */
static int blame(const struct context *c, unsigned ofs, unsigned *at,
                 struct sp_err *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int
blame(const struct context *c, unsigned ofs, unsigned *at, struct sp_err *err,
      const char *fmt, ...)
{
    char what[sizeof err->msg];
    va_list args;

    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    *at = ofs;
    return sp_err_set(err, "%s: %s", field_name(c, ofs), what);
}

static int
check_prerequisites(const struct context *c, unsigned *at, struct sp_err *err)
{
    static const struct {
        unsigned ofs, len;
    } l3[] = {
        {SP_KEY_OFS(tcp_flags), 2},
        {SP_KEY_OFS(nw_proto), 4},
        {SP_KEY_OFS(nw_src), 40},
    };
    unsigned ofs;

    for (size_t i = 0; i < sizeof l3 / sizeof l3[0]; i++) {
        for (ofs = l3[i].ofs; ofs < l3[i].ofs + l3[i].len; ofs++) {
            if (c->m->mask.bytes[ofs] && c->dl_type < 0) {
                return blame(c, ofs, at, err,
                             "needs an exact dl_type (ip, ipv6, arp, "
                             "rarp, mpls or mplsm with mask 0xffff)");
            }
        }
    }
    if ((USES(c, nw_src) || USES(c, nw_dst) || USES(c, nw_proto)) &&
        !is_ip(c) && !is_arp(c) &&
        !(is_mpls(c) && !USES(c, nw_dst) && !USES(c, nw_proto))) {
        ofs = USES(c, nw_proto) ? SP_KEY_OFS(nw_proto)
              : USES(c, nw_src) ? first_used(c, SP_KEY_OFS(nw_src), 16)
                                : first_used(c, SP_KEY_OFS(nw_dst), 16);
        return blame(c, ofs, at, err,
                     "needs dl_type ip, ipv6, arp or rarp, not "
                     "0x%04x",
                     c->dl_type);
    }
    if ((USES(c, nw_tos) || USES(c, nw_ttl) || USES(c, nw_frag)) &&
        !is_ip(c)) {
        ofs = USES(c, nw_tos)   ? SP_KEY_OFS(nw_tos)
              : USES(c, nw_ttl) ? SP_KEY_OFS(nw_ttl)
                                : SP_KEY_OFS(nw_frag);
        return blame(c, ofs, at, err, "needs dl_type ip or ipv6, not 0x%04x",
                     c->dl_type);
    }
    if (USES(c, ipv6_label) && c->dl_type != SP_ETH_TYPE_IPV6) {
        return blame(c, SP_KEY_OFS(ipv6_label), at, err,
                     "needs dl_type ipv6 (0x86dd), not 0x%04x", c->dl_type);
    }
    if (!USES(c, tcp_flags) && !USES(c, tp_src) && !USES(c, tp_dst)) {
        return 0;
    }
    ofs = USES(c, tcp_flags) ? SP_KEY_OFS(tcp_flags)
          : USES(c, tp_src)  ? SP_KEY_OFS(tp_src)
                             : SP_KEY_OFS(tp_dst);
    if (!is_ip(c)) {
        return blame(c, ofs, at, err, "needs dl_type ip or ipv6, not 0x%04x",
                     c->dl_type);
    }
    if (c->proto < 0) {
        return blame(c, ofs, at, err,
                     "needs an exact nw_proto (tcp, udp, sctp, icmp or "
                     "icmp6)");
    }
    if (USES(c, tcp_flags) && c->proto != SP_IPPROTO_TCP) {
        return blame(c, ofs, at, err, "needs nw_proto tcp (6), not %d",
                     c->proto);
    }
    /* The protocols whose ports or type and code the parser keeps, over
     * either IP version (as OVS extracts them), so that every printed key
     * reads back. */
    if (c->proto != SP_IPPROTO_TCP && c->proto != SP_IPPROTO_UDP &&
        c->proto != SP_IPPROTO_SCTP && c->proto != SP_IPPROTO_ICMP &&
        c->proto != SP_IPPROTO_ICMPV6 && c->proto != SP_IPPROTO_IGMP) {
        return blame(c, ofs, at, err,
                     "needs nw_proto tcp, udp, sctp, icmp, icmp6 or igmp "
                     "(2), not %d",
                     c->proto);
    }
    return 0;
}

/* ICMP's, ICMPv6's and IGMP's type and code are a byte each, which the
 * packet parser keeps in the low byte of tp_src and tp_dst: a larger value
 * could match no packet (and would print as an icmp_code that does not
 * parse back). */
static int
check_type_code(const struct context *c, unsigned *at, struct sp_err *err)
{
    static const unsigned fields[] = {SP_KEY_OFS(tp_src), SP_KEY_OFS(tp_dst)};

    if (c->proto != SP_IPPROTO_ICMP && c->proto != SP_IPPROTO_ICMPV6 &&
        c->proto != SP_IPPROTO_IGMP) {
        return 0;
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const uint8_t *v = c->m->key.bytes + fields[i];

        if (v[0]) {
            return blame(c, fields[i], at, err,
                         "%u is more than 255: the type and code are a byte "
                         "each, so no packet could match",
                         (unsigned)v[0] << 8 | v[1]);
        }
    }
    return 0;
}

int
sp_match_check(const struct sp_match *m, unsigned *at, struct sp_err *err)
{
    struct context c = {m, -1, -1};
    struct sp_flow_key valid;
    struct sp_match no_tag;

    if (m->mask.dl_type == 0xffff) {
        c.dl_type = ntohs(m->key.dl_type);
    }
    if (m->mask.nw_proto == 0xff) {
        c.proto = m->key.nw_proto;
    }
    for (unsigned i = 0; i < sizeof m->key; i++) {
        if (m->key.bytes[i] & ~m->mask.bytes[i]) {
            return blame(&c, i, at, err,
                         "the value has bits outside the mask (byte %u of "
                         "the key: value 0x%02x, mask 0x%02x)",
                         i, m->key.bytes[i], m->mask.bytes[i]);
        }
    }
    /* The inner VLAN tag needs nothing: the other fields' prerequisites
     * are checked without its bits. */
    no_tag = *m;
    sp_key_set_vlan_tci1(&no_tag.key, 0);
    sp_key_set_vlan_tci1(&no_tag.mask, 0);
    c.m = &no_tag;
    if (check_prerequisites(&c, at, err)) {
        return -1;
    }
    c.m = m;
    if (check_type_code(&c, at, err)) {
        return -1;
    }
    valid_bits(&c, &valid);
    for (unsigned i = 0; i < sizeof m->key; i++) {
        if (m->mask.bytes[i] & ~valid.bytes[i]) {
            return blame(&c, i, at, err,
                         "the mask has bits outside the field (byte %u of "
                         "the key: mask 0x%02x, valid bits 0x%02x)",
                         i, m->mask.bytes[i], valid.bytes[i]);
        }
    }
    return 0;
}

int
sp_match_validate(const struct sp_match *m, struct sp_err *err)
{
    unsigned at;

    return sp_match_check(m, &at, err);
}
