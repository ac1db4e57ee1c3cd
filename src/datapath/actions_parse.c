/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The action part of a flow rule (docs/flow-syntax.md): parsing, checking
 * it against the rule's match, compiling it into steps, and printing it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/csum.h"
#include "common/proto.h"
#include "datapath/actions_internal.h"
#include "generic/ipv4_rewrite.h"

struct parser {
    const char *text;
    sp_port_exists_fn *port_exists;
    void *aux;
    struct sp_err *err;
    /* What the match guarantees; 'tagged' follows push/strip_vlan. */
    bool ipv4, ipv6, tagged;
    uint8_t l4_proto; /* TCP, UDP or SCTP when exact, else 0 */
    /* Any exact nw_proto of IPv4 or IPv6, else 0: the IPv6 sets' L4
     * checksum (ICMPv6 too) past extension headers. */
    uint8_t ip_proto;
    uint32_t n;
    struct sp_action actions[SP_ACTIONS_MAX];
    size_t offsets[SP_ACTIONS_MAX]; /* where each action starts */
};

static int __attribute__((format(printf, 3, 4)))
fail(struct parser *p, size_t ofs, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sp_err_vset(p->err, fmt, ap);
    va_end(ap);
    if (p->err) {
        p->err->column = (unsigned)ofs + 1;
    }
    return -1;
}

static void
read_guarantees(struct parser *p, const struct sp_match *m)
{
    bool type_exact = sp_load_be16(&m->mask.dl_type) == 0xffff;
    uint16_t type = sp_load_be16(&m->key.dl_type);
    uint8_t proto = m->key.nw_proto;
    uint16_t present = SP_VLAN_PRESENT;

    p->ipv4 = type_exact && type == SP_ETH_TYPE_IPV4;
    p->ipv6 = type_exact && type == SP_ETH_TYPE_IPV6;
    p->tagged = (sp_load_be16(&m->mask.vlan_tci) & present) &&
                (sp_load_be16(&m->key.vlan_tci) & present);
    p->ip_proto = (p->ipv4 || p->ipv6) && m->mask.nw_proto == 0xff ? proto : 0;
    p->l4_proto = 0;
    if ((p->ipv4 || p->ipv6) && m->mask.nw_proto == 0xff &&
        (proto == SP_IPPROTO_TCP || proto == SP_IPPROTO_UDP ||
         proto == SP_IPPROTO_SCTP)) {
        p->l4_proto = proto;
    }
}

/* One value of an action: its text, where it starts in the whole text,
 * and a NUL-terminated copy for the library parsers. */
struct value {
    const char *s;
    size_t len, ofs;
    char buf[64];
};

static void
value_init(struct value *v, const char *text, size_t ofs, size_t len)
{
    v->s = text + ofs;
    v->len = len;
    v->ofs = ofs;
    snprintf(v->buf, sizeof v->buf, "%.*s", (int)len, v->s);
}

static int
parse_number(struct parser *p, const struct value *v, unsigned long max,
             const char *what, uint32_t *out)
{
    unsigned long n;
    char *end;

    errno = 0;
    n = strtoul(v->buf, &end, 0);
    if (v->len == 0 || v->len >= sizeof v->buf || *end || errno ||
        v->buf[0] == '-' || v->buf[0] == '+' || v->buf[0] == ' ' || n > max) {
        return fail(p, v->ofs, "expected %s, got '%.*s'", what, (int)v->len,
                    v->s);
    }
    *out = (uint32_t)n;
    return 0;
}

static int
parse_ip(struct parser *p, const struct value *v, int family, void *out)
{
    if (v->len >= sizeof v->buf || inet_pton(family, v->buf, out) != 1) {
        return fail(p, v->ofs, "expected an %s address, got '%.*s'",
                    family == AF_INET ? "IPv4" : "IPv6", (int)v->len, v->s);
    }
    return 0;
}

