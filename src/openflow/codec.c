/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * OpenFlow 1.3 codec: OXM matches <-> struct sp_match, apply-actions <->
 * simdpath action text, FLOW_MOD. Layouts are those of the OpenFlow 1.3.5
 * specification; every read is preceded by a check that its bytes are
 * inside the message.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/csum.h"
#include "common/proto.h"
#include "openflow/internal.h"
#include "simdpath/dispatch.h"
#include "simdpath/flow_format.h"

/* ---- buffers ---- */

void
sp_of_buf_free(struct sp_of_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void
sp_of_buf_consume(struct sp_of_buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

uint8_t *
sp_of_buf_put(struct sp_of_buf *b, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        uint8_t *grown;

        while (cap < b->len + n) {
            cap *= 2;
        }
        grown = realloc(b->data, cap);
        if (!grown) {
            return NULL;
        }
        b->data = grown;
        b->cap = cap;
    }
    b->len += n;
    return memset(b->data + b->len - n, 0, n);
}

int
sp_of_put_bytes(struct sp_of_buf *b, const void *p, size_t n)
{
    uint8_t *dst;

    if (!n) {
        return 0; /* p may be NULL */
    }
    dst = sp_of_buf_put(b, n);
    if (!dst) {
        return -1;
    }
    memcpy(dst, p, n);
    return 0;
}

int
sp_of_put16(struct sp_of_buf *b, uint16_t v)
{
    uint16_t be = htons(v);

    return sp_of_put_bytes(b, &be, 2);
}

int
sp_of_put32(struct sp_of_buf *b, uint32_t v)
{
    uint32_t be = htonl(v);

    return sp_of_put_bytes(b, &be, 4);
}

int
sp_of_put64(struct sp_of_buf *b, uint64_t v)
{
    return sp_of_put32(b, (uint32_t)(v >> 32)) || sp_of_put32(b, (uint32_t)v);
}

void
sp_of_set16(struct sp_of_buf *b, size_t ofs, uint16_t v)
{
    sp_store_be16(b->data + ofs, v);
}

int
sp_of_pad8(struct sp_of_buf *b, size_t start)
{
    size_t len = b->len - start;

    return sp_of_buf_put(b, (8 - len % 8) % 8) ? 0 : -1;
}

int
sp_of_header(struct sp_of_buf *b, uint8_t type, uint32_t xid)
{
    uint8_t *h = sp_of_buf_put(b, SP_OFP_HEADER_LEN);

    if (!h) {
        return -1;
    }
    h[0] = SP_OFP_VERSION;
    h[1] = type;
    /* The length is set by sp_of_finish(). */
    h[4] = (uint8_t)(xid >> 24);
    h[5] = (uint8_t)(xid >> 16);
    h[6] = (uint8_t)(xid >> 8);
    h[7] = (uint8_t)xid;
    return 0;
}

void
sp_of_finish(struct sp_of_buf *b, size_t start)
{
    sp_of_set16(b, start + 2, (uint16_t)(b->len - start));
}

int
sp_of_fail(struct sp_of_error *err, uint16_t type, uint16_t code,
           const char *fmt, ...)
{
    va_list ap;

    err->type = type;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->why, sizeof err->why, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- OXM ---- */

#define OXM_CLASS_NXM0  0x0000
#define OXM_CLASS_NXM1  0x0001
#define OXM_CLASS_BASIC 0x8000

/* OpenFlow basic fields, and the Nicira ones OVS uses for key fields
 * OpenFlow 1.3 lacks (nw_ttl, ip_frag, tcp_flags, mpls_ttl) and for a VLAN
 * TCI with a PCP mask OpenFlow cannot express. */
enum oxm_id {
    OXM_IN_PORT,
    OXM_ETH_DST,
    OXM_ETH_SRC,
    OXM_ETH_TYPE,
    OXM_VLAN_VID,
    OXM_VLAN_PCP,
    OXM_IP_DSCP,
    OXM_IP_ECN,
    OXM_IP_PROTO,
    OXM_IPV4_SRC,
    OXM_IPV4_DST,
    OXM_TCP_SRC,
    OXM_TCP_DST,
    OXM_UDP_SRC,
    OXM_UDP_DST,
    OXM_SCTP_SRC,
    OXM_SCTP_DST,
    OXM_ICMPV4_TYPE,
    OXM_ICMPV4_CODE,
    OXM_ARP_OP,
    OXM_ARP_SPA,
    OXM_ARP_TPA,
    OXM_ARP_SHA,
    OXM_ARP_THA,
    OXM_IPV6_SRC,
    OXM_IPV6_DST,
    OXM_IPV6_FLABEL,
    OXM_ICMPV6_TYPE,
    OXM_ICMPV6_CODE,
    OXM_MPLS_LABEL,
    OXM_MPLS_TC,
    OXM_MPLS_BOS,
    OXM_NX_VLAN_TCI,
    OXM_NX_IP_FRAG,
    OXM_NX_IP_TTL,
    OXM_NX_TCP_FLAGS,
    OXM_NX_MPLS_TTL,
    OXM_COUNT
};

struct oxm_def {
    uint16_t oclass;
    uint8_t field;
    uint8_t len;
    bool maskable;
    const char *name;
};

static const struct oxm_def oxm_defs[OXM_COUNT] = {
    [OXM_IN_PORT] = {OXM_CLASS_BASIC, 0, 4, false, "in_port"},
    [OXM_ETH_DST] = {OXM_CLASS_BASIC, 3, 6, true, "eth_dst"},
    [OXM_ETH_SRC] = {OXM_CLASS_BASIC, 4, 6, true, "eth_src"},
    [OXM_ETH_TYPE] = {OXM_CLASS_BASIC, 5, 2, false, "eth_type"},
    [OXM_VLAN_VID] = {OXM_CLASS_BASIC, 6, 2, true, "vlan_vid"},
    [OXM_VLAN_PCP] = {OXM_CLASS_BASIC, 7, 1, false, "vlan_pcp"},
    [OXM_IP_DSCP] = {OXM_CLASS_BASIC, 8, 1, false, "ip_dscp"},
    [OXM_IP_ECN] = {OXM_CLASS_BASIC, 9, 1, false, "ip_ecn"},
    [OXM_IP_PROTO] = {OXM_CLASS_BASIC, 10, 1, false, "ip_proto"},
    [OXM_IPV4_SRC] = {OXM_CLASS_BASIC, 11, 4, true, "ipv4_src"},
    [OXM_IPV4_DST] = {OXM_CLASS_BASIC, 12, 4, true, "ipv4_dst"},
    /* OVS takes masks on L4 ports too. */
    [OXM_TCP_SRC] = {OXM_CLASS_BASIC, 13, 2, true, "tcp_src"},
    [OXM_TCP_DST] = {OXM_CLASS_BASIC, 14, 2, true, "tcp_dst"},
    [OXM_UDP_SRC] = {OXM_CLASS_BASIC, 15, 2, true, "udp_src"},
    [OXM_UDP_DST] = {OXM_CLASS_BASIC, 16, 2, true, "udp_dst"},
    [OXM_SCTP_SRC] = {OXM_CLASS_BASIC, 17, 2, true, "sctp_src"},
    [OXM_SCTP_DST] = {OXM_CLASS_BASIC, 18, 2, true, "sctp_dst"},
    [OXM_ICMPV4_TYPE] = {OXM_CLASS_BASIC, 19, 1, false, "icmpv4_type"},
    [OXM_ICMPV4_CODE] = {OXM_CLASS_BASIC, 20, 1, false, "icmpv4_code"},
    [OXM_ARP_OP] = {OXM_CLASS_BASIC, 21, 2, false, "arp_op"},
    [OXM_ARP_SPA] = {OXM_CLASS_BASIC, 22, 4, true, "arp_spa"},
    [OXM_ARP_TPA] = {OXM_CLASS_BASIC, 23, 4, true, "arp_tpa"},
    [OXM_ARP_SHA] = {OXM_CLASS_BASIC, 24, 6, true, "arp_sha"},
    [OXM_ARP_THA] = {OXM_CLASS_BASIC, 25, 6, true, "arp_tha"},
    [OXM_IPV6_SRC] = {OXM_CLASS_BASIC, 26, 16, true, "ipv6_src"},
    [OXM_IPV6_DST] = {OXM_CLASS_BASIC, 27, 16, true, "ipv6_dst"},
    [OXM_IPV6_FLABEL] = {OXM_CLASS_BASIC, 28, 4, true, "ipv6_flabel"},
    [OXM_ICMPV6_TYPE] = {OXM_CLASS_BASIC, 29, 1, false, "icmpv6_type"},
    [OXM_ICMPV6_CODE] = {OXM_CLASS_BASIC, 30, 1, false, "icmpv6_code"},
    [OXM_MPLS_LABEL] = {OXM_CLASS_BASIC, 34, 4, false, "mpls_label"},
    [OXM_MPLS_TC] = {OXM_CLASS_BASIC, 35, 1, false, "mpls_tc"},
    [OXM_MPLS_BOS] = {OXM_CLASS_BASIC, 36, 1, false, "mpls_bos"},
    [OXM_NX_VLAN_TCI] = {OXM_CLASS_NXM0, 4, 2, true, "vlan_tci"},
    [OXM_NX_IP_FRAG] = {OXM_CLASS_NXM1, 26, 1, true, "ip_frag"},
    [OXM_NX_IP_TTL] = {OXM_CLASS_NXM1, 29, 1, false, "nw_ttl"},
    [OXM_NX_TCP_FLAGS] = {OXM_CLASS_NXM1, 34, 2, true, "tcp_flags"},
    [OXM_NX_MPLS_TTL] = {OXM_CLASS_NXM1, 30, 1, false, "mpls_ttl"},
};

static int
oxm_lookup(uint16_t oclass, uint8_t field)
{
    for (int i = 0; i < OXM_COUNT; i++) {
        if (oxm_defs[i].oclass == oclass && oxm_defs[i].field == field) {
            return i;
        }
    }
    return -1;
}

static uint16_t
get16(const uint8_t *p)
{
    return sp_load_be16(p);
}

static uint32_t
get32(const uint8_t *p)
{
    return (uint32_t)sp_load_be16(p) << 16 | sp_load_be16(p + 2);
}

static uint64_t
get64(const uint8_t *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

uint16_t
sp_of_get16(const uint8_t *p)
{
    return get16(p);
}

uint32_t
sp_of_get32(const uint8_t *p)
{
    return get32(p);
}

uint64_t
sp_of_get64(const uint8_t *p)
{
    return get64(p);
}

static bool
exact_eth_type(const struct sp_match *m, uint16_t type)
{
    return m->mask.dl_type == 0xffff && m->key.dl_type == htons(type);
}

static bool
is_ip_any(const struct sp_match *m)
{
    return exact_eth_type(m, SP_ETH_TYPE_IPV4) ||
           exact_eth_type(m, SP_ETH_TYPE_IPV6);
}

/* ARP or RARP, whose fields OVS takes alike. */
static bool
is_arp_any(const struct sp_match *m)
{
    return exact_eth_type(m, SP_ETH_TYPE_ARP) ||
           exact_eth_type(m, SP_ETH_TYPE_RARP);
}

static bool
is_mpls_any(const struct sp_match *m)
{
    return exact_eth_type(m, SP_ETH_TYPE_MPLS) ||
           exact_eth_type(m, SP_ETH_TYPE_MPLS_MC);
}

static bool
exact_proto(const struct sp_match *m, uint8_t proto)
{
    return is_ip_any(m) && m->mask.nw_proto == 0xff &&
           m->key.nw_proto == proto;
}

static bool
has_vlan(const struct sp_match *m)
{
    return (m->mask.vlan_tci & htons(SP_VLAN_PRESENT)) &&
           (m->key.vlan_tci & htons(SP_VLAN_PRESENT));
}

/* Whether m meets field id's prerequisites (OpenFlow 1.3, 7.2.3.6). */
static bool
prereq_ok(int id, const struct sp_match *m)
{
    switch (id) {
    case OXM_VLAN_PCP:
        return has_vlan(m);
    case OXM_IP_DSCP:
    case OXM_IP_ECN:
    case OXM_IP_PROTO:
    case OXM_NX_IP_FRAG:
    case OXM_NX_IP_TTL:
        return is_ip_any(m);
    case OXM_IPV4_SRC:
    case OXM_IPV4_DST:
        return exact_eth_type(m, SP_ETH_TYPE_IPV4);
    case OXM_TCP_SRC:
    case OXM_TCP_DST:
    case OXM_NX_TCP_FLAGS:
        return exact_proto(m, SP_IPPROTO_TCP);
    case OXM_UDP_SRC:
    case OXM_UDP_DST:
        return exact_proto(m, SP_IPPROTO_UDP);
    case OXM_SCTP_SRC:
    case OXM_SCTP_DST:
        return exact_proto(m, SP_IPPROTO_SCTP);
    case OXM_ICMPV4_TYPE:
    case OXM_ICMPV4_CODE:
        return exact_eth_type(m, SP_ETH_TYPE_IPV4) &&
               exact_proto(m, SP_IPPROTO_ICMP);
    case OXM_ARP_OP:
    case OXM_ARP_SPA:
    case OXM_ARP_TPA:
    case OXM_ARP_SHA:
    case OXM_ARP_THA:
        return is_arp_any(m);
    case OXM_MPLS_LABEL:
    case OXM_MPLS_TC:
    case OXM_MPLS_BOS:
    case OXM_NX_MPLS_TTL:
        return is_mpls_any(m);
    case OXM_IPV6_SRC:
    case OXM_IPV6_DST:
    case OXM_IPV6_FLABEL:
        return exact_eth_type(m, SP_ETH_TYPE_IPV6);
    case OXM_ICMPV6_TYPE:
    case OXM_ICMPV6_CODE:
        return exact_eth_type(m, SP_ETH_TYPE_IPV6) &&
               exact_proto(m, SP_IPPROTO_ICMPV6);
    default:
        return true;
    }
}

/* Where a field's bytes go in the key when they are stored as they are;
 * -1 for the fields converted on the way. */
static int
key_ofs(int id)
{
    switch (id) {
    case OXM_ETH_DST:
        return SP_KEY_OFS(dl_dst);
    case OXM_ETH_SRC:
        return SP_KEY_OFS(dl_src);
    case OXM_ETH_TYPE:
        return SP_KEY_OFS(dl_type);
    case OXM_NX_VLAN_TCI:
        return SP_KEY_OFS(vlan_tci);
    case OXM_IP_PROTO:
        return SP_KEY_OFS(nw_proto);
    case OXM_IPV4_SRC:
    case OXM_ARP_SPA:
    case OXM_IPV6_SRC:
        return SP_KEY_OFS(nw_src);
    case OXM_IPV4_DST:
    case OXM_ARP_TPA:
    case OXM_IPV6_DST:
        return SP_KEY_OFS(nw_dst);
    case OXM_ARP_SHA:
        return SP_KEY_OFS(nw_src) + SP_ARP_HA_OFS;
    case OXM_ARP_THA:
        return SP_KEY_OFS(nw_dst) + SP_ARP_HA_OFS;
    case OXM_IPV6_FLABEL:
        return SP_KEY_OFS(ipv6_label);
    case OXM_TCP_SRC:
    case OXM_UDP_SRC:
    case OXM_SCTP_SRC:
        return SP_KEY_OFS(tp_src);
    case OXM_TCP_DST:
    case OXM_UDP_DST:
    case OXM_SCTP_DST:
        return SP_KEY_OFS(tp_dst);
    case OXM_NX_IP_FRAG:
        return SP_KEY_OFS(nw_frag);
    case OXM_NX_IP_TTL:
        return SP_KEY_OFS(nw_ttl);
    case OXM_NX_TCP_FLAGS:
        return SP_KEY_OFS(tcp_flags);
    default:
        return -1;
    }
}

/* Puts value/mask (network order, 'len' bytes) at key offset ofs, ORed
 * into what is there (fields sharing bytes: vlan_tci, nw_tos). */
static void
set_bytes(struct sp_match *m, size_t ofs, const uint8_t *value,
          const uint8_t *mask, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        m->mask.bytes[ofs + i] |= mask[i];
        m->key.bytes[ofs + i] |= (uint8_t)(value[i] & mask[i]);
    }
}

static void
set16(struct sp_match *m, size_t ofs, uint16_t value, uint16_t mask)
{
    uint8_t v[2] = {(uint8_t)(value >> 8), (uint8_t)value};
    uint8_t k[2] = {(uint8_t)(mask >> 8), (uint8_t)mask};

    set_bytes(m, ofs, v, k, 2);
}

/* Bits a field may have set, for the values that are not whole bytes. */
static uint32_t
value_limit(int id)
{
    switch (id) {
    case OXM_VLAN_VID:
        return 0x1fff;
    case OXM_VLAN_PCP:
        return 7;
    case OXM_IP_DSCP:
        return 63;
    case OXM_IP_ECN:
        return 3;
    case OXM_ARP_OP:
        return 0xff; /* the key keeps the opcode's low byte, as OVS */
    case OXM_IPV6_FLABEL:
        return 0xfffff;
    case OXM_NX_IP_FRAG:
        return 3;
    case OXM_NX_TCP_FLAGS:
        return 0xfff;
    case OXM_MPLS_LABEL:
        return 0xfffff;
    case OXM_MPLS_TC:
        return 7;
    case OXM_MPLS_BOS:
        return 1;
    default:
        return UINT32_MAX;
    }
}

/* Where an MPLS field lies in the label stack entry (RFC 3032). */
static unsigned
mpls_shift(int id)
{
    return id == OXM_MPLS_LABEL ? SP_MPLS_LABEL_SHIFT
           : id == OXM_MPLS_TC  ? SP_MPLS_TC_SHIFT
           : id == OXM_MPLS_BOS ? SP_MPLS_BOS_SHIFT
                                : 0;
}

/* A field's bits, from its largest value or its whole bytes. */
static uint32_t
value_limit_bits(int id)
{
    uint32_t limit = value_limit(id);

    return limit == UINT32_MAX ? (1u << 8 * oxm_defs[id].len) - 1 : limit;
}

static uint32_t
get_n(const uint8_t *p, size_t len)
{
    uint32_t v = 0;

    for (size_t i = 0; i < len && i < 4; i++) {
        v = v << 8 | p[i];
    }
    return v;
}

/* Adds one OXM entry (value, and mask or NULL) to m. */
static int
add_field(struct sp_match *m, int id, const uint8_t *value,
          const uint8_t *mask, struct sp_of_error *err)
{
    const struct oxm_def *d = &oxm_defs[id];
    uint8_t ones[16];
    uint32_t v = get_n(value, d->len);
    int ofs = key_ofs(id);

    memset(ones, 0xff, sizeof ones);
    if (d->len <= 4 && v > value_limit(id)) {
        return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_VALUE,
                          "%s value %#x is above %#x", d->name, v,
                          value_limit(id));
    }
    if (mask && d->len <= 4 && get_n(mask, d->len) > value_limit(id)) {
        return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_MASK,
                          "%s mask %#x has bits above %#x", d->name,
                          get_n(mask, d->len), value_limit(id));
    }
    switch (id) {
    case OXM_IN_PORT:
        if (v == 0 || v > UINT16_MAX) {
            return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_VALUE,
                              "in_port %u: simdpath ports are 1 to 65535", v);
        }
        m->key.in_port = (uint16_t)v;
        m->mask.in_port = UINT16_MAX;
        return 0;
    case OXM_ETH_TYPE:
        if (v < 0x600) {
            return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_VALUE,
                              "eth_type %#x is a length, not a type", v);
        }
        break;
    case OXM_VLAN_VID:
        set16(m, SP_KEY_OFS(vlan_tci), (uint16_t)v,
              mask ? (uint16_t)get_n(mask, 2) : 0x1fff);
        return 0;
    case OXM_VLAN_PCP:
        set16(m, SP_KEY_OFS(vlan_tci), (uint16_t)(v << 13), SP_VLAN_PCP);
        return 0;
    case OXM_IP_DSCP:
        m->key.nw_tos |= (uint8_t)(v << 2);
        m->mask.nw_tos |= 0xfc;
        return 0;
    case OXM_IP_ECN:
        m->key.nw_tos |= (uint8_t)v;
        m->mask.nw_tos |= 0x03;
        return 0;
    case OXM_ICMPV4_TYPE:
    case OXM_ICMPV6_TYPE:
        set16(m, SP_KEY_OFS(tp_src), (uint16_t)v, 0xffff);
        return 0;
    case OXM_ICMPV4_CODE:
    case OXM_ICMPV6_CODE:
        set16(m, SP_KEY_OFS(tp_dst), (uint16_t)v, 0xffff);
        return 0;
    case OXM_ARP_OP:
        m->key.nw_proto = (uint8_t)v;
        m->mask.nw_proto = 0xff;
        return 0;
    case OXM_MPLS_LABEL:
    case OXM_MPLS_TC:
    case OXM_MPLS_BOS:
    case OXM_NX_MPLS_TTL: {
        unsigned shift = mpls_shift(id);

        m->key.mpls_lse |= htonl(v << shift);
        m->mask.mpls_lse |= htonl(value_limit_bits(id) << shift);
        return 0;
    }
    default:
        break;
    }
    set_bytes(m, (size_t)ofs, value, mask ? mask : ones, d->len);
    return 0;
}

