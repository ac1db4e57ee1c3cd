/* SPDX-License-Identifier: BSD-3-Clause */
/* The match part of flow rules: values land in the right key bytes with
 * the right masks, and every error names the field and column. */
#include <arpa/inet.h>
#include <string.h>

#include "simdpath/flow_format.h"
#include "simdpath/flow_parse.h"
#include "testlib.h"

static void
parse_ok(const char *text, struct sp_flow_spec *spec)
{
    struct sp_err err;

    if (sp_flow_parse_match(text, spec, &err)) {
        fail_msg("'%s' refused at column %u: %s", text, err.column, err.msg);
    }
    /* The key is always inside its mask. */
    for (int i = 0; i < 64; i++) {
        assert_int_equal(spec->match.key.bytes[i] & ~spec->match.mask.bytes[i],
                         0);
    }
}

static void
test_five_tuple(void **state)
{
    (void)state;
    struct sp_flow_spec spec;
    const char *text = "priority=100,in_port=1,ip,nw_dst=10.0.0.0/8,tcp,"
                       "tp_dst=80,actions=dec_ttl,output:2";
    const struct sp_flow_key *k = &spec.match.key, *m = &spec.match.mask;

    parse_ok(text, &spec);
    assert_int_equal(spec.priority, 100);
    assert_string_equal(text + spec.actions_ofs, "dec_ttl,output:2");
    assert_int_equal(k->in_port, 1);
    assert_int_equal(m->in_port, 0xffff);
    assert_int_equal(k->dl_type, htons(0x0800));
    assert_int_equal(m->dl_type, 0xffff);
    assert_int_equal(k->nw_proto, 6);
    assert_int_equal(m->nw_proto, 0xff);
    assert_memory_equal(k->nw_dst, "\x0a\x00\x00\x00", 4);
    assert_memory_equal(m->nw_dst, "\xff\x00\x00\x00", 4);
    assert_int_equal(k->tp_dst, htons(80));
    assert_int_equal(m->tp_dst, 0xffff);
    /* Nothing else is matched. */
    struct sp_flow_key expect_mask;

    memset(&expect_mask, 0, sizeof expect_mask);
    expect_mask.in_port = 0xffff;
    expect_mask.dl_type = 0xffff;
    expect_mask.nw_proto = 0xff;
    expect_mask.nw_dst[0] = 0xff;
    expect_mask.tp_dst = 0xffff;
    assert_memory_equal(m, &expect_mask, 64);
}