static int
hex_digit(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int
parse_mac(struct parser *p, const struct value *v, uint8_t *mac)
{
    size_t i = 0;

    for (int b = 0; b < 6; b++) {
        int digits = 0, x = 0;

        while (i < v->len && digits < 2 && hex_digit(v->s[i]) >= 0) {
            x = x * 16 + hex_digit(v->s[i++]);
            digits++;
        }
        if (!digits || (b < 5 && (i >= v->len || v->s[i++] != ':'))) {
            break;
        }
        mac[b] = (uint8_t)x;
        if (b == 5 && i == v->len) {
            return 0;
        }
    }
    return fail(p, v->ofs,
                "expected an Ethernet address (aa:bb:cc:dd:ee:ff), "
                "got '%.*s'",
                (int)v->len, v->s);
}

static const struct {
    const char *name;
    enum sp_action_type type;
    bool takes_value;
} action_names[] = {
    {"output", SP_ACT_OUTPUT, true},
    {"drop", SP_ACT_DROP, false},
    {"dec_ttl", SP_ACT_DEC_TTL, false},
    {"mod_nw_src", SP_ACT_NW_SRC, true},
    {"mod_nw_dst", SP_ACT_NW_DST, true},
    {"mod_nw_tos", SP_ACT_NW_TOS, true},
    {"mod_nw_ecn", SP_ACT_NW_ECN, true},
    {"mod_nw_ttl", SP_ACT_NW_TTL, true},
    {"mod_dl_src", SP_ACT_DL_SRC, true},
    {"mod_dl_dst", SP_ACT_DL_DST, true},
    {"push_vlan", SP_ACT_PUSH_VLAN, true},
    {"mod_vlan_vid", SP_ACT_VLAN_VID, true},
    {"mod_vlan_pcp", SP_ACT_VLAN_PCP, true},
    {"strip_vlan", SP_ACT_STRIP_VLAN, false},
    {"mod_tp_src", SP_ACT_TP_SRC, true},
    {"mod_tp_dst", SP_ACT_TP_DST, true},
    {"controller", SP_ACT_CONTROLLER, true}, /* the value is optional */
};

static const struct {
    const char *name;
    enum sp_action_type type;
} set_field_names[] = {
    {"ipv6_src", SP_ACT_IPV6_SRC},
    {"ipv6_dst", SP_ACT_IPV6_DST},
    {"ipv6_tclass", SP_ACT_IPV6_TCLASS},
    {"ipv6_hlimit", SP_ACT_IPV6_HLIMIT},
};

/* OpenFlow's reserved ports an output may name, as ovs-ofctl takes them:
 * in any case, alone or after output:, and printed as it prints them. */
static const struct {
    const char *name;
    enum sp_action_type type;
} port_names[] = {
    {"IN_PORT", SP_ACT_IN_PORT},
    {"FLOOD", SP_ACT_FLOOD},
    {"ALL", SP_ACT_ALL},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The index in port_names[] of s[0, len), or -1. */
static int
port_name(const char *s, size_t len)
{
    for (size_t i = 0; i < COUNT(port_names); i++) {
        if (strlen(port_names[i].name) == len &&
            !strncasecmp(port_names[i].name, s, len)) {
            return (int)i;
        }
    }
    return -1;
}

/* The name an action is written with (set_field ones: the field). */
static const char *
action_name(enum sp_action_type type)
{
    for (size_t i = 0; i < COUNT(action_names); i++) {
        if (action_names[i].type == type) {
            return action_names[i].name;
        }
    }
    for (size_t i = 0; i < COUNT(set_field_names); i++) {
        if (set_field_names[i].type == type) {
            return set_field_names[i].name;
        }
    }
    for (size_t i = 0; i < COUNT(port_names); i++) {
        if (port_names[i].type == type) {
            return port_names[i].name;
        }
    }
    return "?";
}

/* Parses the value of 'a' (type already set) from 'v'. */
static int
parse_value(struct parser *p, struct sp_action *a, const struct value *v)
{
    uint32_t n = 0;
    int rc = 0;

    switch (a->type) {
    case SP_ACT_OUTPUT:
        rc = parse_number(p, v, UINT16_MAX,
                          "a port number, IN_PORT, FLOOD or ALL", &a->port);
        if (!rc && !p->port_exists(a->port, p->aux)) {
            rc = fail(p, v->ofs, "output to port %u, which does not exist",
                      a->port);
        }
        return rc;
    case SP_ACT_NW_SRC:
    case SP_ACT_NW_DST:
        return parse_ip(p, v, AF_INET, &a->ip4);
    case SP_ACT_IPV6_SRC:
    case SP_ACT_IPV6_DST:
        return parse_ip(p, v, AF_INET6, a->ip6);
    case SP_ACT_DL_SRC:
    case SP_ACT_DL_DST:
        return parse_mac(p, v, a->mac);
    case SP_ACT_NW_TOS:
        rc = parse_number(p, v, 255, "a TOS value 0..252", &n);
        if (!rc && (n & 3)) {
            rc = fail(p, v->ofs,
                      "expected a TOS value with the ECN bits 0 (a multiple "
                      "of 4), got '%.*s'",
                      (int)v->len, v->s);
        }
        break;
    case SP_ACT_NW_ECN:
        rc = parse_number(p, v, 3, "an ECN value 0..3", &n);
        break;
    case SP_ACT_NW_TTL:
    case SP_ACT_IPV6_HLIMIT:
        rc = parse_number(p, v, 255, "a TTL 0..255", &n);
        break;
    case SP_ACT_IPV6_TCLASS:
        rc = parse_number(p, v, 255, "a traffic class 0..255", &n);
        break;
    case SP_ACT_PUSH_VLAN:
        rc = parse_number(p, v, UINT16_MAX, "0x8100 or 0x88a8", &n);
        if (!rc && n != 0x8100 && n != 0x88a8) {
            rc = fail(p, v->ofs, "expected 0x8100 or 0x88a8, got '%.*s'",
                      (int)v->len, v->s);
        }
        break;
    case SP_ACT_VLAN_VID:
        rc = parse_number(p, v, 4095, "a VLAN id 0..4095", &n);
        break;
    case SP_ACT_VLAN_PCP:
        rc = parse_number(p, v, 7, "a VLAN priority 0..7", &n);
        break;
    case SP_ACT_TP_SRC:
    case SP_ACT_TP_DST:
        rc = parse_number(p, v, UINT16_MAX, "a port 0..65535", &n);
        break;
    case SP_ACT_CONTROLLER:
        /* As ovs-ofctl: bare, the whole frame (OFPCML_NO_BUFFER). */
        n = UINT16_MAX;
        if (v->len) {
            rc = parse_number(p, v, UINT16_MAX, "a length 0..65535", &n);
        }
        break;
    case SP_ACT_DROP:
    case SP_ACT_DEC_TTL:
    case SP_ACT_STRIP_VLAN:
    case SP_ACT_IN_PORT:
    case SP_ACT_FLOOD:
    case SP_ACT_ALL:
        break;
    }
    a->number = (uint16_t)n;
    return rc;
}

/* Refuses an action the match (and the actions before it) do not allow;
 * tracks whether a VLAN tag is there. */
static int
check_prerequisites(struct parser *p, const struct sp_action *a, size_t ofs)
{
    const char *name = action_name(a->type);

    switch (a->type) {
    case SP_ACT_DEC_TTL:
        if (!p->ipv4 && !p->ipv6) {
            return fail(p, ofs,
                        "dec_ttl needs a match on IPv4 or IPv6 (ip, ipv6, "
                        "or dl_type=0x0800 or 0x86dd)");
        }
        break;
    case SP_ACT_NW_SRC:
    case SP_ACT_NW_DST:
    case SP_ACT_NW_TOS:
    case SP_ACT_NW_ECN:
    case SP_ACT_NW_TTL:
        if (!p->ipv4) {
            return fail(p, ofs,
                        "%s needs a match on IPv4 (ip, or dl_type=0x0800)",
                        name);
        }
        break;
    case SP_ACT_IPV6_SRC:
    case SP_ACT_IPV6_DST:
    case SP_ACT_IPV6_TCLASS:
    case SP_ACT_IPV6_HLIMIT:
        if (!p->ipv6) {
            return fail(p, ofs,
                        "set_field to %s needs a match on IPv6 (ipv6, or "
                        "dl_type=0x86dd)",
                        name);
        }
        break;
    case SP_ACT_TP_SRC:
    case SP_ACT_TP_DST:
        if (!p->l4_proto) {
            return fail(p, ofs,
                        "%s needs a match on IPv4 or IPv6 with nw_proto tcp, "
                        "udp or sctp (6, 17 or 132)",
                        name);
        }
        break;
    case SP_ACT_VLAN_VID:
    case SP_ACT_VLAN_PCP:
        if (!p->tagged) {
            return fail(p, ofs,
                        "%s needs a VLAN tag: match one (dl_vlan, or "
                        "vlan_tci=0x1000/0x1000) or push_vlan first",
                        name);
        }
        break;
    case SP_ACT_PUSH_VLAN:
        p->tagged = true;
        break;
    case SP_ACT_STRIP_VLAN:
        p->tagged = false; /* an inner tag may or may not follow */
        break;
    default:
        break;
    }
    return 0;
}

/* Parses the action at text[ofs, ofs + len). */
static int
parse_action(struct parser *p, size_t ofs, size_t len)
{
    const char *s = p->text + ofs;
    const char *colon = memchr(s, ':', len);
    size_t name_len = colon ? (size_t)(colon - s) : len;
    struct sp_action *a = &p->actions[p->n];
    struct value v;
    size_t i;
    int port;

    if (p->n == SP_ACTIONS_MAX) {
        return fail(p, ofs, "more than %d actions", SP_ACTIONS_MAX);
    }
    memset(a, 0, sizeof *a);
    port = colon ? (name_len == 6 && !memcmp(s, "output", 6)
                        ? port_name(colon + 1, len - name_len - 1)
                        : -1)
                 : port_name(s, len);
    if (port >= 0) {
        a->type = port_names[port].type;
        p->offsets[p->n++] = ofs;
        return 0;
    }
    if (colon && port_name(s, name_len) >= 0) {
        return fail(p, (size_t)(colon - p->text),
                    "%s takes no value; expected ',' or the end",
                    port_names[port_name(s, name_len)].name);
    }
    if (name_len == 9 && !memcmp(s, "set_field", 9) && colon) {
        const char *arrow = NULL;

        for (const char *c = colon + 1; c + 1 < s + len; c++) {
            if (c[0] == '-' && c[1] == '>') {
                arrow = c;
            }
        }
        if (!arrow) {
            return fail(p, ofs + len,
                        "expected '->FIELD' after set_field's value");
        }
        value_init(&v, p->text, (size_t)(arrow + 2 - p->text),
                   (size_t)(s + len - arrow - 2));
        for (i = 0; i < COUNT(set_field_names); i++) {
            if (strlen(set_field_names[i].name) == v.len &&
                !memcmp(set_field_names[i].name, v.s, v.len)) {
                break;
            }
        }
        if (i == COUNT(set_field_names)) {
            return fail(p, v.ofs,
                        "expected ipv6_src, ipv6_dst, ipv6_tclass or "
                        "ipv6_hlimit after '->', got '%.*s'",
                        (int)v.len, v.s);
        }
        a->type = set_field_names[i].type;
        value_init(&v, p->text, (size_t)(colon + 1 - p->text),
                   (size_t)(arrow - colon - 1));
    } else {
        for (i = 0; i < COUNT(action_names); i++) {
            if (strlen(action_names[i].name) == name_len &&
                !memcmp(action_names[i].name, s, name_len)) {
                break;
            }
        }
        if (i == COUNT(action_names)) {
            return fail(p, ofs,
                        "unknown action '%.*s'; expected output, drop, "
                        "dec_ttl, mod_nw_src, mod_nw_dst, mod_nw_tos, "
                        "mod_nw_ecn, mod_nw_ttl, set_field, mod_dl_src, "
                        "mod_dl_dst, push_vlan, mod_vlan_vid, mod_vlan_pcp, "
                        "strip_vlan, mod_tp_src, mod_tp_dst, controller, "
                        "in_port, flood or all",
                        (int)name_len, s);
        }
        a->type = action_names[i].type;
        if (action_names[i].takes_value && !colon &&
            a->type != SP_ACT_CONTROLLER) {
            return fail(p, ofs + len, "expected ':' and a value after %s",
                        action_names[i].name);
        }
        if (!action_names[i].takes_value && colon) {
            return fail(p, (size_t)(colon - p->text),
                        "%s takes no value; expected ',' or the end",
                        action_names[i].name);
        }
        value_init(&v, p->text, ofs + name_len + 1,
                   colon ? len - name_len - 1 : 0);
    }
    if (parse_value(p, a, &v) || check_prerequisites(p, a, ofs)) {
        return -1;
    }
    p->offsets[p->n++] = ofs;
    return 0;
}

static bool
is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int
parse_list(struct parser *p)
{
    size_t pos = 0;

    for (;;) {
        size_t start, end;

        while (is_blank(p->text[pos])) {
            pos++;
        }
        start = pos;
        end = start + strcspn(p->text + start, ",");
        pos = end;
        while (end > start && is_blank(p->text[end - 1])) {
            end--;
        }
        if (end == start) {
            return fail(p, start, "expected an action");
        }
        if (parse_action(p, start, end - start)) {
            return -1;
        }
        if (p->text[pos] != ',') {
            return 0;
        }
        pos++;
    }
}

/* The step an action of 'type' adds to: the previous step if it has that
 * type, else a new one. */
static struct sp_step *
step_for(struct sp_step *steps, uint32_t *n, enum sp_step_type type,
         bool fresh)
{
    if (fresh || !*n || steps[*n - 1].type != type) {
        memset(&steps[*n], 0, sizeof steps[*n]);
        steps[*n].type = type;
        (*n)++;
    }
    return &steps[*n - 1];
}

static void
set_bytes(uint8_t *value, uint8_t *mask, const uint8_t *from, size_t len)
{
    memcpy(value, from, len);
    memset(mask, 0xff, len);
}

/* Turns the parsed actions into steps; returns how many. */
static uint32_t
compile(const struct parser *p, struct sp_actions *a, struct sp_step *steps)
{
    uint32_t n = 0;

    a->last_output = SP_NO_OUTPUT;
    for (uint32_t i = 0; i < p->n; i++) {
        const struct sp_action *act = &p->actions[i];
        uint16_t num = act->number;
        uint16_t port_be = htons(num);
        struct sp_step *s = n ? &steps[n - 1] : NULL;

        switch (act->type) {
        case SP_ACT_OUTPUT:
            a->last_output = n;
            step_for(steps, &n, SP_STEP_OUTPUT, true)->port = act->port;
            break;
        case SP_ACT_CONTROLLER:
            a->last_output = n;
            a->to_controller = true;
            step_for(steps, &n, SP_STEP_CONTROLLER, true)->max_len = num;
            break;
        case SP_ACT_IN_PORT:
            a->last_output = n;
            step_for(steps, &n, SP_STEP_IN_PORT, true);
            break;
        case SP_ACT_FLOOD:
        case SP_ACT_ALL:
            a->last_output = n;
            step_for(steps, &n, SP_STEP_FLOOD, true);
            break;
        case SP_ACT_DROP:
            a->drop = true;
            break;
        case SP_ACT_DEC_TTL:
            if (p->ipv4) {
                /* A TTL set or decrement already in the step comes
                 * before this one: a new step keeps the order. */
                bool fresh = s && s->type == SP_STEP_IPV4 &&
                             (s->ipv4.ttl_mask || s->ipv4.dec_ttl);

                step_for(steps, &n, SP_STEP_IPV4, fresh)->ipv4.dec_ttl = true;
            } else {
                bool fresh = s && s->type == SP_STEP_IPV6 &&
                             (s->ipv6.hlimit_mask || s->ipv6.dec_hlimit);

                s = step_for(steps, &n, SP_STEP_IPV6, fresh);
                s->ipv6.dec_hlimit = true;
                s->ipv6.l4_proto = p->ip_proto;
            }
            break;
        case SP_ACT_NW_SRC:
            s = step_for(steps, &n, SP_STEP_IPV4, false);
            s->ipv4.src = act->ip4;
            s->ipv4.src_mask = UINT32_MAX;
            break;
        case SP_ACT_NW_DST:
            s = step_for(steps, &n, SP_STEP_IPV4, false);
            s->ipv4.dst = act->ip4;
            s->ipv4.dst_mask = UINT32_MAX;
            break;
        case SP_ACT_NW_TOS:
        case SP_ACT_NW_ECN: {
            uint8_t bits = act->type == SP_ACT_NW_TOS ? 0xfc : 0x03;

            s = step_for(steps, &n, SP_STEP_IPV4, false);
            s->ipv4.tos = (uint8_t)((s->ipv4.tos & ~bits) | (num & bits));
            s->ipv4.tos_mask |= bits;
            break;
        }
        case SP_ACT_NW_TTL:
            s = step_for(steps, &n, SP_STEP_IPV4, false);
            s->ipv4.ttl = (uint8_t)num;
            s->ipv4.ttl_mask = 0xff;
            break;
        case SP_ACT_IPV6_SRC:
        case SP_ACT_IPV6_DST:
        case SP_ACT_IPV6_TCLASS:
        case SP_ACT_IPV6_HLIMIT:
            s = step_for(steps, &n, SP_STEP_IPV6, false);
            s->ipv6.l4_proto = p->ip_proto;
            if (act->type == SP_ACT_IPV6_SRC) {
                set_bytes(s->ipv6.src, s->ipv6.src_mask, act->ip6, 16);
            } else if (act->type == SP_ACT_IPV6_DST) {
                set_bytes(s->ipv6.dst, s->ipv6.dst_mask, act->ip6, 16);
            } else if (act->type == SP_ACT_IPV6_TCLASS) {
                s->ipv6.tclass = (uint8_t)num;
                s->ipv6.tclass_mask = 0xff;
            } else {
                s->ipv6.hlimit = (uint8_t)num;
                s->ipv6.hlimit_mask = 0xff;
            }
            break;
        case SP_ACT_DL_SRC:
            s = step_for(steps, &n, SP_STEP_ETH, false);
            set_bytes(s->eth.src, s->eth.src_mask, act->mac, 6);
            break;
        case SP_ACT_DL_DST:
            s = step_for(steps, &n, SP_STEP_ETH, false);
            set_bytes(s->eth.dst, s->eth.dst_mask, act->mac, 6);
            break;
        case SP_ACT_PUSH_VLAN:
            step_for(steps, &n, SP_STEP_PUSH_VLAN, true)->tpid = num;
            a->headroom += 4;
            break;
        case SP_ACT_VLAN_VID:
        case SP_ACT_VLAN_PCP: {
            uint16_t bits =
                act->type == SP_ACT_VLAN_VID ? SP_VLAN_VID : SP_VLAN_PCP;
            uint16_t value =
                act->type == SP_ACT_VLAN_VID ? num : (uint16_t)(num << 13);

            s = step_for(steps, &n, SP_STEP_SET_VLAN, false);
            s->vlan.tci = (uint16_t)((s->vlan.tci & ~bits) | value);
            s->vlan.mask |= bits;
            break;
        }
        case SP_ACT_STRIP_VLAN:
            step_for(steps, &n, SP_STEP_STRIP_VLAN, true);
            break;
        case SP_ACT_TP_SRC:
        case SP_ACT_TP_DST:
            s = step_for(steps, &n, SP_STEP_TP, false);
            s->tp.proto = p->l4_proto;
            if (act->type == SP_ACT_TP_SRC) {
                s->tp.src = port_be;
                s->tp.src_mask = UINT16_MAX;
            } else {
                s->tp.dst = port_be;
                s->tp.dst_mask = UINT16_MAX;
            }
            break;
        }
    }
    return n;
}

int
sp_actions_parse(const char *text, const struct sp_match *match,
                 sp_port_exists_fn *port_exists, void *aux,
                 struct sp_actions **out, struct sp_err *err)
{
    struct parser *p = calloc(1, sizeof *p);
    struct sp_step *steps = calloc(SP_ACTIONS_MAX, sizeof *steps);
    struct sp_actions *a = NULL;
    int rc = -1;

    *out = NULL;
    if (!p || !steps) {
        sp_err_set(err, "out of memory");
        goto done;
    }
    *p = (struct parser){
        .text = text, .port_exists = port_exists, .aux = aux, .err = err};
    read_guarantees(p, match);
    if (parse_list(p)) {
        goto done;
    }
    for (uint32_t i = 0; i < p->n; i++) {
        if (p->actions[i].type == SP_ACT_DROP && p->n > 1) {
            fail(p, p->offsets[i], "drop must be the only action");
            goto done;
        }
    }
    a = calloc(1, sizeof *a + p->n * sizeof *a->actions +
                      p->n * sizeof *a->steps);
    if (!a) {
        sp_err_set(err, "out of memory");
        goto done;
    }
    a->n_actions = p->n;
    a->n_steps = compile(p, a, steps);
    /* Steps first: their union needs the stricter alignment. */
    a->steps = (struct sp_step *)(a + 1);
    a->actions = (struct sp_action *)(a->steps + p->n);
    memcpy(a->steps, steps, a->n_steps * sizeof *steps);
    memcpy(a->actions, p->actions, p->n * sizeof *p->actions);
    *out = a;
    rc = 0;
done:
    free(steps);
    free(p);
    return rc;
}

void
sp_actions_free(struct sp_actions *actions)
{
    free(actions);
}

bool
sp_actions_to_controller(const struct sp_actions *actions)
{
    return actions->to_controller;
}

uint32_t
sp_actions_output_only(const struct sp_actions *actions)
{
    const struct sp_step *s = &actions->steps[0];

    return !actions->drop && actions->last_output == 0 &&
                   actions->headroom == 0 && s->type == SP_STEP_OUTPUT
               ? s->port
               : 0;
}

uint32_t
sp_actions_headroom(const struct sp_actions *actions)
{
    return actions->headroom;
}

/* snprintf that keeps adding at 'used' past a full buffer. */
static size_t __attribute__((format(printf, 4, 5)))
append(char *buf, size_t size, size_t used, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(used < size ? buf + used : NULL,
                  used < size ? size - used : 0, fmt, ap);
    va_end(ap);
    return used + (size_t)(n > 0 ? n : 0);
}

int
sp_actions_format(const struct sp_actions *actions, char *buf, size_t size)
{
    size_t used = 0;

    if (size) {
        buf[0] = '\0';
    }
    for (uint32_t i = 0; i < actions->n_actions; i++) {
        const struct sp_action *a = &actions->actions[i];
        const char *name = action_name(a->type);
        const char *sep = i ? "," : "";
        char addr[INET6_ADDRSTRLEN];
        const uint8_t *m = a->mac;

        switch (a->type) {
        case SP_ACT_OUTPUT:
            used = append(buf, size, used, "%soutput:%u", sep, a->port);
            break;
        case SP_ACT_DROP:
        case SP_ACT_DEC_TTL:
        case SP_ACT_STRIP_VLAN:
        case SP_ACT_IN_PORT:
        case SP_ACT_FLOOD:
        case SP_ACT_ALL:
            used = append(buf, size, used, "%s%s", sep, name);
            break;
        case SP_ACT_NW_SRC:
        case SP_ACT_NW_DST:
            inet_ntop(AF_INET, &a->ip4, addr, sizeof addr);
            used = append(buf, size, used, "%s%s:%s", sep, name, addr);
            break;
        case SP_ACT_IPV6_SRC:
        case SP_ACT_IPV6_DST:
            inet_ntop(AF_INET6, a->ip6, addr, sizeof addr);
            used =
                append(buf, size, used, "%sset_field:%s->%s", sep, addr, name);
            break;
        case SP_ACT_IPV6_TCLASS:
        case SP_ACT_IPV6_HLIMIT:
            used = append(buf, size, used, "%sset_field:%u->%s", sep,
                          a->number, name);
            break;
        case SP_ACT_DL_SRC:
        case SP_ACT_DL_DST:
            used =
                append(buf, size, used, "%s%s:%02x:%02x:%02x:%02x:%02x:%02x",
                       sep, name, m[0], m[1], m[2], m[3], m[4], m[5]);
            break;
        case SP_ACT_PUSH_VLAN:
            used =
                append(buf, size, used, "%spush_vlan:0x%04x", sep, a->number);
            break;
        case SP_ACT_CONTROLLER:
            used = a->number == UINT16_MAX
                       ? append(buf, size, used, "%scontroller", sep)
                       : append(buf, size, used, "%scontroller:%u", sep,
                                a->number);
            break;
        default:
            used = append(buf, size, used, "%s%s:%u", sep, name, a->number);
            break;
        }
    }
    return (int)used;
}