int
sp_of_decode_match(const uint8_t *p, size_t avail, struct sp_match *m,
                   size_t *used, struct sp_of_error *err)
{
    uint64_t seen = 0;
    uint16_t type, len;
    size_t ofs;
    struct sp_err verr;

    memset(m, 0, sizeof *m);
    if (avail < 4) {
        return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_LEN,
                          "match header cut short: %zu of 4 bytes", avail);
    }
    type = get16(p);
    len = get16(p + 2);
    if (type != 1) {
        return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_TYPE,
                          "match type %u; only OXM (1) is OpenFlow 1.3's",
                          type);
    }
    if (len < 4 || (size_t)(len + 7) / 8 * 8 > avail) {
        return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_LEN,
                          "match length %u with its padding does not fit "
                          "in the %zu bytes left",
                          len, avail);
    }
    for (ofs = 4; ofs < len;) {
        uint16_t oclass;
        uint8_t field, olen;
        bool hasmask;
        int id;
        const struct oxm_def *d;

        if (len - ofs < 4) {
            return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_LEN,
                              "%zu bytes at match offset %zu: too short "
                              "for an OXM header",
                              len - ofs, ofs);
        }
        oclass = get16(p + ofs);
        field = p[ofs + 2] >> 1;
        hasmask = p[ofs + 2] & 1;
        olen = p[ofs + 3];
        if (olen > len - ofs - 4) {
            return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_LEN,
                              "OXM field %#x:%u of length %u runs past the "
                              "match",
                              oclass, field, olen);
        }
        id = oxm_lookup(oclass, field);
        if (id < 0) {
            return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_FIELD,
                              "OXM field %#x:%u is not one simdpath "
                              "matches (docs/openflow.md)",
                              oclass, field);
        }
        d = &oxm_defs[id];
        if (olen != d->len * (hasmask ? 2 : 1)) {
            return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_LEN,
                              "%s has length %u, expected %u", d->name, olen,
                              d->len * (hasmask ? 2 : 1));
        }
        if (hasmask && !d->maskable) {
            return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_MASK,
                              "%s cannot be masked", d->name);
        }
        if (seen & (1ull << id)) {
            return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_DUP_FIELD,
                              "%s appears twice", d->name);
        }
        if (!prereq_ok(id, m)) {
            return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_PREREQ,
                              "%s needs its prerequisites earlier in the "
                              "match (eth_type, ip_proto or vlan_vid)",
                              d->name);
        }
        seen |= 1ull << id;
        if (add_field(m, id, p + ofs + 4,
                      hasmask ? p + ofs + 4 + d->len : NULL, err)) {
            return -1;
        }
        ofs += 4u + olen;
    }
    if (sp_match_validate(m, &verr)) {
        return sp_of_fail(err, SP_OFPET_BAD_MATCH, SP_OFPBMC_BAD_VALUE, "%s",
                          verr.msg);
    }
    *used = (size_t)(len + 7) / 8 * 8;
    return 0;
}

