/* SPDX-License-Identifier: BSD-3-Clause */
/* The OpenFlow 1.3 codec and session: round trips of matches, actions and
 * FLOW_MODs, PACKET_IN and PACKET_OUT, every error path, truncated and
 * oversized messages at every length, and multipart replies in pieces,
 * against a switch in memory. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openflow/internal.h"
#include "simdpath/flow_format.h"
#include "simdpath/flow_parse.h"
#include "testlib.h"

/* ---- a switch in memory ---- */

struct fake_switch {
    struct sp_of_flow flows[8192];
    size_t n;
    unsigned flow_mods;
    bool fail_unnamed; /* refuse without naming an error */
    /* PACKET_OUT: the match frame_match gives, what was sent last, and
     * how many. */
    const char *frame_match;
    /* PORT_MOD: the last call's port, config and mask, and how many. */
    uint32_t port_mod[3];
    unsigned port_mods;
    struct sp_of_packet_out sent;
    uint8_t sent_data[256];
    unsigned packet_outs;
};

static int
fake_flow_mod(void *aux, const struct sp_of_flow_mod *fm,
              struct sp_of_error *err)
{
    struct fake_switch *fs = aux;
    bool strict = fm->command == SP_OFPFC_DELETE_STRICT ||
                  fm->command == SP_OFPFC_MODIFY_STRICT;
    struct sp_of_flow *f;

    fs->flow_mods++;
    if (fs->fail_unnamed) {
        return -1;
    }
    if (fm->command == SP_OFPFC_ADD) {
        if (fs->n == sizeof fs->flows / sizeof *fs->flows) {
            return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED,
                              SP_OFPFMFC_TABLE_FULL, "full");
        }
        f = &fs->flows[fs->n++];
        memset(f, 0, sizeof *f);
        f->match = fm->match;
        f->priority = fm->priority;
        f->cookie = fm->cookie;
        f->packets = f->bytes = SP_OF_NO_COUNT;
        strcpy(f->actions, fm->actions);
        return 0;
    }
    for (size_t i = 0; i < fs->n;) {
        if (!sp_of_flow_selected(fm, &fs->flows[i], strict)) {
            i++;
        } else if (fm->command >= SP_OFPFC_DELETE) {
            fs->flows[i] = fs->flows[--fs->n];
        } else {
            strcpy(fs->flows[i++].actions, fm->actions);
        }
    }
    return 0;
}

static int
fake_flows(void *aux, sp_of_flow_fn *fn, void *ctx)
{
    struct fake_switch *fs = aux;

    for (size_t i = 0; i < fs->n; i++) {
        fn(ctx, &fs->flows[i]);
    }
    return 0;
}

static void
fake_port(void *aux, unsigned port, struct sp_of_port *out)
{
    (void)aux;
    snprintf(out->name, sizeof out->name, "net_pcap%u", port - 1);
    out->rx_packets = 100 * port;
    out->tx_packets = 10 * port;
    out->rx_bytes = out->tx_bytes = SP_OF_NO_COUNT;
    out->rx_dropped = out->tx_dropped = 0;
    out->rx_errors = out->tx_errors = SP_OF_NO_COUNT;
    out->hw_addr[5] = (uint8_t)port;
    out->link_down = port == 3;
}

static void
fake_table(void *aux, struct sp_of_table *out)
{
    out->active_count = (uint32_t)((struct fake_switch *)aux)->n;
    out->lookup_count = 7;
    out->matched_count = 5;
}

static struct sp_match match_of(const char *text);

static void
fake_frame_match(void *aux, const uint8_t *data, size_t len, uint32_t in_port,
                 struct sp_match *m)
{
    (void)data, (void)len, (void)in_port;
    *m = match_of(((struct fake_switch *)aux)->frame_match);
}

static int
fake_packet_out(void *aux, const struct sp_of_packet_out *po,
                struct sp_of_error *err)
{
    struct fake_switch *fs = aux;

    if (fs->fail_unnamed) {
        return -1;
    }
    (void)err;
    fs->sent = *po;
    memcpy(fs->sent_data, po->data,
           po->len < sizeof fs->sent_data ? po->len : sizeof fs->sent_data);
    fs->packet_outs++;
    return 0;
}

static int
fake_port_mod(void *aux, const struct sp_of_session *from, uint32_t port,
              uint32_t config, uint32_t mask, struct sp_of_error *err)
{
    struct fake_switch *fs = aux;

    (void)from, (void)err;
    fs->port_mod[0] = port;
    fs->port_mod[1] = config;
    fs->port_mod[2] = mask;
    fs->port_mods++;
    return 0;
}

/* The sessions of a roles test, for the switch to demote. */
static struct sp_of_session *role_sessions[3];
static struct sp_of_election election;

static void
fake_master(void *aux, const struct sp_of_session *s)
{
    (void)aux;
    for (unsigned i = 0; i < 3; i++) {
        if (role_sessions[i] && role_sessions[i] != s &&
            role_sessions[i]->role == SP_OFPCR_ROLE_MASTER) {
            role_sessions[i]->role = SP_OFPCR_ROLE_SLAVE;
        }
    }
}

static struct fake_switch *fsw;
static struct sp_of_switch sw = {
    .datapath_id = 0x1234,
    .n_ports = 4,
    .flow_mod = fake_flow_mod,
    .flows = fake_flows,
    .port = fake_port,
    .table = fake_table,
    .frame_match = fake_frame_match,
    .packet_out = fake_packet_out,
    .port_mod = fake_port_mod,
    .election = &election,
    .master = fake_master,
};

static int
setup(void **state)
{
    (void)state;
    fsw = calloc(1, sizeof *fsw);
    fsw->frame_match = "udp";
    sw.aux = fsw;
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    free(fsw);
    return 0;
}

/* ---- helpers ---- */

static struct sp_match
match_of(const char *text)
{
    return sp_test_match(text, NULL);
}

/* A session of switch 'of' that has exchanged HELLOs, its output
 * empty. */
static void
open_session_of(struct sp_of_session *s, const struct sp_of_switch *of)
{
    static const uint8_t hello[] = {4, 0, 0, 8, 0, 0, 0, 1};

    sp_of_session_init(s, of);
    assert_true(s->hello_sent);
    assert_int_equal(s->out.len, 16);
    s->out.len = 0;
    assert_int_equal(sp_of_session_input(s, hello, sizeof hello), 0);
    assert_int_equal(s->out.len, 0);
}

static void
open_session(struct sp_of_session *s)
{
    open_session_of(s, &sw);
}

/* Takes the first message of s->out: returns its type, length in *len,
 * copies it to msg (if not NULL). */
static int
pop(struct sp_of_session *s, uint8_t *msg, size_t *len)
{
    size_t n;
    int type;

    assert_true(s->out.len >= 8);
    n = sp_of_get16(s->out.data + 2);
    assert_true(n >= 8 && n <= s->out.len);
    assert_int_equal(s->out.data[0], 4);
    type = s->out.data[1];
    if (msg) {
        memcpy(msg, s->out.data, n);
    }
    if (len) {
        *len = n;
    }
    sp_of_buf_consume(&s->out, n);
    return type;
}

/* Sends msg; expects exactly one ERROR with type and code back. */
static void
expect_error(struct sp_of_session *s, const uint8_t *msg, size_t len,
             uint16_t type, uint16_t code)
{
    uint8_t reply[256];
    size_t rlen;

    sp_of_session_input(s, msg, len);
    assert_int_equal(pop(s, reply, &rlen), SP_OFPT_ERROR);
    if (sp_of_get16(reply + 8) != type || sp_of_get16(reply + 10) != code) {
        fail_msg("error %u/%u, expected %u/%u", sp_of_get16(reply + 8),
                 sp_of_get16(reply + 10), type, code);
    }
    /* The reply carries the xid and the start of the message. */
    assert_memory_equal(reply + 4, msg + 4, 4);
    if (type != SP_OFPET_HELLO_FAILED) {
        size_t data = len < 64 ? len : 64;

        assert_int_equal(rlen, 12 + data);
        assert_memory_equal(reply + 12, msg, data);
    }
    assert_int_equal(s->out.len, 0);
}

static void
set_len(struct sp_of_buf *b, size_t start)
{
    sp_of_finish(b, start);
}

static void
build_flow_mod(struct sp_of_buf *b, const char *match, const char *actions,
               uint8_t command)
{
    struct sp_of_flow_mod fm;

    memset(&fm, 0, sizeof fm);
    fm.command = command;
    fm.priority = 100;
    fm.buffer_id = SP_OFP_NO_BUFFER;
    fm.out_port = SP_OFPP_ANY;
    fm.out_group = SP_OFPG_ANY;
    fm.match = match_of(match);
    snprintf(fm.actions, sizeof fm.actions, "%s", actions);
    b->len = 0;
    assert_int_equal(sp_of_encode_flow_mod(b, 7, &fm), 0);
}

/* ---- matches ---- */

static const char *const match_texts[] = {
    "",
    "in_port=3",
    "dl_dst=00:11:22:33:44:55,dl_src=66:77:88:99:aa:bb",
    "dl_dst=01:00:00:00:00:00/01:00:00:00:00:00",
    "dl_type=0x88cc",
    "dl_vlan=100",
    "dl_vlan=0xffff",
    "vlan_tci=0x1000/0x1000",
    "dl_vlan=7,dl_vlan_pcp=5",
    "vlan_tci=0x2000/0x2000",
    "ip,nw_src=10.0.0.0/8,nw_dst=192.168.1.2",
    "ip,ip_dscp=46,nw_ecn=1",
    "ip,nw_tos=184",
    "ip,nw_ttl=64,ip_frag=later",
    "tcp,tp_src=1234,tp_dst=0x50/0xfff0",
    "tcp,tcp_flags=+syn-ack",
    "udp,tp_src=53",
    "sctp,tp_dst=9",
    "icmp,icmp_type=8,icmp_code=0",
    "arp,arp_op=2,arp_spa=10.0.0.1,arp_tpa=10.0.0.0/24",
    "arp,arp_sha=00:11:22:33:44:55,arp_tha=00:00:00:00:00:01/"
    "ff:ff:00:00:00:ff",
    "ipv6,ipv6_src=2001:db8::/32,ipv6_dst=2001:db8::1",
    "ipv6,ipv6_label=0x12345",
    "ipv6,ipv6_label=0x10000/0xf0000",
    "icmp6,icmp_type=135,icmp_code=0",
    "tcp6,tp_dst=443",
    "udp6,ip_dscp=10,tp_src=5000",
    "in_port=1,dl_vlan=10,tcp,nw_src=1.2.3.4,tp_dst=22",
    "mpls,mpls_label=5,mpls_tc=3,mpls_ttl=7,mpls_bos=1",
    "mplsm,mpls_label=1048575",
    "rarp,arp_op=3,arp_spa=10.0.0.1,arp_sha=00:11:22:33:44:55",
};

static void
test_match_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof match_texts / sizeof *match_texts; i++) {
        struct sp_match m = match_of(match_texts[i]), back;
        struct sp_of_buf b = {0};
        struct sp_of_error err;
        size_t used;

        assert_int_equal(sp_of_encode_match(&b, &m), 0);
        assert_int_equal(b.len % 8, 0);
        if (sp_of_decode_match(b.data, b.len, &back, &used, &err)) {
            fail_msg("%s: %u/%u %s", match_texts[i], err.type, err.code,
                     err.why);
        }
        assert_int_equal(used, b.len);
        if (memcmp(&m, &back, sizeof m)) {
            fail_msg("%s does not round-trip", match_texts[i]);
        }
        sp_of_buf_free(&b);
    }
}

/* The inner VLAN tag has no OXM field: a match with it goes without it,
 * and the TCP flags and IPv6 label whose bits it shares stay whole. */
