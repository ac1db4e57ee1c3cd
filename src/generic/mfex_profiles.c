/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SIMD miniflow extract profiles (see src/generic/mfex_profile.h): static
 * data shared by every ISA's parser, so all of them handle exactly the same
 * shapes. Built with the scalar library, which every build has.
 */
#include "generic/mfex_profile.h"

#define Z SP_MFEX_PERM_ZERO

/* Permute tables are lists of packet offsets, one per key byte, written
 * through an element macro F(c, x), where c = 4 * shape + key lane (16
 * bytes each) and x is the packet offset: PERM gives x itself, CTRL_A and
 * CTRL_B its pshufb control within the lane's AVX2 window A or B (offset
 * within the window, or 0x80 to zero the byte), so every form comes from
 * one description. */
#define LANE(s, q) (4 * (s) + (q))
#define PERM(c, x) (x)
#define WIN_CTRL(start, x) \
    ((x) >= (start) && (x) < (start) + 16 ? (uint8_t)((x) - (start)) : 0x80)
#define CTRL_A(c, x) WIN_CTRL(SP_MFEX_WIN_A((c) / 4, (c) % 4), x)
#define CTRL_B(c, x) WIN_CTRL(SP_MFEX_WIN_B((c) / 4, (c) % 4), x)

#define SEQ2(F, c, a)  F(c, a), F(c, (a) + 1)
#define SEQ3(F, c, a)  F(c, a), F(c, (a) + 1), F(c, (a) + 2)
#define SEQ4(F, c, a)  SEQ2(F, c, a), SEQ2(F, c, (a) + 2)
#define SEQ8(F, c, a)  SEQ4(F, c, a), SEQ4(F, c, (a) + 4)
#define SEQ12(F, c, a) SEQ8(F, c, a), SEQ4(F, c, (a) + 8)
#define SEQ16(F, c, a) SEQ8(F, c, a), SEQ8(F, c, (a) + 8)
/* Two bytes from a, or none when cond is false. */
#define SEQ2_IF(F, c, cond, a) \
    F(c, (cond) ? (a) : Z), F(c, (cond) ? (a) + 1 : Z)
#define Z2(F, c)  F(c, Z), F(c, Z)
#define Z4(F, c)  Z2(F, c), Z2(F, c)
#define Z8(F, c)  Z4(F, c), Z4(F, c)
#define Z12(F, c) Z8(F, c), Z4(F, c)

#define VLAN(s) ((s)&SP_MFEX_SHAPE_VLAN)
#define TCP(s)  ((s)&SP_MFEX_SHAPE_TCP)
#define L3(s)   SP_MFEX_L3_OFS(s)
#define L4(s)   SP_MFEX_L4_OFS(s)

#define ON2   0xff, 0xff
#define ON3   0xff, 0xff, 0xff
#define ON4   ON2, ON2
#define ON12  ON4, ON4, ON4
#define ON16  ON4, ON4, ON4, ON4
#define OFF2  0, 0
#define OFF4  OFF2, OFF2
#define OFF12 OFF4, OFF4, OFF4

/* Key bytes 0-15: addresses, the type after the tag (at 12 or 16), and
 * the tag itself when there is one. */
#define PERM_L2(F, s)                                                \
    SEQ12(F, LANE(s, 0), 0), SEQ2(F, LANE(s, 0), VLAN(s) ? 16 : 12), \
        SEQ2_IF(F, LANE(s, 0), VLAN(s), 14)
#define KEEP_L2(vlan) ON12, ON2, (vlan) ? 0xff : 0, (vlan) ? 0xff : 0

/* 16-19: in_port (written after the permute), TCP flags (low 12 bits). */
#define PERM_PORT_FLAGS(F, s) \
    Z2(F, LANE(s, 1)), SEQ2_IF(F, LANE(s, 1), TCP(s), L4(s) + 12)
#define KEEP_PORT_FLAGS(tcp) OFF2, (tcp) ? 0x0f : 0, (tcp) ? 0xff : 0