/* Appends one OXM entry; mask NULL or all ones writes it exact. */
static int
put_oxm(struct sp_of_buf *b, int id, const uint8_t *value, const uint8_t *mask)
{
    const struct oxm_def *d = &oxm_defs[id];
    bool masked = mask && !sp_all_ones(mask, d->len);

    if (sp_of_put16(b, d->oclass)) {
        return -1;
    }
    {
        uint8_t h[2] = {(uint8_t)(d->field << 1 | masked),
                        (uint8_t)(d->len * (masked ? 2 : 1))};

        if (sp_of_put_bytes(b, h, 2) || sp_of_put_bytes(b, value, d->len)) {
            return -1;
        }
    }
    return masked ? sp_of_put_bytes(b, mask, d->len) : 0;
}

static int
put_oxm_n(struct sp_of_buf *b, int id, uint32_t value)
{
    uint8_t v[4];
    size_t len = oxm_defs[id].len;

    for (size_t i = 0; i < len; i++) {
        v[i] = (uint8_t)(value >> (8 * (len - 1 - i)));
    }
    return put_oxm(b, id, v, NULL);
}

/* The key field at ofs, if its mask has any bit. */
static int
put_key(struct sp_of_buf *b, const struct sp_match *m, int id, size_t ofs)
{
    size_t len = oxm_defs[id].len;

    if (!sp_any_set(m->mask.bytes + ofs, len)) {
        return 0;
    }
    return put_oxm(b, id, m->key.bytes + ofs, m->mask.bytes + ofs);
}

