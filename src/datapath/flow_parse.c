/* SPDX-License-Identifier: BSD-3-Clause */
/* The match part of a flow rule: docs/flow-syntax.md is the reference. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proto.h"
#include "simdpath/flow_parse.h"

/* The dl_types a field belongs to, where the key bytes it sets are also
 * another field's. */
enum family {
    ANY_TYPE,    /* or checked on the key's bits (sp_match_check) */
    IPV4_OR_ARP, /* nw_src, nw_dst: arp_spa, arp_tpa under arp, as OVS */
    IPV6_ONLY,
    ARP_ONLY,  /* arp or rarp */
    MPLS_ONLY, /* mpls or mplsm */
    N_FAMILIES
};

struct parser {
    struct sp_flow_spec *spec;
    struct sp_err *err;
    const char *name; /* the field being parsed, for messages */
    unsigned column;  /* its column */
    /* The column of the first field that set each key byte, which a
     * refused match (sp_match_check) is blamed on. */
    unsigned columns[sizeof(struct sp_flow_key)];
    /* The first field of each family that shares key bytes with another
     * (ipv6_src, arp_spa, mpls_label and nw_src all lie in nw_src): its
     * name and column, as the bits alone cannot say whose they are. */
    struct {
        const char *name;
        unsigned column;
    } first_of[N_FAMILIES];
};

static int
fail(struct parser *p, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    sp_err_vset(p->err, fmt, args);
    va_end(args);
    if (p->err) {
        p->err->column = p->column;
    }
    return -1;
}

/* ANDs value into the key under mask at key offset ofs, refusing a value
 * that contradicts an earlier field ("tcp,nw_proto=17"). */
static int
put(struct parser *p, size_t ofs, const uint8_t *value, const uint8_t *mask,
    size_t len)
{
    uint8_t *key = p->spec->match.key.bytes + ofs;
    uint8_t *kmask = p->spec->match.mask.bytes + ofs;

    for (size_t i = 0; i < len; i++) {
        if ((key[i] ^ value[i]) & kmask[i] & mask[i]) {
            return fail(p, "%s contradicts an earlier field", p->name);
        }
    }
    for (size_t i = 0; i < len; i++) {
        if (!p->columns[ofs + i]) {
            p->columns[ofs + i] = p->column;
        }
        key[i] |= value[i] & mask[i];
        kmask[i] |= mask[i];
    }
    return 0;
}

/* A big-endian integer of len (1, 2 or 4) bytes. */
static int
put_uint(struct parser *p, size_t ofs, size_t len, uint32_t value,
         uint32_t mask)
{
    uint8_t v[4], m[4];

    for (size_t i = 0; i < len; i++) {
        unsigned shift = 8 * (unsigned)(len - 1 - i);

        v[i] = (uint8_t)(value >> shift);
        m[i] = (uint8_t)(mask >> shift);
    }
    return put(p, ofs, v, m, len);
}

static int
parse_number(struct parser *p, const char *text, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long v;

    /* strtoul() would take a sign ("-1" wraps) or leading blanks. */
    errno = 0;
    v = strtoul(text, &end, 0);
    if (!isdigit((unsigned char)text[0]) || errno || *end || v > max) {
        return fail(p,
                    "invalid value '%s' for %s; expected a number from 0 "
                    "to %u (decimal or 0x hex)",
                    text, p->name, max);
    }
    *out = (uint32_t)v;
    return 0;
}

/* Splits "value/mask" at the slash; returns the mask text or NULL. */
static char *
split_mask(char *text)
{
    char *slash = strchr(text, '/');

    if (slash) {
        *slash = '\0';
        return slash + 1;
    }
    return NULL;
}

struct field;
typedef int field_fn(struct parser *p, const struct field *f, char *value);

struct field {
    const char *name;
    field_fn *parse;
    uint8_t ofs;   /* in the key */
    uint8_t len;   /* bytes */
    uint32_t max;  /* largest value */
    uint32_t bits; /* the field's bits: the default mask */
    enum family family;
};

/* An integer with an optional mask: "80", "0x50/0xfff0". */
static int
parse_int(struct parser *p, const struct field *f, char *value)
{
    char *mask_text = split_mask(value);
    uint32_t v, m = f->bits;

    if (parse_number(p, value, f->max, &v)) {
        return -1;
    }
    if (mask_text && parse_number(p, mask_text, f->bits, &m)) {
        return -1;
    }
    return put_uint(p, f->ofs, f->len, v, m);
}