static void
test_fields(void **state)
{
    (void)state;
    struct sp_flow_spec spec;
    const struct sp_flow_key *k = &spec.match.key, *m = &spec.match.mask;

    parse_ok("dl_src=00:11:22:33:44:55,dl_dst=aa:bb:cc:dd:ee:ff/ff:ff:ff:00:"
             "00:00 dl_vlan=100 dl_vlan_pcp=5",
             &spec);
    assert_int_equal(spec.priority, SP_FLOW_DEFAULT_PRIORITY);
    assert_int_equal(spec.actions_ofs, 0);
    assert_memory_equal(k->dl_src, "\x00\x11\x22\x33\x44\x55", 6);
    assert_memory_equal(k->dl_dst, "\xaa\xbb\xcc\x00\x00\x00", 6);
    assert_memory_equal(m->dl_dst, "\xff\xff\xff\x00\x00\x00", 6);
    assert_int_equal(ntohs(k->vlan_tci), 0x1000 | 100 | 5 << 13);
    assert_int_equal(ntohs(m->vlan_tci), 0xffff);

    parse_ok("dl_vlan=0xffff", &spec);
    assert_int_equal(k->vlan_tci, 0);
    assert_int_equal(m->vlan_tci, 0xffff);

    parse_ok("ipv6,ipv6_src=2001:db8::1/64,ipv6_label=0x12345,"
             "ip_dscp=46,nw_ecn=1,nw_ttl=64,ip_frag=later",
             &spec);
    assert_memory_equal(k->nw_src, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\0",
                        16);
    assert_memory_equal(
        m->nw_src, "\xff\xff\xff\xff\xff\xff\xff\xff\0\0\0\0\0\0\0\0", 16);
    assert_int_equal(ntohl(k->ipv6_label), 0x12345);
    assert_int_equal(ntohl(m->ipv6_label), 0xfffff);
    assert_int_equal(k->nw_tos, 46 << 2 | 1);
    assert_int_equal(m->nw_tos, 0xff);
    assert_int_equal(k->nw_ttl, 64);
    assert_int_equal(k->nw_frag, SP_FRAG_ANY | SP_FRAG_LATER);
    assert_int_equal(m->nw_frag, SP_FRAG_ANY | SP_FRAG_LATER);

    parse_ok("tcp,tcp_flags=+syn-ack,nw_src=192.0.2.0/255.255.255.0", &spec);
    assert_int_equal(ntohs(k->tcp_flags), 0x002);
    assert_int_equal(ntohs(m->tcp_flags), 0x012);
    assert_memory_equal(m->nw_src, "\xff\xff\xff\x00", 4);

    parse_ok("icmp,icmp_type=8,icmp_code=0", &spec);
    assert_int_equal(k->tp_src, htons(8));
    assert_int_equal(m->tp_src, 0xffff);
    assert_int_equal(k->nw_proto, 1);

    parse_ok("arp,arp_op=2,arp_spa=10.1.1.1,arp_tha=00:00:00:00:00:01", &spec);
    assert_int_equal(k->nw_proto, 2);
    assert_memory_equal(k->nw_src, "\x0a\x01\x01\x01", 4);
    assert_memory_equal(k->nw_dst + SP_ARP_HA_OFS, "\0\0\0\0\0\x01", 6);
    assert_int_equal(k->dl_type, htons(0x0806));

    parse_ok("udp,tp_src=0x1000/0xf000,nw_tos=0xb8", &spec);
    assert_int_equal(k->tp_src, htons(0x1000));
    assert_int_equal(m->tp_src, htons(0xf000));
    assert_int_equal(k->nw_tos, 0xb8);
    assert_int_equal(m->nw_tos, 0xfc);

    /* A shorthand and the field it sets may both appear if they agree. */
    parse_ok("tcp,nw_proto=6,dl_type=0x0800", &spec);
    assert_int_equal(k->nw_proto, 6);
}

static void
assert_error(const char *text, unsigned want_column, const char *needle)
{
    struct sp_flow_spec spec;
    struct sp_err err;

    if (!sp_flow_parse_match(text, &spec, &err)) {
        fail_msg("'%s' was accepted", text);
    }
    if (err.column != want_column || !strstr(err.msg, needle)) {
        fail_msg("'%s': column %u \"%s\"; want column %u with \"%s\"", text,
                 err.column, err.msg, want_column, needle);
    }
}

static void
test_errors(void **state)
{
    (void)state;
    assert_error("priority=70000", 1, "from 0 to 65535");
    assert_error("ip,nw_dst=10.0.0.300", 4, "invalid address '10.0.0.300'");
    assert_error("ip,nw_dst=10.0.0.0/33", 4, "invalid mask '33'");
    assert_error("in_port=1, bogus=3", 12, "unknown field 'bogus'");
    assert_error("tcp,nw_proto=17", 5, "contradicts an earlier field");
    assert_error("ip,ipv6", 4, "contradicts");
    assert_error("dl_src=00:11:22:33:44", 1, "invalid Ethernet address");
    assert_error("dl_vlan=5000", 1, "invalid VLAN id 5000");
    assert_error("dl_vlan_pcp=8", 1, "from 0 to 7");
    assert_error("nw_tos=0x03", 1, "ECN bits");
    assert_error("ip_frag=maybe", 1, "expected no, yes, first, later");
    assert_error("tcp_flags=+syn+bogus", 1, "unknown TCP flag 'bogus'");
    assert_error("tp_dst=", 1, "needs a value");
    assert_error("tp_dst=-1", 1, "invalid value '-1'");
    assert_error("tcp=1", 1, "takes no value");
    assert_error("ipv6_label=0x100000", 1, "from 0 to 1048575");
    assert_error("icmp_type=256", 1, "from 0 to 255");
    /* Numbers are digits: no sign, no blank (strtoul takes both). */
    assert_error("tcp,tp_dst=+80", 5, "invalid value '+80'");
    assert_error("priority=-1", 1, "invalid value '-1'");
    assert_error("dl_src=-1:00:00:00:00:00", 1, "invalid Ethernet address");
    assert_error("dl_src=00:11:22:33:44:+5", 1, "invalid Ethernet address");
    assert_error("ip,nw_dst=10.0.0.0/+8", 4, "invalid mask '+8'");
}