static int
put_vlan(struct sp_of_buf *b, const struct sp_match *m)
{
    uint16_t tci = ntohs(m->key.vlan_tci), mask = ntohs(m->mask.vlan_tci);
    uint16_t pcp_mask = mask & SP_VLAN_PCP;

    if (!mask) {
        return 0;
    }
    /* vlan_pcp is all or nothing and needs a tag: otherwise the whole TCI
     * goes as OVS's NXM_OF_VLAN_TCI. */
    if (pcp_mask && (pcp_mask != SP_VLAN_PCP || !has_vlan(m))) {
        uint8_t v[2] = {(uint8_t)(tci >> 8), (uint8_t)tci};
        uint8_t k[2] = {(uint8_t)(mask >> 8), (uint8_t)mask};

        return put_oxm(b, OXM_NX_VLAN_TCI, v, k);
    }
    if (mask & 0x1fff) {
        uint8_t v[2] = {(uint8_t)((tci & 0x1fff) >> 8), (uint8_t)tci};
        uint8_t k[2] = {(uint8_t)((mask & 0x1fff) >> 8), (uint8_t)mask};

        if (put_oxm(b, OXM_VLAN_VID, v, k)) {
            return -1;
        }
    }
    return pcp_mask ? put_oxm_n(b, OXM_VLAN_PCP, tci >> 13) : 0;
}

/* The L4 fields, named by the protocol the match has. */
static int
put_l4(struct sp_of_buf *b, const struct sp_match *m)
{
    int src, dst;
    bool icmp = false;

    if (exact_proto(m, SP_IPPROTO_TCP)) {
        src = OXM_TCP_SRC, dst = OXM_TCP_DST;
    } else if (exact_proto(m, SP_IPPROTO_UDP)) {
        src = OXM_UDP_SRC, dst = OXM_UDP_DST;
    } else if (exact_proto(m, SP_IPPROTO_SCTP)) {
        src = OXM_SCTP_SRC, dst = OXM_SCTP_DST;
    } else if (exact_eth_type(m, SP_ETH_TYPE_IPV4) &&
               exact_proto(m, SP_IPPROTO_ICMP)) {
        src = OXM_ICMPV4_TYPE, dst = OXM_ICMPV4_CODE, icmp = true;
    } else if (exact_eth_type(m, SP_ETH_TYPE_IPV6) &&
               exact_proto(m, SP_IPPROTO_ICMPV6)) {
        src = OXM_ICMPV6_TYPE, dst = OXM_ICMPV6_CODE, icmp = true;
    } else {
        return 0;
    }
    if (icmp) {
        return (m->mask.tp_src &&
                put_oxm_n(b, src, ntohs(m->key.tp_src) & 0xff)) ||
               (m->mask.tp_dst &&
                put_oxm_n(b, dst, ntohs(m->key.tp_dst) & 0xff));
    }
    return put_key(b, m, src, SP_KEY_OFS(tp_src)) ||
           put_key(b, m, dst, SP_KEY_OFS(tp_dst)) ||
           (src == OXM_TCP_SRC &&
            put_key(b, m, OXM_NX_TCP_FLAGS, SP_KEY_OFS(tcp_flags)));
}

static int
put_fields(struct sp_of_buf *b, const struct sp_match *m)
{
    if (m->mask.in_port && put_oxm_n(b, OXM_IN_PORT, m->key.in_port)) {
        return -1;
    }
    if (put_key(b, m, OXM_ETH_DST, SP_KEY_OFS(dl_dst)) ||
        put_key(b, m, OXM_ETH_SRC, SP_KEY_OFS(dl_src)) ||
        put_key(b, m, OXM_ETH_TYPE, SP_KEY_OFS(dl_type)) || put_vlan(b, m)) {
        return -1;
    }
    if (is_mpls_any(m)) {
        static const int ids[] = {OXM_MPLS_LABEL, OXM_MPLS_TC, OXM_MPLS_BOS,
                                  OXM_NX_MPLS_TTL};
        uint32_t lse = ntohl(m->key.mpls_lse);
        uint32_t mask = ntohl(m->mask.mpls_lse);

        for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
            unsigned shift = mpls_shift(ids[i]);
            uint32_t bits = value_limit_bits(ids[i]);

            if (mask >> shift & bits &&
                put_oxm_n(b, ids[i], lse >> shift & bits)) {
                return -1;
            }
        }
        return 0;
    }
    if (is_arp_any(m)) {
        return (m->mask.nw_proto &&
                put_oxm_n(b, OXM_ARP_OP, m->key.nw_proto)) ||
               put_key(b, m, OXM_ARP_SPA, SP_KEY_OFS(nw_src)) ||
               put_key(b, m, OXM_ARP_TPA, SP_KEY_OFS(nw_dst)) ||
               put_key(b, m, OXM_ARP_SHA,
                       SP_KEY_OFS(nw_src) + SP_ARP_HA_OFS) ||
               put_key(b, m, OXM_ARP_THA, SP_KEY_OFS(nw_dst) + SP_ARP_HA_OFS);
    }
    if (!is_ip_any(m)) {
        return 0;
    }
    if ((m->mask.nw_tos & 0xfc) &&
        put_oxm_n(b, OXM_IP_DSCP, m->key.nw_tos >> 2)) {
        return -1;
    }
    if ((m->mask.nw_tos & 0x03) &&
        put_oxm_n(b, OXM_IP_ECN, m->key.nw_tos & 3)) {
        return -1;
    }
    if (put_key(b, m, OXM_IP_PROTO, SP_KEY_OFS(nw_proto)) ||
        put_key(b, m, OXM_NX_IP_TTL, SP_KEY_OFS(nw_ttl)) ||
        put_key(b, m, OXM_NX_IP_FRAG, SP_KEY_OFS(nw_frag))) {
        return -1;
    }
    if (exact_eth_type(m, SP_ETH_TYPE_IPV4)) {
        if (put_key(b, m, OXM_IPV4_SRC, SP_KEY_OFS(nw_src)) ||
            put_key(b, m, OXM_IPV4_DST, SP_KEY_OFS(nw_dst))) {
            return -1;
        }
    } else if (put_key(b, m, OXM_IPV6_SRC, SP_KEY_OFS(nw_src)) ||
               put_key(b, m, OXM_IPV6_DST, SP_KEY_OFS(nw_dst)) ||
               put_key(b, m, OXM_IPV6_FLABEL, SP_KEY_OFS(ipv6_label))) {
        return -1;
    }
    return put_l4(b, m);
}

int
sp_of_encode_match(struct sp_of_buf *b, const struct sp_match *m)
{
    size_t start = b->len;
    /* OpenFlow 1.3 has no field for the inner VLAN tag: without its bits,
     * which share tcp_flags' and ipv6_label's (flow_key.h). */
    struct sp_match outer = *m;

    sp_key_set_vlan_tci1(&outer.key, 0);
    sp_key_set_vlan_tci1(&outer.mask, 0);
    if (sp_of_put16(b, 1) || sp_of_put16(b, 0) || put_fields(b, &outer)) {
        return -1;
    }
    sp_of_set16(b, start + 2, (uint16_t)(b->len - start));
    return sp_of_pad8(b, start);
}

