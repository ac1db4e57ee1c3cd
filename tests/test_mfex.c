/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract: known answers for the scalar parser, then every variant
 * against scalar on generated packets of every shape, each one truncated at
 * every length, with bogus lengths, every IHL and TCP data offset, random
 * byte flips, and random bytes. And the SIMD profiles' tables against the
 * scalar parser, so that a wrong table cannot hide behind the scalar
 * fallback.
 */
#include <stdio.h>
#include <string.h>

#include "generic/mfex_profile.h" /* the SIMD parsers' shared tables */
#include "mfexcheck.h"
#include "simdpath/flow_format.h"
#include "simdpath/flow_parse.h"
#include "simdpath/mfex.h"
#include "simdpath/pktgen.h"

#define ROUNDS_PER_SHAPE 1000

/* Parses hex digits (spaces ignored) into out; returns the byte count. */
static uint32_t
from_hex(const char *text, uint8_t *out)
{
    uint32_t n = 0;
    unsigned v;

    while (*text) {
        if (*text == ' ') {
            text++;
            continue;
        }
        assert_int_equal(sscanf(text, "%2x", &v), 1);
        out[n++] = (uint8_t)v;
        text += 2;
    }
    return n;
}

/* Scalar on one packet given in hex. */
static struct sp_flow_key
parse_hex(const char *text, struct sp_packet *pkt)
{
    static uint8_t bytes[256];
    struct sp_packet *ptr = pkt;
    struct sp_flow_key key;

    *pkt = (struct sp_packet){.data = bytes, .in_port = 7};
    pkt->len = from_hex(text, bytes);
    sp_variant_get(0)->kernels->mfex(&ptr, 1, &key);
    return key;
}

static void
assert_bytes(const void *got, const char *want_hex)
{
    uint8_t want[64];
    uint32_t n = from_hex(want_hex, want);

    assert_memory_equal(got, want, n);
}

static void
assert_meta(const struct sp_packet *pkt, uint16_t status, uint16_t l3_ofs,
            uint16_t l4_ofs)
{
    assert_int_equal(pkt->status, status);
    assert_int_equal(pkt->l3_ofs, l3_ofs);
    assert_int_equal(pkt->l4_ofs, l4_ofs);
}

#define ETH_UNTAGGED "001122334455 66778899aabb"
#define IPV4_UDP_HDR                                   \
    "4500 0024 1234 0000 40 11 0000 0a000001 c0a80102" \
    " 04d2 0035 0010 0000 deadbeefcafef00d"

#define IPV6_ADDRS \
    " 00000000000000000000000000000001 00000000000000000000000000000002"

/* The key as parse-pcap prints it reads back as a rule matching it. */
static void
assert_reads_back(const struct sp_flow_key *key)
{
    char text[1024];
    struct sp_flow_spec spec;
    struct sp_err err;

    sp_flow_format(key, NULL, text, sizeof text);
    if (sp_flow_parse_match(text, &spec, &err) ||
        sp_match_validate(&spec.match, &err)) {
        fail_msg("'%s' does not read back: %s", text, err.msg);
    }
    assert_true(sp_match_covers(&spec.match, key));
}

static void
test_known_ipv4_udp(void **state)
{
    (void)state;
    struct sp_packet pkt;
    /* Padded to 60 bytes: the padding is not UDP payload. */
    struct sp_flow_key key =
        parse_hex(ETH_UNTAGGED "0800" IPV4_UDP_HDR "000000000000", &pkt);

    assert_meta(&pkt, SP_MFEX_OK, 14, 34);
    assert_bytes(key.bytes,
                 "001122334455 66778899aabb 0800 0000 0700 0000 11 00 40 00"
                 " 0a000001 000000000000000000000000"
                 " c0a80102 000000000000000000000000"
                 " 00000000 04d2 0035");
}

