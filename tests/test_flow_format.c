/* SPDX-License-Identifier: BSD-3-Clause */
/* sp_flow_format(): exact keys of every family, masked fields, and
 * snprintf-like truncation. */
#include <arpa/inet.h>
#include <string.h>

#include "simdpath/flow_format.h"
#include "testlib.h"

static void
assert_format(const struct sp_flow_key *key, const struct sp_flow_key *mask,
              const char *want)
{
    char buf[512];
    int len = sp_flow_format(key, mask, buf, sizeof buf);

    assert_string_equal(buf, want);
    assert_int_equal(len, (int)strlen(want));
}

static struct sp_flow_key
ipv4_tcp_key(void)
{
    struct sp_flow_key k;

    memset(&k, 0, sizeof k);
    memcpy(k.dl_dst, "\x00\x11\x22\x33\x44\x55", 6);
    memcpy(k.dl_src, "\x66\x77\x88\x99\xaa\xbb", 6);
    k.dl_type = htons(0x0800);
    k.vlan_tci = htons(0x1000 | 0xa000 | 100);
    k.in_port = 3;
    k.tcp_flags = htons(0x012);
    k.nw_proto = 6;
    k.nw_tos = 0xb9;
    k.nw_ttl = 64;
    memcpy(k.nw_src, "\x0a\x00\x00\x01", 4);
    memcpy(k.nw_dst, "\xc0\xa8\x01\x02", 4);
    k.tp_src = htons(1234);
    k.tp_dst = htons(80);
    return k;
}

static void
test_exact(void **state)
{
    (void)state;
    struct sp_flow_key k = ipv4_tcp_key();

    /* A tagged packet's key has the inner tag, none here (as OVS). */
    assert_format(&k, NULL,
                  "tcp,in_port=3,dl_src=66:77:88:99:aa:bb,"
                  "dl_dst=00:11:22:33:44:55,vlan_tci=0xb064,vlan_tci1=0x0000,"
                  "nw_src=10.0.0.1,nw_dst=192.168.1.2,nw_tos=184,nw_ecn=1,"
                  "nw_ttl=64,ip_frag=no,tp_src=1234,tp_dst=80,"
                  "tcp_flags=0x012");
    /* A later fragment has no L4 fields. */
    k.nw_frag = SP_FRAG_ANY | SP_FRAG_LATER;
    k.tp_src = k.tp_dst = k.tcp_flags = 0;
    k.nw_proto = 17;
    sp_key_set_vlan_tci1(&k, 0x1005);
    assert_format(&k, NULL,
                  "udp,in_port=3,dl_src=66:77:88:99:aa:bb,"
                  "dl_dst=00:11:22:33:44:55,vlan_tci=0xb064,vlan_tci1=0x1005,"
                  "nw_src=10.0.0.1,nw_dst=192.168.1.2,nw_tos=184,nw_ecn=1,"
                  "nw_ttl=64,ip_frag=later");
}

static void
test_ipv6_arp_other(void **state)
{
    (void)state;
    struct sp_flow_key k;

    memset(&k, 0, sizeof k);
    k.dl_type = htons(0x86dd);
    k.nw_proto = 58;
    k.nw_ttl = 255;
    k.nw_src[0] = 0x20;
    k.nw_src[1] = 0x01;
    k.nw_src[15] = 1;
    k.nw_dst[0] = 0xff;
    k.nw_dst[1] = 0x02;
    k.nw_dst[15] = 1;
    k.ipv6_label = htonl(0x12345);
    k.tp_src = htons(135);
    assert_format(&k, NULL,
                  "icmp6,in_port=0,dl_src=00:00:00:00:00:00,"
                  "dl_dst=00:00:00:00:00:00,vlan_tci=0x0000,ipv6_src=2001::1,"
                  "ipv6_dst=ff02::1,ipv6_label=0x12345,nw_tos=0,nw_ecn=0,"
                  "nw_ttl=255,ip_frag=no,icmp_type=135,icmp_code=0");
    memset(&k, 0, sizeof k);
    k.dl_type = htons(0x0806);
    k.nw_proto = 2;
    memcpy(k.nw_src, "\x0a\x00\x00\x01\xa0\xa1\xa2\xa3\xa4\xa5", 10);
    assert_format(&k, NULL,
                  "arp,in_port=0,dl_src=00:00:00:00:00:00,"
                  "dl_dst=00:00:00:00:00:00,vlan_tci=0x0000,arp_op=2,"
                  "arp_spa=10.0.0.1,arp_tpa=0.0.0.0,"
                  "arp_sha=a0:a1:a2:a3:a4:a5,arp_tha=00:00:00:00:00:00");
    memset(&k, 0, sizeof k);
    k.dl_type = htons(0x88cc);
    assert_format(&k, NULL,
                  "in_port=0,dl_src=00:00:00:00:00:00,"
                  "dl_dst=00:00:00:00:00:00,dl_type=0x88cc,vlan_tci=0x0000");
}

static void
test_masked(void **state)
{
    (void)state;
    struct sp_flow_key k = ipv4_tcp_key();
    struct sp_flow_key m;

    memset(&m, 0, sizeof m);
    m.dl_type = 0xffff;
    memcpy(m.nw_dst, "\xff\xff\xff\x00", 4);
    memcpy(m.nw_src, "\xff\x00\xff\x00", 4);
    m.tp_dst = htons(0xff00);
    m.nw_frag = SP_FRAG_LATER;
    m.vlan_tci = htons(0x1fff);
    assert_format(&k, &m,
                  "ip,vlan_tci=0xb064/0x1fff,nw_src=10.0.0.1/255.0.255.0,"
                  "nw_dst=192.168.1.2/24,ip_frag=not_later,"
                  "tp_dst=80/0xff00");
    m.nw_proto = 0xff;
    assert_format(&k, &m,
                  "tcp,vlan_tci=0xb064/0x1fff,nw_src=10.0.0.1/255.0.255.0,"
                  "nw_dst=192.168.1.2/24,ip_frag=not_later,"
                  "tp_dst=80/0xff00");
}

static void
test_truncation(void **state)
{
    (void)state;
    struct sp_flow_key k = ipv4_tcp_key();
    char full[512], small[16];
    int len = sp_flow_format(&k, NULL, full, sizeof full);

    assert_int_equal(sp_flow_format(&k, NULL, small, sizeof small), len);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, full, sizeof small - 1);
    assert_int_equal(sp_flow_format(&k, NULL, NULL, 0), len);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_ipv6_arp_other),
        cmocka_unit_test(test_masked),
        cmocka_unit_test(test_truncation),
    };

    return cmocka_run_group_tests_name("flow_format", tests, NULL, NULL);
}