/* A match the classifier would refuse is refused here, at the column of
 * the field the message names. */
static void
test_prerequisites(void **state)
{
    (void)state;
    assert_error("priority=5,tp_dst=80", 12, "tp_dst: needs an exact dl_type");
    assert_error("priority=5, ip, tcp_flags=+syn,tp_dst=80", 17,
                 "tcp_flags: needs an exact nw_proto");
    assert_error("udp,tcp_flags=0x002", 5, "tcp_flags: needs nw_proto tcp");
    assert_error("ip,ipv6_label=1", 4, "ipv6_label: needs dl_type ipv6");
    assert_error("in_port=1,arp_op=1,actions=drop", 11,
                 "arp_op: needs an exact dl_type, arp (0x0806) or rarp "
                 "(0x8035)");
    assert_error("in_port=1,nw_proto=1,actions=drop", 11,
                 "nw_proto: needs an exact dl_type");
    assert_error("arp,nw_ttl=3", 5, "nw_ttl: needs dl_type ip or ipv6");
    assert_error("dl_type=0x0800/0xff00,nw_dst=10.0.0.1", 23,
                 "nw_dst: needs an exact dl_type");
    assert_error("ipv6, icmp_type=8", 7, "tp_src: needs an exact nw_proto");
}

/* ipv6_src, arp_spa, mpls_label and nw_src set the same key bytes (the
 * bits cannot say which was written): each is refused under another's
 * dl_type, at its own column, rather than read as the other ("mpls,
 * ipv6_src=2008::/3" once became mpls_label=131072/0xe0000, which does
 * not parse back). nw_src and nw_dst are arp_spa and arp_tpa under arp,
 * as in OVS. */
static void
test_families(void **state)
{
    (void)state;
    struct sp_flow_spec spec;

    assert_error("mpls,ipv6_src=2008::/3", 6,
                 "ipv6_src: needs dl_type ipv6 (0x86dd), not 0x8847");
    assert_error("ip,ipv6_dst=::1", 4, "ipv6_dst: needs dl_type ipv6");
    assert_error("arp,ipv6_src=2008::/3", 5, "ipv6_src: needs dl_type ipv6");
    assert_error("ipv6_src=::1,dl_type=0x0800/0xff00", 1,
                 "ipv6_src: needs an exact dl_type, ipv6 (0x86dd)");
    assert_error("ipv6,nw_src=10.0.0.1", 6,
                 "nw_src: needs dl_type ip (0x0800), arp (0x0806) or "
                 "rarp (0x8035), not 0x86dd");
    assert_error("mpls,nw_dst=10.0.0.1", 6, "nw_dst: needs dl_type ip");
    assert_error("ip,arp_spa=10.0.0.1", 4,
                 "arp_spa: needs dl_type arp (0x0806) or rarp (0x8035), "
                 "not 0x0800");
    assert_error("mpls,arp_op=1", 6, "arp_op: needs dl_type arp");
    assert_error("ipv6,arp_tha=00:00:00:00:00:01", 6,
                 "arp_tha: needs dl_type arp");
    /* The first field of the family is the one blamed. */
    assert_error("ip,tcp,arp_tpa=10.0.0.1,arp_spa=10.0.0.2", 8,
                 "arp_tpa: needs dl_type arp");
    /* Its prerequisite may come after it, as any field's. */
    parse_ok("ipv6_src=2001:db8::/32,ipv6", &spec);
    parse_ok("nw_src=10.0.0.1,arp", &spec);
    assert_int_equal(spec.match.key.dl_type, htons(0x0806));
    parse_ok("mpls_label=5,mplsm", &spec);
}