static void
test_match_inner_tag(void **state)
{
    (void)state;
    struct sp_match with =
        match_of("tcp6,dl_vlan1=5,ipv6_label=0x12345,tcp_flags=0x012");
    struct sp_match without = match_of("tcp6,ipv6_label=0x12345,"
                                       "tcp_flags=0x012");
    struct sp_of_buf a = {0}, b = {0};

    assert_int_equal(sp_of_encode_match(&a, &with), 0);
    assert_int_equal(sp_of_encode_match(&b, &without), 0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    sp_of_buf_free(&a);
    sp_of_buf_free(&b);
}

/* The channel hands rules to the datapath as text (sp_flow_format, then
 * sp_flow_parse_match): matches OXM can express, with random values and
 * masks (odd ones included), must come back the same. */
static uint64_t
next_rand(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* Appends OXM field 'field' of len bytes, random value and (if
 * maskable) mask, limited to 'bits' when not 0. */
static void
put_random_oxm(struct sp_of_buf *b, uint8_t field, uint8_t len, bool maskable,
               uint32_t bits, uint64_t *x)
{
    uint8_t v[16], m[16];

    for (unsigned i = 0; i < len; i++) {
        v[i] = (uint8_t)next_rand(x);
        m[i] = (uint8_t)next_rand(x);
    }
    if (bits) {
        uint32_t vv = (uint32_t)next_rand(x) & bits;
        uint32_t mm = (uint32_t)next_rand(x) & bits;

        for (unsigned i = 0; i < len; i++) {
            v[i] = (uint8_t)(vv >> (8 * (len - 1 - i)));
            m[i] = (uint8_t)(mm >> (8 * (len - 1 - i)));
        }
    }
    sp_of_put16(b, 0x8000);
    sp_of_put_bytes(b,
                    (uint8_t[]){(uint8_t)(field << 1 | maskable),
                                (uint8_t)(len * (maskable ? 2 : 1))},
                    2);
    sp_of_put_bytes(b, v, len);
    if (maskable) {
        sp_of_put_bytes(b, m, len);
    }
}

static void
test_match_text_round_trip(void **state)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;

    (void)state;
    for (unsigned round = 0; round < 3000; round++) {
        struct sp_of_buf b = {0};
        struct sp_of_error oerr;
        struct sp_flow_spec spec;
        struct sp_match m;
        struct sp_err err;
        char text[2048];
        unsigned family = round % 5;
        size_t used;

        sp_of_put16(&b, 1);
        sp_of_put16(&b, 0);
        put_random_oxm(&b, 3, 6, true, 0, &x);
        put_random_oxm(&b, 4, 6, true, 0, &x);
        put_random_oxm(&b, 6, 2, true, 0x1fff, &x);
        if (family == 4) {
            sp_of_put_bytes(&b, (uint8_t[]){0x80, 0, 10, 2, 8, 6}, 6);
            put_random_oxm(&b, 21, 2, false, 0xff, &x);
            for (uint8_t f = 22; f <= 25; f++) {
                put_random_oxm(&b, f, f < 24 ? 4 : 6, true, 0, &x);
            }
        } else {
            bool v6 = family >= 2;
            uint8_t proto = family % 2 ? 17 : 6;

            sp_of_put_bytes(
                &b, (uint8_t[]){0x80, 0, 10, 2, v6 ? 0x86 : 8, v6 ? 0xdd : 0},
                6);
            put_random_oxm(&b, 8, 1, false, 63, &x);
            put_random_oxm(&b, 9, 1, false, 3, &x);
            sp_of_put_bytes(&b, (uint8_t[]){0x80, 0, 20, 1, proto}, 5);
            if (v6) {
                put_random_oxm(&b, 26, 16, true, 0, &x);
                put_random_oxm(&b, 27, 16, true, 0, &x);
                put_random_oxm(&b, 28, 4, true, 0xfffff, &x);
            } else {
                put_random_oxm(&b, 11, 4, true, 0, &x);
                put_random_oxm(&b, 12, 4, true, 0, &x);
            }
            put_random_oxm(&b, proto == 6 ? 13 : 15, 2, true, 0, &x);
            put_random_oxm(&b, proto == 6 ? 14 : 16, 2, true, 0, &x);
        }
        sp_of_set16(&b, 2, (uint16_t)b.len);
        sp_of_pad8(&b, 0);
        if (sp_of_decode_match(b.data, b.len, &m, &used, &oerr)) {
            fail_msg("round %u: %u/%u %s", round, oerr.type, oerr.code,
                     oerr.why);
        }
        sp_of_buf_free(&b);
        sp_flow_format(&m.key, &m.mask, text, sizeof text);
        if (sp_flow_parse_match(text, &spec, &err)) {
            fail_msg("'%s': column %u: %s", text, err.column, err.msg);
        }
        if (memcmp(&m, &spec.match, sizeof m)) {
            fail_msg("'%s' does not come back the same", text);
        }
    }
}

/* An ofp_match built from raw OXM bytes. */
static size_t
raw_match(uint8_t *out, const uint8_t *oxm, size_t len)
{
    size_t total = 4 + len;

    out[0] = 0, out[1] = 1;
    out[2] = (uint8_t)(total >> 8), out[3] = (uint8_t)total;
    memcpy(out + 4, oxm, len);
    memset(out + total, 0, (8 - total % 8) % 8);
    return (total + 7) / 8 * 8;
}

#define ETH_IP   0x80, 0, 10, 2, 0x08, 0x00
#define ETH_IP6  0x80, 0, 10, 2, 0x86, 0xdd
#define ETH_ARP  0x80, 0, 10, 2, 0x08, 0x06
#define PROTO(p) 0x80, 0, 20, 1, p

static void
expect_match_error(const uint8_t *oxm, size_t len, uint16_t code)
{
    uint8_t buf[128];
    size_t n = raw_match(buf, oxm, len), used;
    struct sp_match m;
    struct sp_of_error err;

    assert_int_equal(sp_of_decode_match(buf, n, &m, &used, &err), -1);
    assert_int_equal(err.type, SP_OFPET_BAD_MATCH);
    if (err.code != code) {
        fail_msg("code %u (%s), expected %u", err.code, err.why, code);
    }
}

static void
test_match_errors(void **state)
{
    (void)state;
    /* tcp_src before ip_proto, ipv4_src without eth_type, vlan_pcp
     * without a tag, icmp type on IPv6: the prerequisites. */
    const uint8_t tcp_first[] = {ETH_IP, 0x80, 0, 26, 2, 0, 80, PROTO(6)};
    const uint8_t no_type[] = {0x80, 0, 22, 4, 10, 0, 0, 1};
    const uint8_t pcp_untagged[] = {0x80, 0, 14, 1, 3};
    const uint8_t icmp6_v4[] = {ETH_IP, PROTO(58), 0x80, 0, 58, 1, 128};
    const uint8_t arp_on_ip[] = {ETH_IP, 0x80, 0, 42, 2, 0, 1};
    const uint8_t udp_on_tcp[] = {ETH_IP, PROTO(6), 0x80, 0, 30, 2, 0, 53};
    /* Values and masks. */
    const uint8_t pcp8[] = {0x80, 0, 12, 2, 0x10, 1, 0x80, 0, 14, 1, 8};
    const uint8_t len_type[] = {0x80, 0, 10, 2, 0x01, 0x00};
    const uint8_t port0[] = {0x80, 0, 0, 4, 0, 0, 0, 0};
    const uint8_t port_big[] = {0x80, 0, 0, 4, 0, 1, 0, 0};
    const uint8_t type_masked[] = {0x80, 0, 11, 4, 8, 0, 0xff, 0xff};
    const uint8_t flabel_big[] = {ETH_IP6, 0x80, 0, 56, 4, 0, 0x10, 0, 0};
    const uint8_t dup[] = {ETH_IP, ETH_IP};
    const uint8_t unknown[] = {0x80, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0, 1};
    const uint8_t nd_target[] = {ETH_IP6, PROTO(58), 0x80, 0, 62, 16, 1, 2,
                                 3,       4,         5,    6, 7,  8,  1, 2,
                                 3,       4,         5,    6, 7,  8};
    const uint8_t experimenter[] = {0xff, 0xff, 0, 4, 0, 0, 0, 0};
    /* Lengths. */
    const uint8_t wrong_len[] = {0x80, 0, 10, 3, 8, 0, 0};
    const uint8_t past_end[] = {0x80, 0, 10, 60, 8, 0};
    const uint8_t short_hdr[] = {0x80, 0, 10};

    expect_match_error(tcp_first, sizeof tcp_first, SP_OFPBMC_BAD_PREREQ);
    expect_match_error(no_type, sizeof no_type, SP_OFPBMC_BAD_PREREQ);
    expect_match_error(pcp_untagged, sizeof pcp_untagged,
                       SP_OFPBMC_BAD_PREREQ);
    expect_match_error(icmp6_v4, sizeof icmp6_v4, SP_OFPBMC_BAD_PREREQ);
    expect_match_error(arp_on_ip, sizeof arp_on_ip, SP_OFPBMC_BAD_PREREQ);
    expect_match_error(udp_on_tcp, sizeof udp_on_tcp, SP_OFPBMC_BAD_PREREQ);
    expect_match_error(pcp8, sizeof pcp8, SP_OFPBMC_BAD_VALUE);
    expect_match_error(len_type, sizeof len_type, SP_OFPBMC_BAD_VALUE);
    expect_match_error(port0, sizeof port0, SP_OFPBMC_BAD_VALUE);
    expect_match_error(port_big, sizeof port_big, SP_OFPBMC_BAD_VALUE);
    expect_match_error(type_masked, sizeof type_masked, SP_OFPBMC_BAD_MASK);
    expect_match_error(flabel_big, sizeof flabel_big, SP_OFPBMC_BAD_VALUE);
    expect_match_error(dup, sizeof dup, SP_OFPBMC_DUP_FIELD);
    expect_match_error(unknown, sizeof unknown, SP_OFPBMC_BAD_FIELD);
    expect_match_error(nd_target, sizeof nd_target, SP_OFPBMC_BAD_FIELD);
    expect_match_error(experimenter, sizeof experimenter, SP_OFPBMC_BAD_FIELD);
    expect_match_error(wrong_len, sizeof wrong_len, SP_OFPBMC_BAD_LEN);
    expect_match_error(past_end, sizeof past_end, SP_OFPBMC_BAD_LEN);
    expect_match_error(short_hdr, sizeof short_hdr, SP_OFPBMC_BAD_LEN);

    /* Not OXM; a length past what is there; below the header. */
    {
        uint8_t std[8] = {0, 0, 0, 4, 0, 0, 0, 0};
        uint8_t longer[8] = {0, 1, 0, 12, 0, 0, 0, 0};
        uint8_t tiny[8] = {0, 1, 0, 3, 0, 0, 0, 0};
        struct sp_match m;
        struct sp_of_error err;
        size_t used;

        assert_int_equal(sp_of_decode_match(std, 8, &m, &used, &err), -1);
        assert_int_equal(err.code, SP_OFPBMC_BAD_TYPE);
        assert_int_equal(sp_of_decode_match(longer, 8, &m, &used, &err), -1);
        assert_int_equal(err.code, SP_OFPBMC_BAD_LEN);
        assert_int_equal(sp_of_decode_match(tiny, 8, &m, &used, &err), -1);
        assert_int_equal(err.code, SP_OFPBMC_BAD_LEN);
        assert_int_equal(sp_of_decode_match(std, 3, &m, &used, &err), -1);
        assert_int_equal(err.code, SP_OFPBMC_BAD_LEN);
    }
}

/* vlan_vid=0 exact is "untagged": VID and present bit 0, as OVS has
 * it. */
static void
test_match_vlan_none(void **state)
{
    const uint8_t none[] = {0x80, 0, 12, 2, 0, 0};
    uint8_t buf[16];
    struct sp_match m, want = match_of("vlan_tci=0/0x1fff");
    struct sp_of_error err;
    size_t used;

    (void)state;
    assert_int_equal(sp_of_decode_match(buf, raw_match(buf, none, sizeof none),
                                        &m, &used, &err),
                     0);
    assert_memory_equal(&m, &want, sizeof m);
}

/* ---- actions and flow mods ---- */

static const struct {
    const char *match, *actions;
} action_cases[] = {
    {"", "drop"},
    {"", "output:1"},
    {"", "output:1,output:2,output:4"},
    {"ip", "dec_ttl,mod_nw_src:192.0.2.1,mod_nw_dst:10.1.2.3,output:2"},
    {"ip", "mod_nw_tos:184,mod_nw_ecn:2,mod_nw_ttl:9,output:1"},
    {"ipv6", "set_field:2001:db8::1->ipv6_src,"
             "set_field:2001:db8::2->ipv6_dst,set_field:7->ipv6_hlimit,"
             "dec_ttl,output:3"},
    {"", "mod_dl_src:00:11:22:33:44:55,mod_dl_dst:66:77:88:99:aa:bb,"
         "output:1"},
    {"", "push_vlan:0x8100,mod_vlan_vid:100,mod_vlan_pcp:3,output:2"},
    {"", "push_vlan:0x88a8,output:2"},
    {"dl_vlan=5", "strip_vlan,output:1"},
    {"dl_vlan=5", "mod_vlan_vid:6,output:1"},
    {"tcp", "mod_tp_src:1,mod_tp_dst:2,output:1"},
    {"udp6", "mod_tp_dst:53,output:1"},
    {"sctp", "mod_tp_src:9,output:1"},
    {"", "controller"},
    {"in_port=1", "controller:128,output:2"},
    {"ip", "dec_ttl,controller:0"},
    {"", "IN_PORT"},
    {"ip", "mod_nw_ttl:9,FLOOD,output:2,IN_PORT,ALL"},
};

static void
test_flow_mod_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof action_cases / sizeof *action_cases; i++) {
        struct sp_of_flow_mod fm, back;
        struct sp_of_buf b = {0};
        struct sp_of_error err;

        memset(&fm, 0, sizeof fm);
        fm.command = SP_OFPFC_ADD;
        fm.cookie = 0x1122334455667788ull;
        fm.idle_timeout = 5;
        fm.hard_timeout = 6;
        fm.priority = 1000;
        fm.flags = SP_OFPFF_SEND_FLOW_REM;
        fm.buffer_id = SP_OFP_NO_BUFFER;
        fm.out_port = SP_OFPP_ANY;
        fm.out_group = SP_OFPG_ANY;
        fm.match = match_of(action_cases[i].match);
        strcpy(fm.actions, action_cases[i].actions);
        assert_int_equal(sp_of_encode_flow_mod(&b, 1, &fm), 0);
        assert_int_equal(sp_of_get16(b.data + 2), b.len);
        if (sp_of_decode_flow_mod(b.data, b.len, 4, &back, &err)) {
            fail_msg("%s: %u/%u %s", fm.actions, err.type, err.code, err.why);
        }
        assert_string_equal(back.actions, fm.actions);
        assert_memory_equal(&back, &fm,
                            offsetof(struct sp_of_flow_mod, actions));
        sp_of_buf_free(&b);
    }
}

