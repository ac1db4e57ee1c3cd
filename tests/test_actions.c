/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Actions: parsing (every action, round trip through the printer, errors
 * with their column), and execution on packets under every variant
 * (outputs and copies, IN_PORT, FLOOD and ALL, no output back to the
 * in_port, flushes, drops with their reasons, dec_ttl on TTL
 * 0, 1, 2, 255, VLAN push/pop on tagged and untagged frames, L2/L3/L4
 * rewrites with checksums recomputed here). Packets come from malloc with
 * headroom, and every one must end in a transmit batch or be freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpath/actions.h"
#include "simdpath/random.h"
#include "testlib.h"

#define HEADROOM 64
#define N_PORTS  4

static int
reset_dispatch(void **state)
{
    (void)state;
    sp_dispatch_reset();
    return 0;
}

/* Ports 0..N_PORTS-1 exist. */
static bool
port_exists(uint32_t port, void *aux)
{
    (void)aux;
    return port < N_PORTS;
}

/* Matches written as the flow key holds them (network byte order). */
static void
match_init(struct sp_match *m, uint16_t dl_type, int nw_proto, bool tagged)
{
    memset(m, 0, sizeof *m);
    if (dl_type) {
        sp_test_put_be16((uint8_t *)&m->key.dl_type, dl_type);
        m->mask.dl_type = 0xffff;
    }
    if (nw_proto >= 0) {
        m->key.nw_proto = (uint8_t)nw_proto;
        m->mask.nw_proto = 0xff;
    }
    if (tagged) {
        sp_test_put_be16((uint8_t *)&m->key.vlan_tci, SP_VLAN_PRESENT);
        sp_test_put_be16((uint8_t *)&m->mask.vlan_tci, SP_VLAN_PRESENT);
    }
}

static struct sp_actions *
parse_ok(const char *text, const struct sp_match *m)
{
    struct sp_actions *a;
    struct sp_err err;

    if (sp_actions_parse(text, m, port_exists, NULL, &a, &err)) {
        fail_msg("'%s' refused: %s", text, err.msg);
    }
    return a;
}

/* Parses, prints, and checks the print is 'want' and parses to itself. */
static void
check_round_trip(const char *text, const struct sp_match *m, const char *want)
{
    struct sp_actions *a = parse_ok(text, m), *again;
    char buf[512], buf2[512];
    int len = sp_actions_format(a, buf, sizeof buf);

    assert_int_equal(len, (int)strlen(buf));
    assert_string_equal(buf, want);
    again = parse_ok(buf, m);
    sp_actions_format(again, buf2, sizeof buf2);
    assert_string_equal(buf2, buf);
    /* A short buffer is cut, terminated, and the length still told. */
    assert_int_equal(sp_actions_format(a, buf2, 5), len);
    assert_int_equal(strlen(buf2), len < 4 ? len : 4);
    sp_actions_free(again);
    sp_actions_free(a);
}

static void
test_parse_and_format(void **state)
{
    (void)state;
    struct sp_match ip, tcp, ipv6, udp6, tagged, any;

    match_init(&ip, 0x0800, -1, false);
    match_init(&tcp, 0x0800, 6, false);
    match_init(&ipv6, 0x86dd, -1, false);
    match_init(&udp6, 0x86dd, 17, false);
    match_init(&tagged, 0, -1, true);
    match_init(&any, 0, -1, false);
    check_round_trip("dec_ttl,mod_nw_src:192.0.2.1,output:2", &tcp,
                     "dec_ttl,mod_nw_src:192.0.2.1,output:2");
    check_round_trip(" output:1 , output:0x2,\toutput:3\r\n", &any,
                     "output:1,output:2,output:3");
    check_round_trip("drop", &any, "drop");
    check_round_trip("mod_nw_dst:10.1.2.3,mod_nw_tos:184,mod_nw_ecn:3,"
                     "mod_nw_ttl:9,output:0",
                     &ip,
                     "mod_nw_dst:10.1.2.3,mod_nw_tos:184,mod_nw_ecn:3,"
                     "mod_nw_ttl:9,output:0");
    check_round_trip("set_field:2001:db8::1->ipv6_src,"
                     "set_field:2001:DB8::2->ipv6_dst,"
                     "set_field:5->ipv6_tclass,set_field:7->ipv6_hlimit,"
                     "dec_ttl,mod_tp_src:53,mod_tp_dst:0x35,output:1",
                     &udp6,
                     "set_field:2001:db8::1->ipv6_src,"
                     "set_field:2001:db8::2->ipv6_dst,"
                     "set_field:5->ipv6_tclass,set_field:7->ipv6_hlimit,"
                     "dec_ttl,mod_tp_src:53,mod_tp_dst:53,output:1");
    check_round_trip("mod_dl_src:0:1:2:3:4:5,mod_dl_dst:AA:bb:cc:dd:ee:ff,"
                     "mod_vlan_vid:4095,mod_vlan_pcp:7,strip_vlan,"
                     "push_vlan:0x88a8,mod_vlan_vid:0,output:3",
                     &tagged,
                     "mod_dl_src:00:01:02:03:04:05,"
                     "mod_dl_dst:aa:bb:cc:dd:ee:ff,mod_vlan_vid:4095,"
                     "mod_vlan_pcp:7,strip_vlan,push_vlan:0x88a8,"
                     "mod_vlan_vid:0,output:3");
    check_round_trip("push_vlan:0x8100,mod_vlan_pcp:3,output:0", &ipv6,
                     "push_vlan:0x8100,mod_vlan_pcp:3,output:0");
    check_round_trip("mod_tp_dst:80", &tcp, "mod_tp_dst:80");
    check_round_trip("controller", &any, "controller");
    check_round_trip("controller:65535,controller:0,output:1,controller:128",
                     &any, "controller,controller:0,output:1,controller:128");
    /* OpenFlow's reserved ports, in any case, alone or after output:,
     * printed as ovs-ofctl prints them. */
    check_round_trip("in_port,output:IN_PORT,flood,output:Flood,all,"
                     "output:aLL,output:1",
                     &any, "IN_PORT,IN_PORT,FLOOD,FLOOD,ALL,ALL,output:1");
    check_round_trip("mod_nw_ttl:9,FLOOD,mod_nw_ttl:8,IN_PORT", &ip,
                     "mod_nw_ttl:9,FLOOD,mod_nw_ttl:8,IN_PORT");
}

/* 'text' is refused at byte 'ofs' with a message holding 'what'. */
static void
check_refused(const char *text, const struct sp_match *m, size_t ofs,
              const char *what)
{
    struct sp_actions *a = (struct sp_actions *)&a;
    struct sp_err err = {.column = 12345};
    char column[32], shown[SP_ERR_TEXT_LEN];

    assert_int_equal(sp_actions_parse(text, m, port_exists, NULL, &a, &err),
                     -1);
    assert_null(a);
    if (err.column != ofs + 1 || !strstr(err.msg, what)) {
        fail_msg("'%s': got column %u, '%s'; want %zu, '%s'", text, err.column,
                 err.msg, ofs + 1, what);
    }
    /* The message is what is wrong, the place only in the column. */
    assert_null(strstr(err.msg, "column"));
    snprintf(column, sizeof column, "column %zu: ", ofs + 1);
    sp_err_text(&err, NULL, shown, sizeof shown);
    assert_true(strncmp(shown, column, strlen(column)) == 0);
    assert_string_equal(shown + strlen(column), err.msg);
}

