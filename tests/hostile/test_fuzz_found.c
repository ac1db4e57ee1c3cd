/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the fuzz targets (fuzz/) found, each kept as a test of its own so
 * it stays fixed; the inputs are also in the targets' seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpath/actions.h"
#include "simdpath/datapath.h"
#include "simdpath/flow_parse.h"
#include "simdpath/mfex.h"
#include "testlib.h"

/* Its PMD thread never runs: nothing calls the I/O. */
static const struct sp_io_ops no_io;

static struct sp_dp *
idle_dp(void)
{
    struct sp_dp_config config = {
        .n_ports = 4, .n_pmds = 1, .n_rxq = 1, .emc_insert_inv_prob = 1};
    struct sp_err err;
    struct sp_dp *dp = sp_dp_create(&config, &no_io, &err);

    if (!dp) {
        fail_msg("sp_dp_create: %s", err.msg);
    }
    return dp;
}

/* fuzz_ctl, "flow-dump" before any rule: the rule list was still NULL and
 * went to qsort, which may not take NULL (UBSan stops there). */
static void
test_flow_dump_without_rules(void **state)
{
    struct sp_dp *dp = idle_dp();
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    (void)state;
    sp_dp_flows_dump(dp, out);
    fclose(out);
    assert_int_equal(len, 0);
    free(text);
    sp_dp_destroy(dp);
}

static void
no_flush(struct sp_action_ctx *ctx, uint32_t port)
{
    (void)ctx, (void)port;
}

static void
no_free_pkt(struct sp_action_ctx *ctx, struct sp_packet *pkt)
{
    (void)ctx, (void)pkt;
    fail_msg("the packet was dropped");
}

static bool
any_port(uint32_t port, void *aux)
{
    (void)aux;
    return port >= 1 && port <= 4;
}

/* Ethernet, IPv6 with a hop-by-hop header (router alert), then an MLDv2
 * report with its checksum, as hosts send them. */
static const uint8_t mld_frame[] = {
    0x33, 0x33, 0x00, 0x00, 0x00, 0x16, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x86, 0xdd,
    /* IPv6: payload 36 bytes, next header 0 (hop-by-hop), hop limit 1 */
    0x60, 0x00, 0x00, 0x00, 0x00, 0x24, 0x00, 0x01, 0xfe, 0x80, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x16,
    /* hop-by-hop: next header 58 (ICMPv6), router alert */
    0x3a, 0x00, 0x05, 0x02, 0x00, 0x00, 0x01, 0x00,
    /* MLDv2 report: type 143, checksum, one record */
    0x8f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x04, 0x00, 0x00, 0x00,
    0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x01};

#define MLD_L3  14
#define MLD_L4  (14 + 40 + 8)
#define MLD_LEN sizeof mld_frame

/* fuzz_actions, an icmp6 rule setting an IPv6 address on an ICMPv6
 * message behind an extension header: the match names ICMPv6, yet the
 * checksum was updated only for TCP, UDP or SCTP matches (or with no
 * extension header), and the message left with a wrong one. */
static void
test_icmp6_checksum_behind_extension_header(void **state)
{
    static const char rule[] =
        "icmp6,actions=set_field:2001:db8::1->ipv6_src,output:2";
    struct sp_tx_batch tx[5] = {0};
    struct sp_action_ctx ctx = {
        .tx = tx, .n_ports = 5, .flush = no_flush, .free = no_free_pkt};
    uint8_t bytes[MLD_LEN];
    struct sp_packet pkt = {.data = bytes, .len = MLD_LEN, .in_port = 1};
    struct sp_packet *ptr = &pkt;
    struct sp_flow_key key;
    struct sp_flow_spec spec;
    struct sp_actions *actions;
    struct sp_err err;

    (void)state;
    memcpy(bytes, mld_frame, MLD_LEN);
    sp_test_put_be16(bytes + MLD_L4 + 2,
                     sp_test_l4_checksum(bytes + MLD_L3, 58, bytes + MLD_L4,
                                         MLD_LEN - MLD_L4, 2));
    assert_int_equal(sp_flow_parse_match(rule, &spec, &err), 0);
    assert_int_equal(sp_actions_parse(rule + spec.actions_ofs, &spec.match,
                                      any_port, NULL, &actions, &err),
                     0);
    SP_KERNEL(mfex)(&ptr, 1, &key);
    assert_int_equal(pkt.l4_ofs, MLD_L4);
    assert_true(sp_match_covers(&spec.match, &key));
    sp_actions_execute(actions, &ptr, 1, &ctx);
    assert_int_equal(tx[2].count, 1);
    assert_int_equal(bytes[MLD_L3 + 8], 0x20); /* 2001:db8::1 */
    assert_int_equal(sp_test_get_be16(bytes + MLD_L4 + 2),
                     sp_test_l4_checksum(bytes + MLD_L3, 58, bytes + MLD_L4,
                                         MLD_LEN - MLD_L4, 2));
    sp_actions_free(actions);
}

/* fuzz_flow_parse: an ARP hardware address on a match that is not ARP
 * was refused at column 0: the error blamed the first byte of the key
 * field it shares (nw_src, nw_dst), which no field of the rule set. */
static void
test_prerequisite_column_of_arp_address(void **state)
{
    static const struct {
        const char *rule;
        unsigned column;
    } cases[] = {
        {"dl_type=13,arp_tha=00:00:00:00:01:00,actions=drop", 12},
        {"in_port=1 arp_sha=00:00:00:00:01:00,actions=drop", 11},
    };
    struct sp_dp *dp = idle_dp();

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sp_err err;

        assert_int_equal(sp_dp_flow_add(dp, cases[i].rule, &err), -1);
        if (err.column != cases[i].column) {
            fail_msg("'%s': column %u, want %u (%s)", cases[i].rule,
                     err.column, cases[i].column, err.msg);
        }
    }
    sp_dp_destroy(dp);
}

/* fuzz_flow_parse: ipv6_src on an MPLS rule was taken, its bits read as
 * the MPLS label stack entry's that share their key bytes, and printed as
 * mpls_label=131072/0xe0000, which does not parse back. A field under
 * another family's dl_type is refused at its own column. */
static void
test_field_of_another_dl_type(void **state)
{
    static const char *const rules[] = {
        "mpls,ipv6_src=2008::/3,actions=FLOOD",
        "mpls,nw_src=10.0.0.0/8,actions=FLOOD",
        "ip,ipv6_src=2008::/3,actions=FLOOD",
        "ip,arp_spa=10.0.0.1,actions=FLOOD",
        "arp,ipv6_dst=2008::/3,actions=FLOOD",
    };
    struct sp_dp *dp = idle_dp();

    (void)state;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        struct sp_err err;

        assert_int_equal(sp_dp_flow_add(dp, rules[i], &err), -1);
        if (err.column != (unsigned)(strchr(rules[i], ',') - rules[i]) + 2 ||
            !strstr(err.msg, "needs dl_type")) {
            fail_msg("'%s': column %u (%s)", rules[i], err.column, err.msg);
        }
    }
    sp_dp_destroy(dp);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flow_dump_without_rules),
        cmocka_unit_test(test_icmp6_checksum_behind_extension_header),
        cmocka_unit_test(test_prerequisite_column_of_arp_address),
        cmocka_unit_test(test_field_of_another_dl_type),
    };

    return cmocka_run_group_tests_name("fuzz_found", tests, NULL, NULL);
}