static void
test_known_vlan_tcp(void **state)
{
    (void)state;
    struct sp_packet pkt;
    /* PCP 7, VID 100; TCP flags SYN+ACK with the NS bit (0x112). */
    struct sp_flow_key key = parse_hex(
        ETH_UNTAGGED "8100 e064 0800"
                     "45b8 0028 0000 4000 3f 06 0000 0a000001 0a000002"
                     " 0050 c000 00000001 00000000 5112 ffff 0000 0000",
        &pkt);

    assert_meta(&pkt, SP_MFEX_OK, 18, 38);
    assert_bytes(&key.dl_type, "0800 f064 0700 0112 06 b8 3f 00");
    assert_bytes(&key.tp_src, "0050 c000");
}

static void
test_known_qinq(void **state)
{
    (void)state;
    struct sp_packet pkt;
    struct sp_flow_key key =
        parse_hex(ETH_UNTAGGED "88a8 0005 8100 0007 0800" IPV4_UDP_HDR, &pkt);

    assert_meta(&pkt, SP_MFEX_OK, 22, 42);
    assert_bytes(&key.dl_type, "0800 1005"); /* the outer tag */
    assert_int_equal(sp_key_vlan_tci1(&key), 0x1007);
    assert_bytes(&key.tp_src, "04d2 0035");
    /* The inner tag beside the TCP flags and IPv6 label it shares bits
     * with: PCP 7, VID 0xabc. */
    key = parse_hex(ETH_UNTAGGED "8100 0005 8100 eabc 86dd"
                                 " 6abc def1 0014 06 40" IPV6_ADDRS
                                 " 0050 c000 00000001 00000000 5fff ffff"
                                 " 0000 0000",
                    &pkt);
    assert_int_equal(pkt.status, SP_MFEX_OK);
    assert_int_equal(sp_key_vlan_tci1(&key), 0xfabc);
    assert_bytes(&key.tcp_flags, "ffff");
    assert_bytes(&key.ipv6_label, "abccdef1");
    assert_reads_back(&key);
}

static void
test_known_fragments(void **state)
{
    (void)state;
    struct sp_packet pkt;
    struct sp_flow_key key;

    /* Later fragment: no L4 fields, no L4 offset. */
    key = parse_hex(ETH_UNTAGGED "0800"
                                 "4500 0024 1234 0010 40 11 0000 0a000001"
                                 " c0a80102 04d2 0035 0010 0000 deadbeef"
                                 "cafef00d",
                    &pkt);
    assert_meta(&pkt, SP_MFEX_OK, 14, SP_OFS_NONE);
    assert_int_equal(key.nw_frag, SP_FRAG_ANY | SP_FRAG_LATER);
    assert_int_equal(key.tp_src, 0);
    /* First fragment (MF): ports parsed. */
    key = parse_hex(ETH_UNTAGGED "0800"
                                 "4500 0024 1234 2000 40 11 0000 0a000001"
                                 " c0a80102 04d2 0035 0010 0000 deadbeef"
                                 "cafef00d",
                    &pkt);
    assert_meta(&pkt, SP_MFEX_OK, 14, 34);
    assert_int_equal(key.nw_frag, SP_FRAG_ANY);
    assert_bytes(&key.tp_src, "04d2 0035");
}

static void
test_known_ipv6_chain(void **state)
{
    (void)state;
    struct sp_packet pkt;
    /* TC 0xab, label 0xcdef1; hop-by-hop (8 bytes), fragment (offset 0,
     * more), UDP. */
    struct sp_flow_key key =
        parse_hex(ETH_UNTAGGED "86dd"
                               "6abc def1 0018 00 40"
                               " 20010db8000000000000000000000001"
                               " 20010db8000000000000000000000002"
                               " 2c00 0000 0000 0000"
                               " 1100 0001 12345678"
                               " 0035 04d2 0008 0000",
                  &pkt);

    assert_meta(&pkt, SP_MFEX_OK, 14, 14 + 40 + 16);
    assert_bytes(&key.nw_proto, "11 ab 40 01");
    assert_bytes(&key.ipv6_label, "000cdef1 0035 04d2");
    assert_bytes(key.nw_dst, "20010db8000000000000000000000002");
}