/* Whether set_field can set the field (decode_set_field's list). */
static bool
settable(int id)
{
    switch (id) {
    case OXM_ETH_DST:
    case OXM_ETH_SRC:
    case OXM_VLAN_VID:
    case OXM_VLAN_PCP:
    case OXM_IP_DSCP:
    case OXM_IP_ECN:
    case OXM_IPV4_SRC:
    case OXM_IPV4_DST:
    case OXM_TCP_SRC:
    case OXM_TCP_DST:
    case OXM_UDP_SRC:
    case OXM_UDP_DST:
    case OXM_SCTP_SRC:
    case OXM_SCTP_DST:
    case OXM_IPV6_SRC:
    case OXM_IPV6_DST:
        return true;
    default:
        return false;
    }
}

int
sp_of_put_oxm_ids(struct sp_of_buf *b, enum sp_of_oxm_ids which)
{
    for (int id = 0; id < OXM_COUNT; id++) {
        const struct oxm_def *d = &oxm_defs[id];
        bool mask = which == SP_OF_OXM_IDS_MATCH && d->maskable;

        if (which == SP_OF_OXM_IDS_SET_FIELD && !settable(id)) {
            continue;
        }
        if (sp_of_put16(b, d->oclass) ||
            sp_of_put_bytes(b,
                            (uint8_t[]){(uint8_t)(d->field << 1 | mask),
                                        (uint8_t)(d->len * (mask ? 2 : 1))},
                            2)) {
            return -1;
        }
    }
    return 0;
}

/* ---- actions ---- */

#define OFPAT_OUTPUT       0
#define OFPAT_SET_QUEUE    21
#define OFPAT_GROUP        22
#define OFPAT_PUSH_VLAN    17
#define OFPAT_POP_VLAN     18
#define OFPAT_SET_NW_TTL   23
#define OFPAT_DEC_NW_TTL   24
#define OFPAT_SET_FIELD    25
#define OFPAT_EXPERIMENTER 0xffff

#define OFPIT_GOTO_TABLE     1
#define OFPIT_WRITE_METADATA 2
#define OFPIT_WRITE_ACTIONS  3
#define OFPIT_APPLY_ACTIONS  4
#define OFPIT_CLEAR_ACTIONS  5
#define OFPIT_METER          6
#define OFPIT_EXPERIMENTER   0xffff

/* The action text being built and what the packet has at this point. */
struct act_text {
    char *buf;
    size_t len;
    const struct sp_match *match;
    bool vlan; /* a tag is there: matched, or pushed */
    unsigned ports;
    /* A PACKET_OUT's: its in_port, and whether it goes to the rules
     * (OFPP_TABLE). */
    bool packet_out, table;
    uint32_t in_port;
};

static int
emit(struct act_text *t, struct sp_of_error *err, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->len) {
        if (t->len + 1 >= SP_OF_ACTIONS_MAX) {
            goto full;
        }
        t->buf[t->len++] = ',';
    }
    va_start(ap, fmt);
    n = vsnprintf(t->buf + t->len, SP_OF_ACTIONS_MAX - t->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= SP_OF_ACTIONS_MAX - t->len) {
        goto full;
    }
    t->len += (size_t)n;
    return 0;
full:
    return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_TOO_MANY,
                      "the actions take more than %d bytes as text",
                      SP_OF_ACTIONS_MAX - 1);
}

static int
inconsistent(struct sp_of_error *err, const char *what, const char *needs)
{
    return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_MATCH_INCONSISTENT,
                      "%s needs %s in the match", what, needs);
}

/* The reserved ports an output to which the actions keep as such, by the
 * name sp_actions_format() gives them: a packet's in_port is known only
 * as it runs. simdpath has no port kept out of floods: FLOOD is ALL. */
static const struct {
    uint32_t port;
    const char *name;
} reserved[] = {
    {SP_OFPP_IN_PORT, "IN_PORT"},
    {SP_OFPP_FLOOD, "FLOOD"},
    {SP_OFPP_ALL, "ALL"},
};

/* The name of a reserved port in reserved[], or NULL. */
static const char *
reserved_name(uint32_t port)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) {
        if (reserved[i].port == port) {
            return reserved[i].name;
        }
    }
    return NULL;
}

static int
decode_output(struct act_text *t, uint32_t port, uint16_t max_len,
              struct sp_of_error *err)
{
    if (t->table) {
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_ARGUMENT,
                          "output:TABLE must be a PACKET_OUT's only "
                          "action");
    }
    if (port >= 1 && port <= t->ports) {
        return emit(t, err, "output:%u", port);
    }
    if (port == SP_OFPP_CONTROLLER) {
        return max_len == SP_OFPCML_NO_BUFFER
                   ? emit(t, err, "controller")
                   : emit(t, err, "controller:%u", max_len);
    }
    if (t->packet_out && port == SP_OFPP_TABLE) {
        if (t->len) {
            return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_ARGUMENT,
                              "output:TABLE must be a PACKET_OUT's only "
                              "action");
        }
        t->table = true;
        return 0;
    }
    if (port == SP_OFPP_IN_PORT && t->packet_out &&
        (t->in_port < 1 || t->in_port > t->ports)) {
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_OUT_PORT,
                          "output:IN_PORT with in_port %#x, not a port",
                          t->in_port);
    }
    if (reserved_name(port)) {
        return emit(t, err, "%s", reserved_name(port));
    }
    return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_OUT_PORT,
                      "output to port %#x: the ports are 1 to %u", port,
                      t->ports);
}

static int
decode_set_field(struct act_text *t, const uint8_t *a, uint16_t alen,
                 struct sp_of_error *err)
{
    const struct sp_match *m = t->match;
    uint16_t oclass;
    uint8_t olen;
    int id;
    const uint8_t *v;
    uint32_t n;
    char addr[INET6_ADDRSTRLEN];

    /* decode_actions() checked alen >= 8: the OXM header is there. */
    oclass = get16(a + 4);
    olen = a[7];
    if ((size_t)olen + 8 > alen || (olen + 8 + 7) / 8 * 8 != alen) {
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_SET_LEN,
                          "set_field with a %u-byte field in %u bytes", olen,
                          alen);
    }
    if (a[6] & 1) {
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_SET_ARGUMENT,
                          "set_field with a mask (OpenFlow 1.5's)");
    }
    id = oxm_lookup(oclass, a[6] >> 1);
    if (id < 0 || oclass != OXM_CLASS_BASIC) {
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_SET_TYPE,
                          "set_field of OXM %#x:%u, which simdpath does not "
                          "set",
                          oclass, a[6] >> 1);
    }
    if (olen != oxm_defs[id].len) {
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_SET_LEN,
                          "set_field %s of length %u, expected %u",
                          oxm_defs[id].name, olen, oxm_defs[id].len);
    }
    v = a + 8;
    n = get_n(v, olen);
    if (olen <= 4 && n > value_limit(id)) {
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_SET_ARGUMENT,
                          "set_field %s value %#x is above %#x",
                          oxm_defs[id].name, n, value_limit(id));
    }
    if (!prereq_ok(id, m) && id != OXM_VLAN_PCP) {
        return inconsistent(err, oxm_defs[id].name,
                            "the field's prerequisites");
    }
    switch (id) {
    case OXM_ETH_DST:
    case OXM_ETH_SRC:
        return emit(t, err, "mod_dl_%s:%02x:%02x:%02x:%02x:%02x:%02x",
                    id == OXM_ETH_DST ? "dst" : "src", v[0], v[1], v[2], v[3],
                    v[4], v[5]);
    case OXM_VLAN_VID:
    case OXM_VLAN_PCP:
        if (!t->vlan) {
            return inconsistent(err, oxm_defs[id].name,
                                "a VLAN tag (or a push_vlan before)");
        }
        return id == OXM_VLAN_VID ? emit(t, err, "mod_vlan_vid:%u", n & 0xfff)
                                  : emit(t, err, "mod_vlan_pcp:%u", n);
    case OXM_IP_DSCP:
    case OXM_IP_ECN:
        if (!exact_eth_type(m, SP_ETH_TYPE_IPV4)) {
            return sp_of_fail(err, SP_OFPET_BAD_ACTION,
                              SP_OFPBAC_BAD_SET_ARGUMENT,
                              "set_field %s on IPv6: simdpath sets the "
                              "traffic class only whole",
                              oxm_defs[id].name);
        }
        return id == OXM_IP_DSCP ? emit(t, err, "mod_nw_tos:%u", n << 2)
                                 : emit(t, err, "mod_nw_ecn:%u", n);
    case OXM_IPV4_SRC:
    case OXM_IPV4_DST:
        inet_ntop(AF_INET, v, addr, sizeof addr);
        return emit(t, err, "mod_nw_%s:%s", id == OXM_IPV4_SRC ? "src" : "dst",
                    addr);
    case OXM_IPV6_SRC:
    case OXM_IPV6_DST:
        inet_ntop(AF_INET6, v, addr, sizeof addr);
        return emit(t, err, "set_field:%s->ipv6_%s", addr,
                    id == OXM_IPV6_SRC ? "src" : "dst");
    case OXM_TCP_SRC:
    case OXM_UDP_SRC:
    case OXM_SCTP_SRC:
        return emit(t, err, "mod_tp_src:%u", n);
    case OXM_TCP_DST:
    case OXM_UDP_DST:
    case OXM_SCTP_DST:
        return emit(t, err, "mod_tp_dst:%u", n);
    default:
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_SET_TYPE,
                          "set_field %s: simdpath has no action that sets "
                          "it",
                          oxm_defs[id].name);
    }
}