static void
test_parse_errors(void **state)
{
    (void)state;
    struct sp_match any, ip, ipv6, icmp;

    match_init(&any, 0, -1, false);
    match_init(&ip, 0x0800, -1, false);
    match_init(&ipv6, 0x86dd, -1, false);
    match_init(&icmp, 0x0800, 1, false);
    check_refused("output:1,output:9", &any, 16,
                  "output to port 9, which does not exist");
    check_refused("mod_nw_src:1.2.3.4,output:1", &any, 0,
                  "mod_nw_src needs a match on IPv4");
    check_refused("mod_nw_ttl:3", &ipv6, 0,
                  "mod_nw_ttl needs a match on IPv4");
    check_refused("output:1,dec_ttl", &any, 9,
                  "dec_ttl needs a match on IPv4");
    check_refused("set_field:::1->ipv6_dst", &ip, 0,
                  "ipv6_dst needs a match on IPv6");
    check_refused("mod_tp_dst:80", &ip, 0,
                  "mod_tp_dst needs a match on IPv4 or IPv6 with nw_proto");
    check_refused("mod_tp_src:80", &icmp, 0, "nw_proto tcp, udp or sctp");
    check_refused("mod_vlan_vid:5", &any, 0, "mod_vlan_vid needs a VLAN tag");
    check_refused("push_vlan:0x8100,strip_vlan,mod_vlan_pcp:1", &any, 28,
                  "mod_vlan_pcp needs a VLAN tag");
    check_refused("output:1,frob", &any, 9, "unknown action 'frob'; expected");
    check_refused("", &any, 0, "expected an action");
    check_refused("output:1,", &any, 9, "expected an action");
    check_refused("output:1,,output:2", &any, 9, "expected an action");
    check_refused("output", &any, 6, "expected ':' and a value after output");
    check_refused("output:x", &any, 7,
                  "expected a port number, IN_PORT, FLOOD or ALL, got 'x'");
    check_refused("output:floods", &any, 7, "expected a port number");
    check_refused("flood:1", &any, 5, "FLOOD takes no value");
    check_refused("output:1,all:", &any, 12, "ALL takes no value");
    check_refused("in_port,drop", &any, 8, "drop must be the only action");
    check_refused("output:-1", &any, 7, "expected a port number");
    check_refused("output:70000", &any, 7, "expected a port number");
    check_refused("drop:1", &any, 4, "drop takes no value");
    check_refused("drop,output:1", &any, 0, "drop must be the only action");
    check_refused("output:1,drop", &any, 9, "drop must be the only action");
    check_refused("mod_nw_src:1.2.3", &ip, 11, "expected an IPv4 address");
    check_refused("mod_nw_tos:3", &ip, 11, "ECN bits 0");
    check_refused("mod_nw_tos:256", &ip, 11, "expected a TOS value");
    check_refused("mod_nw_ecn:4", &ip, 11, "expected an ECN value 0..3");
    check_refused("mod_dl_src:1:2:3:4:5", &any, 11,
                  "expected an Ethernet address");
    check_refused("mod_dl_dst:1:2:3:4:5:6:7", &any, 11,
                  "expected an Ethernet address");
    check_refused("push_vlan:0x800", &any, 10, "expected 0x8100 or 0x88a8");
    check_refused("push_vlan:0x8100,mod_vlan_vid:4096", &any, 30,
                  "expected a VLAN id 0..4095");
    check_refused("set_field:1->ipv6_foo", &ipv6, 13,
                  "expected ipv6_src, ipv6_dst");
    check_refused("set_field:1", &ipv6, 11, "expected '->FIELD'");
    check_refused("set_field:1.2.3.4->ipv6_src", &ipv6, 10,
                  "expected an IPv6 address");
    check_refused("controller:65536", &any, 11, "expected a length 0..65535");
    check_refused("controller:x", &any, 11, "expected a length");
}

/* Test packets: malloc'd with headroom; 'live' counts those not freed,
 * 'clones' the copies made. */
static int live;
static unsigned clones;

struct test_buf {
    struct sp_packet pkt;
    uint8_t bytes[HEADROOM + 256];
};

static struct sp_packet *
new_packet(const uint8_t *frame, uint32_t len, uint16_t l3, uint16_t l4)
{
    struct test_buf *b = malloc(sizeof *b);

    assert_non_null(b);
    memset(b->bytes, 0xee, sizeof b->bytes);
    memcpy(b->bytes + HEADROOM, frame, len);
    /* From a port that is none of the outputs: an output never sends a
     * packet back where it came in. */
    b->pkt = (struct sp_packet){.data = b->bytes + HEADROOM,
                                .len = len,
                                .in_port = N_PORTS,
                                .l3_ofs = l3,
                                .l4_ofs = l4,
                                .owner = b};
    live++;
    return &b->pkt;
}

static struct sp_packet *
clone_packet(struct sp_action_ctx *ctx, const struct sp_packet *pkt)
{
    struct sp_packet *c;

    if (ctx->aux) { /* out of buffers */
        return NULL;
    }
    c = new_packet(pkt->data, pkt->len, pkt->l3_ofs, pkt->l4_ofs);
    c->in_port = pkt->in_port;
    clones++;
    return c;
}

static void
free_packet(struct sp_action_ctx *ctx, struct sp_packet *pkt)
{
    (void)ctx;
    free(pkt->owner);
    live--;
}

static unsigned flushes[N_PORTS];

static void
flush_port(struct sp_action_ctx *ctx, uint32_t port)
{
    struct sp_tx_batch *tx = &ctx->tx[port];

    for (uint32_t i = 0; i < tx->count; i++) {
        free_packet(ctx, tx->pkts[i]);
    }
    tx->count = 0;
    flushes[port]++;
}

static struct sp_tx_batch tx[N_PORTS];

static void
ctx_init(struct sp_action_ctx *ctx)
{
    memset(tx, 0, sizeof tx);
    memset(flushes, 0, sizeof flushes);
    *ctx = (struct sp_action_ctx){.tx = tx,
                                  .n_ports = N_PORTS,
                                  .headroom = HEADROOM,
                                  .flush = flush_port,
                                  .clone = clone_packet,
                                  .free = free_packet};
}

/* Frees what the batches hold; every packet must be accounted for. */
static void
ctx_finish(struct sp_action_ctx *ctx)
{
    for (uint32_t p = 0; p < N_PORTS; p++) {
        flush_port(ctx, p);
    }
    assert_int_equal(live, 0);
}

/* An Ethernet + IPv4 + TCP/UDP frame with valid checksums; 'tag' adds an
 * 802.1Q tag. Returns its length; *l3 and *l4 are the offsets. */
static uint32_t
build_ipv4(uint8_t *f, uint8_t proto, uint8_t ttl, bool tag, uint16_t *l3,
           uint16_t *l4, uint64_t seed)
{
    struct sp_random rng = {seed};
    uint32_t eth = tag ? 18 : 14, l4_len = proto == 6 ? 28 : 16;
    uint8_t *ip = f + eth, *seg = ip + 20;

    sp_random_fill(&rng, f, eth + 20 + l4_len);
    sp_test_put_be16(f + 12, tag ? 0x8100 : 0x0800);
    if (tag) {
        sp_test_put_be16(f + 14, 0x2064);
        sp_test_put_be16(f + 16, 0x0800);
    }
    ip[0] = 0x45;
    sp_test_put_be16(ip + 2, (uint16_t)(20 + l4_len));
    sp_test_put_be16(ip + 6, 0);
    ip[8] = ttl;
    ip[9] = proto;
    sp_test_put_be16(ip + 10, 0);
    sp_test_put_be16(ip + 10,
                     (uint16_t)~sp_test_fold_be(sp_test_sum_be(ip, 20)));
    if (proto == 6 || proto == 17) {
        uint32_t ofs = proto == 6 ? 16 : 6;

        sp_test_put_be16(seg + ofs,
                         sp_test_l4_checksum(ip, 0, seg, l4_len, ofs));
    }
    *l3 = (uint16_t)eth;
    *l4 = (uint16_t)(eth + 20);
    return eth + 20 + l4_len;
}