static void
test_known_arp(void **state)
{
    (void)state;
    struct sp_packet pkt;
    struct sp_flow_key key = parse_hex(
        ETH_UNTAGGED "0806 0001 0800 06 04 0002 a0a1a2a3a4a5 0a000001"
                     " b0b1b2b3b4b5 0a000002",
        &pkt);

    assert_meta(&pkt, SP_MFEX_OK, SP_OFS_NONE, SP_OFS_NONE);
    assert_bytes(&key.nw_proto, "02");
    assert_bytes(key.nw_src, "0a000001 a0a1a2a3a4a5");
    assert_bytes(key.nw_dst, "0a000002 b0b1b2b3b4b5");
}

static void
test_known_errors(void **state)
{
    (void)state;
    static const struct {
        const char *hex;
        uint16_t status, l3_ofs, l4_ofs;
    } cases[] = {
        {"0011223344", SP_MFEX_L2_TRUNCATED, SP_OFS_NONE, SP_OFS_NONE},
        {ETH_UNTAGGED "8100 00", SP_MFEX_L2_TRUNCATED, SP_OFS_NONE,
         SP_OFS_NONE},
        {ETH_UNTAGGED "8847 00001140", SP_MFEX_L2_MPLS, SP_OFS_NONE,
         SP_OFS_NONE},
        {ETH_UNTAGGED "0806 0001 0800 0604", SP_MFEX_ARP_TRUNCATED,
         SP_OFS_NONE, SP_OFS_NONE},
        {ETH_UNTAGGED "0800 4500", SP_MFEX_L3_TRUNCATED, 14, SP_OFS_NONE},
        {ETH_UNTAGGED "0800 6500 0014 0000 0000 4011 0000 0a000001 0a000002",
         SP_MFEX_L3_BAD_VERSION, 14, SP_OFS_NONE},
        {ETH_UNTAGGED "0800 4400 0014 0000 0000 4011 0000 0a000001 0a000002",
         SP_MFEX_L3_BAD_HLEN, 14, SP_OFS_NONE},
        {ETH_UNTAGGED "0800 4500 0010 0000 0000 4011 0000 0a000001 0a000002",
         SP_MFEX_L3_BAD_LEN, 14, SP_OFS_NONE},
        {ETH_UNTAGGED "0800 4500 0100 0000 0000 4011 0000 0a000001 0a000002",
         SP_MFEX_L3_TRUNCATED, 14, SP_OFS_NONE},
        /* TCP cut after 4 bytes: l4_ofs set, status says truncated. */
        {ETH_UNTAGGED "0800 4500 0018 0000 0000 4006 0000 0a000001 0a000002"
                      " 00500050",
         SP_MFEX_L4_TRUNCATED, 14, 34},
        {ETH_UNTAGGED "0800 4500 0028 0000 0000 4006 0000 0a000001 0a000002"
                      " 0050 0050 00000000 00000000 4002 0000 0000 0000",
         SP_MFEX_L4_BAD_HLEN, 14, 34},
        {ETH_UNTAGGED "0800 4500 0028 0000 0000 4006 0000 0a000001 0a000002"
                      " 0050 0050 00000000 00000000 6002 0000 0000 0000",
         SP_MFEX_L4_TRUNCATED, 14, 34},
        {ETH_UNTAGGED "86dd 6000 0000 0004 00 40"
                      " 00000000000000000000000000000001"
                      " 00000000000000000000000000000002 11000000",
         SP_MFEX_EXT_TRUNCATED, 14, SP_OFS_NONE},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sp_packet pkt;
        struct sp_flow_key key = parse_hex(cases[i].hex, &pkt);

        if (pkt.status != cases[i].status || pkt.l3_ofs != cases[i].l3_ofs ||
            pkt.l4_ofs != cases[i].l4_ofs) {
            fail_msg("case %zu: status %s l3 %u l4 %u, want %s %u %u", i,
                     sp_mfex_status_name(pkt.status), pkt.l3_ofs, pkt.l4_ofs,
                     sp_mfex_status_name(cases[i].status), cases[i].l3_ofs,
                     cases[i].l4_ofs);
        }
        assert_int_equal(key.in_port, 7);
    }
}