/* A later fragment's key has no ports: LATER_FRAG(s) leaves them out. */
#define LATER_FRAG(s) ((s)&SP_MFEX_SHAPE_LATER_FRAG)
#define PERM_IPV4(F, s)                                                 \
    {                                                                   \
        PERM_L2(F, s), PERM_PORT_FLAGS(F, s), F(LANE(s, 1), L3(s) + 9), \
            F(LANE(s, 1), L3(s) + 1), F(LANE(s, 1), L3(s) + 8),         \
            F(LANE(s, 1), Z), SEQ4(F, LANE(s, 1), L3(s) + 12),          \
            Z4(F, LANE(s, 1)), Z8(F, LANE(s, 2)),                       \
            SEQ4(F, LANE(s, 2), L3(s) + 16), Z4(F, LANE(s, 2)),         \
            Z12(F, LANE(s, 3)),                                         \
            SEQ2_IF(F, LANE(s, 3), !LATER_FRAG(s), L4(s)),              \
            SEQ2_IF(F, LANE(s, 3), !LATER_FRAG(s), L4(s) + 2)           \
    }
/* ports: ON4, or OFF4 for a later fragment. */
#define KEEP_IPV4(vlan, tcp, ports)                                          \
    {                                                                        \
        KEEP_L2(vlan), KEEP_PORT_FLAGS(tcp), ON3, 0, ON4, OFF12, ON4, OFF12, \
            OFF4, ports                                                      \
    }

/* IPv6: the traffic class (key byte 21) straddles two packet bytes, b0 b1
 * at l3 and l3 + 1: no permute yields it. This one puts b0 in key byte 16
 * and b1 in byte 23, from where one avx512vbmi multishift takes it (see
 * src/avx512/mfex.c); keep zeroes both bytes (in_port is written after
 * the permute, nw_frag is 0) and keeps byte 21, where each ISA writes the
 * traffic class before keep and set or after. The flow label is 20 bits of
 * 3 bytes. */
#define PERM_IPV6(F, s)                                                       \
    {                                                                         \
        PERM_L2(F, s), F(LANE(s, 1), L3(s)), F(LANE(s, 1), Z),                \
            SEQ2_IF(F, LANE(s, 1), TCP(s), L4(s) + 12),                       \
            F(LANE(s, 1), L3(s) + 6), F(LANE(s, 1), Z),                       \
            F(LANE(s, 1), L3(s) + 7), F(LANE(s, 1), L3(s) + 1),               \
            SEQ8(F, LANE(s, 1), L3(s) + 8), SEQ16(F, LANE(s, 2), L3(s) + 16), \
            SEQ8(F, LANE(s, 3), L3(s) + 32), F(LANE(s, 3), Z),                \
            SEQ3(F, LANE(s, 3), L3(s) + 1), SEQ4(F, LANE(s, 3), L4(s))        \
    }
#define KEEP_IPV6(vlan, tcp)                                                  \
    {                                                                         \
        KEEP_L2(vlan), KEEP_PORT_FLAGS(tcp), 0xff, 0xff, 0xff, 0, ON16, ON16, \
            0, 0x0f, ON2, ON4                                                 \
    }

#define SET_L2(vlan)             \
    {                            \
        [14] = (vlan) ? 0x10 : 0 \
    }
/* nw_frag of a later fragment, as the scalar parser sets it whether MF is
 * set or not. */
#define SET_LATER_FRAG                                      \
    {                                                       \
        [SP_KEY_OFS(nw_frag)] = SP_FRAG_ANY | SP_FRAG_LATER \
    }

/* Probes (vlan is 0 or 1): the Ethernet type (behind one 802.1Q tag for VLAN
 * shapes), then IPv4 version 4 with IHL 5, neither MF nor a fragment offset,
 * and the protocol; or IPv6 version 6 and the next header (no extensions). */
#define PROBE_L2_MASK_0        [12] = 0xff, [13] = 0xff
#define PROBE_L2_MASK_1        PROBE_L2_MASK_0, [16] = 0xff, [17] = 0xff
#define PROBE_L2_VALUE_0(type) [12] = (type) >> 8, [13] = (type)&0xff
#define PROBE_L2_VALUE_1(type) \
    [12] = 0x81, [13] = 0x00, [16] = (type) >> 8, [17] = (type)&0xff

