/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes OpenFlow messages simdpath's encoder makes, one per line as
 * "NAME HEX", for test_ofp_parse.py to decode with `ovs-ofctl ofp-parse`:
 * a FLOW_MOD per rule given on the command line ("MATCH actions=ACTIONS"
 * in docs/flow-syntax.md), then the switch's replies to a FEATURES, DESC,
 * FLOW, PORT_STATS and PORT_DESC request and to a malformed message, and
 * two PACKET_INs (a table miss with the whole frame, an action's cut to
 * its max_len).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openflow/internal.h"
#include "simdpath/flow_parse.h"

static void
print_hex(const char *name, const uint8_t *p, size_t len)
{
    printf("%s ", name);
    for (size_t i = 0; i < len; i++) {
        printf("%02x", p[i]);
    }
    putchar('\n');
}

static struct sp_of_flow rules[64];
static size_t n_rules;

static int
no_flow_mod(void *aux, const struct sp_of_flow_mod *fm,
            struct sp_of_error *err)
{
    (void)aux, (void)fm;
    return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_UNKNOWN,
                      "read-only");
}

static int
snapshot(void *aux, sp_of_flow_fn *fn, void *ctx)
{
    (void)aux;
    for (size_t i = 0; i < n_rules; i++) {
        fn(ctx, &rules[i]);
    }
    return 0;
}

static void
port(void *aux, unsigned p, struct sp_of_port *out)
{
    (void)aux;
    snprintf(out->name, sizeof out->name, "net_pcap%u", p - 1);
    out->hw_addr[0] = 0x02;
    out->hw_addr[5] = (uint8_t)p;
    out->rx_packets = 10 * p;
    out->tx_packets = 20 * p;
    out->rx_bytes = out->tx_bytes = SP_OF_NO_COUNT;
    out->rx_dropped = 1;
    out->tx_dropped = 0;
    out->rx_errors = out->tx_errors = SP_OF_NO_COUNT;
    out->duration_sec = 5;
}

static void
table(void *aux, struct sp_of_table *out)
{
    (void)aux;
    out->active_count = (uint32_t)n_rules;
    out->lookup_count = 100;
    out->matched_count = 90;
}

/* Sends req to a session and prints every reply as name. */
static void
replies(const struct sp_of_switch *sw, const char *name, const uint8_t *req,
        size_t len)
{
    struct sp_of_session s;

    sp_of_session_init(&s, sw);
    s.out.len = 0;
    sp_of_session_input(&s, (const uint8_t[]){4, 0, 0, 8, 0, 0, 0, 0}, 8);
    sp_of_session_input(&s, req, len);
    while (s.out.len) {
        size_t n = sp_of_get16(s.out.data + 2);

        print_hex(name, s.out.data, n);
        sp_of_buf_consume(&s.out, n);
        sp_of_session_input(&s, NULL, 0);
    }
    sp_of_session_free(&s);
}