/* A FLOW_MOD whose apply-actions holds the raw actions given. */
static void
raw_flow_mod(struct sp_of_buf *b, const char *match, const uint8_t *acts,
             size_t len, uint16_t inst_type)
{
    size_t inst;

    build_flow_mod(b, match, "drop", SP_OFPFC_ADD);
    inst = b->len;
    sp_of_put16(b, inst_type);
    sp_of_put16(b, (uint16_t)(8 + len));
    sp_of_buf_put(b, 4);
    sp_of_put_bytes(b, acts, len);
    set_len(b, 0);
    (void)inst;
}

static void
expect_flow_mod_error(const struct sp_of_buf *b, uint16_t type, uint16_t code)
{
    struct sp_of_flow_mod fm;
    struct sp_of_error err;

    assert_int_equal(sp_of_decode_flow_mod(b->data, b->len, 4, &fm, &err), -1);
    if (err.type != type || err.code != code) {
        fail_msg("error %u/%u (%s), expected %u/%u", err.type, err.code,
                 err.why, type, code);
    }
}

#define OUTPUT(p)                                            \
    0, 0, 0, 16, (uint8_t)((p) >> 24), (uint8_t)((p) >> 16), \
        (uint8_t)((p) >> 8), (uint8_t)(p), 0xff, 0xff, 0, 0, 0, 0, 0, 0

static void
test_action_errors(void **state)
{
    struct sp_of_buf b = {0};
    const uint8_t out9[] = {OUTPUT(9)};
    const uint8_t out0[] = {OUTPUT(0)};
    const uint8_t table[] = {OUTPUT(SP_OFPP_TABLE)};
    const uint8_t in_port[] = {OUTPUT(SP_OFPP_IN_PORT)};
    const uint8_t flood[] = {OUTPUT(0xfffffffb)};
    const uint8_t all[] = {OUTPUT(0xfffffffc)};
    const uint8_t group[] = {0, 22, 0, 8, 0, 0, 0, 1};
    const uint8_t queue[] = {0, 21, 0, 8, 0, 0, 0, 1};
    const uint8_t mpls[] = {0, 19, 0, 8, 0x88, 0x47, 0, 0};
    const uint8_t unknown[] = {0, 99, 0, 8, 0, 0, 0, 0};
    const uint8_t exp[] = {0xff, 0xff, 0, 8, 0, 0, 0, 0};
    const uint8_t short_len[] = {0, 0, 0, 4, 0, 0, 0, 0};
    const uint8_t odd_len[] = {0, 0, 0, 12, 0, 0, 0, 1,
                               0, 0, 0, 0,  0, 0, 0, 0};
    const uint8_t past[] = {0, 0, 0, 24, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    const uint8_t out_short[] = {0, 0, 0, 8, 0, 0, 0, 1};
    const uint8_t tpid[] = {0, 17, 0, 8, 0x08, 0x00, 0, 0};
    const uint8_t pop[] = {0, 18, 0, 8, 0, 0, 0, 0};
    const uint8_t dec[] = {0, 24, 0, 8, 0, 0, 0, 0};
    const uint8_t ttl[] = {0, 23, 0, 8, 9, 0, 0, 0};
    const uint8_t set_nw[] = {0, 25, 0, 16, 0x80, 0, 22, 4,
                              1, 2,  3, 4,  0,    0, 0,  0};
    const uint8_t set_arp[] = {0, 25, 0, 16, 0x80, 0, 42, 2,
                               0, 1,  0, 0,  0,    0, 0,  0};
    const uint8_t set_mask[] = {0, 25, 0, 16, 0x80, 0,   23,  8,
                                1, 2,  3, 4,  255,  255, 255, 255};
    const uint8_t set_badlen[] = {0, 25, 0, 16, 0x80, 0, 22, 5,
                                  1, 2,  3, 4,  5,    0, 0,  0};
    const uint8_t set_overlong[] = {0, 25, 0, 24, 0x80, 0, 22, 4, 1, 2, 3, 4,
                                    0, 0,  0, 0,  0,    0, 0,  0, 0, 0, 0, 0};
    const uint8_t set_pcp9[] = {0, 25, 0, 16, 0x80, 0, 14, 1,
                                9, 0,  0, 0,  0,    0, 0,  0};
    const uint8_t set_vid_untagged[] = {0,    25, 0, 16, 0x80, 0, 12, 2,
                                        0x10, 5,  0, 0,  0,    0, 0,  0};
    const uint8_t set_dscp6[] = {0, 25, 0, 16, 0x80, 0, 16, 1,
                                 3, 0,  0, 0,  0,    0, 0,  0};
    const uint8_t set_udp_on_tcp[] = {0, 25, 0, 16, 0x80, 0, 30, 2,
                                      0, 53, 0, 0,  0,    0, 0,  0};
    const struct {
        const char *match;
        const uint8_t *acts;
        size_t len;
        uint16_t code;
    } cases[] = {
        {"", out9, sizeof out9, SP_OFPBAC_BAD_OUT_PORT},
        {"", out0, sizeof out0, SP_OFPBAC_BAD_OUT_PORT},
        {"", table, sizeof table, SP_OFPBAC_BAD_OUT_PORT},
        {"", group, sizeof group, SP_OFPBAC_BAD_OUT_GROUP},
        {"", queue, sizeof queue, SP_OFPBAC_BAD_QUEUE},
        {"", mpls, sizeof mpls, SP_OFPBAC_BAD_TYPE},
        {"", unknown, sizeof unknown, SP_OFPBAC_BAD_TYPE},
        {"", exp, sizeof exp, SP_OFPBAC_BAD_EXPERIMENTER},
        {"", short_len, sizeof short_len, SP_OFPBAC_BAD_LEN},
        {"", odd_len, sizeof odd_len, SP_OFPBAC_BAD_LEN},
        {"", past, sizeof past, SP_OFPBAC_BAD_LEN},
        {"", out_short, sizeof out_short, SP_OFPBAC_BAD_LEN},
        {"", tpid, sizeof tpid, SP_OFPBAC_BAD_ARGUMENT},
        {"", pop, sizeof pop, SP_OFPBAC_MATCH_INCONSISTENT},
        {"arp", dec, sizeof dec, SP_OFPBAC_MATCH_INCONSISTENT},
        {"", ttl, sizeof ttl, SP_OFPBAC_MATCH_INCONSISTENT},
        {"ipv6", set_nw, sizeof set_nw, SP_OFPBAC_MATCH_INCONSISTENT},
        {"arp", set_arp, sizeof set_arp, SP_OFPBAC_BAD_SET_TYPE},
        {"ip", set_mask, sizeof set_mask, SP_OFPBAC_BAD_SET_ARGUMENT},
        {"ip", set_badlen, sizeof set_badlen, SP_OFPBAC_BAD_SET_LEN},
        {"ip", set_overlong, sizeof set_overlong, SP_OFPBAC_BAD_SET_LEN},
        {"dl_vlan=1", set_pcp9, sizeof set_pcp9, SP_OFPBAC_BAD_SET_ARGUMENT},
        {"", set_vid_untagged, sizeof set_vid_untagged,
         SP_OFPBAC_MATCH_INCONSISTENT},
        {"ipv6", set_dscp6, sizeof set_dscp6, SP_OFPBAC_BAD_SET_ARGUMENT},
        {"tcp", set_udp_on_tcp, sizeof set_udp_on_tcp,
         SP_OFPBAC_MATCH_INCONSISTENT},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        raw_flow_mod(&b, cases[i].match, cases[i].acts, cases[i].len, 4);
        expect_flow_mod_error(&b, SP_OFPET_BAD_ACTION, cases[i].code);
    }
    /* IN_PORT, FLOOD and ALL, with an in_port in the match or not, stay
     * so (each packet's in_port is known only as it runs); CONTROLLER
     * with OFPCML_NO_BUFFER (OUTPUT's max_len) is the whole frame. */
    {
        const uint8_t ctrl[] = {OUTPUT(SP_OFPP_CONTROLLER)};
        const struct {
            const char *match;
            const uint8_t *acts;
            size_t len;
            const char *want;
        } good[] = {
            {"in_port=2", in_port, sizeof in_port, "IN_PORT"},
            {"", in_port, sizeof in_port, "IN_PORT"},
            {"in_port=2", flood, sizeof flood, "FLOOD"},
            {"", all, sizeof all, "ALL"},
            {"", ctrl, sizeof ctrl, "controller"},
        };

        for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
            struct sp_of_flow_mod fm;
            struct sp_of_error err;

            raw_flow_mod(&b, good[i].match, good[i].acts, good[i].len, 4);
            assert_int_equal(
                sp_of_decode_flow_mod(b.data, b.len, 4, &fm, &err), 0);
            assert_string_equal(fm.actions, good[i].want);
        }
    }
    sp_of_buf_free(&b);
}

static void
test_instruction_errors(void **state)
{
    struct sp_of_buf b = {0};
    const uint8_t out1[] = {OUTPUT(1)};

    (void)state;
    raw_flow_mod(&b, "", out1, 0, 1);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION,
                          SP_OFPBIC_BAD_TABLE_ID);
    raw_flow_mod(&b, "", out1, sizeof out1, 3);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION, SP_OFPBIC_UNSUP_INST);
    raw_flow_mod(&b, "", out1, 8, 2);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION, SP_OFPBIC_UNSUP_INST);
    raw_flow_mod(&b, "", out1, 0, 6);
    expect_flow_mod_error(&b, SP_OFPET_METER_MOD_FAILED,
                          SP_OFPMMFC_INVALID_METER);
    raw_flow_mod(&b, "", out1, 0, 77);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION,
                          SP_OFPBIC_UNKNOWN_INST);
    raw_flow_mod(&b, "", out1, 0, 0xffff);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION,
                          SP_OFPBIC_BAD_EXPERIMENTER);
    /* Two apply-actions. */
    raw_flow_mod(&b, "", out1, sizeof out1, 4);
    sp_of_put16(&b, 4), sp_of_put16(&b, 8), sp_of_buf_put(&b, 4);
    set_len(&b, 0);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION, SP_OFPBIC_UNSUP_INST);
    /* Lengths: below 8, not a multiple of 8, past the end, a tail. */
    raw_flow_mod(&b, "", out1, sizeof out1, 4);
    sp_of_set16(&b, b.len - 8 - sizeof out1 + 2, 4);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION, SP_OFPBIC_BAD_LEN);
    sp_of_set16(&b, b.len - 8 - sizeof out1 + 2, 12);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION, SP_OFPBIC_BAD_LEN);
    sp_of_set16(&b, b.len - 8 - sizeof out1 + 2, 32);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION, SP_OFPBIC_BAD_LEN);
    sp_of_set16(&b, b.len - 8 - sizeof out1 + 2, 24);
    sp_of_buf_put(&b, 2);
    set_len(&b, 0);
    expect_flow_mod_error(&b, SP_OFPET_BAD_INSTRUCTION, SP_OFPBIC_BAD_LEN);
    /* An apply-actions whose action runs past it. */
    raw_flow_mod(&b, "", out1, sizeof out1, 4);
    sp_of_set16(&b, b.len - 8 - sizeof out1 + 2, 16);
    sp_of_buf_put(&b, 0);
    b.len -= 8;
    set_len(&b, 0);
    expect_flow_mod_error(&b, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_LEN);
    sp_of_buf_free(&b);
}

static void
test_flow_mod_errors(void **state)
{
    struct sp_of_buf b = {0};

    (void)state;
    build_flow_mod(&b, "", "output:1", SP_OFPFC_ADD);
    b.data[24] = 1; /* table 1 */
    expect_flow_mod_error(&b, SP_OFPET_FLOW_MOD_FAILED,
                          SP_OFPFMFC_BAD_TABLE_ID);
    b.data[24] = SP_OFPTT_ALL; /* all tables: only for deletes */
    expect_flow_mod_error(&b, SP_OFPET_FLOW_MOD_FAILED,
                          SP_OFPFMFC_BAD_TABLE_ID);
    b.data[24] = 0;
    b.data[25] = 5;
    expect_flow_mod_error(&b, SP_OFPET_FLOW_MOD_FAILED,
                          SP_OFPFMFC_BAD_COMMAND);
    b.data[25] = 0;
    sp_of_set16(&b, 44, 0x40);
    expect_flow_mod_error(&b, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_BAD_FLAGS);
    sp_of_set16(&b, 44, 0);
    b.data[35] = 1; /* buffer_id 0xffffff01 */
    expect_flow_mod_error(&b, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BUFFER_UNKNOWN);
    /* Deletes take table OFPTT_ALL and ignore their instructions. */
    build_flow_mod(&b, "ip", "", SP_OFPFC_DELETE);
    b.data[24] = SP_OFPTT_ALL;
    {
        struct sp_of_flow_mod fm;
        struct sp_of_error err;

        assert_int_equal(sp_of_decode_flow_mod(b.data, b.len, 4, &fm, &err),
                         0);
        assert_int_equal(fm.command, SP_OFPFC_DELETE);
    }
    sp_of_buf_free(&b);
}