/* The packet's IPv4 header and L4 checksums verify. */
static void
check_ipv4_checksums(const struct sp_packet *pkt)
{
    const uint8_t *ip = pkt->data + pkt->l3_ofs;
    const uint8_t *l4 = pkt->data + pkt->l4_ofs;
    uint32_t l4_len = pkt->len - pkt->l4_ofs;
    uint32_t ofs = ip[9] == 6 ? 16 : 6;

    assert_int_equal(sp_test_fold_be(sp_test_sum_be(ip, 20)), 0xffff);
    if (ip[9] == 6 || ip[9] == 17) {
        assert_int_equal(sp_test_get_be16(l4 + ofs),
                         sp_test_l4_checksum(ip, 0, l4, l4_len, ofs));
    }
}

/* Runs 'fn' once per variant, every kernel forced to it. */
static void
for_each_variant(void (*fn)(void))
{
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        struct sp_err err;

        assert_int_equal(sp_dispatch_set_impl(sp_runnable[v]->name, &err), 0);
        fn();
    }
    sp_dispatch_reset();
}

/* What send was given: one call's port, packets and their TTLs. */
static struct {
    unsigned calls;
    uint32_t port, n;
    struct sp_packet *pkts[SP_BATCH_MAX];
    uint8_t ttls[SP_BATCH_MAX];
} sent;

static void
send_now(struct sp_action_ctx *ctx, uint32_t port,
         struct sp_packet *const *pkts, uint32_t n)
{
    sent.calls++;
    sent.port = port;
    sent.n = n;
    memcpy(sent.pkts, pkts, n * sizeof *pkts);
    for (uint32_t i = 0; i < n; i++) {
        sent.ttls[i] = pkts[i]->data[pkts[i]->l3_ofs + 8];
        free_packet(ctx, pkts[i]);
    }
}

/* A whole burst on a list of one IPv4 rewrite and one output goes
 * through send when its port's batch is empty, and to the batch
 * otherwise: not a whole burst, a batch that holds packets already, no
 * send, packets of several in_ports, or another list. Expired packets go
 * to neither, and the others keep their order. */
static void
test_whole_burst(void **state)
{
    static const struct {
        const char *actions;
        bool whole, queued, has_send, one_port;
        uint32_t sent_n, batched;
    } cases[] = {
        {"dec_ttl,output:2", true, false, true, true, 7, 0},
        {"mod_nw_src:10.1.2.3,output:2", true, false, true, true, 8, 0},
        {"dec_ttl,output:2", false, false, true, true, 0, 7},
        {"dec_ttl,output:2", true, true, true, true, 0, 8},
        {"dec_ttl,output:2", true, false, false, true, 0, 7},
        {"dec_ttl,output:2", true, false, true, false, 0, 7},
        {"output:2,dec_ttl,output:2", true, false, true, true, 0, 15},
        {"dec_ttl,output:1,output:2", true, false, true, true, 0, 7},
    };
    struct sp_match ip;

    (void)state;
    match_init(&ip, 0x0800, -1, false);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        struct sp_actions *a = parse_ok(cases[c].actions, &ip);
        struct sp_packet *pkts[8];
        struct sp_action_ctx ctx;
        uint8_t frame[128];
        uint16_t l3, l4;

        ctx_init(&ctx);
        ctx.whole_burst = cases[c].whole;
        ctx.send = cases[c].has_send ? send_now : NULL;
        ctx.in_port = cases[c].one_port ? N_PORTS : 0;
        memset(&sent, 0, sizeof sent);
        if (cases[c].queued) {
            uint32_t len = build_ipv4(frame, 17, 64, false, &l3, &l4, 99);

            tx[2].pkts[tx[2].count++] = new_packet(frame, len, l3, l4);
        }
        for (uint32_t i = 0; i < 8; i++) {
            /* Packet 3's TTL expires under dec_ttl. */
            uint32_t len =
                build_ipv4(frame, 17, i == 3 ? 1 : 64, false, &l3, &l4, i);

            pkts[i] = new_packet(frame, len, l3, l4);
        }
        sp_actions_execute(a, pkts, 8, &ctx);
        assert_int_equal(ctx.drops[SP_DROP_TTL], c == 1 ? 0 : 1);
        assert_int_equal(sent.calls, cases[c].sent_n ? 1 : 0);
        assert_int_equal(sent.n, cases[c].sent_n);
        assert_int_equal(tx[2].count, cases[c].batched);
        /* In order, without the expired packet 3 (under dec_ttl). */
        for (uint32_t i = 0, j = 0; i < sent.n;
             i++, j += 1 + (c != 1 && j == 2)) {
            assert_ptr_equal(sent.pkts[i], pkts[j]);
            assert_int_equal(sent.ttls[i], c == 1 ? (j == 3 ? 1 : 64) : 63);
        }
        if (sent.n) {
            assert_int_equal(sent.port, 2);
        }
        ctx_finish(&ctx);
        sp_actions_free(a);
    }
}

static void
run_outputs(void)
{
    struct sp_match tcp;
    struct sp_action_ctx ctx;
    struct sp_packet *pkts[SP_BATCH_MAX + 1];
    struct sp_actions *a;
    uint8_t frame[128];
    uint16_t l3, l4;
    uint32_t len;

    match_init(&tcp, 0x0800, 6, false);
    a = parse_ok("output:1,mod_nw_src:10.9.8.7,output:2", &tcp);
    ctx_init(&ctx);
    for (uint32_t n = 0; n <= SP_BATCH_MAX; n += 3) {
        for (uint32_t i = 0; i < n; i++) {
            len = build_ipv4(frame, 6, 64, false, &l3, &l4, i + 1);
            pkts[i] = new_packet(frame, len, l3, l4);
        }
        sp_actions_execute(a, pkts, n, &ctx);
        assert_int_equal(tx[1].count, n);
        assert_int_equal(tx[2].count, n);
        for (uint32_t i = 0; i < n; i++) {
            /* Port 2 has the originals, rewritten; port 1 copies made
             * before the rewrite. */
            assert_ptr_equal(tx[2].pkts[i], pkts[i]);
            assert_ptr_not_equal(tx[1].pkts[i], pkts[i]);
            assert_int_equal(pkts[i]->data[l3 + 12], 10);
            assert_int_not_equal(tx[1].pkts[i]->data[l3 + 12] == 10 &&
                                     tx[1].pkts[i]->data[l3 + 13] == 9,
                                 1);
            check_ipv4_checksums(pkts[i]);
            check_ipv4_checksums(tx[1].pkts[i]);
        }
        flush_port(&ctx, 1);
        flush_port(&ctx, 2);
    }
    /* A batch that would overflow is flushed once first. */
    for (uint32_t i = 0; i < 30; i++) {
        len = build_ipv4(frame, 6, 64, false, &l3, &l4, i + 100);
        pkts[i] = new_packet(frame, len, l3, l4);
    }
    sp_actions_execute(a, pkts, 30, &ctx);
    for (uint32_t i = 0; i < 5; i++) {
        pkts[i] = new_packet(frame, len, l3, l4);
    }
    memset(flushes, 0, sizeof flushes);
    sp_actions_execute(a, pkts, 5, &ctx);
    assert_int_equal(flushes[1], 1);
    assert_int_equal(flushes[2], 1);
    assert_int_equal(tx[1].count, 5);
    assert_int_equal(tx[2].count, 5);
    /* A group larger than a batch goes SP_BATCH_MAX at a time. */
    flush_port(&ctx, 1);
    flush_port(&ctx, 2);
    for (uint32_t i = 0; i <= SP_BATCH_MAX; i++) {
        pkts[i] = new_packet(frame, len, l3, l4);
    }
    memset(flushes, 0, sizeof flushes);
    sp_actions_execute(a, pkts, SP_BATCH_MAX + 1, &ctx);
    assert_int_equal(flushes[2], 1);
    assert_int_equal(tx[2].count, 1);
    assert_ptr_equal(tx[2].pkts[0], pkts[SP_BATCH_MAX]);
    flush_port(&ctx, 1);
    flush_port(&ctx, 2);
    for (uint32_t i = 0; i < 5; i++) {
        pkts[i] = new_packet(frame, len, l3, l4);
    }
    sp_actions_execute(a, pkts, 5, &ctx);
    /* Without buffers the copies are dropped, the originals still go. */
    ctx.aux = &ctx;
    for (uint32_t i = 0; i < 3; i++) {
        pkts[i] = new_packet(frame, len, l3, l4);
    }
    sp_actions_execute(a, pkts, 3, &ctx);
    assert_int_equal(ctx.drops[SP_DROP_NO_BUFFER], 3);
    assert_int_equal(tx[1].count, 5);
    assert_int_equal(tx[2].count, 8);
    ctx_finish(&ctx);
    sp_actions_free(a);
}