#define SHAPE(vlan, ipv6, tcp)                               \
    ((vlan)*SP_MFEX_SHAPE_VLAN + (ipv6)*SP_MFEX_SHAPE_IPV6 + \
     (tcp)*SP_MFEX_SHAPE_TCP)

#define IPV4_PROFILE(vlan, is_tcp)                                           \
    {                                                                        \
        .probe_mask = {PROBE_L2_MASK_##vlan, [L3(SHAPE(vlan, 0, 0))] = 0xff, \
                       [L3(SHAPE(vlan, 0, 0)) + 6] = 0x3f,                   \
                       [L3(SHAPE(vlan, 0, 0)) + 7] = 0xff,                   \
                       [L3(SHAPE(vlan, 0, 0)) + 9] = 0xff},                  \
        .probe_value = {PROBE_L2_VALUE_##vlan(0x0800),                       \
                        [L3(SHAPE(vlan, 0, 0))] = 0x45,                      \
                        [L3(SHAPE(vlan, 0, 0)) + 9] = (is_tcp) ? 6 : 17},    \
        .perm = PERM_IPV4(PERM, SHAPE(vlan, 0, is_tcp)),                     \
        .avx2_ctrl = {PERM_IPV4(CTRL_A, SHAPE(vlan, 0, is_tcp)),             \
                      PERM_IPV4(CTRL_B, SHAPE(vlan, 0, is_tcp))},            \
        .keep = KEEP_IPV4(vlan, is_tcp, ON4), .set = SET_L2(vlan),           \
    }

/* Untagged IPv4 without options, any protocol; that the fragment offset
 * is not zero, sp_mfex_profile_lengths_ok checks. */
#define IPV4_LATER_FRAG_PROFILE                                     \
    {                                                               \
        .probe_mask = {PROBE_L2_MASK_0, [L3(0)] = 0xff},            \
        .probe_value = {PROBE_L2_VALUE_0(0x0800), [L3(0)] = 0x45},  \
        .perm = PERM_IPV4(PERM, SP_MFEX_SHAPE_LATER_FRAG),          \
        .avx2_ctrl = {PERM_IPV4(CTRL_A, SP_MFEX_SHAPE_LATER_FRAG),  \
                      PERM_IPV4(CTRL_B, SP_MFEX_SHAPE_LATER_FRAG)}, \
        .keep = KEEP_IPV4(0, 0, OFF4), .set = SET_LATER_FRAG,       \
    }

#define IPV6_PROFILE(vlan, is_tcp)                                           \
    {                                                                        \
        .probe_mask = {PROBE_L2_MASK_##vlan, [L3(SHAPE(vlan, 1, 0))] = 0xf0, \
                       [L3(SHAPE(vlan, 1, 0)) + 6] = 0xff},                  \
        .probe_value = {PROBE_L2_VALUE_##vlan(0x86dd),                       \
                        [L3(SHAPE(vlan, 1, 0))] = 0x60,                      \
                        [L3(SHAPE(vlan, 1, 0)) + 6] = (is_tcp) ? 6 : 17},    \
        .perm = PERM_IPV6(PERM, SHAPE(vlan, 1, is_tcp)),                     \
        .avx2_ctrl = {PERM_IPV6(CTRL_A, SHAPE(vlan, 1, is_tcp)),             \
                      PERM_IPV6(CTRL_B, SHAPE(vlan, 1, is_tcp))},            \
        .keep = KEEP_IPV6(vlan, is_tcp), .set = SET_L2(vlan),                \
    }

const struct sp_mfex_profile sp_mfex_profiles[SP_MFEX_PROFILES] = {
    IPV4_PROFILE(0, 0), IPV4_PROFILE(0, 1), IPV6_PROFILE(0, 0),
    IPV6_PROFILE(0, 1), IPV4_PROFILE(1, 0), IPV4_PROFILE(1, 1),
    IPV6_PROFILE(1, 0), IPV6_PROFILE(1, 1), IPV4_LATER_FRAG_PROFILE,
};

const uint8_t sp_mfex_shift_down[32] = {
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,
    11,   12,   13,   14,   15,   0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};
