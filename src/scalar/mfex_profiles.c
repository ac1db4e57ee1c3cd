/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SIMD miniflow extract profiles (see mfex_profile.h): static data
 * shared by every ISA's parser, so all of them handle exactly the same
 * shapes. Built with the scalar library, which every build has.
 */
#include "mfex_profile.h"

#define Z SP_MFEX_PERM_ZERO

/* Permute tables are lists of packet offsets written through an element
 * macro F: PERM gives the offsets themselves, SHUF_c their pshufb control
 * for 16-byte chunk c of the packet (offset within the chunk, or 0x80 to
 * zero the byte), so both forms come from one description. */
#define PERM(x) (x)
#define SHUF(c, x) \
    ((x) >= 16 * (c) && (x) < 16 * (c) + 16 ? (x)-16 * (c) : 0x80)
#define SHUF_0(x) SHUF(0, x)
#define SHUF_1(x) SHUF(1, x)
#define SHUF_2(x) SHUF(2, x)
#define SHUF_3(x) SHUF(3, x)
#define SHUF_4(x) SHUF(4, x)

#define SEQ2(F, a)  F(a), F((a) + 1)
#define SEQ3(F, a)  F(a), F((a) + 1), F((a) + 2)
#define SEQ4(F, a)  SEQ2(F, a), SEQ2(F, (a) + 2)
#define SEQ12(F, a) SEQ4(F, a), SEQ4(F, (a) + 4), SEQ4(F, (a) + 8)
#define SEQ16(F, a) SEQ12(F, a), SEQ4(F, (a) + 12)
/* Two bytes from a, or none when c is false. */
#define SEQ2_IF(F, c, a) F((c) ? (a) : Z), F((c) ? (a) + 1 : Z)
#define Z2(F)            F(Z), F(Z)
#define Z4(F)            Z2(F), Z2(F)
#define Z12(F)           Z4(F), Z4(F), Z4(F)

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
#define PERM_L2(F, vlan) \
    SEQ12(F, 0), SEQ2(F, (vlan) ? 16 : 12), SEQ2_IF(F, vlan, 14)
#define KEEP_L2(vlan) ON12, ON2, (vlan) ? 0xff : 0, (vlan) ? 0xff : 0

/* 16-19: in_port (written after the permute), TCP flags (low 12 bits). */
#define PERM_PORT_FLAGS(F, tcp, l4) Z2(F), SEQ2_IF(F, tcp, (l4) + 12)
#define KEEP_PORT_FLAGS(tcp)        OFF2, (tcp) ? 0x0f : 0, (tcp) ? 0xff : 0

#define PERM_IPV4(F, vlan, tcp, l3, l4)                                 \
    {                                                                   \
        PERM_L2(F, vlan), PERM_PORT_FLAGS(F, tcp, l4), F((l3) + 9),     \
            F((l3) + 1), F((l3) + 8), F(Z), SEQ4(F, (l3) + 12), Z12(F), \
            SEQ4(F, (l3) + 16), Z12(F), Z4(F), SEQ4(F, l4)              \
    }
#define KEEP_IPV4(vlan, tcp)                                                 \
    {                                                                        \
        KEEP_L2(vlan), KEEP_PORT_FLAGS(tcp), ON3, 0, ON4, OFF12, ON4, OFF12, \
            OFF4, ON4                                                        \
    }

/* IPv6: the traffic class (key byte 21) straddles two packet bytes and is
 * written after the permute; the flow label is 20 bits of 3 bytes. */
#define PERM_IPV6(F, vlan, tcp, l3, l4)                                       \
    {                                                                         \
        PERM_L2(F, vlan), PERM_PORT_FLAGS(F, tcp, l4), F((l3) + 6), F(Z),     \
            F((l3) + 7), F(Z), SEQ16(F, (l3) + 8), SEQ16(F, (l3) + 24), F(Z), \
            SEQ3(F, (l3) + 1), SEQ4(F, l4)                                    \
    }