/* A field of the MPLS label stack entry: bits is where it lies there. */
static int
parse_mpls(struct parser *p, const struct field *f, char *value)
{
    uint32_t v;

    if (parse_number(p, value, f->max, &v)) {
        return -1;
    }
    return put_uint(p, f->ofs, 4, v << __builtin_ctz(f->bits), f->bits);
}

/* in_port is the one host-order field. */
static int
parse_in_port(struct parser *p, const struct field *f, char *value)
{
    uint32_t v;
    uint16_t port, mask = UINT16_MAX;

    if (parse_number(p, value, f->max, &v)) {
        return -1;
    }
    port = (uint16_t)v;
    return put(p, f->ofs, (const uint8_t *)&port, (const uint8_t *)&mask, 2);
}

static int
parse_mac(struct parser *p, const struct field *f, char *value)
{
    char *mask_text = split_mask(value);
    const char *texts[2] = {value, mask_text};
    uint8_t addr[2][6];

    memset(addr[1], 0xff, 6);
    for (int i = 0; i < 2 && texts[i]; i++) {
        unsigned b[6];
        char tail;

        /* sscanf's %x would take a sign ("-1:...") too. */
        if (texts[i][strspn(texts[i], "0123456789abcdefABCDEF:")] ||
            sscanf(texts[i], "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2],
                   &b[3], &b[4], &b[5], &tail) != 6) {
            return fail(p,
                        "invalid Ethernet address '%s' for %s; expected "
                        "xx:xx:xx:xx:xx:xx[/xx:xx:xx:xx:xx:xx]",
                        texts[i], p->name);
        }
        for (int j = 0; j < 6; j++) {
            addr[i][j] = (uint8_t)b[j];
        }
    }
    return put(p, f->ofs, addr[0], addr[1], 6);
}

/* An address of 'len' bytes (4 or 16) with "/prefix" or "/address". */
static int
parse_ip(struct parser *p, const struct field *f, char *value)
{
    int family = f->len == 4 ? AF_INET : AF_INET6;
    unsigned max_prefix = 8u * f->len;
    char *mask_text = split_mask(value);
    uint8_t addr[16], mask[16];
    const char *form =
        f->len == 4 ? "a.b.c.d[/prefix|/a.b.c.d]" : "an IPv6 address[/prefix]";

    if (inet_pton(family, value, addr) != 1) {
        return fail(p, "invalid address '%s' for %s; expected %s", value,
                    p->name, form);
    }
    memset(mask, 0xff, f->len);
    if (mask_text && inet_pton(family, mask_text, mask) != 1) {
        uint32_t prefix;

        if (parse_number(p, mask_text, max_prefix, &prefix)) {
            return fail(p, "invalid mask '%s' for %s; expected %s", mask_text,
                        p->name, form);
        }
        for (unsigned i = 0; i < f->len; i++) {
            unsigned bits = prefix > 8 * i ? prefix - 8 * i : 0;

            mask[i] = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);
        }
    }
    return put(p, f->ofs, addr, mask, f->len);
}

/* dl_vlan: a VLAN id, or 0xffff for "no tag". */
/* A TCI and its mask: the outer tag's at f->ofs, or the inner tag's, which
 * lies in two places (flow_key.h). */
static int
put_tci(struct parser *p, const struct field *f, uint16_t tci, uint16_t mask)
{
    struct sp_flow_key k, m;

    if (f->ofs == SP_KEY_OFS(vlan_tci)) {
        return put_uint(p, f->ofs, 2, tci, mask);
    }
    memset(&k, 0, sizeof k);
    memset(&m, 0, sizeof m);
    sp_key_set_vlan_tci1(&k, tci);
    sp_key_set_vlan_tci1(&m, mask);
    return put(p, SP_KEY_OFS(tcp_flags), k.bytes + SP_KEY_OFS(tcp_flags),
               m.bytes + SP_KEY_OFS(tcp_flags), 2) ||
           put(p, SP_KEY_OFS(ipv6_label), k.bytes + SP_KEY_OFS(ipv6_label),
               m.bytes + SP_KEY_OFS(ipv6_label), 4);
}