/* OVS's meaning (lib/flow.c), where it differs from taking every field
 * a header has: tests/ovs_parity.py checks the same against ovs-ofctl. */
static void
test_known_ovs(void **state)
{
    (void)state;
    struct sp_packet pkt;
    struct sp_flow_key key;

    /* 802.3 with LLC but no SNAP: OpenFlow's "not an Ethernet type". */
    key = parse_hex(ETH_UNTAGGED "0026 424203 0000000000", &pkt);
    assert_bytes(&key.dl_type, "05ff");
    assert_reads_back(&key);
    /* SNAP: its type, and the IPv4 packet after it. */
    key = parse_hex(ETH_UNTAGGED "0028 aaaa03 000000 0800" IPV4_UDP_HDR, &pkt);
    assert_meta(&pkt, SP_MFEX_OK, 22, 42);
    assert_bytes(&key.dl_type, "0800");
    assert_bytes(&key.tp_src, "04d2 0035");
    /* A VLAN tag cut short: its TPID is the type. */
    key = parse_hex(ETH_UNTAGGED "8100 00", &pkt);
    assert_int_equal(pkt.status, SP_MFEX_L2_TRUNCATED);
    assert_bytes(&key.dl_type, "8100 0000");
    /* MPLS: the top label stack entry, whole. */
    key = parse_hex(ETH_UNTAGGED "8847 00064a40 00001140", &pkt);
    assert_int_equal(pkt.status, SP_MFEX_L2_MPLS);
    assert_bytes(&key.mpls_lse, "00064a40");
    assert_reads_back(&key);
    /* RARP as ARP. */
    key = parse_hex(ETH_UNTAGGED "8035 0001 0800 06 04 0003 a0a1a2a3a4a5"
                                 " 0a000001 b0b1b2b3b4b5 0a000002",
                    &pkt);
    assert_bytes(&key.nw_proto, "03");
    assert_bytes(key.nw_src, "0a000001 a0a1a2a3a4a5");
    assert_reads_back(&key);
    /* IPv4 total length past the frame: no L3 field at all. */
    key = parse_hex(ETH_UNTAGGED "0800 4500 0100 0000 0000 4011 0000"
                                 " 0a000001 0a000002",
                    &pkt);
    assert_int_equal(pkt.status, SP_MFEX_L3_TRUNCATED);
    assert_false(sp_any_set(key.bytes + 20, 44));
    /* IGMP type and code as tp_src, tp_dst. */
    key = parse_hex(ETH_UNTAGGED "0800 4500 001c 0000 0000 0102 0000"
                                 " 0a000001 e0000016 1600 0000 e0010203",
                    &pkt);
    assert_bytes(&key.tp_src, "0016 0000");
    assert_reads_back(&key);
    /* ICMP shorter than 8 bytes: no type and code. */
    key = parse_hex(ETH_UNTAGGED "0800 4500 0018 0000 0000 4001 0000"
                                 " 0a000001 0a000002 0800 0000",
                    &pkt);
    assert_int_equal(pkt.status, SP_MFEX_L4_TRUNCATED);
    assert_bytes(&key.tp_src, "0000 0000");
    /* TCP with a data offset past the payload: no ports, no flags. */
    key = parse_hex(ETH_UNTAGGED "0800 4500 0028 0000 0000 4006 0000"
                                 " 0a000001 0a000002 0050 0050 00000000"
                                 " 00000000 6002 0000 0000 0000",
                    &pkt);
    assert_int_equal(pkt.status, SP_MFEX_L4_TRUNCATED);
    assert_bytes(&key.tcp_flags, "0000");
    assert_bytes(&key.tp_src, "0000 0000");
    /* IPv6: AH skipped (length in 4-byte words), OSPF after it. */
    key = parse_hex(ETH_UNTAGGED "86dd 6000 0000 0018 33 40" IPV6_ADDRS
                                 " 5904 0000 00000000 00000000 00000000"
                                 " 00000000 00000000",
                    &pkt);
    assert_int_equal(pkt.status, SP_MFEX_OK);
    assert_int_equal(key.nw_proto, 89);
    /* ICMP over IPv6: type and code as OVS has them, which read back. */
    key = parse_hex(ETH_UNTAGGED "86dd 6000 0000 0008 01 40" IPV6_ADDRS
                                 " 0800 0000 00070001",
                    &pkt);
    assert_bytes(&key.tp_src, "0008 0000");
    assert_reads_back(&key);
    /* A later fragment has protocol "fragment"; an atomic fragment
     * (offset 0, no MF) is no fragment. */
    static const char *const frag_words[2][3] = {
        {"0320", "2c 00 40 03", "0000 0000"},
        {"0000", "11 00 40 00", "0035 04d2"},
    };
    for (unsigned i = 0; i < 2; i++) {
        char hex[256];

        snprintf(hex, sizeof hex,
                 "%s86dd 6000 0000 0010 2c 40 %032x%032x"
                 " 1100 %s 00000001 0035 04d2 0008 0000",
                 ETH_UNTAGGED, 0, 0, frag_words[i][0]);
        key = parse_hex(hex, &pkt);
        assert_bytes(&key.nw_proto, frag_words[i][1]);
        assert_bytes(&key.tp_src, frag_words[i][2]);
    }
    /* An extension header cut short: the addresses stay, nothing else. */
    key = parse_hex(
        ETH_UNTAGGED "86dd 6abc def1 0004 00 40" IPV6_ADDRS " 11000000", &pkt);
    assert_int_equal(pkt.status, SP_MFEX_EXT_TRUNCATED);
    assert_bytes(&key.nw_proto, "00 00 00 00");
    assert_bytes(key.nw_dst, "00000000000000000000000000000002");
    assert_bytes(&key.ipv6_label, "00000000");
}