/* Each text parses and prints back the same. */
static void
assert_read_back(const char *const *texts, size_t n)
{
    struct sp_flow_spec spec;
    char text[256];

    for (size_t i = 0; i < n; i++) {
        parse_ok(texts[i], &spec);
        sp_flow_format(&spec.match.key, &spec.match.mask, text, sizeof text);
        assert_string_equal(text, texts[i]);
    }
}

/* The fields of MPLS (the top label stack entry) and RARP, and their
 * text read back: OVS's names and order. */
static void
test_mpls_rarp(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "mpls,mpls_label=5,mpls_tc=3,mpls_ttl=7,mpls_bos=1",
        "mplsm,mpls_ttl=64",
        "rarp,arp_op=3,arp_spa=10.0.0.1,arp_tha=00:00:00:00:00:01",
    };
    struct sp_flow_spec spec;

    parse_ok(texts[0], &spec);
    assert_int_equal(spec.match.key.mpls_lse,
                     htonl(5 << 12 | 3 << 9 | 1 << 8 | 7));
    assert_int_equal(spec.match.mask.mpls_lse, UINT32_MAX);
    assert_read_back(texts, sizeof texts / sizeof *texts);
    assert_error("mpls,mpls_label=0x100000", 6, "from 0 to 1048575");
    assert_error("mpls,mpls_tc=8", 6, "from 0 to 7");
    assert_error("mpls_label=5", 1,
                 "mpls_label: needs an exact dl_type, mpls (0x8847)");
    assert_error("ip,mpls_ttl=5", 4, "mpls_ttl: needs dl_type mpls");
    assert_error("ipv6,mpls_label=5", 6, "mpls_label: needs dl_type mpls");
    assert_error("rarp,nw_ttl=3", 6, "nw_ttl: needs dl_type ip or ipv6");
}

/* ICMP's type and code (and IGMP's) are a byte each: a larger value is
 * refused, and a mask of either byte prints back as written. */
static void
test_type_code(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "icmp,icmp_type=8/0xff,icmp_code=0/0xff00",
        "icmp6,icmp_type=135,icmp_code=3/0xf",
        "ip,nw_proto=2,tp_src=17,tp_dst=255",
    };

    assert_read_back(texts, sizeof texts / sizeof *texts);
    assert_error("priority=5,icmp,tp_dst=2222", 17,
                 "icmp_code: 2222 is more than 255");
    assert_error("icmp,tp_src=0x100/0x100", 6,
                 "icmp_type: 256 is more than 255");
    assert_error("ip,nw_proto=2,tp_dst=256", 15,
                 "tp_dst: 256 is more than 255");
    assert_error("ipv6,nw_proto=1,tp_src=300", 17,
                 "tp_src: 300 is more than 255");
}

/* The inner VLAN tag shares tcp_flags and ipv6_label with them, and
 * neither field sees it. */
static void
test_vlan_tci1(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "vlan_tci=0x1064,vlan_tci1=0x2fff",
        "vlan_tci1=0x1000/0x1000",
        "tcp6,vlan_tci1=0xf005,ipv6_label=0xfffff,tcp_flags=0xfff",
    };
    struct sp_flow_spec spec;

    parse_ok("dl_vlan1=2001,dl_vlan_pcp1=5", &spec);
    assert_int_equal(sp_key_vlan_tci1(&spec.match.key), 0xb7d1);
    assert_int_equal(sp_key_vlan_tci1(&spec.match.mask), 0xffff);
    parse_ok("dl_vlan1=0xffff", &spec);
    assert_int_equal(sp_key_vlan_tci1(&spec.match.mask), 0xffff);
    assert_int_equal(sp_key_vlan_tci1(&spec.match.key), 0);
    assert_read_back(texts, sizeof texts / sizeof *texts);
    assert_error("dl_vlan1=4096", 1, "invalid VLAN id 4096");
    assert_error("vlan_tci1=0x1000,dl_vlan1=5", 18, "contradicts");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_five_tuple),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_prerequisites),
        cmocka_unit_test(test_families),
        cmocka_unit_test(test_mpls_rarp),
        cmocka_unit_test(test_vlan_tci1),
        cmocka_unit_test(test_type_code),
    };

    return cmocka_run_group_tests_name("flow_parse", tests, NULL, NULL);
}