static void
test_outputs(void **state)
{
    (void)state;
    for_each_variant(run_outputs);
}

/* Runs 'text' on one fresh packet per frame; returns the context. */
static void
run_one(const char *text, const struct sp_match *m, struct sp_packet **pkts,
        uint32_t n, struct sp_action_ctx *ctx)
{
    struct sp_actions *a = parse_ok(text, m);

    ctx_init(ctx);
    sp_actions_execute(a, pkts, n, ctx);
    sp_actions_free(a);
}

static void
run_drops(void)
{
    static const uint8_t ttls[] = {0, 1, 2, 255};
    struct sp_match ip, ipv6, any;
    struct sp_action_ctx ctx;
    struct sp_packet *pkts[4];
    uint8_t frame[128];
    uint16_t l3, l4;
    uint32_t len = 0;

    match_init(&ip, 0x0800, -1, false);
    match_init(&ipv6, 0x86dd, -1, false);
    match_init(&any, 0, -1, false);
    for (unsigned i = 0; i < 4; i++) {
        len = build_ipv4(frame, 17, ttls[i], false, &l3, &l4, i + 7);
        pkts[i] = new_packet(frame, len, l3, l4);
    }
    run_one("dec_ttl,output:0", &ip, pkts, 4, &ctx);
    assert_int_equal(ctx.drops[SP_DROP_TTL], 2);
    assert_int_equal(tx[0].count, 2);
    assert_int_equal(tx[0].pkts[0]->data[l3 + 8], 1);
    assert_int_equal(tx[0].pkts[1]->data[l3 + 8], 254);
    check_ipv4_checksums(tx[0].pkts[0]);
    check_ipv4_checksums(tx[0].pkts[1]);
    ctx_finish(&ctx);

    /* IPv6 hop limit. */
    for (unsigned i = 0; i < 4; i++) {
        memset(frame, 0, 54);
        sp_test_put_be16(frame + 12, 0x86dd);
        frame[14] = 0x60;
        frame[14 + 6] = 59; /* no next header */
        frame[14 + 7] = ttls[i];
        pkts[i] = new_packet(frame, 54, 14, SP_OFS_NONE);
    }
    run_one("dec_ttl,output:3", &ipv6, pkts, 4, &ctx);
    assert_int_equal(ctx.drops[SP_DROP_TTL], 2);
    assert_int_equal(tx[3].count, 2);
    assert_int_equal(tx[3].pkts[0]->data[21], 1);
    assert_int_equal(tx[3].pkts[1]->data[21], 254);
    ctx_finish(&ctx);

    pkts[0] = new_packet(frame, len, l3, l4);
    pkts[1] = new_packet(frame, len, l3, l4);
    run_one("drop", &any, pkts, 2, &ctx);
    assert_int_equal(ctx.drops[SP_DROP_ACTION], 2);
    ctx_finish(&ctx);
    pkts[0] = new_packet(frame, len, l3, l4);
    run_one("mod_dl_src:1:2:3:4:5:6", &any, pkts, 1, &ctx);
    assert_int_equal(ctx.drops[SP_DROP_NO_OUTPUT], 1);
    ctx_finish(&ctx);
    /* A port that went away after the rule was compiled. */
    pkts[0] = new_packet(frame, len, l3, l4);
    {
        struct sp_actions *a = parse_ok("output:3", &any);

        ctx_init(&ctx);
        ctx.n_ports = 3;
        sp_actions_execute(a, pkts, 1, &ctx);
        assert_int_equal(ctx.drops[SP_DROP_NO_PORT], 1);
        ctx.n_ports = N_PORTS;
        ctx_finish(&ctx);
        sp_actions_free(a);
    }
    assert_string_equal(sp_drop_reason_name(SP_DROP_TTL),
                        "TTL or hop limit expired");
    assert_null(sp_drop_reason_name(SP_DROP_COUNT));
}

/* The packets of tx[port] are, in order, the frames of pkts[0..n) that did
 * not come in on 'port' (all of them when 'all'), byte for byte as
 * 'frames' holds them. */
static void
check_sent(uint32_t port, struct sp_packet *const *pkts, uint32_t n,
           uint8_t (*frames)[128], const uint32_t *lens, bool all)
{
    uint32_t k = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (!all && pkts[i]->in_port == port) {
            continue;
        }
        assert_true(k < tx[port].count);
        assert_int_equal(tx[port].pkts[k]->len, lens[i]);
        assert_memory_equal(tx[port].pkts[k]->data, frames[i], lens[i]);
        k++;
    }
    assert_int_equal(tx[port].count, k);
}

/* Every packet in: sent, dropped or freed; the copies count once each. */
static void
check_conserved(const struct sp_action_ctx *ctx, uint32_t n)
{
    uint64_t out = 0;

    for (uint32_t p = 0; p < N_PORTS; p++) {
        out += tx[p].count;
    }
    for (unsigned r = 0; r < SP_DROP_COUNT; r++) {
        out += ctx->drops[r];
    }
    assert_int_equal(n + clones, out);
}