/* vlan_tci1 (vlan_tci is a plain integer at its place). */
static int
parse_tci(struct parser *p, const struct field *f, char *value)
{
    char *mask_text = split_mask(value);
    uint32_t v, m = UINT16_MAX;

    if (parse_number(p, value, UINT16_MAX, &v) ||
        (mask_text && parse_number(p, mask_text, UINT16_MAX, &m))) {
        return -1;
    }
    return put_tci(p, f, (uint16_t)v, (uint16_t)m);
}

static int
parse_dl_vlan(struct parser *p, const struct field *f, char *value)
{
    uint32_t vid;

    if (parse_number(p, value, UINT16_MAX, &vid)) {
        return -1;
    }
    if (vid == UINT16_MAX) {
        return put_tci(p, f, 0, UINT16_MAX);
    }
    if (vid > SP_VLAN_VID) {
        return fail(p,
                    "invalid VLAN id %u; expected 0 to 4095, or 0xffff "
                    "for untagged",
                    vid);
    }
    return put_tci(p, f, (uint16_t)(SP_VLAN_PRESENT | vid),
                   SP_VLAN_PRESENT | SP_VLAN_VID);
}

static int
parse_dl_vlan_pcp(struct parser *p, const struct field *f, char *value)
{
    uint32_t pcp;

    if (parse_number(p, value, 7, &pcp)) {
        return -1;
    }
    return put_tci(p, f, (uint16_t)(SP_VLAN_PRESENT | pcp << 13),
                   SP_VLAN_PRESENT | SP_VLAN_PCP);
}

/* nw_tos and nw_ecn share the ToS byte: f->bits is each one's part. */
static int
parse_tos(struct parser *p, const struct field *f, char *value)
{
    uint32_t v;

    if (parse_number(p, value, f->max, &v)) {
        return -1;
    }
    if (v & ~f->bits) {
        return fail(p,
                    "invalid value '%s' for %s: the ECN bits (0x03) must "
                    "be 0; use nw_ecn for them",
                    value, p->name);
    }
    return put_uint(p, f->ofs, 1, v, f->bits);
}

/* ip_dscp: the DSCP value itself, the ToS byte's upper six bits. */
static int
parse_ip_dscp(struct parser *p, const struct field *f, char *value)
{
    uint32_t dscp;

    if (parse_number(p, value, f->max, &dscp)) {
        return -1;
    }
    return put_uint(p, f->ofs, 1, dscp << 2, f->bits);
}

static int
parse_ip_frag(struct parser *p, const struct field *f, char *value)
{
    static const struct {
        const char *name;
        uint8_t value, mask;
    } kinds[] = {
        {"no", 0, SP_FRAG_ANY},
        {"yes", SP_FRAG_ANY, SP_FRAG_ANY},
        {"first", SP_FRAG_ANY, SP_FRAG_ANY | SP_FRAG_LATER},
        {"later", SP_FRAG_ANY | SP_FRAG_LATER, SP_FRAG_ANY | SP_FRAG_LATER},
        {"not_later", 0, SP_FRAG_LATER},
    };

    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        if (!strcmp(value, kinds[i].name)) {
            return put_uint(p, f->ofs, 1, kinds[i].value, kinds[i].mask);
        }
    }
    return fail(p,
                "invalid value '%s' for ip_frag; expected no, yes, "
                "first, later or not_later",
                value);
}

/* tcp_flags: "0x012[/0x0ff]" or "+syn-ack" (set / clear flags). */
static int
parse_tcp_flags(struct parser *p, const struct field *f, char *value)
{
    static const char *const names[] = {"fin", "syn", "rst", "psh", "ack",
                                        "urg", "ece", "cwr", "ns"};
    uint32_t v = 0, m = 0;

    if (value[0] != '+' && value[0] != '-') {
        return parse_int(p, f, value);
    }
    for (char *s = value; *s;) {
        char sign = *s++;
        size_t len = strcspn(s, "+-");
        size_t i = 0;

        if (sign != '+' && sign != '-') {
            break;
        }
        while (i < sizeof names / sizeof *names &&
               (strlen(names[i]) != len || strncmp(s, names[i], len))) {
            i++;
        }
        if (i == sizeof names / sizeof *names) {
            return fail(p,
                        "unknown TCP flag '%.*s' in tcp_flags; expected "
                        "+ or - before fin, syn, rst, psh, ack, urg, "
                        "ece, cwr or ns",
                        (int)len, s);
        }
        m |= 1u << i;
        v |= sign == '+' ? 1u << i : 0;
        s += len;
    }
    return put_uint(p, f->ofs, 2, v, m);
}