/* Frames up to libpcap's largest snapshot length, more than 64 KiB past
 * their IP packet: every variant as scalar. */
static void
test_huge_frame(void **state)
{
    (void)state;
    static uint8_t frame[SP_MFEXCHECK_LEN_MAX];

    sp_mfexcheck_init();
    for (unsigned tagged = 0; tagged < 2; tagged++) {
        uint32_t n =
            from_hex(tagged ? ETH_UNTAGGED "8100 0005 0800" IPV4_UDP_HDR
                            : ETH_UNTAGGED "0800" IPV4_UDP_HDR,
                     frame);

        memset(frame + n, 0xee, sizeof frame - n);
        sp_mfexcheck_add(frame, sizeof frame);
        sp_mfexcheck_add(frame, n + UINT16_MAX);
        sp_mfexcheck_add(frame, n + UINT16_MAX + 1);
        sp_mfexcheck_flush();
    }
    sp_mfexcheck_fini();
}

/* Offsets of the fields mutations aim at, found by the scalar parser. */
struct layout {
    uint16_t l3, l4;
    bool ipv6, tcp;
};

static struct layout
layout_of(uint8_t *bytes, uint32_t len)
{
    struct sp_packet pkt = {.data = bytes, .len = len};
    struct sp_packet *ptr = &pkt;
    struct sp_flow_key key;

    sp_variant_get(0)->kernels->mfex(&ptr, 1, &key);
    return (struct layout){pkt.l3_ofs, pkt.l4_ofs,
                           key.dl_type == 0xdd86 /* network order */,
                           key.nw_proto == 6};
}

/* The packet, then every truncation, every IHL / data offset, bogus
 * lengths and byte flips of it. */