static void
run_reserved_ports(void)
{
    static uint8_t frames[SP_BATCH_MAX][128];
    uint32_t lens[SP_BATCH_MAX];
    struct sp_packet *pkts[SP_BATCH_MAX], *orig[SP_BATCH_MAX];
    struct sp_match any, ip;
    struct sp_action_ctx ctx;
    struct sp_random rng = {77};
    struct sp_actions *a;
    uint16_t l3, l4;
    uint32_t n = SP_BATCH_MAX;

    match_init(&any, 0, -1, false);
    match_init(&ip, 0x0800, -1, false);
    /* FLOOD and ALL from every port (N_PORTS is not one): ports 1 to
     * N_PORTS - 1 but the in_port; the last port a packet goes to gets
     * it, the others copies. */
    for (unsigned t = 0; t < 2; t++) {
        for (uint32_t i = 0; i < n; i++) {
            lens[i] = build_ipv4(frames[i], 17, 64, i & 1, &l3, &l4, i + 5);
            orig[i] = pkts[i] = new_packet(frames[i], lens[i], l3, l4);
            pkts[i]->in_port = (uint16_t)sp_random_below(&rng, N_PORTS + 1);
        }
        clones = 0;
        run_one(t ? "ALL" : "output:flood", &any, pkts, n, &ctx);
        assert_int_equal(tx[0].count, 0);
        for (uint32_t p = 1; p < N_PORTS; p++) {
            check_sent(p, pkts, n, frames, lens, false);
        }
        for (uint32_t i = 0, k3 = 0, k2 = 0; i < n; i++) {
            if (pkts[i]->in_port != 3) {
                assert_ptr_equal(tx[3].pkts[k3++], orig[i]);
            } else {
                assert_ptr_equal(tx[2].pkts[k2], orig[i]);
            }
            k2 += pkts[i]->in_port != 2;
        }
        check_conserved(&ctx, n);
        ctx_finish(&ctx);
    }
    /* Actions between: each output sends the packet as it was then;
     * IN_PORT back to each packet's port, one that is not a port a
     * no_port drop. */
    for (uint32_t i = 0; i < n; i++) {
        lens[i] = build_ipv4(frames[i], 6, 64, false, &l3, &l4, i + 50);
        pkts[i] = new_packet(frames[i], lens[i], l3, l4);
        pkts[i]->in_port = (uint16_t)(1 + i % N_PORTS);
    }
    clones = 0;
    a = parse_ok("mod_nw_ttl:9,FLOOD,mod_nw_ttl:8,IN_PORT", &ip);
    ctx_init(&ctx);
    sp_actions_execute(a, pkts, n, &ctx);
    sp_actions_free(a);
    assert_int_equal(ctx.drops[SP_DROP_NO_PORT], n / N_PORTS);
    for (uint32_t p = 1; p < N_PORTS; p++) {
        uint32_t ttl8 = 0, ttl9 = 0;

        for (uint32_t k = 0; k < tx[p].count; k++) {
            const struct sp_packet *q = tx[p].pkts[k];
            uint8_t ttl = q->data[q->l3_ofs + 8];

            check_ipv4_checksums(q);
            ttl8 += ttl == 8 && q->in_port == p;
            ttl9 += ttl == 9 && q->in_port != p;
        }
        /* n / N_PORTS packets came in on each port and on N_PORTS. */
        assert_int_equal(ttl8, n / N_PORTS);
        assert_int_equal(ttl9, n - n / N_PORTS);
        assert_int_equal(tx[p].count, ttl8 + ttl9);
    }
    check_conserved(&ctx, n);
    ctx_finish(&ctx);
    /* output:N is not to a packet that came in on N: the copies still go
     * to the other outputs; the last to the in_port drops it (in_port). */
    for (uint32_t i = 0; i < 4; i++) {
        lens[i] = build_ipv4(frames[i], 17, 64, false, &l3, &l4, i + 90);
        pkts[i] = new_packet(frames[i], lens[i], l3, l4);
        pkts[i]->in_port = (uint16_t)(i < 2 ? 2 : 1);
    }
    clones = 0;
    run_one("output:1,output:2", &any, pkts, 4, &ctx);
    assert_int_equal(tx[1].count, 2);
    assert_int_equal(tx[2].count, 2);
    assert_int_equal(clones, 2);
    assert_ptr_equal(tx[2].pkts[0], pkts[2]);
    assert_int_equal(ctx.drops[SP_DROP_IN_PORT], 2);
    check_conserved(&ctx, 4);
    ctx_finish(&ctx);
    for (uint32_t i = 0; i < 2; i++) {
        pkts[i] = new_packet(frames[i], lens[i], l3, l4);
        pkts[i]->in_port = 2;
    }
    clones = 0;
    run_one("output:2,output:1", &any, pkts, 2, &ctx);
    assert_int_equal(clones, 0);
    assert_int_equal(tx[1].count, 2);
    assert_int_equal(tx[2].count, 0);
    ctx_finish(&ctx);
    /* The caller's word that every packet came in on one port (a
     * received burst's) changes nothing but the looking. */
    for (uint32_t hint = 0; hint <= 2; hint += 2) {
        for (uint32_t i = 0; i < 5; i++) {
            pkts[i] = new_packet(frames[i], lens[i], l3, l4);
            pkts[i]->in_port = 2;
        }
        clones = 0;
        a = parse_ok("output:2,FLOOD,output:1,IN_PORT,output:3", &any);
        ctx_init(&ctx);
        ctx.in_port = hint;
        sp_actions_execute(a, pkts, 5, &ctx);
        sp_actions_free(a);
        assert_int_equal(tx[1].count, 10);
        assert_int_equal(tx[2].count, 5);
        assert_int_equal(tx[3].count, 10);
        assert_int_equal(clones, 20);
        assert_ptr_equal(tx[3].pkts[9], pkts[4]);
        check_conserved(&ctx, 5);
        ctx_finish(&ctx);
    }
    /* A flood with only the in_port to go to sends nothing. */
    pkts[0] = new_packet(frames[0], lens[0], l3, l4);
    pkts[0]->in_port = 1;
    clones = 0;
    a = parse_ok("FLOOD", &any);
    ctx_init(&ctx);
    ctx.n_ports = 2;
    sp_actions_execute(a, pkts, 1, &ctx);
    sp_actions_free(a);
    assert_int_equal(ctx.drops[SP_DROP_IN_PORT], 1);
    assert_int_equal(clones, 0);
    ctx.n_ports = N_PORTS;
    ctx_finish(&ctx);
    /* Full batches are flushed once per port; without buffers the copies
     * are no_buffer drops and each packet still reaches its last port. */
    a = parse_ok("FLOOD", &any);
    ctx_init(&ctx);
    for (unsigned round = 0; round < 2; round++) {
        for (uint32_t i = 0; i < 20; i++) {
            pkts[i] = new_packet(frames[0], lens[0], l3, l4);
        }
        sp_actions_execute(a, pkts, 20, &ctx);
    }
    for (uint32_t p = 1; p < N_PORTS; p++) {
        assert_int_equal(flushes[p], 1);
        assert_int_equal(tx[p].count, 20);
    }
    ctx.aux = &ctx;
    for (uint32_t i = 0; i < 3; i++) {
        pkts[i] = new_packet(frames[0], lens[0], l3, l4);
        pkts[i]->in_port = (uint16_t)(i + 1);
    }
    sp_actions_execute(a, pkts, 3, &ctx);
    ctx.aux = NULL;
    assert_int_equal(ctx.drops[SP_DROP_NO_BUFFER], 3);
    assert_int_equal(tx[1].count, 20);
    assert_int_equal(tx[2].count, 21);
    assert_int_equal(tx[3].count, 22);
    assert_ptr_equal(tx[2].pkts[20], pkts[2]);
    assert_ptr_equal(tx[3].pkts[21], pkts[1]);
    ctx_finish(&ctx);
    sp_actions_free(a);
}

static void
test_reserved_ports(void **state)
{
    (void)state;
    for_each_variant(run_reserved_ports);
}

/* What the controller callback took: the packets (freed at once), with
 * their max_len, and the reason it refuses for once 'taken' reaches
 * 'room'. */
static struct {
    unsigned taken, room;
    uint16_t max_len[8];
    uint32_t len[8];
    enum sp_drop_reason refuse;
} ctrl;

static enum sp_drop_reason
to_controller(struct sp_action_ctx *ctx, struct sp_packet *pkt,
              uint16_t max_len)
{
    if (ctrl.taken == ctrl.room) {
        return ctrl.refuse;
    }
    ctrl.max_len[ctrl.taken] = max_len;
    ctrl.len[ctrl.taken++] = pkt->len;
    free_packet(ctx, pkt);
    return SP_DROP_COUNT;
}