/* Decodes one action at a (alen bytes, already bounds-checked). */
static int
decode_action(struct act_text *t, const uint8_t *a, uint16_t type,
              uint16_t alen, struct sp_of_error *err)
{
    const struct sp_match *m = t->match;
    uint16_t want = type == OFPAT_OUTPUT ? 16 : 8;

    switch (type) {
    case OFPAT_OUTPUT:
    case OFPAT_PUSH_VLAN:
    case OFPAT_POP_VLAN:
    case OFPAT_SET_NW_TTL:
    case OFPAT_DEC_NW_TTL:
    case OFPAT_GROUP:
    case OFPAT_SET_QUEUE:
        if (alen != want) {
            return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_LEN,
                              "action type %u of %u bytes, expected %u", type,
                              alen, want);
        }
        break;
    default:
        break;
    }
    switch (type) {
    case OFPAT_OUTPUT:
        return decode_output(t, get32(a + 4), get16(a + 8), err);
    case OFPAT_PUSH_VLAN: {
        uint16_t tpid = get16(a + 4);

        if (tpid != SP_ETH_TYPE_VLAN && tpid != SP_ETH_TYPE_QINQ) {
            return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_ARGUMENT,
                              "push_vlan of type %#06x; 0x8100 or 0x88a8",
                              tpid);
        }
        t->vlan = true;
        return emit(t, err, "push_vlan:%#06x", tpid);
    }
    case OFPAT_POP_VLAN:
        if (!t->vlan) {
            return inconsistent(err, "pop_vlan", "a VLAN tag");
        }
        t->vlan = false;
        return emit(t, err, "strip_vlan");
    case OFPAT_SET_NW_TTL:
        if (exact_eth_type(m, SP_ETH_TYPE_IPV4)) {
            return emit(t, err, "mod_nw_ttl:%u", a[4]);
        }
        if (exact_eth_type(m, SP_ETH_TYPE_IPV6)) {
            return emit(t, err, "set_field:%u->ipv6_hlimit", a[4]);
        }
        return inconsistent(err, "set_nw_ttl", "IPv4 or IPv6");
    case OFPAT_DEC_NW_TTL:
        if (!is_ip_any(m)) {
            return inconsistent(err, "dec_nw_ttl", "IPv4 or IPv6");
        }
        return emit(t, err, "dec_ttl");
    case OFPAT_SET_FIELD:
        return decode_set_field(t, a, alen, err);
    case OFPAT_GROUP:
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_OUT_GROUP,
                          "group %u: simdpath has no groups", get32(a + 4));
    case OFPAT_SET_QUEUE:
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_QUEUE,
                          "set_queue %u: simdpath has no queues",
                          get32(a + 4));
    case OFPAT_EXPERIMENTER:
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_EXPERIMENTER,
                          "experimenter actions are not supported");
    default:
        return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_TYPE,
                          "action type %u is not one simdpath has "
                          "(docs/openflow.md)",
                          type);
    }
}

static int
decode_actions(struct act_text *t, const uint8_t *p, size_t len,
               struct sp_of_error *err)
{
    for (size_t ofs = 0; ofs < len;) {
        uint16_t type, alen;

        if (len - ofs < 8) {
            return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_LEN,
                              "%zu bytes left: too short for an action",
                              len - ofs);
        }
        type = get16(p + ofs);
        alen = get16(p + ofs + 2);
        if (alen < 8 || alen % 8 || alen > len - ofs) {
            return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_LEN,
                              "action type %u of length %u in %zu bytes", type,
                              alen, len - ofs);
        }
        if (t->table) {
            return sp_of_fail(err, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_ARGUMENT,
                              "output:TABLE must be a PACKET_OUT's only "
                              "action");
        }
        if (decode_action(t, p + ofs, type, alen, err)) {
            return -1;
        }
        ofs += alen;
    }
    return 0;
}

/* Decodes the instructions of a FLOW_MOD into action text. */
static int
decode_instructions(const uint8_t *p, size_t len, unsigned n_ports,
                    struct sp_of_flow_mod *fm, struct sp_of_error *err)
{
    struct act_text t = {.buf = fm->actions,
                         .match = &fm->match,
                         .vlan = has_vlan(&fm->match),
                         .ports = n_ports};
    bool applied = false;

    fm->actions[0] = '\0';
    for (size_t ofs = 0; ofs < len;) {
        uint16_t type, ilen;

        if (len - ofs < 4) {
            return sp_of_fail(err, SP_OFPET_BAD_INSTRUCTION, SP_OFPBIC_BAD_LEN,
                              "%zu bytes left: too short for an "
                              "instruction",
                              len - ofs);
        }
        type = get16(p + ofs);
        ilen = get16(p + ofs + 2);
        if (ilen < 8 || ilen % 8 || ilen > len - ofs) {
            return sp_of_fail(err, SP_OFPET_BAD_INSTRUCTION, SP_OFPBIC_BAD_LEN,
                              "instruction type %u of length %u in %zu "
                              "bytes",
                              type, ilen, len - ofs);
        }
        switch (type) {
        case OFPIT_APPLY_ACTIONS:
            if (applied) {
                return sp_of_fail(err, SP_OFPET_BAD_INSTRUCTION,
                                  SP_OFPBIC_UNSUP_INST,
                                  "two apply-actions instructions");
            }
            applied = true;
            if (decode_actions(&t, p + ofs + 8, ilen - 8u, err)) {
                return -1;
            }
            break;
        case OFPIT_CLEAR_ACTIONS:
            /* One table and no write-actions: the action set is always
             * empty, so clearing it does nothing. */
            if (ilen != 8) {
                return sp_of_fail(err, SP_OFPET_BAD_INSTRUCTION,
                                  SP_OFPBIC_BAD_LEN,
                                  "clear-actions of %u bytes", ilen);
            }
            break;
        case OFPIT_GOTO_TABLE:
            return sp_of_fail(err, SP_OFPET_BAD_INSTRUCTION,
                              SP_OFPBIC_BAD_TABLE_ID,
                              "goto-table: simdpath has one table");
        case OFPIT_WRITE_METADATA:
        case OFPIT_WRITE_ACTIONS:
            return sp_of_fail(err, SP_OFPET_BAD_INSTRUCTION,
                              SP_OFPBIC_UNSUP_INST,
                              "instruction %s: simdpath has only "
                              "apply-actions",
                              type == OFPIT_WRITE_ACTIONS ? "write-actions"
                                                          : "write-metadata");
        case OFPIT_METER:
            return sp_of_fail(err, SP_OFPET_METER_MOD_FAILED,
                              SP_OFPMMFC_INVALID_METER,
                              "meter %u: simdpath has no meters",
                              ilen >= 8 ? get32(p + ofs + 4) : 0);
        case OFPIT_EXPERIMENTER:
            return sp_of_fail(err, SP_OFPET_BAD_INSTRUCTION,
                              SP_OFPBIC_BAD_EXPERIMENTER,
                              "experimenter instructions are not supported");
        default:
            return sp_of_fail(err, SP_OFPET_BAD_INSTRUCTION,
                              SP_OFPBIC_UNKNOWN_INST,
                              "unknown instruction type %u", type);
        }
        ofs += ilen;
    }
    if (!t.len) {
        snprintf(fm->actions, SP_OF_ACTIONS_MAX, "drop");
    }
    return 0;
}