/* Where a FLOW_MOD's instructions start. */
static size_t
match_end(const struct sp_of_buf *b)
{
    return 48 + (sp_of_get16(b->data + 50) + 7u) / 8 * 8;
}

/* Every prefix of a FLOW_MOD, its length field saying so, in a buffer that
 * ends at an inaccessible page: an error, never a read past it. */
static void
test_flow_mod_truncated(void **state)
{
    struct sp_of_buf b = {0};

    (void)state;
    build_flow_mod(&b, "in_port=1,tcp,nw_src=10.0.0.0/8,tp_dst=80",
                   "dec_ttl,mod_nw_src:1.2.3.4,output:2", SP_OFPFC_ADD);
    for (size_t len = 0; len < b.len; len++) {
        struct sp_guarded g;
        struct sp_of_flow_mod fm;
        struct sp_of_error err;

        sp_guarded_alloc(&g, len, 1);
        memcpy(g.data, b.data, len);
        if (len >= 4) {
            g.data[2] = (uint8_t)(len >> 8), g.data[3] = (uint8_t)len;
        }
        /* Only the prefix that ends with the match is a whole message (a
         * rule with no instructions: drop). */
        if (len == match_end(&b)) {
            assert_int_equal(sp_of_decode_flow_mod(g.data, len, 4, &fm, &err),
                             0);
            assert_string_equal(fm.actions, "drop");
            sp_guarded_free(&g);
            continue;
        }
        assert_int_equal(sp_of_decode_flow_mod(g.data, len, 4, &fm, &err), -1);
        assert_true(err.type == SP_OFPET_BAD_REQUEST ||
                    err.type == SP_OFPET_BAD_MATCH ||
                    err.type == SP_OFPET_BAD_INSTRUCTION ||
                    err.type == SP_OFPET_BAD_ACTION);
        sp_guarded_check(&g);
        sp_guarded_free(&g);
    }
    sp_of_buf_free(&b);
}

/* ---- the session ---- */

static void
test_hello(void **state)
{
    struct sp_of_session s;
    const uint8_t v10[] = {1, 0, 0, 8, 0, 0, 0, 9};
    const uint8_t v15_bitmap[] = {6, 0, 0, 16, 0, 0, 0, 2,
                                  0, 1, 0, 8,  0, 0, 0, 0x52};
    const uint8_t v15_no13[] = {6, 0, 0, 16, 0, 0, 0, 3,
                                0, 1, 0, 8,  0, 0, 0, 0x42};
    const uint8_t bad_elem[] = {4, 0, 0, 16, 0, 0, 0, 4,
                                0, 1, 0, 40, 0, 0, 0, 0x10};
    uint8_t msg[64];
    size_t len;

    (void)state;
    sp_of_session_init(&s, &sw);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_HELLO);
    assert_int_equal(len, 16);
    assert_int_equal(sp_of_get32(msg + 12), 1u << 4);
    assert_int_equal(sp_of_session_input(&s, v15_bitmap, sizeof v15_bitmap),
                     0);
    assert_int_equal(s.out.len, 0);
    sp_of_session_free(&s);

    sp_of_session_init(&s, &sw);
    s.out.len = 0;
    expect_error(&s, v10, sizeof v10, SP_OFPET_HELLO_FAILED,
                 SP_OFPHFC_INCOMPATIBLE);
    assert_true(s.closing);
    sp_of_session_free(&s);

    sp_of_session_init(&s, &sw);
    s.out.len = 0;
    expect_error(&s, v15_no13, sizeof v15_no13, SP_OFPET_HELLO_FAILED,
                 SP_OFPHFC_INCOMPATIBLE);
    sp_of_session_free(&s);

    sp_of_session_init(&s, &sw);
    s.out.len = 0;
    expect_error(&s, bad_elem, sizeof bad_elem, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_LEN);
    assert_false(s.closing);
    sp_of_session_free(&s);
}

static void
test_simple_requests(void **state)
{
    struct sp_of_session s;
    const uint8_t echo[] = {4, 2, 0, 12, 0, 0, 0, 5, 'p', 'i', 'n', 'g'};
    const uint8_t features[] = {4, 5, 0, 8, 0, 0, 0, 6};
    const uint8_t get_config[] = {4, 7, 0, 8, 0, 0, 0, 7};
    const uint8_t set_config[] = {4, 9, 0, 12, 0, 0, 0, 8, 0, 0, 0, 200};
    const uint8_t set_reasm[] = {4, 9, 0, 12, 0, 0, 0, 9, 0, 2, 0, 200};
    const uint8_t barrier[] = {4, 20, 0, 8, 0, 0, 0, 10};
    const uint8_t barrier_long[] = {4, 20, 0, 12, 0, 0, 0, 11, 0, 0, 0, 0};
    const uint8_t features_short[] = {4, 5, 0, 8};
    uint8_t msg[256];
    size_t len;

    (void)state;
    open_session(&s);
    sp_of_session_input(&s, echo, sizeof echo);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_ECHO_REPLY);
    assert_int_equal(len, sizeof echo);
    assert_memory_equal(msg + 4, echo + 4, sizeof echo - 4);

    sp_of_session_input(&s, features, sizeof features);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_FEATURES_REPLY);
    assert_int_equal(len, 32);
    assert_int_equal(sp_of_get64(msg + 8), 0x1234);
    assert_int_equal(msg[20], 1); /* one table */

    sp_of_session_input(&s, set_config, sizeof set_config);
    assert_int_equal(s.out.len, 0);
    sp_of_session_input(&s, get_config, sizeof get_config);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_GET_CONFIG_REPLY);
    assert_int_equal(len, 12);
    assert_int_equal(sp_of_get16(msg + 10), 200);
    expect_error(&s, set_reasm, sizeof set_reasm,
                 SP_OFPET_SWITCH_CONFIG_FAILED, SP_OFPSCFC_BAD_FLAGS);

    sp_of_session_input(&s, barrier, sizeof barrier);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_BARRIER_REPLY);
    assert_int_equal(sp_of_get32(msg + 4), 10);
    expect_error(&s, barrier_long, sizeof barrier_long, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_LEN);

    /* Half a header waits for the rest. */
    sp_of_session_input(&s, features_short, sizeof features_short);
    assert_int_equal(s.out.len, 0);
    sp_of_session_input(&s, features + 4, 4);
    assert_int_equal(pop(&s, NULL, NULL), SP_OFPT_FEATURES_REPLY);
    sp_of_session_free(&s);
}

static void
test_bad_messages(void **state)
{
    struct sp_of_session s;
    const uint8_t unknown[] = {4, 99, 0, 8, 0, 0, 0, 1};
    const uint8_t group_mod[] = {4, 15, 0, 16, 0, 0, 0, 2,
                                 0, 0,  0, 0,  0, 0, 0, 1};
    const uint8_t meter_mod[] = {4, 29, 0, 16, 0, 0, 0, 3,
                                 0, 0,  0, 0,  0, 0, 0, 1};
    const uint8_t table_mod[] = {4, 17, 0, 16, 0, 0, 0, 4,
                                 1, 0,  0, 0,  0, 0, 0, 0};
    const uint8_t packet_in[] = {4, 10, 0, 8, 0, 0, 0, 5};
    const uint8_t experimenter[] = {4, 4, 0,    16,   0, 0, 0, 6,
                                    0, 0, 0x23, 0x20, 0, 0, 0, 1};
    const uint8_t old_version[] = {1, 5, 0, 8, 0, 0, 0, 7};
    const uint8_t features[] = {4, 5, 0, 8, 0, 0, 0, 8};
    const uint8_t bad_len[] = {4, 5, 0, 4, 0, 0, 0, 9};
    uint8_t big[300];

    (void)state;
    open_session(&s);
    expect_error(&s, unknown, sizeof unknown, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_TYPE);
    expect_error(&s, group_mod, sizeof group_mod, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_TYPE);
    expect_error(&s, meter_mod, sizeof meter_mod, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_TYPE);
    expect_error(&s, table_mod, sizeof table_mod, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_TYPE);
    expect_error(&s, packet_in, sizeof packet_in, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_TYPE);
    expect_error(&s, experimenter, sizeof experimenter, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_EXPERIMENTER);
    expect_error(&s, old_version, sizeof old_version, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_VERSION);
    /* A long unknown message: the error echoes its first 64 bytes. */
    memset(big, 0xab, sizeof big);
    memcpy(big, (uint8_t[]){4, 200, 1, 44, 0, 0, 0, 10}, 8);
    expect_error(&s, big, sizeof big, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_TYPE);
    /* The session still works, then a length below 8 ends it. */
    sp_of_session_input(&s, features, sizeof features);
    assert_int_equal(pop(&s, NULL, NULL), SP_OFPT_FEATURES_REPLY);
    expect_error(&s, bad_len, sizeof bad_len, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_LEN);
    assert_true(s.closing);
    assert_false(sp_of_session_wants_input(&s));
    assert_int_equal(sp_of_session_input(&s, features, sizeof features), -1);
    sp_of_session_free(&s);
}

static void
multipart(struct sp_of_session *s, uint16_t type, const uint8_t *body,
          size_t len)
{
    struct sp_of_buf b = {0};

    sp_of_header(&b, SP_OFPT_MULTIPART_REQUEST, 77);
    sp_of_put16(&b, type);
    sp_of_put16(&b, 0);
    sp_of_buf_put(&b, 4);
    sp_of_put_bytes(&b, body, len);
    sp_of_finish(&b, 0);
    sp_of_session_input(s, b.data, b.len);
    sp_of_buf_free(&b);
}