static void
run_controller(void)
{
    struct sp_match any, ip;
    struct sp_action_ctx ctx;
    struct sp_packet *pkts[2];
    uint8_t frame[128];
    uint16_t l3, l4;
    uint32_t len;
    struct sp_actions *a;

    match_init(&any, 0, -1, false);
    match_init(&ip, 0x0800, -1, false);
    len = build_ipv4(frame, 17, 64, false, &l3, &l4, 3);
    /* The last output: the packets themselves go. */
    memset(&ctrl, 0, sizeof ctrl);
    ctrl.room = 8;
    pkts[0] = new_packet(frame, len, l3, l4);
    pkts[1] = new_packet(frame, len, l3, l4);
    a = parse_ok("controller:64", &any);
    assert_true(sp_actions_to_controller(a));
    ctx_init(&ctx);
    ctx.controller = to_controller;
    sp_actions_execute(a, pkts, 2, &ctx);
    sp_actions_free(a);
    assert_int_equal(ctrl.taken, 2);
    assert_int_equal(ctrl.max_len[0], 64);
    ctx_finish(&ctx);
    /* Before other actions: copies as they were then, the packets go on
     * to the port. */
    memset(&ctrl, 0, sizeof ctrl);
    ctrl.room = 8;
    pkts[0] = new_packet(frame, len, l3, l4);
    a = parse_ok("controller,push_vlan:0x8100,output:1", &ip);
    ctx_init(&ctx);
    ctx.controller = to_controller;
    sp_actions_execute(a, pkts, 1, &ctx);
    sp_actions_free(a);
    assert_int_equal(ctrl.taken, 1);
    assert_int_equal(ctrl.max_len[0], UINT16_MAX);
    assert_int_equal(ctrl.len[0], len);
    assert_int_equal(tx[1].count, 1);
    assert_int_equal(tx[1].pkts[0]->len, len + 4);
    ctx_finish(&ctx);
    /* Refused: dropped for the callback's reason; no callback, for want
     * of a controller; no buffer for the copy, no_buffer. */
    memset(&ctrl, 0, sizeof ctrl);
    ctrl.room = 1;
    ctrl.refuse = SP_DROP_CONTROLLER_FULL;
    pkts[0] = new_packet(frame, len, l3, l4);
    pkts[1] = new_packet(frame, len, l3, l4);
    a = parse_ok("controller", &any);
    ctx_init(&ctx);
    ctx.controller = to_controller;
    sp_actions_execute(a, pkts, 2, &ctx);
    assert_int_equal(ctrl.taken, 1);
    assert_int_equal(ctx.drops[SP_DROP_CONTROLLER_FULL], 1);
    ctx_finish(&ctx);
    pkts[0] = new_packet(frame, len, l3, l4);
    ctx_init(&ctx);
    sp_actions_execute(a, pkts, 1, &ctx);
    assert_int_equal(ctx.drops[SP_DROP_NO_CONTROLLER], 1);
    ctx_finish(&ctx);
    sp_actions_free(a);
    pkts[0] = new_packet(frame, len, l3, l4);
    a = parse_ok("output:2", &any);
    assert_false(sp_actions_to_controller(a));
    sp_actions_free(a);
    a = parse_ok("controller,output:2", &any);
    ctx_init(&ctx);
    ctx.aux = &ctx; /* clone_packet: no buffers */
    ctx.controller = to_controller;
    sp_actions_execute(a, pkts, 1, &ctx);
    ctx.aux = NULL;
    assert_int_equal(ctx.drops[SP_DROP_NO_BUFFER], 1);
    assert_int_equal(tx[2].count, 1);
    ctx_finish(&ctx);
    sp_actions_free(a);
}

static void
test_controller(void **state)
{
    (void)state;
    for_each_variant(run_controller);
}

static void
test_drops(void **state)
{
    (void)state;
    for_each_variant(run_drops);
}

static void
test_vlan(void **state)
{
    (void)state;
    struct sp_match any, tagged;
    struct sp_action_ctx ctx;
    struct sp_packet *pkts[2];
    uint8_t untagged_f[128], tagged_f[128];
    uint16_t l3u, l4u, l3t, l4t;
    uint32_t lenu = build_ipv4(untagged_f, 6, 9, false, &l3u, &l4u, 1);
    uint32_t lent = build_ipv4(tagged_f, 6, 9, true, &l3t, &l4t, 2);
    const struct sp_packet *p;

    match_init(&any, 0, -1, false);
    match_init(&tagged, 0, -1, true);
    /* push on an untagged and a tagged frame. */
    pkts[0] = new_packet(untagged_f, lenu, l3u, l4u);
    pkts[1] = new_packet(tagged_f, lent, l3t, l4t);
    run_one("push_vlan:0x88a8,mod_vlan_vid:100,output:0", &any, pkts, 2, &ctx);
    p = tx[0].pkts[0];
    assert_int_equal(p->len, lenu + 4);
    assert_int_equal(p->l3_ofs, l3u + 4);
    assert_int_equal(p->l4_ofs, l4u + 4);
    assert_memory_equal(p->data, untagged_f, 12);
    assert_int_equal(sp_test_get_be16(p->data + 12), 0x88a8);
    assert_int_equal(sp_test_get_be16(p->data + 14), 100);
    assert_memory_equal(p->data + 16, untagged_f + 12, lenu - 12);
    assert_true(p->reframed); /* the I/O layer's cue to move its mbuf */
    p = tx[0].pkts[1];
    assert_true(p->reframed);
    assert_int_equal(p->len, lent + 4);
    assert_int_equal(p->l3_ofs, l3t + 4);
    assert_int_equal(sp_test_get_be16(p->data + 12), 0x88a8);
    /* The new tag copies the PCP of the old one; the VID is set. */
    assert_int_equal(sp_test_get_be16(p->data + 14), 0x2000 | 100);
    assert_memory_equal(p->data + 16, tagged_f + 12, lent - 12);
    ctx_finish(&ctx);

    /* strip on a tagged frame, and on an untagged one (unchanged). */
    pkts[0] = new_packet(tagged_f, lent, l3t, l4t);
    pkts[1] = new_packet(untagged_f, lenu, l3u, l4u);
    run_one("strip_vlan,output:1", &any, pkts, 2, &ctx);
    p = tx[1].pkts[0];
    assert_int_equal(p->len, lent - 4);
    assert_int_equal(p->l3_ofs, l3t - 4);
    assert_int_equal(p->l4_ofs, l4t - 4);
    assert_memory_equal(p->data, tagged_f, 12);
    assert_memory_equal(p->data + 12, tagged_f + 16, lent - 16);
    assert_true(p->reframed);
    p = tx[1].pkts[1];
    assert_int_equal(p->len, lenu);
    assert_int_equal(p->l3_ofs, l3u);
    assert_memory_equal(p->data, untagged_f, lenu);
    assert_false(p->reframed);
    ctx_finish(&ctx);

    /* Set the PCP of a matched tag; push then strip is the identity. */
    pkts[0] = new_packet(tagged_f, lent, l3t, l4t);
    run_one("mod_vlan_pcp:5,push_vlan:0x8100,strip_vlan,output:2", &tagged,
            pkts, 1, &ctx);
    p = tx[2].pkts[0];
    assert_int_equal(p->len, lent);
    assert_int_equal(sp_test_get_be16(p->data + 14), 0xa064);
    assert_int_equal(p->l3_ofs, l3t);
    ctx_finish(&ctx);

    /* Not enough headroom for two pushes. */
    pkts[0] = new_packet(untagged_f, lenu, l3u, l4u);
    {
        struct sp_actions *a =
            parse_ok("push_vlan:0x8100,push_vlan:0x88a8,output:0", &any);

        assert_int_equal(sp_actions_headroom(a), 8);
        ctx_init(&ctx);
        ctx.headroom = 4;
        sp_actions_execute(a, pkts, 1, &ctx);
        assert_int_equal(ctx.drops[SP_DROP_NO_HEADROOM], 1);
        ctx_finish(&ctx);
        sp_actions_free(a);
    }
}