static void
check_mutations(const uint8_t *orig, uint32_t len, struct sp_random *rng)
{
    uint8_t bytes[SP_PKTGEN_MAX];
    struct layout at;

    memcpy(bytes, orig, len);
    at = layout_of(bytes, len);
    for (uint32_t cut = 0; cut <= len; cut++) {
        sp_mfexcheck_add(bytes, cut);
    }
    if (at.l3 != SP_OFS_NONE && at.l3 + 8u < len) {
        for (unsigned i = 0; i < 16; i++) {
            memcpy(bytes, orig, len);
            if (at.ipv6) {
                bytes[at.l3] = (uint8_t)(i << 4 | (bytes[at.l3] & 0x0f));
            } else {
                bytes[at.l3] = (uint8_t)(0x40 | i);
            }
            sp_mfexcheck_add(bytes, len);
        }
        for (unsigned i = 0; i < 16; i++) {
            uint32_t field = at.l3 + (at.ipv6 ? 4 : 2);
            uint16_t bogus = (uint16_t)sp_random_next(rng);

            memcpy(bytes, orig, len);
            if (i < 4) { /* near the real length */
                bogus = (uint16_t)(((bytes[field] << 8) | bytes[field + 1]) +
                                   (i & 1 ? 1 : -1) * (int)(1 + i / 2));
            }
            bytes[field] = (uint8_t)(bogus >> 8);
            bytes[field + 1] = (uint8_t)bogus;
            sp_mfexcheck_add(bytes, len);
        }
    }
    if (at.tcp && at.l4 != SP_OFS_NONE && at.l4 + 13u < len) {
        for (unsigned i = 0; i < 16; i++) {
            memcpy(bytes, orig, len);
            bytes[at.l4 + 12] = (uint8_t)(i << 4 | (bytes[at.l4 + 12] & 15));
            sp_mfexcheck_add(bytes, len);
        }
    }
    for (unsigned i = 0; i < 16; i++) {
        memcpy(bytes, orig, len);
        for (unsigned flips = 1 + sp_random_below(rng, 3); flips; flips--) {
            bytes[sp_random_below(rng, len)] ^=
                (uint8_t)(1u << sp_random_below(rng, 8));
        }
        sp_mfexcheck_add(bytes, len);
    }
}

static void
test_generated(void **state)
{
    (void)state;
    struct sp_random rng = {42};
    uint8_t bytes[SP_PKTGEN_MAX];

    sp_mfexcheck_init();
    for (unsigned round = 0; round < ROUNDS_PER_SHAPE; round++) {
        for (unsigned s = 0; s < SP_PKTGEN_SHAPE_COUNT; s++) {
            uint32_t len = (uint32_t)sp_pktgen(s, &rng, bytes);

            sp_mfexcheck_add(bytes, len);
            if (round < ROUNDS_PER_SHAPE / 2) {
                check_mutations(bytes, len, &rng);
            }
        }
    }
    sp_mfexcheck_flush();
    sp_mfexcheck_fini();
    printf("mfex: %llu generated and mutated packets, every variant\n",
           (unsigned long long)sp_mfexcheck_count());
}

/* The key the profile of 'shape' describes, built byte by byte from its
 * tables as every SIMD parser builds it with its own instructions. */
static void
profile_key(unsigned shape, const struct sp_packet *pkt,
            struct sp_flow_key *key)
{
    const struct sp_mfex_profile *prof = &sp_mfex_profiles[shape];

    for (unsigned j = 0; j < 64; j++) {
        uint8_t b =
            prof->perm[j] == SP_MFEX_PERM_ZERO ? 0 : pkt->data[prof->perm[j]];

        key->bytes[j] = (uint8_t)((b & prof->keep[j]) | prof->set[j]);
    }
    key->in_port = pkt->in_port;
    if (shape & SP_MFEX_SHAPE_IPV6) {
        key->nw_tos = sp_mfex_ipv6_tclass(pkt->data + SP_MFEX_L3_OFS(shape));
    }
}