static void
test_multipart_simple(void **state)
{
    struct sp_of_session s;
    uint8_t msg[2048];
    size_t len;
    const uint8_t any[8] = {0xff, 0xff, 0xff, 0xff};
    const uint8_t port2[8] = {0, 0, 0, 2};
    const uint8_t port9[8] = {0, 0, 0, 9};
    const uint8_t mp_more[] = {4, 18, 0, 16, 0, 0, 0, 1,
                               0, 0,  0, 1,  0, 0, 0, 0};
    const uint8_t mp_unknown[] = {4, 18, 0, 16, 0, 0, 0, 1,
                                  0, 14, 0, 0,  0, 0, 0, 0};
    const uint8_t mp_short[] = {4, 18, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0};
    const uint8_t desc_body[] = {4, 18, 0, 24, 0, 0, 0, 1, 0, 0, 0, 0,
                                 0, 0,  0, 0,  0, 0, 0, 0, 0, 0, 0, 0};

    (void)state;
    open_session(&s);
    multipart(&s, SP_OFPMP_DESC, NULL, 0);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
    assert_int_equal(len, 16 + 1056);
    assert_string_equal((char *)msg + 16, "simdpath");

    multipart(&s, SP_OFPMP_TABLE, NULL, 0);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
    assert_int_equal(len, 16 + 24);
    assert_int_equal(sp_of_get64(msg + 24), 7);

    multipart(&s, SP_OFPMP_PORT_STATS, any, sizeof any);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
    assert_int_equal(len, 16 + 4 * 112);
    assert_int_equal(sp_of_get32(msg + 16 + 112), 2);
    assert_int_equal(sp_of_get64(msg + 16 + 112 + 8), 200);
    /* Bytes are not kept: all ones, not zero. */
    assert_true(sp_of_get64(msg + 16 + 24) == SP_OF_NO_COUNT);

    multipart(&s, SP_OFPMP_PORT_STATS, port2, sizeof port2);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
    assert_int_equal(len, 16 + 112);
    multipart(&s, SP_OFPMP_PORT_STATS, port9, sizeof port9);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_ERROR);
    assert_int_equal(sp_of_get16(msg + 10), SP_OFPBRC_BAD_PORT);

    multipart(&s, SP_OFPMP_PORT_DESC, NULL, 0);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
    assert_int_equal(len, 16 + 4 * 64);
    assert_string_equal((char *)msg + 16 + 64 + 16, "net_pcap1");

    multipart(&s, SP_OFPMP_TABLE_FEATURES, NULL, 0);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
    assert_int_equal(sp_of_get16(msg + 16), len - 16); /* one table */
    assert_string_equal((char *)msg + 24, "classifier");
    multipart(&s, SP_OFPMP_TABLE_FEATURES, any, sizeof any);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_ERROR);
    assert_int_equal(sp_of_get16(msg + 8), SP_OFPET_TABLE_FEATURES_FAILED);
    assert_int_equal(sp_of_get16(msg + 10), SP_OFPTFFC_EPERM);

    /* No groups and no meters: the lists empty, the features none,
     * each request of its length only. */
    {
        static const struct {
            uint16_t type;
            size_t body, reply;
        } none[] = {
            {SP_OFPMP_GROUP, 8, 0},           {SP_OFPMP_GROUP_DESC, 0, 0},
            {SP_OFPMP_GROUP_FEATURES, 0, 40}, {SP_OFPMP_METER, 8, 0},
            {SP_OFPMP_METER_CONFIG, 8, 0},    {SP_OFPMP_METER_FEATURES, 0, 16},
        };
        static const uint8_t zeros[40];

        for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
            multipart(&s, none[i].type, any, none[i].body);
            assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
            assert_int_equal(sp_of_get16(msg + 8), none[i].type);
            assert_int_equal(len, 16 + none[i].reply);
            assert_memory_equal(msg + 16, zeros, none[i].reply);
            multipart(&s, none[i].type, any, none[i].body ? 4 : 8);
            assert_int_equal(pop(&s, msg, &len), SP_OFPT_ERROR);
            assert_int_equal(sp_of_get16(msg + 10), SP_OFPBRC_BAD_LEN);
        }
    }
    /* No queues: all of a port's, or of all ports, none; a queue named,
     * or a port the switch lacks, is an error. */
    {
        static const struct {
            uint8_t body[8];
            int code; /* -1: an empty reply */
        } queues[] = {
            {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, -1},
            {{0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff}, -1},
            {{0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff}, SP_OFPQOFC_BAD_PORT},
            {{0, 0, 0, 1, 0, 0, 0, 5}, SP_OFPQOFC_BAD_QUEUE},
        };
        uint8_t config[16] = {
            4, SP_OFPT_QUEUE_GET_CONFIG_REQUEST, 0, 16, 0, 0, 0, 3, 0, 0, 0,
            2};

        for (size_t i = 0; i < sizeof queues / sizeof queues[0]; i++) {
            multipart(&s, SP_OFPMP_QUEUE, queues[i].body, 8);
            if (queues[i].code < 0) {
                assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
                assert_int_equal(len, 16);
                continue;
            }
            assert_int_equal(pop(&s, msg, &len), SP_OFPT_ERROR);
            assert_int_equal(sp_of_get16(msg + 8), SP_OFPET_QUEUE_OP_FAILED);
            assert_int_equal(sp_of_get16(msg + 10), queues[i].code);
        }
        sp_of_session_input(&s, config, sizeof config);
        assert_int_equal(pop(&s, msg, &len), SP_OFPT_QUEUE_GET_CONFIG_REPLY);
        assert_int_equal(len, 16);
        assert_int_equal(sp_of_get32(msg + 8), 2);
        config[11] = 9;
        expect_error(&s, config, sizeof config, SP_OFPET_QUEUE_OP_FAILED,
                     SP_OFPQOFC_BAD_PORT);
        config[3] = 12;
        expect_error(&s, config, 12, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN);
    }
    expect_error(&s, mp_more, sizeof mp_more, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_MULTIPART);
    expect_error(&s, mp_unknown, sizeof mp_unknown, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_MULTIPART);
    expect_error(&s, mp_short, sizeof mp_short, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_LEN);
    expect_error(&s, desc_body, sizeof desc_body, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_LEN);
    sp_of_session_free(&s);
}

static void
test_flow_removed(void **state)
{
    struct sp_of_session s;
    struct sp_of_flow f;
    struct sp_match m;
    struct sp_of_error err;
    uint8_t msg[256];
    size_t len, used;

    (void)state;
    open_session(&s);
    memset(&f, 0, sizeof f);
    f.match = match_of("udp,tp_dst=53");
    f.priority = 9;
    f.cookie = 0xc0ffee;
    f.hard_timeout = 4;
    f.duration_sec = 4;
    f.packets = f.bytes = SP_OF_NO_COUNT;
    assert_int_equal(sp_of_session_flow_removed(&s, &f, SP_OFPRR_HARD_TIMEOUT),
                     0);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_FLOW_REMOVED);
    assert_int_equal(sp_of_get64(msg + 8), 0xc0ffee);
    assert_int_equal(sp_of_get16(msg + 16), 9);
    assert_int_equal(msg[18], SP_OFPRR_HARD_TIMEOUT);
    assert_int_equal(sp_of_get16(msg + 30), 4);
    assert_int_equal(sp_of_decode_match(msg + 48, len - 48, &m, &used, &err),
                     0);
    assert_int_equal(48 + used, len);
    assert_memory_equal(&m, &f.match, sizeof m);
    sp_of_session_free(&s);
}

/* The timeouts with a clock the test turns: a rule hit now and then
 * stays while its hits come within idle_timeout, goes IDLE_TIMEOUT once
 * they stop; the hard timeout counts from the last add or modify, whatever
 * the hits; the hard one wins when both are due; no timeout, no expiry. */
static void
test_flow_expiry(void **state)
{
    struct sp_of_flow f;
    uint64_t added = 5000, last_hit = 5000;

    (void)state;
    memset(&f, 0, sizeof f);
    f.idle_timeout = 2;
    /* Hit every 1.5 s for a minute: never idle. */
    for (uint64_t now = added; now < added + 60000; now += 100) {
        if ((now - added) % 1500 == 0) {
            last_hit = now;
        }
        assert_int_equal(
            sp_of_flow_expiry(&f, added, now, (now - last_hit) / 1000.0), -1);
    }
    /* The hits stop: kept at exactly 2 s idle, gone just after. */
    assert_int_equal(sp_of_flow_expiry(&f, added, last_hit + 2000, 2.0), -1);
    assert_int_equal(sp_of_flow_expiry(&f, added, last_hit + 2001, 2.001),
                     SP_OFPRR_IDLE_TIMEOUT);
    /* A modify does not reset the idle time (the rule's last packet is
     * kept). */
    assert_int_equal(
        sp_of_flow_expiry(&f, last_hit + 1999, last_hit + 2001, 2.001),
        SP_OFPRR_IDLE_TIMEOUT);

    f.hard_timeout = 10;
    /* Hit all the time: the hard timeout still comes, 10 s after the add,
     * and a modify at 8 s moves it to 18 s. */
    assert_int_equal(sp_of_flow_expiry(&f, added, added + 10000, 0), -1);
    assert_int_equal(sp_of_flow_expiry(&f, added, added + 10001, 0),
                     SP_OFPRR_HARD_TIMEOUT);
    assert_int_equal(sp_of_flow_expiry(&f, added + 8000, added + 10001, 0),
                     -1);
    assert_int_equal(sp_of_flow_expiry(&f, added + 8000, added + 18001, 0),
                     SP_OFPRR_HARD_TIMEOUT);
    /* Both due: hard. */
    assert_int_equal(sp_of_flow_expiry(&f, added, added + 20000, 20.0),
                     SP_OFPRR_HARD_TIMEOUT);
    /* A clock read before the modify was stamped: not expired. */
    assert_int_equal(sp_of_flow_expiry(&f, added + 100, added, 0), -1);

    f.idle_timeout = f.hard_timeout = 0;
    assert_int_equal(sp_of_flow_expiry(&f, 0, UINT64_MAX, 1e9), -1);
}

/* PORT_STATUS carries the port's description as PORT_DESC has it, the
 * link state with it; PORT_DESC reports the switch's link states. */
static void
test_port_status(void **state)
{
    struct sp_of_session s;
    struct sp_of_port p;
    uint8_t msg[512];
    size_t len;

    (void)state;
    open_session(&s);
    memset(&p, 0, sizeof p);
    p.port_no = 2;
    memcpy(p.hw_addr, "\x02\0\0\0\0\x07", 6);
    snprintf(p.name, sizeof p.name, "net_tap0");
    p.link_down = true;
    assert_int_equal(sp_of_session_port_status(&s, &p, SP_OFPPR_MODIFY), 0);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_PORT_STATUS);
    assert_int_equal(len, 80);
    assert_int_equal(sp_of_get32(msg + 4), 0);
    assert_int_equal(msg[8], SP_OFPPR_MODIFY);
    assert_int_equal(sp_of_get32(msg + 16), 2);
    assert_memory_equal(msg + 24, p.hw_addr, 6);
    assert_string_equal((char *)msg + 32, "net_tap0");
    assert_int_equal(sp_of_get32(msg + 48), 0);
    assert_int_equal(sp_of_get32(msg + 52), SP_OFPPS_LINK_DOWN);
    p.link_down = false;
    p.config = SP_OFPPC_NO_FWD;
    assert_int_equal(sp_of_session_port_status(&s, &p, SP_OFPPR_MODIFY), 0);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_PORT_STATUS);
    assert_int_equal(sp_of_get32(msg + 48), SP_OFPPC_NO_FWD);
    assert_int_equal(sp_of_get32(msg + 52), SP_OFPPS_LIVE);
    /* Nothing asynchronous before the peer's HELLO: its version is not
     * known yet. */
    {
        struct sp_of_session fresh;
        struct sp_of_flow f = {.priority = 1};
        size_t hello_len;

        sp_of_session_init(&fresh, &sw);
        hello_len = fresh.out.len;
        assert_int_equal(
            sp_of_session_port_status(&fresh, &p, SP_OFPPR_MODIFY), 0);
        assert_int_equal(
            sp_of_session_flow_removed(&fresh, &f, SP_OFPRR_DELETE), 0);
        assert_int_equal(fresh.out.len, hello_len);
        sp_of_session_free(&fresh);
    }

    /* The fake switch's port 3 is down, the others up. */
    multipart(&s, SP_OFPMP_PORT_DESC, NULL, 0);
    assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
    assert_int_equal(len, 16 + 4 * 64);
    for (unsigned port = 1; port <= 4; port++) {
        assert_int_equal(sp_of_get32(msg + 16 + (port - 1) * 64 + 36),
                         port == 3 ? SP_OFPPS_LINK_DOWN : SP_OFPPS_LIVE);
    }
    assert_int_equal(s.out.len, 0);
    sp_of_session_free(&s);
}

/* PORT_MOD as ovs-vswitchd checks it: length, port, address; one that
 * changes nothing is taken without a reply, a config or advertise change
 * refused with its own code. */
static void
test_port_mod(void **state)
{
    struct sp_of_session s;
    uint8_t pm[40] = {4, SP_OFPT_PORT_MOD, 0, 40, 0, 0, 0, 9};
    uint8_t bad[40];

    (void)state;
    open_session(&s);
    pm[11] = 2; /* port 2 */
    pm[21] = 2; /* its address, 00:00:00:00:00:02 */
    pm[27] = 1; /* config PORT_DOWN, with a mask of 0: no change */
    fsw->port_mods = 0;
    assert_int_equal(sp_of_session_input(&s, pm, sizeof pm), 0);
    assert_int_equal(s.out.len, 0);
    /* A mask of bits OpenFlow 1.3 does not have (NO_STP, NO_FLOOD) is
     * no change either, as ovs-vswitchd takes it. */
    pm[31] = 0x12;
    assert_int_equal(sp_of_session_input(&s, pm, sizeof pm), 0);
    assert_int_equal(s.out.len + fsw->port_mods, 0);
    /* PORT_DOWN and NO_FWD in the mask go to the switch, the config's
     * other bits (in no mask) left out. */
    pm[27] = 0xff;
    pm[31] = 0x21;
    assert_int_equal(sp_of_session_input(&s, pm, sizeof pm), 0);
    assert_int_equal(s.out.len, 0);
    assert_int_equal(fsw->port_mods, 1);
    assert_int_equal(fsw->port_mod[0], 2);
    assert_int_equal(fsw->port_mod[1], SP_OFPPC_PORT_DOWN | SP_OFPPC_NO_FWD);
    assert_int_equal(fsw->port_mod[2], SP_OFPPC_PORT_DOWN | SP_OFPPC_NO_FWD);
    pm[27] = 1;
    pm[31] = 0;

    /* A switch without port_mod changes no config. */
    {
        struct sp_of_switch plain = sw;
        struct sp_of_session p;

        plain.port_mod = NULL;
        open_session_of(&p, &plain);
        memcpy(bad, pm, sizeof bad);
        bad[31] = 1; /* mask PORT_DOWN */
        expect_error(&p, bad, sizeof bad, SP_OFPET_PORT_MOD_FAILED,
                     SP_OFPPMFC_BAD_CONFIG);
        sp_of_session_free(&p);
    }
    /* An advertise change is refused whole: the config in it not set. */
    memcpy(bad, pm, sizeof bad);
    bad[31] = 1;
    bad[35] = 0x20;
    expect_error(&s, bad, sizeof bad, SP_OFPET_PORT_MOD_FAILED,
                 SP_OFPPMFC_BAD_ADVERTISE);
    assert_int_equal(fsw->port_mods, 1);
    memcpy(bad, pm, sizeof bad);
    bad[35] = 0x20; /* advertise 1GB_FD */
    expect_error(&s, bad, sizeof bad, SP_OFPET_PORT_MOD_FAILED,
                 SP_OFPPMFC_BAD_ADVERTISE);
    memcpy(bad, pm, sizeof bad);
    bad[21] = 3;
    expect_error(&s, bad, sizeof bad, SP_OFPET_PORT_MOD_FAILED,
                 SP_OFPPMFC_BAD_HW_ADDR);
    memcpy(bad, pm, sizeof bad);
    bad[11] = 5;
    expect_error(&s, bad, sizeof bad, SP_OFPET_PORT_MOD_FAILED,
                 SP_OFPPMFC_BAD_PORT);
    bad[8] = bad[9] = bad[10] = bad[11] = 0xff; /* OFPP_ANY */
    expect_error(&s, bad, sizeof bad, SP_OFPET_PORT_MOD_FAILED,
                 SP_OFPPMFC_BAD_PORT);
    memcpy(bad, pm, sizeof bad);
    bad[3] = 36;
    expect_error(&s, bad, 36, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN);
    sp_of_session_free(&s);
}