static void
run_l2_l4(void)
{
    struct sp_match tcp, udp, sctp, udp6;
    struct sp_action_ctx ctx;
    struct sp_packet *pkts[2];
    uint8_t frame[128];
    uint16_t l3, l4;
    uint32_t len;
    const struct sp_packet *p;
    uint8_t *ip6;

    match_init(&tcp, 0x0800, 6, false);
    match_init(&udp, 0x0800, 17, false);
    match_init(&sctp, 0x0800, 132, false);
    match_init(&udp6, 0x86dd, 17, false);
    len = build_ipv4(frame, 6, 64, false, &l3, &l4, 5);
    pkts[0] = new_packet(frame, len, l3, l4);
    run_one("mod_dl_dst:02:00:00:00:00:01,mod_tp_src:1234,mod_tp_dst:80,"
            "mod_nw_dst:192.0.2.9,mod_nw_tos:32,output:0",
            &tcp, pkts, 1, &ctx);
    p = tx[0].pkts[0];
    assert_memory_equal(p->data, "\x02\x00\x00\x00\x00\x01", 6);
    assert_int_equal(sp_test_get_be16(p->data + l4), 1234);
    assert_int_equal(sp_test_get_be16(p->data + l4 + 2), 80);
    assert_int_equal(p->data[l3 + 1] & 0xfc, 32);
    check_ipv4_checksums(p);
    ctx_finish(&ctx);

    /* UDP: a zero checksum stays zero. */
    len = build_ipv4(frame, 17, 64, false, &l3, &l4, 6);
    pkts[0] = new_packet(frame, len, l3, l4);
    memset(frame + l4 + 6, 0, 2);
    pkts[1] = new_packet(frame, len, l3, l4);
    run_one("mod_tp_dst:53,mod_nw_src:10.0.0.1,output:0", &udp, pkts, 2, &ctx);
    check_ipv4_checksums(tx[0].pkts[0]);
    assert_int_equal(sp_test_get_be16(tx[0].pkts[1]->data + l4 + 6), 0);
    assert_int_equal(sp_test_get_be16(tx[0].pkts[1]->data + l4 + 2), 53);
    ctx_finish(&ctx);

    /* SCTP: the CRC is recomputed. */
    len = build_ipv4(frame, 132, 64, false, &l3, &l4, 7);
    pkts[0] = new_packet(frame, len, l3, l4);
    run_one("mod_tp_src:7,output:0", &sctp, pkts, 1, &ctx);
    {
        uint8_t seg[64];
        uint32_t seg_len = len - l4, crc;

        p = tx[0].pkts[0];
        memcpy(seg, p->data + l4, seg_len);
        memset(seg + 8, 0, 4);
        crc = sp_test_crc32c(seg, seg_len);
        assert_int_equal(sp_test_get_be16(p->data + l4), 7);
        assert_int_equal(p->data[l4 + 8], crc & 0xff);
        assert_int_equal(p->data[l4 + 11], crc >> 24);
    }
    ctx_finish(&ctx);

    /* IPv6 + UDP: addresses, traffic class, hop limit, ports. */
    memset(frame, 0, sizeof frame);
    sp_test_put_be16(frame + 12, 0x86dd);
    ip6 = frame + 14;
    ip6[0] = 0x6a; /* traffic class 0xa5, flow label 0x54321 */
    ip6[1] = 0x55;
    ip6[2] = 0x43;
    ip6[3] = 0x21;
    sp_test_put_be16(ip6 + 4, 16);
    ip6[6] = 17;
    ip6[7] = 64;
    for (int i = 0; i < 32; i++) {
        ip6[8 + i] = (uint8_t)(i * 7 + 1);
    }
    for (int i = 0; i < 16; i++) {
        ip6[40 + i] = (uint8_t)(i * 13);
    }
    sp_test_put_be16(ip6 + 40 + 4, 16);
    sp_test_put_be16(ip6 + 46, sp_test_l4_checksum(ip6, 0, ip6 + 40, 16, 6));
    pkts[0] = new_packet(frame, 14 + 56, 14, 54);
    run_one("set_field:2001:db8::77->ipv6_src,set_field:fe80::1->ipv6_dst,"
            "set_field:3->ipv6_tclass,set_field:9->ipv6_hlimit,dec_ttl,"
            "mod_tp_src:4000,output:0",
            &udp6, pkts, 1, &ctx);
    p = tx[0].pkts[0];
    ip6 = p->data + 14;
    assert_int_equal(ip6[0], 0x60);
    assert_int_equal(ip6[1], 0x35);
    assert_int_equal(ip6[7], 8);
    assert_int_equal(ip6[8], 0x20);
    assert_int_equal(ip6[23], 0x77);
    assert_int_equal(ip6[24], 0xfe);
    assert_int_equal(sp_test_get_be16(ip6 + 40), 4000);
    assert_int_equal(sp_test_get_be16(ip6 + 46),
                     sp_test_l4_checksum(ip6, 0, ip6 + 40, 16, 6));
    ctx_finish(&ctx);
}

static void
test_l2_l4(void **state)
{
    (void)state;
    for_each_variant(run_l2_l4);
}

/* IPv6 + TCP behind a hop-by-hop header: the protocol is the match's; a
 * TCP header cut short is not written. */
static void
test_ipv6_extension_and_short_l4(void **state)
{
    (void)state;
    struct sp_match tcp6, tcp;
    struct sp_action_ctx ctx;
    struct sp_packet *pkts[1];
    uint8_t frame[128], want[128];
    const struct sp_packet *p;
    uint8_t *ip6 = frame + 14, *tcp_hdr = ip6 + 48;
    uint16_t l3, l4;
    uint32_t len;

    match_init(&tcp6, 0x86dd, 6, false);
    match_init(&tcp, 0x0800, 6, false);
    memset(frame, 0, sizeof frame);
    sp_test_put_be16(frame + 12, 0x86dd);
    ip6[0] = 0x60;
    sp_test_put_be16(ip6 + 4, 8 + 20);
    ip6[6] = 0; /* hop-by-hop options, then TCP */
    ip6[7] = 64;
    for (int i = 0; i < 32; i++) {
        ip6[8 + i] = (uint8_t)(i * 3);
    }
    ip6[40] = 6;
    tcp_hdr[12] = 0x50;
    sp_test_put_be16(tcp_hdr + 16,
                     sp_test_l4_checksum(ip6, 6, tcp_hdr, 20, 16));
    pkts[0] = new_packet(frame, 14 + 40 + 8 + 20, 14, 14 + 48);
    run_one("set_field:2001:db8::9->ipv6_dst,mod_tp_dst:443,output:0", &tcp6,
            pkts, 1, &ctx);
    p = tx[0].pkts[0];
    assert_int_equal(sp_test_get_be16(p->data + 62 + 2), 443);
    assert_int_equal(
        sp_test_get_be16(p->data + 62 + 16),
        sp_test_l4_checksum(p->data + 14, 6, p->data + 62, 20, 16));
    ctx_finish(&ctx);

    len = build_ipv4(frame, 6, 64, false, &l3, &l4, 9);
    memcpy(want, frame, len);
    pkts[0] = new_packet(frame, l4 + 19, l3, l4);
    run_one("mod_tp_src:1,output:0", &tcp, pkts, 1, &ctx);
    assert_memory_equal(tx[0].pkts[0]->data, want, l4 + 19);
    ctx_finish(&ctx);
}

static void
count_free(struct sp_action_ctx *ctx, struct sp_packet *pkt)
{
    (void)pkt;
    (*(unsigned *)ctx->aux)++;
}

/* Frames cut at every length, fenced right after their last byte (the
 * headroom before them): no action reads or writes past the frame. */
static void
run_short_frames(void)
{
    static const char *const lists[] = {
        "push_vlan:0x8100,mod_vlan_vid:5,mod_dl_src:0:0:0:0:0:1,strip_vlan,"
        "dec_ttl,mod_nw_src:10.0.0.1,mod_tp_dst:9,output:0",
        "strip_vlan,mod_nw_tos:4,mod_tp_src:1,push_vlan:0x88a8,"
        "mod_vlan_pcp:2,output:1",
    };
    struct sp_match udp, tagged_udp;
    uint8_t frame[128];
    uint16_t l3, l4;

    match_init(&udp, 0x0800, 17, false);
    match_init(&tagged_udp, 0x0800, 17, true);
    for (int tag = 0; tag < 2; tag++) {
        uint32_t full = build_ipv4(frame, 17, 9, tag, &l3, &l4, 77);

        for (size_t l = 0; l < 2; l++) {
            struct sp_actions *a =
                parse_ok(lists[l], tag ? &tagged_udp : &udp);

            for (uint32_t len = 0; len <= full; len++) {
                struct sp_guarded g;
                struct sp_packet pkt, *ptr = &pkt;
                struct sp_action_ctx ctx;
                unsigned freed = 0;

                sp_guarded_alloc(&g, HEADROOM + len, 1);
                memcpy(g.data + HEADROOM, frame, len);
                pkt = (struct sp_packet){
                    .data = g.data + HEADROOM,
                    .len = len,
                    .l3_ofs = l3 < len ? l3 : SP_OFS_NONE,
                    .l4_ofs = l4 < len ? l4 : SP_OFS_NONE,
                };
                ctx_init(&ctx);
                ctx.free = count_free;
                ctx.aux = &freed;
                sp_actions_execute(a, &ptr, 1, &ctx);
                assert_int_equal(tx[0].count + tx[1].count + freed, 1);
                sp_guarded_check(&g);
                sp_guarded_free(&g);
            }
            sp_actions_free(a);
        }
    }
}