int
main(int argc, char **argv)
{
    struct sp_of_switch sw = {
        .datapath_id = 0xabcd,
        .n_ports = 2,
        .flow_mod = no_flow_mod,
        .flows = snapshot,
        .port = port,
        .table = table,
    };
    /* A UDP datagram from 10.0.0.1 to 10.0.0.2, 60 bytes. */
    static const uint8_t frame[60] = {
        0x02, 0, 0,  0, 0, 0x02, 0x02, 0,  0,  0,  0, 0x01, 0x08, 0x00, 0x45,
        0,    0, 46, 0, 0, 0x40, 0,    64, 17, 0,  0, 10,   0,    0,    1,
        10,   0, 0,  2, 0, 7,    0,    9,  0,  26, 0, 0,    'h',  'i',
    };
    struct sp_of_packet_in miss = {
        1, SP_OFPR_NO_MATCH, SP_OFPCML_NO_BUFFER, 0, frame, sizeof frame};
    struct sp_of_packet_in cut = {2,      SP_OFPR_ACTION, 20,
                                  0x1234, frame,          sizeof frame};
    struct sp_of_buf b = {0};

    for (int i = 1; i < argc && n_rules < 64; i++) {
        struct sp_flow_spec spec;
        struct sp_of_flow_mod fm;
        struct sp_err err;
        char name[32];

        if (sp_flow_parse_match(argv[i], &spec, &err) || !spec.actions_ofs) {
            fprintf(stderr, "%s: column %u: %s\n", argv[i], err.column,
                    err.msg);
            return 2;
        }
        memset(&fm, 0, sizeof fm);
        fm.command = SP_OFPFC_ADD;
        fm.priority = (uint16_t)spec.priority;
        fm.cookie = 0x10 + (uint64_t)i;
        fm.buffer_id = SP_OFP_NO_BUFFER;
        fm.out_port = SP_OFPP_ANY;
        fm.out_group = SP_OFPG_ANY;
        fm.match = spec.match;
        snprintf(fm.actions, sizeof fm.actions, "%s",
                 argv[i] + spec.actions_ofs);
        b.len = 0;
        if (sp_of_encode_flow_mod(&b, (uint32_t)i, &fm)) {
            fprintf(stderr, "%s: cannot encode\n", argv[i]);
            return 1;
        }
        snprintf(name, sizeof name, "flow_mod%d", i);
        print_hex(name, b.data, b.len);

        rules[n_rules].match = fm.match;
        rules[n_rules].priority = fm.priority;
        rules[n_rules].cookie = fm.cookie;
        rules[n_rules].duration_sec = 3;
        rules[n_rules].packets = 10 * (uint64_t)i;
        rules[n_rules].bytes = 1000 * (uint64_t)i;
        strcpy(rules[n_rules].actions, fm.actions);
        n_rules++;
    }
    b.len = 0;
    if (sp_of_encode_packet_in(&b, &miss)) {
        return 1;
    }
    print_hex("packet_in_miss", b.data, b.len);
    b.len = 0;
    if (sp_of_encode_packet_in(&b, &cut)) {
        return 1;
    }
    print_hex("packet_in_cut", b.data, b.len);
    sp_of_buf_free(&b);

    replies(&sw, "features", (const uint8_t[]){4, 5, 0, 8, 0, 0, 0, 1}, 8);
    replies(
        &sw, "desc",
        (const uint8_t[]){4, 18, 0, 16, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0},
        16);
    replies(
        &sw, "table",
        (const uint8_t[]){4, 18, 0, 16, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0, 0, 0},
        16);
    replies(
        &sw, "table_features",
        (const uint8_t[]){4, 18, 0, 16, 0, 0, 0, 9, 0, 12, 0, 0, 0, 0, 0, 0},
        16);
    replies(&sw, "port_stats",
            (const uint8_t[]){4,    18,   0,    24,   0, 0, 0, 3,
                              0,    4,    0,    0,    0, 0, 0, 0,
                              0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0},
            24);
    replies(
        &sw, "port_desc",
        (const uint8_t[]){4, 18, 0, 16, 0, 0, 0, 4, 0, 13, 0, 0, 0, 0, 0, 0},
        16);
    replies(&sw, "flow_stats",
            (const uint8_t[]){
                4,    18,   0,    56,   0,    0, 0, 5, 0,    1,    0,    0,
                0,    0,    0,    0,    0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0,    0, 0, 0, 0,    0,    0,    0,
                0,    0,    0,    0,    0,    0, 0, 0, 0,    0,    0,    0,
                0,    1,    0,    4,    0,    0, 0, 0},
            56);
    replies(&sw, "aggregate",
            (const uint8_t[]){
                4,    18,   0,    56,   0,    0, 0, 6, 0,    2,    0,    0,
                0,    0,    0,    0,    0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0,    0, 0, 0, 0,    0,    0,    0,
                0,    0,    0,    0,    0,    0, 0, 0, 0,    0,    0,    0,
                0,    1,    0,    4,    0,    0, 0, 0},
            56);
    replies(
        &sw, "error",
        (const uint8_t[]){4, 15, 0, 16, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1},
        16);
    replies(&sw, "hello_failed", (const uint8_t[]){1, 0, 0, 8, 0, 0, 0, 8}, 8);
    return 0;
}