/* Packets of the nine profile shapes (pktgen's eight and its IPv4 later
 * fragments): the guess names their shape, its probe and length checks
 * take them, and the key from the profile's tables and the metadata from
 * its shape are the scalar parser's. */
static void
test_profiles_match_scalar(void **state)
{
    (void)state;
    struct sp_random rng = {11};
    uint8_t bytes[SP_PKTGEN_MAX];
    unsigned seen = 0;

    for (unsigned round = 0; round < ROUNDS_PER_SHAPE; round++) {
        for (unsigned g = 0; g <= SP_PKTGEN_PROFILE_SHAPES; g++) {
            struct sp_packet pkt = {
                .data = bytes,
                .len = (uint32_t)sp_pktgen(g < SP_PKTGEN_PROFILE_SHAPES
                                               ? g
                                               : SP_PKTGEN_IPV4_FRAG_LATER,
                                           &rng, bytes),
                .in_port = (uint16_t)round,
            };
            struct sp_packet *ptr = &pkt;
            struct sp_flow_key want, got;
            unsigned shape = sp_mfex_profile_guess(bytes);

            sp_variant_get(0)->kernels->mfex(&ptr, 1, &want);
            assert_int_equal(pkt.status, SP_MFEX_OK);
            assert_true(shape < SP_MFEX_PROFILES);
            seen |= 1u << shape;
            assert_true(pkt.len >= SP_MFEX_LEN(shape));
            for (unsigned i = 0; i < SP_MFEX_PROBE_LEN; i++) {
                const struct sp_mfex_profile *prof = &sp_mfex_profiles[shape];

                assert_int_equal(bytes[i] & prof->probe_mask[i],
                                 prof->probe_value[i]);
            }
            assert_true(sp_mfex_profile_lengths_ok(shape, bytes, pkt.len));
            assert_int_equal(pkt.l3_ofs, SP_MFEX_L3_OFS(shape));
            assert_int_equal(pkt.l4_ofs, shape & SP_MFEX_SHAPE_LATER_FRAG
                                             ? SP_OFS_NONE
                                             : SP_MFEX_L4_OFS(shape));
            profile_key(shape, &pkt, &got);
            assert_memory_equal(&got, &want, sizeof want);
        }
    }
    assert_int_equal(seen, (1u << SP_MFEX_PROFILES) - 1);
}

/* What the SIMD parsers rely on in the tables: every byte a permute reads
 * lies below SP_MFEX_LEN; AVX2's windows hold it and end within
 * SP_MFEX_LEN; AVX-512 finds all but IPv6's TCP flags in the first 64
 * bytes, and the traffic class's two bytes in key bytes 16 and 23; NEON
 * probes bytes 12-27 only, applies keep only to key lane 1 of TCP and IPv6
 * shapes and lane 3 of IPv6 ones (elsewhere it is 0 exactly where the
 * permute reads nothing, 0xff where it does) and set only to byte 14 of
 * VLAN shapes and to a later fragment's nw_frag. */