static void
flow_request(struct sp_of_session *s, uint16_t type, uint8_t table,
             const char *match, uint32_t out_port)
{
    struct sp_of_buf body = {0};
    struct sp_match m = match_of(match);

    sp_of_put_bytes(&body, (uint8_t[]){table, 0, 0, 0}, 4);
    sp_of_put32(&body, out_port);
    sp_of_put32(&body, SP_OFPG_ANY);
    sp_of_buf_put(&body, 4);
    sp_of_put64(&body, 0);
    sp_of_put64(&body, 0);
    sp_of_encode_match(&body, &m);
    multipart(s, type, body.data, body.len);
    sp_of_buf_free(&body);
}

/* A FLOW_MOD through the session. */
static void
send_flow_mod(struct sp_of_session *s, const char *match, const char *acts,
              uint8_t command)
{
    struct sp_of_buf b = {0};

    build_flow_mod(&b, match, acts, command);
    sp_of_session_input(s, b.data, b.len);
    sp_of_buf_free(&b);
}

static void
test_flow_dump_in_pieces(void **state)
{
    struct sp_of_session s;
    enum { N = 5000 };
    size_t entries = 0, messages = 0, peak = 0;
    bool last = false;

    (void)state;
    open_session(&s);
    for (unsigned i = 0; i < N; i++) {
        char match[64];

        snprintf(match, sizeof match, "tcp,nw_src=10.%u.%u.0/24,tp_dst=%u",
                 i / 256, i % 256, i % 1000);
        send_flow_mod(&s, match, "mod_nw_dst:1.2.3.4,output:2", SP_OFPFC_ADD);
    }
    assert_int_equal(s.out.len, 0);
    assert_int_equal(fsw->n, N);

    flow_request(&s, SP_OFPMP_FLOW, SP_OFPTT_ALL, "", SP_OFPP_ANY);
    /* While the reply is produced, no input is taken. */
    assert_false(sp_of_session_wants_input(&s));
    while (!last) {
        uint8_t *msg = s.out.data;
        size_t len;

        if (s.out.len > peak) {
            peak = s.out.len;
        }
        if (!s.out.len) {
            assert_int_equal(sp_of_session_input(&s, NULL, 0), 0);
            continue;
        }
        len = sp_of_get16(msg + 2);
        assert_int_equal(msg[1], SP_OFPT_MULTIPART_REPLY);
        assert_int_equal(sp_of_get16(msg + 8), SP_OFPMP_FLOW);
        last = !(sp_of_get16(msg + 10) & SP_OFPMPF_MORE);
        for (size_t ofs = 16; ofs < len;) {
            size_t elen = sp_of_get16(msg + ofs);

            assert_true(elen >= 56 && ofs + elen <= len);
            assert_int_equal(sp_of_get64(msg + ofs + 32), SP_OF_NO_COUNT);
            ofs += elen;
            entries++;
        }
        messages++;
        sp_of_buf_consume(&s.out, len);
    }
    assert_int_equal(entries, N);
    assert_true(messages > 1);
    assert_true(peak < SP_OF_OUTPUT_HIGH + SP_OFP_MAX_MSG_LEN);
    assert_true(sp_of_session_wants_input(&s));

    /* Aggregate, filtered by match and out_port. */
    flow_request(&s, SP_OFPMP_AGGREGATE, 0, "tcp,tp_dst=7", SP_OFPP_ANY);
    {
        uint8_t msg[64];
        size_t len;

        assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
        assert_int_equal(len, 16 + 24);
        assert_int_equal(sp_of_get32(msg + 32), N / 1000);
        assert_true(sp_of_get64(msg + 16) == SP_OF_NO_COUNT);
    }
    flow_request(&s, SP_OFPMP_AGGREGATE, 0, "", 3);
    {
        uint8_t msg[64];

        assert_int_equal(pop(&s, msg, NULL), SP_OFPT_MULTIPART_REPLY);
        assert_int_equal(sp_of_get32(msg + 32), 0);
    }
    flow_request(&s, SP_OFPMP_FLOW, 1, "", SP_OFPP_ANY);
    {
        uint8_t msg[128];

        assert_int_equal(pop(&s, msg, NULL), SP_OFPT_ERROR);
        assert_int_equal(sp_of_get16(msg + 10), SP_OFPBRC_BAD_TABLE_ID);
    }

    /* Non-strict delete of a subset, strict delete of one. */
    send_flow_mod(&s, "tcp,tp_dst=7", "", SP_OFPFC_DELETE);
    assert_int_equal(fsw->n, N - N / 1000);
    send_flow_mod(&s, "tcp,nw_src=10.0.8.0/24,tp_dst=8", "",
                  SP_OFPFC_DELETE_STRICT);
    assert_int_equal(fsw->n, N - N / 1000 - 1);
    send_flow_mod(&s, "ip", "", SP_OFPFC_DELETE);
    assert_int_equal(fsw->n, 0);
    assert_int_equal(s.out.len, 0);

    /* An empty table: one empty reply. */
    flow_request(&s, SP_OFPMP_FLOW, 0, "", SP_OFPP_ANY);
    {
        uint8_t msg[64];
        size_t len;

        assert_int_equal(pop(&s, msg, &len), SP_OFPT_MULTIPART_REPLY);
        assert_int_equal(len, 16);
        assert_int_equal(sp_of_get16(msg + 10), 0);
    }
    sp_of_session_free(&s);
}

/* Messages after a long reply wait for it, in order. */
static void
test_order_after_dump(void **state)
{
    struct sp_of_session s;
    const uint8_t barrier[] = {4, 20, 0, 8, 0, 0, 0, 99};
    int last_type = -1;

    (void)state;
    open_session(&s);
    fsw->n = 0;
    for (unsigned i = 0; i < 4000; i++) {
        char match[64];

        snprintf(match, sizeof match, "ip,nw_src=10.0.%u.%u", i / 256,
                 i % 256);
        send_flow_mod(&s, match, "output:1", SP_OFPFC_ADD);
    }
    flow_request(&s, SP_OFPMP_FLOW, 0, "", SP_OFPP_ANY);
    sp_of_session_input(&s, barrier, sizeof barrier);
    while (s.out.len || s.pending) {
        if (!s.out.len) {
            sp_of_session_input(&s, NULL, 0);
            continue;
        }
        last_type = pop(&s, NULL, NULL);
    }
    assert_int_equal(last_type, SP_OFPT_BARRIER_REPLY);
    fsw->n = 0;
    sp_of_session_free(&s);
}

/* Requests whose replies are far larger (a PORT_DESC of 16 bytes gets
 * 272) sent without reading: the output stops growing near its limit,
 * input is refused meanwhile, and draining it answers every request. */
static void
test_output_bounded(void **state)
{
    enum { N = 10000 };
    struct sp_of_session s;
    struct sp_of_buf reqs = {0};
    size_t replies = 0, peak = 0;

    (void)state;
    open_session(&s);
    for (unsigned i = 0; i < N; i++) {
        size_t start = reqs.len;

        sp_of_header(&reqs, SP_OFPT_MULTIPART_REQUEST, i);
        sp_of_put16(&reqs, SP_OFPMP_PORT_DESC);
        sp_of_buf_put(&reqs, 6);
        sp_of_finish(&reqs, start);
    }
    sp_of_session_input(&s, reqs.data, reqs.len);
    assert_false(sp_of_session_wants_input(&s));
    while (replies < N) {
        if (s.out.len > peak) {
            peak = s.out.len;
        }
        if (!s.out.len) {
            sp_of_session_input(&s, NULL, 0);
            assert_true(s.out.len > 0);
            continue;
        }
        assert_int_equal(pop(&s, NULL, NULL), SP_OFPT_MULTIPART_REPLY);
        replies++;
    }
    assert_true(peak < SP_OF_OUTPUT_HIGH + SP_OFP_MAX_MSG_LEN);
    assert_int_equal(s.in.len, 0);
    assert_true(sp_of_session_wants_input(&s));
    sp_of_buf_free(&reqs);
    sp_of_session_free(&s);
}

/* A whole FLOW_MOD fed one byte at a time, and every prefix of it with its
 * length field saying so: errors, and the session goes on. */
static void
test_session_truncated(void **state)
{
    struct sp_of_session s;
    struct sp_of_buf b = {0};
    const uint8_t features[] = {4, 5, 0, 8, 0, 0, 0, 8};

    (void)state;
    open_session(&s);
    fsw->n = 0;
    build_flow_mod(&b, "udp,tp_dst=53", "output:3", SP_OFPFC_ADD);
    for (size_t i = 0; i < b.len; i++) {
        assert_int_equal(sp_of_session_input(&s, b.data + i, 1), 0);
    }
    assert_int_equal(s.out.len, 0);
    assert_int_equal(fsw->n, 1);
    for (size_t len = 8; len < b.len; len++) {
        uint8_t msg[256];

        memcpy(msg, b.data, len);
        msg[2] = (uint8_t)(len >> 8), msg[3] = (uint8_t)len;
        sp_of_session_input(&s, msg, len);
        if (len == match_end(&b)) {
            assert_int_equal(s.out.len, 0);
            continue;
        }
        assert_int_equal(pop(&s, NULL, NULL), SP_OFPT_ERROR);
        assert_int_equal(s.out.len, 0);
    }
    assert_int_equal(fsw->n, 2);
    /* A length past what was sent: the session waits for the rest. */
    {
        uint8_t msg[256];

        memcpy(msg, b.data, b.len);
        msg[3] = (uint8_t)(b.len + 8);
        sp_of_session_input(&s, msg, b.len);
        assert_int_equal(s.out.len, 0);
        /* The 8 bytes that complete it are a tail after the
         * instructions. */
        sp_of_session_input(&s, features, sizeof features);
        assert_int_equal(pop(&s, NULL, NULL), SP_OFPT_ERROR);
        sp_of_session_input(&s, features, sizeof features);
        assert_int_equal(pop(&s, NULL, NULL), SP_OFPT_FEATURES_REPLY);
    }
    assert_false(s.closing);
    /* A switch that refuses without naming why: FLOW_MOD_FAILED, and the
     * connection goes on. */
    fsw->fail_unnamed = true;
    expect_error(&s, b.data, b.len, SP_OFPET_FLOW_MOD_FAILED,
                 SP_OFPFMFC_UNKNOWN);
    fsw->fail_unnamed = false;
    assert_false(s.closing);
    fsw->n = 0;
    sp_of_buf_free(&b);
    sp_of_session_free(&s);
}

/* ---- PACKET_IN and PACKET_OUT ---- */

static const uint8_t frame[60] = {
    0x02, 0, 0,  0, 0, 0x02, 0x02, 0,  0,  0,  0, 0x01, 0x08, 0x00, 0x45,
    0,    0, 46, 0, 0, 0x40, 0,    64, 17, 0,  0, 10,   0,    0,    1,
    10,   0, 0,  2, 0, 7,    0,    9,  0,  26, 0, 0,    'h',  'i',
};

static void
test_packet_in_encode(void **state)
{
    /* header, buffer_id, total_len, reason, table, cookie; match type
     * OXM, length 12, in_port 3; pad to 8, then 2 bytes of pad */
    static const uint8_t head[] = {
        4,    10, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 60,
        1,    0,  0, 0, 0, 0, 0, 0, 0x12, 0x34, 0,    1,    0, 12,
        0x80, 0,  0, 4, 0, 0, 0, 3, 0,    0,    0,    0,    0, 0,
    };
    const struct {
        uint16_t max_len;
        size_t data;
    } cases[] = {
        {SP_OFPCML_NO_BUFFER, 60}, {0, 0}, {14, 14}, {60, 60}, {100, 60},
    };
    struct sp_of_buf b = {0};

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct sp_of_packet_in pin = {3,      SP_OFPR_ACTION, cases[i].max_len,
                                      0x1234, frame,          sizeof frame};

        b.len = 0;
        assert_int_equal(sp_of_encode_packet_in(&b, &pin), 0);
        assert_int_equal(b.len, sizeof head + cases[i].data);
        assert_int_equal(sp_of_get16(b.data + 2), b.len);
        assert_memory_equal(b.data, head, 2);
        assert_memory_equal(b.data + 4, head + 4, sizeof head - 4);
        assert_memory_equal(b.data + sizeof head, frame, cases[i].data);
    }
    /* Its own reason and OFPP_CONTROLLER as in_port. */
    {
        struct sp_of_packet_in pin = {SP_OFPP_CONTROLLER,
                                      SP_OFPR_NO_MATCH,
                                      SP_OFPCML_NO_BUFFER,
                                      0,
                                      frame,
                                      sizeof frame};

        b.len = 0;
        assert_int_equal(sp_of_encode_packet_in(&b, &pin), 0);
        assert_int_equal(b.data[14], SP_OFPR_NO_MATCH);
        assert_int_equal(sp_of_get32(b.data + 32), SP_OFPP_CONTROLLER);
    }
    sp_of_buf_free(&b);
}

