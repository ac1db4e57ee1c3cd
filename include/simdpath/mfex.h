/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract: the parse status it leaves in sp_packet.status, and the
 * limits of the parser. The kernel itself is declared in kernels.h.
 *
 * A status names the first anomaly the parser met. Whatever it says, the
 * key holds what OVS's flow extraction takes from the same bytes (fields of
 * a header OVS does not trust stay zero), so rules match as in OVS.
 */
#ifndef SP_MFEX_H
#define SP_MFEX_H

#include <stdint.h>

/* X(id, name, meaning), in the order the parser meets them. */
#define SP_MFEX_STATUSES(X)                                                  \
    X(OK, "ok", "every header the packet has was parsed")                    \
    X(L2_TRUNCATED, "l2_truncated",                                          \
      "Ethernet header or a VLAN tag cut short")                             \
    X(L2_MPLS, "l2_mpls", "stopped at an MPLS label stack")                  \
    X(ARP_TRUNCATED, "arp_truncated", "ARP payload cut short")               \
    X(ARP_UNSUPPORTED, "arp_unsupported", "ARP that is not Ethernet/IPv4")   \
    X(L3_TRUNCATED, "l3_truncated",                                          \
      "IP header cut short, or total/payload length past the frame")         \
    X(L3_BAD_VERSION, "l3_bad_version",                                      \
      "IP version does not match type (parsed on, as OVS)")                  \
    X(L3_BAD_HLEN, "l3_bad_hlen", "IPv4 header length (IHL) below 5")        \
    X(L3_BAD_LEN, "l3_bad_len", "IPv4 total length shorter than its header") \
    X(EXT_TRUNCATED, "ext_truncated", "IPv6 extension header cut short")     \
    X(L4_TRUNCATED, "l4_truncated",                                          \
      "L4 header, or TCP options, past the end of the IP payload")           \
    X(L4_BAD_HLEN, "l4_bad_hlen", "TCP data offset below 5")

enum sp_mfex_status {
#define SP_MFEX_STATUS_ENUM(id, name, meaning) SP_MFEX_##id,
    SP_MFEX_STATUSES(SP_MFEX_STATUS_ENUM)
#undef SP_MFEX_STATUS_ENUM
        SP_MFEX_STATUS_COUNT
};

/* The short name of a status ("ok", "l4_truncated", ...), or "unknown". */
static inline const char *
sp_mfex_status_name(uint16_t status)
{
    static const char *const names[] = {
#define SP_MFEX_STATUS_NAME(id, name, meaning) name,
        SP_MFEX_STATUSES(SP_MFEX_STATUS_NAME)
#undef SP_MFEX_STATUS_NAME
    };

    return status < SP_MFEX_STATUS_COUNT ? names[status] : "unknown";
}

#endif /* SP_MFEX_H */