static void
test_profile_layout(void **state)
{
    (void)state;

    for (unsigned s = 0; s < SP_MFEX_PROFILES; s++) {
        const struct sp_mfex_profile *prof = &sp_mfex_profiles[s];
        const unsigned l4 = SP_MFEX_L4_OFS(s);

        for (unsigned q = 0; q < 4; q++) {
            assert_true(SP_MFEX_WIN_A(s, q) + 16 <= SP_MFEX_LEN(s));
            assert_true(SP_MFEX_WIN_B(s, q) + 16 <= SP_MFEX_LEN(s));
        }
        for (unsigned j = 0; j < SP_MFEX_PROBE_LEN; j++) {
            if (j < 12 || j >= 28) {
                assert_int_equal(prof->probe_mask[j], 0);
            }
        }
        for (unsigned j = 0; j < 64; j++) {
            unsigned x = prof->perm[j], q = j / 16;
            bool in_a = x - SP_MFEX_WIN_A(s, q) < 16;
            bool in_b = x - SP_MFEX_WIN_B(s, q) < 16;
            bool flags =
                j == SP_KEY_OFS(tcp_flags) || j == SP_KEY_OFS(tcp_flags) + 1;
            bool keeps =
                (q == 1 && (s & (SP_MFEX_SHAPE_TCP | SP_MFEX_SHAPE_IPV6))) ||
                (q == 3 && (s & SP_MFEX_SHAPE_IPV6));

            if (!keeps) {
                assert_int_equal(prof->keep[j],
                                 x == SP_MFEX_PERM_ZERO ? 0 : 0xff);
            }
            assert_int_equal(prof->set[j],
                             j == 14 && (s & SP_MFEX_SHAPE_VLAN) ? 0x10
                             : j == SP_KEY_OFS(nw_frag) &&
                                     (s & SP_MFEX_SHAPE_LATER_FRAG)
                                 ? SP_FRAG_ANY | SP_FRAG_LATER
                                 : 0);

            if (x == SP_MFEX_PERM_ZERO) {
                assert_int_equal(prof->avx2_ctrl[0][j], 0x80);
                assert_int_equal(prof->avx2_ctrl[1][j], 0x80);
                continue;
            }
            assert_true(x < SP_MFEX_LEN(s));
            assert_true(in_a || (SP_MFEX_HAS_WIN_B(s, q / 2) && in_b));
            assert_int_equal(prof->avx2_ctrl[0][j],
                             in_a ? x - SP_MFEX_WIN_A(s, q) : 0x80);
            assert_int_equal(prof->avx2_ctrl[1][j],
                             in_b ? x - SP_MFEX_WIN_B(s, q) : 0x80);
            assert_true(x < 64 || (flags && l4 + 14 > 64));
        }
        if (s & SP_MFEX_SHAPE_IPV6) {
            assert_int_equal(prof->perm[16], SP_MFEX_L3_OFS(s));
            assert_int_equal(prof->perm[23], SP_MFEX_L3_OFS(s) + 1);
            assert_int_equal(prof->keep[16], 0);
            assert_int_equal(prof->keep[23], 0);
        }
    }
}

/* Random bytes, some behind a valid Ethernet type so the IP and L4
 * parsers see noise too. */
static void
test_random_bytes(void **state)
{
    (void)state;
    static const uint16_t types[] = {0x0800, 0x86dd, 0x8100, 0x88a8, 0x0806};
    struct sp_random rng = {9};
    uint8_t bytes[256];

    sp_mfexcheck_init();
    for (unsigned round = 0; round < 100000; round++) {
        uint32_t len = sp_random_below(&rng, sizeof bytes + 1);
        unsigned t = sp_random_below(&rng, 6);

        sp_random_fill(&rng, bytes, len);
        if (t < 5 && len >= 14) {
            bytes[12] = (uint8_t)(types[t] >> 8);
            bytes[13] = (uint8_t)types[t];
            if (len > 14 && t < 2) {
                bytes[14] = t ? 0x60 : 0x45;
            }
        }
        sp_mfexcheck_add(bytes, len);
    }
    sp_mfexcheck_flush();
    sp_mfexcheck_fini();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_ipv4_udp),
        cmocka_unit_test(test_known_vlan_tcp),
        cmocka_unit_test(test_known_qinq),
        cmocka_unit_test(test_known_fragments),
        cmocka_unit_test(test_known_ipv6_chain),
        cmocka_unit_test(test_known_arp),
        cmocka_unit_test(test_known_errors),
        cmocka_unit_test(test_known_ovs),
        cmocka_unit_test(test_huge_frame),
        cmocka_unit_test(test_profiles_match_scalar),
        cmocka_unit_test(test_profile_layout),
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_random_bytes),
    };

    return cmocka_run_group_tests_name("mfex", tests, NULL, NULL);
}
