/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite, the specification. Per field, as Open vSwitch's
 * packet_set_ipv4() does it: write the field, update the header checksum
 * for its words (RFC 1624), and for an address find the TCP/UDP header and
 * update its checksum too. This is also the per-field baseline the SIMD
 * variants are measured against (bench_actions).
 */
#include "dispatch/isa.h"
#include "generic/ipv4_rewrite.h"

static void
set_addr(const struct sp_packet *pkt, uint8_t *ip, uint32_t hlen, unsigned ofs,
         uint32_t value, uint32_t mask)
{
    uint32_t old = sp_load32(ip + ofs);
    uint32_t new = (old & ~mask) | (value & mask);
    uint32_t delta = sp_csum_delta32(old, new);
    uint8_t *l4_csum;
    int udp;

    sp_store32(ip + ofs, new);
    sp_csum_update_at(ip + SP_IPV4_CSUM_OFS, delta);
    l4_csum = sp_ipv4_l4_csum(pkt, ip, hlen, &udp);
    sp_ipv4_apply_l4(l4_csum, udp, delta);
}

uint32_t
sp_scalar_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                       const struct sp_ipv4_set *set)
{
    uint32_t expired = 0;

    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen;
        uint8_t *ip =
            sp_ipv4_rewritable(pkts[i], set->dec_ttl, i, &expired, &hlen);

        if (!ip) {
            continue;
        }
        if (set->tos_mask) {
            sp_ipv4_set_byte(ip, 1, 0, set->tos, set->tos_mask);
        }
        if (set->ttl_mask || set->dec_ttl) {
            sp_ipv4_set_byte(ip, SP_IPV4_TTL_OFS, set->dec_ttl, set->ttl,
                             set->ttl_mask);
        }
        if (set->src_mask) {
            set_addr(pkts[i], ip, hlen, SP_IPV4_SRC_OFS, set->src,
                     set->src_mask);
        }
        if (set->dst_mask) {
            set_addr(pkts[i], ip, hlen, SP_IPV4_DST_OFS, set->dst,
                     set->dst_mask);
        }
    }
    return expired;
}