/* A delete or dump by out_port CONTROLLER selects the rules that send
 * there, whatever their max_len. */
static void
test_out_port_controller(void **state)
{
    struct sp_of_flow_mod sel = {.out_port = SP_OFPP_CONTROLLER,
                                 .out_group = SP_OFPG_ANY};
    struct sp_of_flow f = {0};

    (void)state;
    strcpy(f.actions, "output:1,controller");
    assert_true(sp_of_flow_selected(&sel, &f, false));
    strcpy(f.actions, "controller:128,output:2");
    assert_true(sp_of_flow_selected(&sel, &f, false));
    strcpy(f.actions, "output:2");
    assert_false(sp_of_flow_selected(&sel, &f, false));
    sel.out_port = 2;
    assert_true(sp_of_flow_selected(&sel, &f, false));
    strcpy(f.actions, "controller:2");
    assert_false(sp_of_flow_selected(&sel, &f, false));
}

/* By out_port IN_PORT, FLOOD or ALL: the rules with that output, as OVS
 * selects them; a port number does not select a FLOOD. */
static void
test_out_port_reserved(void **state)
{
    static const uint32_t ports[] = {SP_OFPP_IN_PORT, SP_OFPP_FLOOD,
                                     SP_OFPP_ALL};
    static const char *const names[] = {"IN_PORT", "FLOOD", "ALL"};
    struct sp_of_flow_mod sel = {.out_group = SP_OFPG_ANY};
    struct sp_of_flow f = {0};

    (void)state;
    for (unsigned i = 0; i < 3; i++) {
        sel.out_port = ports[i];
        for (unsigned j = 0; j < 3; j++) {
            snprintf(f.actions, sizeof f.actions, "output:1,%s", names[j]);
            assert_int_equal(sp_of_flow_selected(&sel, &f, false), i == j);
            snprintf(f.actions, sizeof f.actions, "%s,mod_nw_ttl:1,output:2",
                     names[j]);
            assert_int_equal(sp_of_flow_selected(&sel, &f, false), i == j);
        }
        strcpy(f.actions, "output:1,FLOODS");
        assert_false(sp_of_flow_selected(&sel, &f, false));
    }
    sel.out_port = 2;
    strcpy(f.actions, "FLOOD");
    assert_false(sp_of_flow_selected(&sel, &f, false));
}

/* A PACKET_OUT with the raw actions given and the test frame. */
static void
build_packet_out(struct sp_of_buf *b, uint32_t buffer_id, uint32_t in_port,
                 const uint8_t *acts, size_t len)
{
    b->len = 0;
    sp_of_header(b, SP_OFPT_PACKET_OUT, 9);
    sp_of_put32(b, buffer_id);
    sp_of_put32(b, in_port);
    sp_of_put16(b, (uint16_t)len);
    sp_of_buf_put(b, 6);
    sp_of_put_bytes(b, acts, len);
    sp_of_put_bytes(b, frame, sizeof frame);
    set_len(b, 0);
}

static void
test_packet_out_decode(void **state)
{
    const uint8_t out2[] = {OUTPUT(2)};
    const uint8_t in_port[] = {OUTPUT(SP_OFPP_IN_PORT)};
    const uint8_t flood[] = {OUTPUT(SP_OFPP_FLOOD)};
    const uint8_t all[] = {OUTPUT(SP_OFPP_ALL)};
    const uint8_t table[] = {OUTPUT(SP_OFPP_TABLE)};
    const uint8_t ctrl[] = {OUTPUT(SP_OFPP_CONTROLLER)};
    const uint8_t set_then_out[] = {0, 25, 0, 16, 0x80, 0, 22, 4,        1,
                                    2, 3,  4, 0,  0,    0, 0,  OUTPUT(1)};
    const struct {
        uint32_t in_port;
        const uint8_t *acts;
        size_t len;
        const char *actions;
        bool table;
    } cases[] = {
        {1, out2, sizeof out2, "output:2", false},
        {3, in_port, sizeof in_port, "IN_PORT", false},
        {2, flood, sizeof flood, "FLOOD", false},
        {SP_OFPP_CONTROLLER, all, sizeof all, "ALL", false},
        {1, table, sizeof table, "drop", true},
        {1, ctrl, sizeof ctrl, "controller", false},
        {1, NULL, 0, "drop", false},
        {2, set_then_out, sizeof set_then_out, "mod_nw_src:1.2.3.4,output:1",
         false},
    };
    struct sp_of_buf b = {0};

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct sp_of_packet_out po;
        struct sp_of_error err;

        build_packet_out(&b, SP_OFP_NO_BUFFER, cases[i].in_port, cases[i].acts,
                         cases[i].len);
        if (sp_of_decode_packet_out(b.data, b.len, 4, fake_frame_match, fsw,
                                    &po, &err)) {
            fail_msg("case %zu: %u/%u %s", i, err.type, err.code, err.why);
        }
        assert_string_equal(po.actions, cases[i].actions);
        assert_int_equal(po.table, cases[i].table);
        assert_int_equal(po.in_port, cases[i].in_port);
        assert_int_equal(po.len, sizeof frame);
        assert_memory_equal(po.data, frame, sizeof frame);
    }
    sp_of_buf_free(&b);
}

static void
expect_packet_out_error(const struct sp_of_buf *b, uint16_t type,
                        uint16_t code)
{
    struct sp_of_packet_out po;
    struct sp_of_error err;

    assert_int_equal(sp_of_decode_packet_out(b->data, b->len, 4,
                                             fake_frame_match, fsw, &po, &err),
                     -1);
    if (err.type != type || err.code != code) {
        fail_msg("error %u/%u (%s), expected %u/%u", err.type, err.code,
                 err.why, type, code);
    }
}

static void
test_packet_out_errors(void **state)
{
    const uint8_t out2[] = {OUTPUT(2)};
    const uint8_t out9[] = {OUTPUT(9)};
    const uint8_t in_port[] = {OUTPUT(SP_OFPP_IN_PORT)};
    const uint8_t table_then_out[] = {OUTPUT(SP_OFPP_TABLE), OUTPUT(1)};
    const uint8_t out_then_table[] = {OUTPUT(1), OUTPUT(SP_OFPP_TABLE)};
    const uint8_t short_action[] = {0, 0, 0, 4, 0, 0, 0, 1};
    const uint8_t past[] = {0, 0, 0, 24, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    const uint8_t set_nw[] = {0, 25, 0, 16, 0x80, 0, 22, 4,
                              1, 2,  3, 4,  0,    0, 0,  0};
    struct sp_of_buf b = {0};

    (void)state;
    /* A buffer simdpath does not have. */
    build_packet_out(&b, 7, 1, out2, sizeof out2);
    expect_packet_out_error(&b, SP_OFPET_BAD_REQUEST,
                            SP_OFPBRC_BUFFER_UNKNOWN);
    /* in_port neither a port nor CONTROLLER; 0; ANY. */
    build_packet_out(&b, SP_OFP_NO_BUFFER, 5, out2, sizeof out2);
    expect_packet_out_error(&b, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_PORT);
    build_packet_out(&b, SP_OFP_NO_BUFFER, 0, out2, sizeof out2);
    expect_packet_out_error(&b, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_PORT);
    build_packet_out(&b, SP_OFP_NO_BUFFER, SP_OFPP_ANY, out2, sizeof out2);
    expect_packet_out_error(&b, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_PORT);
    /* Actions: to a port that is not there, IN_PORT from the controller,
     * TABLE with other actions, lengths that do not fit. */
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, out9, sizeof out9);
    expect_packet_out_error(&b, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_OUT_PORT);
    build_packet_out(&b, SP_OFP_NO_BUFFER, SP_OFPP_CONTROLLER, in_port,
                     sizeof in_port);
    expect_packet_out_error(&b, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_OUT_PORT);
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, table_then_out,
                     sizeof table_then_out);
    expect_packet_out_error(&b, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_ARGUMENT);
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, out_then_table,
                     sizeof out_then_table);
    expect_packet_out_error(&b, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_ARGUMENT);
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, short_action,
                     sizeof short_action);
    expect_packet_out_error(&b, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_LEN);
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, past, sizeof past);
    expect_packet_out_error(&b, SP_OFPET_BAD_ACTION, SP_OFPBAC_BAD_LEN);
    /* A set-field the frame's headers do not allow. */
    fsw->frame_match = "arp";
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, set_nw, sizeof set_nw);
    expect_packet_out_error(&b, SP_OFPET_BAD_ACTION,
                            SP_OFPBAC_MATCH_INCONSISTENT);
    fsw->frame_match = "udp";
    /* actions_len not a multiple of 8, or past the message. */
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, out2, sizeof out2);
    sp_of_set16(&b, 16, 12);
    expect_packet_out_error(&b, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN);
    sp_of_set16(&b, 16, (uint16_t)(b.len - 24 + 8));
    expect_packet_out_error(&b, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN);
    /* No frame. */
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, out2, sizeof out2);
    b.len -= sizeof frame;
    set_len(&b, 0);
    expect_packet_out_error(&b, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN);
    /* Every length short of the fixed part. */
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, out2, sizeof out2);
    for (size_t len = 8; len < 24; len++) {
        struct sp_of_buf cut = {0};

        sp_of_put_bytes(&cut, b.data, len);
        set_len(&cut, 0);
        expect_packet_out_error(&cut, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN);
        sp_of_buf_free(&cut);
    }
    sp_of_buf_free(&b);
}

/* Through a session: good ones reach the switch, every prefix of one is
 * answered with an error (or is another good one: the frame cut), and
 * the session goes on. */
static void
test_packet_out_session(void **state)
{
    const uint8_t acts[] = {OUTPUT(2), OUTPUT(SP_OFPP_CONTROLLER)};
    const uint8_t features[] = {4, 5, 0, 8, 0, 0, 0, 8};
    struct sp_of_session s;
    struct sp_of_buf b = {0};
    unsigned good = 0;

    (void)state;
    open_session(&s);
    fsw->packet_outs = 0;
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, acts, sizeof acts);
    assert_int_equal(sp_of_session_input(&s, b.data, b.len), 0);
    assert_int_equal(s.out.len, 0);
    assert_int_equal(fsw->packet_outs, 1);
    assert_string_equal(fsw->sent.actions, "output:2,controller");
    assert_memory_equal(fsw->sent_data, frame, sizeof frame);
    for (size_t len = 8; len < b.len; len++) {
        uint8_t msg[256];

        memcpy(msg, b.data, len);
        msg[2] = (uint8_t)(len >> 8), msg[3] = (uint8_t)len;
        sp_of_session_input(&s, msg, len);
        if (len > 24 + sizeof acts) {
            good++; /* a shorter frame is still a frame */
            assert_int_equal(s.out.len, 0);
            continue;
        }
        assert_int_equal(pop(&s, NULL, NULL), SP_OFPT_ERROR);
        assert_int_equal(s.out.len, 0);
    }
    assert_int_equal(fsw->packet_outs, 1 + good);
    /* The switch's own refusal is an error too, not a close. */
    fsw->fail_unnamed = true;
    expect_error(&s, b.data, b.len, SP_OFPET_BAD_REQUEST, SP_OFPBRC_EPERM);
    fsw->fail_unnamed = false;
    assert_int_equal(sp_of_session_input(&s, features, sizeof features), 0);
    assert_int_equal(pop(&s, NULL, NULL), SP_OFPT_FEATURES_REPLY);
    /* PACKET_INs go out while there is room, and not before HELLO. */
    {
        struct sp_of_packet_in pin = {1, SP_OFPR_ACTION, SP_OFPCML_NO_BUFFER,
                                      0, frame,          sizeof frame};
        struct sp_of_session fresh;

        assert_int_equal(sp_of_session_packet_in(&s, &pin), 0);
        assert_int_equal(pop(&s, NULL, NULL), SP_OFPT_PACKET_IN);
        while (s.out.len < SP_OF_OUTPUT_HIGH / 2) {
            assert_int_equal(sp_of_session_packet_in(&s, &pin), 0);
        }
        assert_int_equal(sp_of_session_packet_in(&s, &pin), -1);
        assert_true(sp_of_session_wants_input(&s));
        sp_of_session_init(&fresh, &sw);
        assert_int_equal(sp_of_session_packet_in(&fresh, &pin), -1);
        sp_of_session_free(&fresh);
    }
    /* Without the callbacks, PACKET_OUT is a type the switch lacks. */
    {
        struct sp_of_switch plain = sw;
        struct sp_of_session p;

        plain.packet_out = NULL;
        open_session_of(&p, &plain);
        expect_error(&p, b.data, b.len, SP_OFPET_BAD_REQUEST,
                     SP_OFPBRC_BAD_TYPE);
        sp_of_session_free(&p);
    }
    sp_of_session_free(&s);
    sp_of_buf_free(&b);
}