/* The 4 IPv4 bytes of the 16-byte address slots. */
#define V4  4
#define V6  16
#define MAC 6
#define SRC SP_KEY_OFS(nw_src)
#define DST SP_KEY_OFS(nw_dst)
#define AHA SP_ARP_HA_OFS

static const struct field fields[] = {
    {"in_port", parse_in_port, SP_KEY_OFS(in_port), 2, UINT16_MAX, 0,
     ANY_TYPE},
    {"dl_src", parse_mac, SP_KEY_OFS(dl_src), MAC, 0, 0, ANY_TYPE},
    {"dl_dst", parse_mac, SP_KEY_OFS(dl_dst), MAC, 0, 0, ANY_TYPE},
    {"dl_type", parse_int, SP_KEY_OFS(dl_type), 2, 0xffff, 0xffff, ANY_TYPE},
    {"dl_vlan", parse_dl_vlan, SP_KEY_OFS(vlan_tci), 2, 0, 0, ANY_TYPE},
    {"dl_vlan_pcp", parse_dl_vlan_pcp, SP_KEY_OFS(vlan_tci), 2, 0, 0,
     ANY_TYPE},
    {"vlan_tci", parse_int, SP_KEY_OFS(vlan_tci), 2, 0xffff, 0xffff, ANY_TYPE},
    /* The inner tag: put_tci() knows it by its offset. */
    {"dl_vlan1", parse_dl_vlan, SP_KEY_OFS(ipv6_label), 2, 0, 0, ANY_TYPE},
    {"dl_vlan_pcp1", parse_dl_vlan_pcp, SP_KEY_OFS(ipv6_label), 2, 0, 0,
     ANY_TYPE},
    {"vlan_tci1", parse_tci, SP_KEY_OFS(ipv6_label), 2, 0, 0, ANY_TYPE},
    {"nw_src", parse_ip, SRC, V4, 0, 0, IPV4_OR_ARP},
    {"nw_dst", parse_ip, DST, V4, 0, 0, IPV4_OR_ARP},
    {"ipv6_src", parse_ip, SRC, V6, 0, 0, IPV6_ONLY},
    {"ipv6_dst", parse_ip, DST, V6, 0, 0, IPV6_ONLY},
    {"ipv6_label", parse_int, SP_KEY_OFS(ipv6_label), 4, 0xfffff, 0xfffff,
     IPV6_ONLY},
    {"nw_proto", parse_int, SP_KEY_OFS(nw_proto), 1, 0xff, 0xff, ANY_TYPE},
    {"nw_tos", parse_tos, SP_KEY_OFS(nw_tos), 1, 0xff, 0xfc, ANY_TYPE},
    {"ip_dscp", parse_ip_dscp, SP_KEY_OFS(nw_tos), 1, 63, 0xfc, ANY_TYPE},
    {"nw_ecn", parse_tos, SP_KEY_OFS(nw_tos), 1, 3, 0x03, ANY_TYPE},
    {"nw_ttl", parse_int, SP_KEY_OFS(nw_ttl), 1, 0xff, 0xff, ANY_TYPE},
    {"ip_frag", parse_ip_frag, SP_KEY_OFS(nw_frag), 1, 0, 0, ANY_TYPE},
    {"tp_src", parse_int, SP_KEY_OFS(tp_src), 2, 0xffff, 0xffff, ANY_TYPE},
    {"tp_dst", parse_int, SP_KEY_OFS(tp_dst), 2, 0xffff, 0xffff, ANY_TYPE},
    {"tcp_flags", parse_tcp_flags, SP_KEY_OFS(tcp_flags), 2, 0xfff, 0xfff,
     ANY_TYPE},
    {"icmp_type", parse_int, SP_KEY_OFS(tp_src), 2, 0xff, 0xffff, ANY_TYPE},
    {"icmp_code", parse_int, SP_KEY_OFS(tp_dst), 2, 0xff, 0xffff, ANY_TYPE},
    {"icmpv6_type", parse_int, SP_KEY_OFS(tp_src), 2, 0xff, 0xffff, ANY_TYPE},
    {"icmpv6_code", parse_int, SP_KEY_OFS(tp_dst), 2, 0xff, 0xffff, ANY_TYPE},
    {"arp_op", parse_int, SP_KEY_OFS(nw_proto), 1, 0xff, 0xff, ARP_ONLY},
    {"arp_spa", parse_ip, SRC, V4, 0, 0, ARP_ONLY},
    {"arp_tpa", parse_ip, DST, V4, 0, 0, ARP_ONLY},
    {"arp_sha", parse_mac, SRC + AHA, MAC, 0, 0, ARP_ONLY},
    {"arp_tha", parse_mac, DST + AHA, MAC, 0, 0, ARP_ONLY},
    {"mpls_label", parse_mpls, SP_KEY_OFS(mpls_lse), 4, 0xfffff, 0xfffff000,
     MPLS_ONLY},
    {"mpls_tc", parse_mpls, SP_KEY_OFS(mpls_lse), 4, 7, 0xe00, MPLS_ONLY},
    {"mpls_bos", parse_mpls, SP_KEY_OFS(mpls_lse), 4, 1, 0x100, MPLS_ONLY},
    {"mpls_ttl", parse_mpls, SP_KEY_OFS(mpls_lse), 4, 0xff, 0xff, MPLS_ONLY},
};