#define FLOW_MOD_FIXED 48 /* header to the match */

int
sp_of_decode_flow_mod(const uint8_t *msg, size_t len, unsigned n_ports,
                      struct sp_of_flow_mod *fm, struct sp_of_error *err)
{
    size_t match_len;
    bool del;

    memset(fm, 0, sizeof *fm);
    if (len < FLOW_MOD_FIXED + 8) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                          "flow_mod of %zu bytes; at least %d", len,
                          FLOW_MOD_FIXED + 8);
    }
    fm->cookie = get64(msg + 8);
    fm->cookie_mask = get64(msg + 16);
    fm->table_id = msg[24];
    fm->command = msg[25];
    fm->idle_timeout = get16(msg + 26);
    fm->hard_timeout = get16(msg + 28);
    fm->priority = get16(msg + 30);
    fm->buffer_id = get32(msg + 32);
    fm->out_port = get32(msg + 36);
    fm->out_group = get32(msg + 40);
    fm->flags = get16(msg + 44);
    if (fm->command > SP_OFPFC_DELETE_STRICT) {
        return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED,
                          SP_OFPFMFC_BAD_COMMAND, "flow_mod command %u",
                          fm->command);
    }
    del = fm->command >= SP_OFPFC_DELETE;
    if (fm->table_id != 0 && !(del && fm->table_id == SP_OFPTT_ALL)) {
        return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED,
                          SP_OFPFMFC_BAD_TABLE_ID,
                          "table %u: simdpath has one table, 0", fm->table_id);
    }
    if (fm->flags & ~(SP_OFPFF_SEND_FLOW_REM | SP_OFPFF_CHECK_OVERLAP |
                      SP_OFPFF_RESET_COUNTS | SP_OFPFF_NO_PKT_COUNTS |
                      SP_OFPFF_NO_BYT_COUNTS)) {
        return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_BAD_FLAGS,
                          "flow_mod flags %#x", fm->flags);
    }
    if (!del && fm->buffer_id != SP_OFP_NO_BUFFER) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BUFFER_UNKNOWN,
                          "buffer %u: simdpath buffers no packets",
                          fm->buffer_id);
    }
    if (sp_of_decode_match(msg + FLOW_MOD_FIXED, len - FLOW_MOD_FIXED,
                           &fm->match, &match_len, err)) {
        return -1;
    }
    if (del) {
        /* A delete's instructions are ignored (OpenFlow 1.3, 6.4). */
        snprintf(fm->actions, SP_OF_ACTIONS_MAX, "drop");
        return 0;
    }
    return decode_instructions(msg + FLOW_MOD_FIXED + match_len,
                               len - FLOW_MOD_FIXED - match_len, n_ports, fm,
                               err);
}

#define PACKET_OUT_FIXED 24 /* header to the actions */

int
sp_of_decode_packet_out(const uint8_t *msg, size_t len, unsigned n_ports,
                        sp_of_frame_match_fn *frame_match, void *aux,
                        struct sp_of_packet_out *po, struct sp_of_error *err)
{
    struct sp_match match;
    struct act_text t = {
        .buf = po->actions, .ports = n_ports, .packet_out = true};
    uint32_t buffer_id;
    uint16_t actions_len;

    memset(po, 0, sizeof *po);
    if (len < PACKET_OUT_FIXED) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                          "packet_out of %zu bytes; at least %d", len,
                          PACKET_OUT_FIXED);
    }
    buffer_id = get32(msg + 8);
    po->in_port = get32(msg + 12);
    actions_len = get16(msg + 16);
    if (actions_len % 8 || actions_len > len - PACKET_OUT_FIXED) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                          "packet_out actions_len %u in %zu bytes after the "
                          "header (a multiple of 8 that fits)",
                          actions_len, len - PACKET_OUT_FIXED);
    }
    if (buffer_id != SP_OFP_NO_BUFFER) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BUFFER_UNKNOWN,
                          "buffer %u: simdpath buffers no packets", buffer_id);
    }
    if ((po->in_port < 1 || po->in_port > n_ports) &&
        po->in_port != SP_OFPP_CONTROLLER) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_PORT,
                          "packet_out in_port %#x: the ports are 1 to %u, "
                          "or CONTROLLER",
                          po->in_port, n_ports);
    }
    po->data = msg + PACKET_OUT_FIXED + actions_len;
    po->len = len - PACKET_OUT_FIXED - actions_len;
    if (!po->len) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                          "packet_out without a frame (simdpath buffers "
                          "none to send)");
    }
    /* Set-fields are checked against the frame's own headers, as OVS
     * checks a PACKET_OUT's actions against its flow. */
    frame_match(aux, po->data, po->len, po->in_port, &match);
    t.match = &match;
    t.vlan = has_vlan(&match);
    t.in_port = po->in_port;
    if (decode_actions(&t, msg + PACKET_OUT_FIXED, actions_len, err)) {
        return -1;
    }
    po->table = t.table;
    if (!t.len) {
        snprintf(po->actions, SP_OF_ACTIONS_MAX, "drop");
    }
    return 0;
}

int
sp_of_encode_packet_in(struct sp_of_buf *b, const struct sp_of_packet_in *pin)
{
    size_t start = b->len, match;
    uint32_t data_len =
        pin->max_len == SP_OFPCML_NO_BUFFER || pin->len < pin->max_len
            ? pin->len
            : pin->max_len;

    /* The match holds in_port only: the fields OVS adds besides it
     * (metadata, tunnel) simdpath does not have. */
    if (sp_of_header(b, SP_OFPT_PACKET_IN, 0) ||
        sp_of_put32(b, SP_OFP_NO_BUFFER) ||
        sp_of_put16(
            b, (uint16_t)(pin->len > UINT16_MAX ? UINT16_MAX : pin->len)) ||
        sp_of_put_bytes(b, (uint8_t[]){pin->reason, 0}, 2) ||
        sp_of_put64(b, pin->cookie)) {
        b->len = start;
        return -1;
    }
    match = b->len;
    if (sp_of_put16(b, 1) || sp_of_put16(b, 0) ||
        put_oxm_n(b, OXM_IN_PORT, pin->in_port)) {
        b->len = start;
        return -1;
    }
    sp_of_set16(b, match + 2, (uint16_t)(b->len - match));
    if (sp_of_pad8(b, match) || !sp_of_buf_put(b, 2) ||
        sp_of_put_bytes(b, pin->data, data_len)) {
        b->len = start;
        return -1;
    }
    sp_of_finish(b, start);
    return 0;
}

/* ---- encoding actions from text ---- */

static int
put_action_hdr(struct sp_of_buf *b, uint16_t type, uint16_t len)
{
    return sp_of_put16(b, type) || sp_of_put16(b, len);
}

static int
put_set_field(struct sp_of_buf *b, int id, const uint8_t *value)
{
    size_t start = b->len;

    if (put_action_hdr(b, OFPAT_SET_FIELD, 0) || put_oxm(b, id, value, NULL) ||
        sp_of_pad8(b, start)) {
        return -1;
    }
    sp_of_set16(b, start + 2, (uint16_t)(b->len - start));
    return 0;
}

static int
put_set_field_n(struct sp_of_buf *b, int id, uint32_t n)
{
    uint8_t v[4];
    size_t len = oxm_defs[id].len;

    for (size_t i = 0; i < len; i++) {
        v[i] = (uint8_t)(n >> (8 * (len - 1 - i)));
    }
    return put_set_field(b, id, v);
}

static int
parse_mac(const char *s, uint8_t mac[6])
{
    unsigned x[6];
    char end;

    if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &x[0], &x[1], &x[2], &x[3], &x[4],
               &x[5], &end) != 6) {
        return -1;
    }
    for (int i = 0; i < 6; i++) {
        mac[i] = (uint8_t)x[i];
    }
    return 0;
}

/* The OpenFlow port of an output sp_actions_format() writes by its
 * name, or 0. */
static uint32_t
reserved_port(const char *name)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++) {
        if (!strcmp(name, reserved[i].name)) {
            return reserved[i].port;
        }
    }
    return 0;
}