/* Sends a ROLE_REQUEST; returns the reply's role and, in *generation,
 * its generation_id. */
static uint32_t
role_request(struct sp_of_session *s, uint32_t role, uint64_t generation,
             uint64_t *reply_generation)
{
    struct sp_of_buf b = {0};
    uint8_t reply[64];
    size_t len;

    sp_of_header(&b, SP_OFPT_ROLE_REQUEST, 0x5151);
    sp_of_put32(&b, role);
    sp_of_put32(&b, 0);
    sp_of_put64(&b, generation);
    sp_of_finish(&b, 0);
    assert_int_equal(sp_of_session_input(s, b.data, b.len), 0);
    sp_of_buf_free(&b);
    assert_int_equal(pop(s, reply, &len), SP_OFPT_ROLE_REPLY);
    assert_int_equal(len, 24);
    assert_int_equal(sp_of_get32(reply + 4), 0x5151);
    assert_int_equal(s->out.len, 0);
    *reply_generation = sp_of_get64(reply + 16);
    return sp_of_get32(reply + 8);
}

static void
expect_role_error(struct sp_of_session *s, uint32_t role, uint64_t generation,
                  uint16_t code)
{
    uint8_t msg[24] = {4, SP_OFPT_ROLE_REQUEST, 0, 24, 0, 0, 0, 3};

    for (int i = 0; i < 4; i++) {
        msg[8 + i] = (uint8_t)(role >> (24 - 8 * i));
    }
    for (int i = 0; i < 8; i++) {
        msg[16 + i] = (uint8_t)(generation >> (56 - 8 * i));
    }
    expect_error(s, msg, sizeof msg, SP_OFPET_ROLE_REQUEST_FAILED, code);
}

/* Which of the three sessions an asynchronous message reached: bit i for
 * session i (each output emptied). */
static unsigned
reached(struct sp_of_session *ss, uint8_t type)
{
    unsigned bits = 0;

    for (unsigned i = 0; i < 3; i++) {
        if (ss[i].out.len) {
            assert_int_equal(pop(&ss[i], NULL, NULL), type);
            assert_int_equal(ss[i].out.len, 0);
            bits |= 1u << i;
        }
    }
    return bits;
}

static unsigned
packet_in_reaches(struct sp_of_session *ss, uint8_t reason)
{
    struct sp_of_packet_in pin = {1, reason, SP_OFPCML_NO_BUFFER,
                                  0, frame,  sizeof frame};

    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(sp_of_session_packet_in(&ss[i], &pin), 0);
    }
    return reached(ss, SP_OFPT_PACKET_IN);
}

static unsigned
others_reach(struct sp_of_session *ss, uint8_t type)
{
    struct sp_of_flow f = {.priority = 5};
    struct sp_of_port p = {.port_no = 1};

    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(
            type == SP_OFPT_FLOW_REMOVED
                ? sp_of_session_flow_removed(&ss[i], &f, SP_OFPRR_DELETE)
                : sp_of_session_port_status(&ss[i], &p, SP_OFPPR_MODIFY),
            0);
    }
    return reached(ss, type);
}

/* ROLE_REQUEST as ovs-vswitchd answers it, over three connections of one
 * switch: the generation_id election (stale ones refused, in wrapping
 * distance), one master at a time, a slave refused every change but
 * allowed to read, and the asynchronous messages by role and by
 * SET_ASYNC's masks. */
static void
test_roles(void **state)
{
    const uint8_t acts[] = {OUTPUT(2)};
    uint8_t pm[40] = {4, SP_OFPT_PORT_MOD, 0, 40, 0, 0, 0, 9};
    const uint8_t get_async[] = {4, SP_OFPT_GET_ASYNC_REQUEST, 0, 8, 0, 0, 0,
                                 4};
    uint8_t set_async[32] = {4, SP_OFPT_SET_ASYNC, 0, 32, 0, 0, 0, 5};
    struct sp_of_session ss[3];
    struct sp_of_buf b = {0};
    uint8_t msg[64];
    uint64_t gen;
    size_t len;

    (void)state;
    election = (struct sp_of_election){0};
    for (unsigned i = 0; i < 3; i++) {
        open_session(&ss[i]);
        role_sessions[i] = &ss[i];
    }
    /* At the start: equal, no generation (all ones). */
    assert_int_equal(role_request(&ss[0], SP_OFPCR_ROLE_NOCHANGE, 9, &gen),
                     SP_OFPCR_ROLE_EQUAL);
    assert_true(gen == UINT64_MAX);
    assert_int_equal(packet_in_reaches(ss, SP_OFPR_ACTION), 7);
    assert_int_equal(packet_in_reaches(ss, SP_OFPR_NO_MATCH), 7);

    assert_int_equal(role_request(&ss[0], SP_OFPCR_ROLE_MASTER, 5, &gen),
                     SP_OFPCR_ROLE_MASTER);
    assert_true(gen == 5);
    assert_int_equal(role_request(&ss[1], SP_OFPCR_ROLE_SLAVE, 5, &gen),
                     SP_OFPCR_ROLE_SLAVE);
    /* An older generation is stale, for a slave too; the role stays. */
    expect_role_error(&ss[2], SP_OFPCR_ROLE_MASTER, 4, SP_OFPRRFC_STALE);
    expect_role_error(&ss[2], SP_OFPCR_ROLE_SLAVE, 4, SP_OFPRRFC_STALE);
    expect_role_error(&ss[2], 4, 6, SP_OFPRRFC_BAD_ROLE);
    assert_int_equal(ss[2].role, SP_OFPCR_ROLE_EQUAL);
    assert_int_equal(role_request(&ss[2], SP_OFPCR_ROLE_EQUAL, 0, &gen),
                     SP_OFPCR_ROLE_EQUAL);
    assert_true(gen == 5); /* EQUAL carries none and changes none */

    /* Asynchronous messages: the slave takes PORT_STATUS only. */
    assert_int_equal(packet_in_reaches(ss, SP_OFPR_ACTION), 5);
    assert_int_equal(others_reach(ss, SP_OFPT_FLOW_REMOVED), 5);
    assert_int_equal(others_reach(ss, SP_OFPT_PORT_STATUS), 7);

    /* The slave changes nothing, and reads. */
    fsw->flow_mods = fsw->packet_outs = 0;
    build_flow_mod(&b, "udp", "output:2", SP_OFPFC_ADD);
    expect_error(&ss[1], b.data, b.len, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_IS_SLAVE);
    build_packet_out(&b, SP_OFP_NO_BUFFER, 1, acts, sizeof acts);
    expect_error(&ss[1], b.data, b.len, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_IS_SLAVE);
    pm[11] = 2;
    pm[21] = 2;
    expect_error(&ss[1], pm, sizeof pm, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_IS_SLAVE);
    assert_int_equal(fsw->flow_mods + fsw->packet_outs, 0);
    flow_request(&ss[1], SP_OFPMP_FLOW, SP_OFPTT_ALL, "", SP_OFPP_ANY);
    assert_int_equal(pop(&ss[1], NULL, NULL), SP_OFPT_MULTIPART_REPLY);
    assert_int_equal(sp_of_session_input(&ss[0], pm, sizeof pm), 0);
    assert_int_equal(ss[0].out.len, 0);

    /* A newer master makes the old one a slave; a generation over half
     * the range ahead wraps, and is then the older. */
    assert_int_equal(role_request(&ss[2], SP_OFPCR_ROLE_MASTER, 6, &gen),
                     SP_OFPCR_ROLE_MASTER);
    assert_int_equal(ss[0].role, SP_OFPCR_ROLE_SLAVE);
    assert_int_equal(ss[1].role, SP_OFPCR_ROLE_SLAVE);
    assert_int_equal(packet_in_reaches(ss, SP_OFPR_NO_MATCH), 4);
    assert_int_equal(role_request(&ss[0], SP_OFPCR_ROLE_MASTER,
                                  0x8000000000000005ull, &gen),
                     SP_OFPCR_ROLE_MASTER);
    assert_int_equal(ss[2].role, SP_OFPCR_ROLE_SLAVE);
    expect_role_error(&ss[1], SP_OFPCR_ROLE_MASTER, 6, SP_OFPRRFC_STALE);
    /* Asking for master again keeps it master. */
    assert_int_equal(role_request(&ss[0], SP_OFPCR_ROLE_MASTER,
                                  0x8000000000000005ull, &gen),
                     SP_OFPCR_ROLE_MASTER);

    /* GET_ASYNC: ovs-vswitchd's masks at the start; SET_ASYNC replaces
     * them, and a slave then takes PACKET_IN of the reason it asked. */
    sp_of_session_input(&ss[1], get_async, sizeof get_async);
    assert_int_equal(pop(&ss[1], msg, &len), SP_OFPT_GET_ASYNC_REPLY);
    assert_int_equal(len, 32);
    {
        static const uint32_t want[6] = {3, 0, 7, 7, 7, 0};

        for (unsigned i = 0; i < 6; i++) {
            assert_int_equal(sp_of_get32(msg + 8 + 4 * i), want[i]);
        }
    }
    set_async[15] = 1u << SP_OFPR_ACTION; /* slave: ACTION */
    set_async[23] = 0;                    /* slave: no PORT_STATUS */
    assert_int_equal(sp_of_session_input(&ss[1], set_async, sizeof set_async),
                     0);
    assert_int_equal(ss[1].out.len, 0);
    assert_int_equal(packet_in_reaches(ss, SP_OFPR_ACTION), 3);
    assert_int_equal(packet_in_reaches(ss, SP_OFPR_NO_MATCH), 1);
    assert_int_equal(others_reach(ss, SP_OFPT_PORT_STATUS), 5);
    sp_of_session_input(&ss[1], get_async, sizeof get_async);
    assert_int_equal(pop(&ss[1], msg, &len), SP_OFPT_GET_ASYNC_REPLY);
    assert_memory_equal(msg + 8, set_async + 8, 24);
    set_async[3] = 24;
    expect_error(&ss[1], set_async, 24, SP_OFPET_BAD_REQUEST,
                 SP_OFPBRC_BAD_LEN);
    msg[0] = 4, msg[1] = SP_OFPT_ROLE_REQUEST, msg[2] = 0, msg[3] = 16;
    expect_error(&ss[1], msg, 16, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN);

    /* A switch without an election has no ROLE_REQUEST. */
    {
        struct sp_of_switch plain = sw;
        struct sp_of_session p;
        uint8_t rr[24] = {4, SP_OFPT_ROLE_REQUEST, 0, 24, 0, 0, 0, 1, 0, 0,
                          0, SP_OFPCR_ROLE_MASTER};

        plain.election = NULL;
        open_session_of(&p, &plain);
        expect_error(&p, rr, sizeof rr, SP_OFPET_BAD_REQUEST,
                     SP_OFPBRC_BAD_TYPE);
        sp_of_session_free(&p);
    }
    for (unsigned i = 0; i < 3; i++) {
        role_sessions[i] = NULL;
        sp_of_session_free(&ss[i]);
    }
    sp_of_buf_free(&b);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_round_trip),
        cmocka_unit_test(test_match_inner_tag),
        cmocka_unit_test(test_match_text_round_trip),
        cmocka_unit_test(test_match_errors),
        cmocka_unit_test(test_match_vlan_none),
        cmocka_unit_test(test_flow_mod_round_trip),
        cmocka_unit_test(test_action_errors),
        cmocka_unit_test(test_instruction_errors),
        cmocka_unit_test(test_flow_mod_errors),
        cmocka_unit_test(test_flow_mod_truncated),
        cmocka_unit_test(test_hello),
        cmocka_unit_test(test_simple_requests),
        cmocka_unit_test(test_bad_messages),
        cmocka_unit_test(test_multipart_simple),
        cmocka_unit_test(test_flow_removed),
        cmocka_unit_test(test_flow_expiry),
        cmocka_unit_test(test_port_status),
        cmocka_unit_test(test_port_mod),
        cmocka_unit_test(test_flow_dump_in_pieces),
        cmocka_unit_test(test_order_after_dump),
        cmocka_unit_test(test_session_truncated),
        cmocka_unit_test(test_output_bounded),
        cmocka_unit_test(test_packet_in_encode),
        cmocka_unit_test(test_out_port_controller),
        cmocka_unit_test(test_out_port_reserved),
        cmocka_unit_test(test_packet_out_decode),
        cmocka_unit_test(test_packet_out_errors),
        cmocka_unit_test(test_packet_out_session),
        cmocka_unit_test(test_roles),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