#define KEEP_IPV6(vlan, tcp)                                                  \
    {                                                                         \
        KEEP_L2(vlan), KEEP_PORT_FLAGS(tcp), 0xff, 0, 0xff, 0, ON16, ON16, 0, \
            0x0f, ON2, ON4                                                    \
    }

#define SET_L2(vlan)             \
    {                            \
        [14] = (vlan) ? 0x10 : 0 \
    }

/* Probes (vlan is 0 or 1): the Ethernet type (behind one 802.1Q tag for VLAN
 * shapes), then IPv4 version 4 with IHL 5, neither MF nor a fragment offset,
 * and the protocol; or IPv6 version 6 and the next header (no extensions). */
#define PROBE_L2_MASK_0        [12] = 0xff, [13] = 0xff
#define PROBE_L2_MASK_1        PROBE_L2_MASK_0, [16] = 0xff, [17] = 0xff
#define PROBE_L2_VALUE_0(type) [12] = (type) >> 8, [13] = (type)&0xff
#define PROBE_L2_VALUE_1(type) \
    [12] = 0x81, [13] = 0x00, [16] = (type) >> 8, [17] = (type)&0xff

#define IPV4_PROFILE(vlan, is_tcp)                                        \
    {                                                                     \
        .probe_mask = {PROBE_L2_MASK_##vlan, [L3(vlan)] = 0xff,           \
                       [L3(vlan) + 6] = 0x3f, [L3(vlan) + 7] = 0xff,      \
                       [L3(vlan) + 9] = 0xff},                            \
        .probe_value = {PROBE_L2_VALUE_##vlan(0x0800), [L3(vlan)] = 0x45, \
                        [L3(vlan) + 9] = (is_tcp) ? 6 : 17},              \
        .perm = PERM_IPV4(PERM, vlan, is_tcp, L3(vlan), L3(vlan) + 20),   \
        .shuffle = {SHUFFLES(PERM_IPV4, vlan, is_tcp, 20)},               \
        .keep = KEEP_IPV4(vlan, is_tcp), .set = SET_L2(vlan),             \
    }

#define IPV6_PROFILE(vlan, is_tcp)                                        \
    {                                                                     \
        .probe_mask = {PROBE_L2_MASK_##vlan, [L3(vlan)] = 0xf0,           \
                       [L3(vlan) + 6] = 0xff},                            \
        .probe_value = {PROBE_L2_VALUE_##vlan(0x86dd), [L3(vlan)] = 0x60, \
                        [L3(vlan) + 6] = (is_tcp) ? 6 : 17},              \
        .perm = PERM_IPV6(PERM, vlan, is_tcp, L3(vlan), L3(vlan) + 40),   \
        .shuffle = {SHUFFLES(PERM_IPV6, vlan, is_tcp, 40)},               \
        .keep = KEEP_IPV6(vlan, is_tcp), .set = SET_L2(vlan),             \
    }

#define L3(vlan) SP_MFEX_L3_OFS((vlan) ? SP_MFEX_SHAPE_VLAN : 0)
#define SHUFFLES(TABLE, vlan, tcp, l3_len)                       \
    TABLE(SHUF_0, vlan, tcp, L3(vlan), L3(vlan) + (l3_len)),     \
        TABLE(SHUF_1, vlan, tcp, L3(vlan), L3(vlan) + (l3_len)), \
        TABLE(SHUF_2, vlan, tcp, L3(vlan), L3(vlan) + (l3_len)), \
        TABLE(SHUF_3, vlan, tcp, L3(vlan), L3(vlan) + (l3_len)), \
        TABLE(SHUF_4, vlan, tcp, L3(vlan), L3(vlan) + (l3_len))

const struct sp_mfex_profile sp_mfex_profiles[SP_MFEX_PROFILES] = {
    IPV4_PROFILE(0, 0), IPV4_PROFILE(0, 1), IPV6_PROFILE(0, 0),
    IPV6_PROFILE(0, 1), IPV4_PROFILE(1, 0), IPV4_PROFILE(1, 1),
    IPV6_PROFILE(1, 0), IPV6_PROFILE(1, 1),
};

const uint8_t sp_mfex_shift_down[32] = {
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,
    11,   12,   13,   14,   15,   0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};