/* One action as sp_actions_format() writes it. */
static int
encode_one(struct sp_of_buf *b, const char *name, const char *value,
           const struct sp_match *m)
{
    unsigned long n = value ? strtoul(value, NULL, 0) : 0;
    uint8_t bytes[16];

    uint32_t port = reserved_port(name);

    if (port || !strcmp(name, "output")) {
        return put_action_hdr(b, OFPAT_OUTPUT, 16) ||
               sp_of_put32(b, port ? port : (uint32_t)n) ||
               sp_of_put16(b, 0) || !sp_of_buf_put(b, 6);
    }
    if (!strcmp(name, "controller")) {
        return put_action_hdr(b, OFPAT_OUTPUT, 16) ||
               sp_of_put32(b, SP_OFPP_CONTROLLER) ||
               sp_of_put16(b, value ? (uint16_t)n : SP_OFPCML_NO_BUFFER) ||
               !sp_of_buf_put(b, 6);
    }
    if (!strcmp(name, "dec_ttl")) {
        return put_action_hdr(b, OFPAT_DEC_NW_TTL, 8) || !sp_of_buf_put(b, 4);
    }
    if (!strcmp(name, "strip_vlan")) {
        return put_action_hdr(b, OFPAT_POP_VLAN, 8) || !sp_of_buf_put(b, 4);
    }
    if (!strcmp(name, "push_vlan")) {
        return put_action_hdr(b, OFPAT_PUSH_VLAN, 8) ||
               sp_of_put16(b, (uint16_t)n) || !sp_of_buf_put(b, 2);
    }
    if (!strcmp(name, "mod_nw_ttl") || !strcmp(name, "ipv6_hlimit")) {
        return put_action_hdr(b, OFPAT_SET_NW_TTL, 8) ||
               sp_of_put_bytes(b, (uint8_t[]){(uint8_t)n}, 1) ||
               !sp_of_buf_put(b, 3);
    }
    if (!strcmp(name, "mod_dl_src") || !strcmp(name, "mod_dl_dst")) {
        if (!value || parse_mac(value, bytes)) {
            return -1;
        }
        return put_set_field(b, name[7] == 's' ? OXM_ETH_SRC : OXM_ETH_DST,
                             bytes);
    }
    if (!strcmp(name, "mod_nw_src") || !strcmp(name, "mod_nw_dst")) {
        if (!value || inet_pton(AF_INET, value, bytes) != 1) {
            return -1;
        }
        return put_set_field(b, name[7] == 's' ? OXM_IPV4_SRC : OXM_IPV4_DST,
                             bytes);
    }
    if (!strcmp(name, "ipv6_src") || !strcmp(name, "ipv6_dst")) {
        if (!value || inet_pton(AF_INET6, value, bytes) != 1) {
            return -1;
        }
        return put_set_field(b, name[5] == 's' ? OXM_IPV6_SRC : OXM_IPV6_DST,
                             bytes);
    }
    if (!strcmp(name, "mod_nw_tos")) {
        return put_set_field_n(b, OXM_IP_DSCP, (uint32_t)(n >> 2));
    }
    if (!strcmp(name, "mod_nw_ecn")) {
        return put_set_field_n(b, OXM_IP_ECN, (uint32_t)n & 3);
    }
    if (!strcmp(name, "ipv6_tclass")) {
        return put_set_field_n(b, OXM_IP_DSCP, (uint32_t)(n >> 2)) ||
               put_set_field_n(b, OXM_IP_ECN, (uint32_t)n & 3);
    }
    if (!strcmp(name, "mod_vlan_vid")) {
        return put_set_field_n(b, OXM_VLAN_VID, (uint32_t)n | SP_VLAN_PRESENT);
    }
    if (!strcmp(name, "mod_vlan_pcp")) {
        return put_set_field_n(b, OXM_VLAN_PCP, (uint32_t)n);
    }
    if (!strcmp(name, "mod_tp_src") || !strcmp(name, "mod_tp_dst")) {
        bool src = name[7] == 's';
        int id = exact_proto(m, SP_IPPROTO_UDP)    ? OXM_UDP_SRC
                 : exact_proto(m, SP_IPPROTO_SCTP) ? OXM_SCTP_SRC
                                                   : OXM_TCP_SRC;

        return put_set_field_n(b, src ? id : id + 1, (uint32_t)n);
    }
    return -1;
}

int
sp_of_encode_actions(struct sp_of_buf *b, const char *actions,
                     const struct sp_match *match)
{
    char text[SP_OF_ACTIONS_MAX];
    size_t start = b->len;
    char *save = NULL;

    if (!*actions || !strcmp(actions, "drop")) {
        return 0;
    }
    if (strlen(actions) >= sizeof text) {
        return -1;
    }
    strcpy(text, actions);
    if (put_action_hdr(b, OFPIT_APPLY_ACTIONS, 0) || !sp_of_buf_put(b, 4)) {
        return -1;
    }
    for (char *tok = strtok_r(text, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        char *arrow = strstr(tok, "->");
        int rc;

        if (!strncmp(tok, "set_field:", 10) && arrow) {
            *arrow = '\0';
            rc = encode_one(b, arrow + 2, tok + 10, match);
        } else {
            if (colon) {
                *colon = '\0';
            }
            rc = encode_one(b, tok, colon ? colon + 1 : NULL, match);
        }
        if (rc) {
            b->len = start;
            return -1;
        }
    }
    sp_of_set16(b, start + 2, (uint16_t)(b->len - start));
    return 0;
}

int
sp_of_encode_flow_mod(struct sp_of_buf *b, uint32_t xid,
                      const struct sp_of_flow_mod *fm)
{
    size_t start = b->len;

    if (sp_of_header(b, SP_OFPT_FLOW_MOD, xid) || sp_of_put64(b, fm->cookie) ||
        sp_of_put64(b, fm->cookie_mask) ||
        sp_of_put_bytes(b, (uint8_t[]){fm->table_id, fm->command}, 2) ||
        sp_of_put16(b, fm->idle_timeout) || sp_of_put16(b, fm->hard_timeout) ||
        sp_of_put16(b, fm->priority) || sp_of_put32(b, fm->buffer_id) ||
        sp_of_put32(b, fm->out_port) || sp_of_put32(b, fm->out_group) ||
        sp_of_put16(b, fm->flags) || !sp_of_buf_put(b, 2) ||
        sp_of_encode_match(b, &fm->match) ||
        (fm->command < SP_OFPFC_DELETE &&
         sp_of_encode_actions(b, fm->actions, &fm->match))) {
        b->len = start;
        return -1;
    }
    sp_of_finish(b, start);
    return 0;
}

/* ---- selection ---- */

/* Whether f's action text outputs to port. */
static bool
outputs_to(const char *actions, uint32_t port)
{
    const char *name =
        port == SP_OFPP_CONTROLLER ? "controller" : reserved_name(port);
    char want[24];
    size_t n = name ? (size_t)snprintf(want, sizeof want, "%s", name)
                    : (size_t)snprintf(want, sizeof want, "output:%u", port);

    for (const char *p = strstr(actions, want); p; p = strstr(p + 1, want)) {
        if ((p == actions || p[-1] == ',') &&
            (p[n] == ',' || !p[n] ||
             (port == SP_OFPP_CONTROLLER && p[n] == ':'))) {
            return true;
        }
    }
    return false;
}

bool
sp_of_flow_selected(const struct sp_of_flow_mod *sel,
                    const struct sp_of_flow *f, bool strict)
{
    if ((f->cookie ^ sel->cookie) & sel->cookie_mask) {
        return false;
    }
    if (sel->out_port != SP_OFPP_ANY &&
        !outputs_to(f->actions, sel->out_port)) {
        return false;
    }
    if (sel->out_group != SP_OFPG_ANY) {
        return false; /* no rule outputs to a group */
    }
    if (strict) {
        return f->priority == sel->priority &&
               !memcmp(&f->match, &sel->match, sizeof f->match);
    }
    for (unsigned i = 0; i < SP_FLOW_KEY_BLOCKS; i++) {
        uint64_t m = sel->match.mask.blocks[i];

        if ((f->match.mask.blocks[i] & m) != m ||
            (f->match.key.blocks[i] & m) != sel->match.key.blocks[i]) {
            return false;
        }
    }
    return true;
}

void
sp_of_rule_text(char *buf, size_t size, const struct sp_match *m,
                uint16_t priority, const char *actions)
{
    char match[SP_OF_MATCH_TEXT_MAX];

    sp_flow_format(&m->key, &m->mask, match, sizeof match);
    snprintf(buf, size, "priority=%u%s%s,actions=%s", priority,
             match[0] ? "," : "", match, actions);
}