static void
test_short_frames(void **state)
{
    (void)state;
    for_each_variant(run_short_frames);
}

/* Random IPv4 action lists (FLOOD and IN_PORT among them) on random frames
 * from random ports: every variant sends the same bytes to the same ports
 * and drops the same packets as scalar. */
static void
test_random_ipv4_lists(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "dec_ttl",
        "mod_nw_src:10.1.2.3",
        "mod_nw_dst:192.0.2.77",
        "mod_nw_tos:252",
        "mod_nw_ecn:1",
        "mod_nw_ttl:1",
        "output:1",
        "mod_tp_dst:8080",
        "push_vlan:0x8100",
        "strip_vlan",
        "mod_dl_src:0:0:0:0:0:1",
        "FLOOD",
        "IN_PORT",
        "output:0",
    };
    struct sp_random rng = {21};
    struct sp_match udp;

    match_init(&udp, 0x0800, 17, false);
    for (int round = 0; round < 200; round++) {
        static uint8_t want[SP_BATCH_MAX * N_PORTS][160];
        uint32_t want_len[SP_BATCH_MAX * N_PORTS], want_count[N_PORTS];
        uint64_t want_drops[SP_DROP_COUNT];
        uint32_t n = sp_random_below(&rng, SP_BATCH_MAX + 1);
        uint64_t seed = sp_random_next(&rng);
        char text[256] = "";
        struct sp_actions *a;

        for (unsigned k = sp_random_below(&rng, 6); k > 0; k--) {
            strcat(text, pieces[sp_random_below(&rng, 14)]);
            strcat(text, ",");
        }
        strcat(text, sp_random_below(&rng, 2) ? "output:2" : "output:3");
        a = parse_ok(text, &udp);
        for (unsigned v = 0; v < sp_n_runnable; v++) {
            struct sp_err err;
            struct sp_action_ctx ctx;
            struct sp_packet *pkts[SP_BATCH_MAX];
            struct sp_random frames = {seed};

            assert_int_equal(sp_dispatch_set_impl(sp_runnable[v]->name, &err),
                             0);
            for (uint32_t i = 0; i < n; i++) {
                uint8_t frame[128];
                uint16_t l3, l4;
                uint32_t len =
                    build_ipv4(frame, 17, (uint8_t)sp_random_below(&frames, 4),
                               sp_random_below(&frames, 2), &l3, &l4,
                               sp_random_next(&frames));

                pkts[i] = new_packet(frame, len, l3, l4);
                pkts[i]->in_port =
                    (uint16_t)sp_random_below(&frames, N_PORTS + 1);
            }
            ctx_init(&ctx);
            sp_actions_execute(a, pkts, n, &ctx);
            for (uint32_t port = 0, k = 0; port < N_PORTS; port++) {
                for (uint32_t i = 0; i < tx[port].count; i++, k++) {
                    const struct sp_packet *p = tx[port].pkts[i];

                    if (v == 0) {
                        want_len[k] = p->len;
                        memcpy(want[k], p->data, p->len);
                    } else {
                        assert_int_equal(p->len, want_len[k]);
                        assert_memory_equal(p->data, want[k], p->len);
                    }
                }
                if (v == 0) {
                    want_count[port] = tx[port].count;
                } else {
                    assert_int_equal(tx[port].count, want_count[port]);
                }
            }
            if (v == 0) {
                memcpy(want_drops, ctx.drops, sizeof want_drops);
            } else {
                assert_memory_equal(ctx.drops, want_drops, sizeof want_drops);
            }
            ctx_finish(&ctx);
        }
        sp_actions_free(a);
    }
}

/* The pool shares equal compiled lists only: the same text compiled for
 * another match (mod_tp_src's checksum depends on the protocol) is a list
 * of its own; the last release frees. */
static void
test_pool(void **state)
{
    (void)state;
    struct sp_actions_pool *pool = sp_actions_pool_create();
    struct sp_match udp, tcp;
    const struct sp_actions *a, *b, *c, *d;

    assert_non_null(pool);
    match_init(&udp, 0x0800, 17, false);
    match_init(&tcp, 0x0800, 6, false);
    a = sp_actions_intern(pool, parse_ok("dec_ttl,output:2", &udp));
    b = sp_actions_intern(pool, parse_ok("dec_ttl, output:2", &tcp));
    c = sp_actions_intern(pool, parse_ok("mod_tp_src:9,output:2", &udp));
    d = sp_actions_intern(pool, parse_ok("mod_tp_src:9,output:2", &tcp));
    assert_ptr_equal(a, b);
    assert_ptr_not_equal(a, c);
    assert_ptr_not_equal(c, d);
    assert_int_equal(sp_actions_pool_count(pool), 3);
    for (unsigned i = 0; i < 200; i++) {
        char text[64];

        snprintf(text, sizeof text, "mod_nw_tos:%u,output:1", (i % 64) * 4);
        sp_actions_intern(pool, parse_ok(text, &udp));
    }
    assert_int_equal(sp_actions_pool_count(pool), 3 + 64);
    sp_actions_release(a);
    assert_int_equal(sp_actions_pool_count(pool), 3 + 64);
    sp_actions_release(b);
    assert_int_equal(sp_actions_pool_count(pool), 2 + 64);
    sp_actions_release(c);
    sp_actions_release(d);
    assert_int_equal(sp_actions_pool_count(pool), 64);
    sp_actions_pool_destroy(pool); /* frees the rest */
}

/* sp_actions_output_only names the port of a list that only outputs
 * there, and no port for any list that does more or other. */
static void
test_output_only(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint32_t port;
    } cases[] = {
        {"output:2", 2},
        {"output:3,dec_ttl", 3}, /* nothing is left to decrement */
        {"dec_ttl,output:2", 0},
        {"output:2,output:3", 0},
        {"drop", 0},
        {"dec_ttl", 0},
        {"in_port", 0},
        {"flood", 0},
        {"controller", 0},
        {"push_vlan:0x8100,output:2", 0},
    };
    struct sp_match ip;

    match_init(&ip, 0x0800, -1, false);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct sp_actions *a = parse_ok(cases[i].text, &ip);

        if (sp_actions_output_only(a) != cases[i].port) {
            fail_msg("'%s': port %u, not %u", cases[i].text,
                     sp_actions_output_only(a), cases[i].port);
        }
        sp_actions_free(a);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_format),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_controller),
        cmocka_unit_test(test_output_only),
        cmocka_unit_test(test_whole_burst),
        cmocka_unit_test_teardown(test_outputs, reset_dispatch),
        cmocka_unit_test_teardown(test_drops, reset_dispatch),
        cmocka_unit_test_teardown(test_reserved_ports, reset_dispatch),
        cmocka_unit_test(test_vlan),
        cmocka_unit_test_teardown(test_l2_l4, reset_dispatch),
        cmocka_unit_test(test_ipv6_extension_and_short_l4),
        cmocka_unit_test_teardown(test_short_frames, reset_dispatch),
        cmocka_unit_test_teardown(test_random_ipv4_lists, reset_dispatch),
    };

    return cmocka_run_group_tests_name("actions", tests,
                                       sp_test_setup_variants, NULL);
}