static const struct {
    const char *name;
    uint16_t dl_type;
    uint8_t nw_proto; /* 0: none */
} shorthands[] = {
    {"ip", SP_ETH_TYPE_IPV4, 0},
    {"ipv6", SP_ETH_TYPE_IPV6, 0},
    {"arp", SP_ETH_TYPE_ARP, 0},
    {"rarp", SP_ETH_TYPE_RARP, 0},
    {"mpls", SP_ETH_TYPE_MPLS, 0},
    {"mplsm", SP_ETH_TYPE_MPLS_MC, 0},
    {"tcp", SP_ETH_TYPE_IPV4, SP_IPPROTO_TCP},
    {"udp", SP_ETH_TYPE_IPV4, SP_IPPROTO_UDP},
    {"sctp", SP_ETH_TYPE_IPV4, SP_IPPROTO_SCTP},
    {"icmp", SP_ETH_TYPE_IPV4, SP_IPPROTO_ICMP},
    {"tcp6", SP_ETH_TYPE_IPV6, SP_IPPROTO_TCP},
    {"udp6", SP_ETH_TYPE_IPV6, SP_IPPROTO_UDP},
    {"sctp6", SP_ETH_TYPE_IPV6, SP_IPPROTO_SCTP},
    {"icmp6", SP_ETH_TYPE_IPV6, SP_IPPROTO_ICMPV6},
};

static int
parse_shorthand(struct parser *p, const char *name)
{
    for (size_t i = 0; i < sizeof shorthands / sizeof *shorthands; i++) {
        if (!strcmp(name, shorthands[i].name)) {
            if (put_uint(p, SP_KEY_OFS(dl_type), 2, shorthands[i].dl_type,
                         0xffff)) {
                return -1;
            }
            return shorthands[i].nw_proto
                       ? put_uint(p, SP_KEY_OFS(nw_proto), 1,
                                  shorthands[i].nw_proto, 0xff)
                       : 0;
        }
    }
    return 1;
}

/* The counters of ovs-ofctl dump-flows (and flow-dump) are skipped, as
 * ovs-ofctl does, so that a dump reads back as rules. */
static bool
is_counter(const char *name)
{
    static const char *const counters[] = {"duration", "n_packets", "n_bytes",
                                           "idle_age", "hard_age"};

    for (size_t i = 0; i < sizeof counters / sizeof *counters; i++) {
        if (!strcmp(name, counters[i])) {
            return true;
        }
    }
    return false;
}

static int
parse_field(struct parser *p, const char *name, char *value)
{
    if (is_counter(name) && value) {
        return 0;
    }
    if (!strcmp(name, "priority")) {
        uint32_t prio;

        if (!value) {
            return fail(p, "priority needs a value, e.g. priority=100");
        }
        if (parse_number(p, value, UINT16_MAX, &prio)) {
            return -1;
        }
        p->spec->priority = prio;
        return 0;
    }
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (!strcmp(name, fields[i].name)) {
            if (!value || !*value) {
                return fail(p, "%s needs a value (%s=VALUE)", name, name);
            }
            const struct field *f = &fields[i];

            if (f->parse(p, f, value)) {
                return -1;
            }
            if (f->family != ANY_TYPE && !p->first_of[f->family].name) {
                p->first_of[f->family].name = f->name;
                p->first_of[f->family].column = p->column;
            }
            return 0;
        }
    }
    int rc = parse_shorthand(p, name);

    if (rc <= 0) {
        if (rc == 0 && value) {
            return fail(p, "%s takes no value", name);
        }
        return rc;
    }
    return fail(p,
                "unknown field '%s'; expected priority, a match field "
                "(in_port, dl_src, nw_dst, tp_dst, ... see "
                "docs/flow-syntax.md), a shorthand (ip, ipv6, arp, rarp, "
                "mpls, mplsm, tcp, udp, sctp, icmp, tcp6, udp6, sctp6, "
                "icmp6) or actions=",
                name);
}

static bool
is_separator(char c)
{
    return c == ',' || c == ' ' || c == '\t';
}

/* Each family's dl_types, and their names for messages. */
static const struct {
    uint16_t types[3]; /* 0: none */
    const char *names;
} families[N_FAMILIES] = {
    [IPV4_OR_ARP] = {{SP_ETH_TYPE_IPV4, SP_ETH_TYPE_ARP, SP_ETH_TYPE_RARP},
                     "ip (0x0800), arp (0x0806) or rarp (0x8035)"},
    [IPV6_ONLY] = {{SP_ETH_TYPE_IPV6}, "ipv6 (0x86dd)"},
    [ARP_ONLY] = {{SP_ETH_TYPE_ARP, SP_ETH_TYPE_RARP},
                  "arp (0x0806) or rarp (0x8035)"},
    [MPLS_ONLY] = {{SP_ETH_TYPE_MPLS, SP_ETH_TYPE_MPLS_MC},
                   "mpls (0x8847) or mplsm (0x8848)"},
};

/* Whether dl_type (-1: not exact) is one of family's. */
static bool
family_has(enum family family, int type)
{
    const uint16_t *types = families[family].types;

    for (size_t i = 0; i < sizeof families[0].types / sizeof *types; i++) {
        if (types[i] && types[i] == type) {
            return true;
        }
    }
    return false;
}

/* Checks the whole match, as the classifier will (prerequisites: tp_dst
 * needs a protocol...), and blames the field it names. */
static int
check_match(struct parser *p)
{
    const struct sp_match *m = &p->spec->match;
    uint16_t type = ntohs(m->key.dl_type);
    int exact_type = m->mask.dl_type == 0xffff ? type : -1;
    unsigned at;

    for (int family = ANY_TYPE + 1; family < N_FAMILIES; family++) {
        const char *name = p->first_of[family].name;

        if (name && !family_has(family, exact_type)) {
            p->column = p->first_of[family].column;
            if (exact_type < 0) {
                return fail(p, "%s: needs an exact dl_type, %s", name,
                            families[family].names);
            }
            return fail(p, "%s: needs dl_type %s, not 0x%04x", name,
                        families[family].names, type);
        }
    }
    if (sp_match_check(&p->spec->match, &at, p->err)) {
        if (p->err) {
            p->err->column = p->columns[at];
        }
        return -1;
    }
    return 0;
}

int
sp_flow_parse_match(const char *text, struct sp_flow_spec *spec,
                    struct sp_err *err)
{
    struct parser p = {.spec = spec, .err = err};
    const char *s = text;

    memset(spec, 0, sizeof *spec);
    spec->priority = SP_FLOW_DEFAULT_PRIORITY;
    for (;;) {
        char name[32], value[256];
        size_t name_len, value_len;
        const char *eq;

        while (is_separator(*s)) {
            s++;
        }
        if (!*s || *s == '\n' || *s == '\r') {
            return check_match(&p);
        }
        p.column = (unsigned)(s - text) + 1;
        name_len = strcspn(s, "=, \t\r\n");
        eq = s[name_len] == '=' ? s + name_len : NULL;
        if (name_len == 0 || name_len >= sizeof name) {
            return fail(&p, "expected a field name at '%.20s'", s);
        }
        memcpy(name, s, name_len);
        name[name_len] = '\0';
        p.name = name;
        if (eq && !strcmp(name, "actions")) {
            spec->actions_ofs = (size_t)(eq + 1 - text);
            return check_match(&p);
        }
        s += name_len;
        if (eq) {
            s++;
            value_len = strcspn(s, ", \t\r\n");
            if (value_len >= sizeof value) {
                return fail(&p, "value of %s is too long", name);
            }
            memcpy(value, s, value_len);
            value[value_len] = '\0';
            s += value_len;
        }
        if (parse_field(&p, name, eq ? value : NULL)) {
            return -1;
        }
    }
}
