/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every variant of the ipv4_rewrite kernel shares: finding a complete
 * IPv4 header and the L4 checksum an address change must update, exactly
 * as the contract in kernels.h says.
 */
#ifndef SP_IPV4_REWRITE_H
#define SP_IPV4_REWRITE_H

#include <stddef.h>

#include "csum.h"
#include "simdpath/kernels.h"

#define SP_IPV4_HDR_LEN   20
#define SP_IPV4_CSUM_OFS  10
#define SP_IPV4_TTL_OFS   8
#define SP_IPV4_PROTO_OFS 9
#define SP_IPV4_SRC_OFS   12
#define SP_IPV4_DST_OFS   16
#define SP_IPPROTO_TCP    6
#define SP_IPPROTO_UDP    17
#define SP_IPPROTO_SCTP   132

/* The packet's IPv4 header if it is complete inside the frame (version 4,
 * IHL >= 5, IHL * 4 bytes present), with its length in *hlen; else NULL. */
static inline uint8_t *
sp_ipv4_header(const struct sp_packet *pkt, uint32_t *hlen)
{
    uint32_t l3 = pkt->l3_ofs;
    uint8_t *ip;

    if (l3 == SP_OFS_NONE || pkt->len < l3 + SP_IPV4_HDR_LEN) {
        return NULL;
    }
    ip = pkt->data + l3;
    *hlen = (ip[0] & 0x0fu) * 4;
    if (ip[0] >> 4 != 4 || *hlen < SP_IPV4_HDR_LEN || pkt->len - l3 < *hlen) {
        return NULL;
    }
    return ip;
}

/* The L4 checksum covering the IPv4 addresses: a first fragment (or none)
 * of TCP with its 20-byte header or UDP with its 8-byte header inside the
 * frame. Sets *udp; NULL when there is none to update. */
static inline uint8_t *
sp_ipv4_l4_csum(const struct sp_packet *pkt, uint8_t *ip, uint32_t hlen,
                int *udp)
{
    uint32_t l4 = (uint32_t)(ip - pkt->data) + hlen;
    uint32_t room = pkt->len - l4;

    if ((ip[6] & 0x1f) | ip[7]) {
        return NULL; /* a later fragment has no L4 header */
    }
    *udp = ip[SP_IPV4_PROTO_OFS] == SP_IPPROTO_UDP;
    if (ip[SP_IPV4_PROTO_OFS] == SP_IPPROTO_TCP && room >= 20) {
        return pkt->data + l4 + 16;
    }
    if (*udp && room >= 8) {
        return pkt->data + l4 + 6;
    }
    return NULL;
}

/* Applies the address terms 'delta' to the packet's L4 checksum. */
static inline void
sp_ipv4_update_l4(const struct sp_packet *pkt, uint8_t *ip, uint32_t hlen,
                  uint64_t delta)
{
    int udp;
    uint8_t *csum = sp_ipv4_l4_csum(pkt, ip, hlen, &udp);

    if (!csum) {
        return;
    }
    if (udp) {
        sp_csum_update_udp_at(csum, delta);
    } else {
        sp_csum_update_at(csum, delta);
    }
}

/* The set's values and masks laid out as the first 20 header bytes, and
 * which of its 16-bit words the rewrite touches (0xffff) or not (0): what
 * the SIMD variants blend and sum with. */
struct sp_ipv4_image {
    uint8_t value[32];
    uint8_t mask[32];
    uint8_t touched[32];
    uint8_t dec[32]; /* 0xff at the TTL when decrementing: adds -1 */
};

static inline void
sp_ipv4_image_init(struct sp_ipv4_image *im, const struct sp_ipv4_set *set)
{
    memset(im, 0, sizeof *im);
    im->value[1] = set->tos & set->tos_mask;
    im->mask[1] = set->tos_mask;
    im->value[SP_IPV4_TTL_OFS] = set->ttl & set->ttl_mask;
    im->mask[SP_IPV4_TTL_OFS] = set->ttl_mask;
    sp_store32(im->value + SP_IPV4_SRC_OFS, set->src & set->src_mask);
    sp_store32(im->mask + SP_IPV4_SRC_OFS, set->src_mask);
    sp_store32(im->value + SP_IPV4_DST_OFS, set->dst & set->dst_mask);
    sp_store32(im->mask + SP_IPV4_DST_OFS, set->dst_mask);
    if (set->tos_mask) {
        memset(im->touched, 0xff, 2);
    }
    if (set->ttl_mask || set->dec_ttl) {
        memset(im->touched + SP_IPV4_TTL_OFS, 0xff, 2);
    }
    if (set->src_mask) {
        memset(im->touched + SP_IPV4_SRC_OFS, 0xff, 4);
    }
    if (set->dst_mask) {
        memset(im->touched + SP_IPV4_DST_OFS, 0xff, 4);
    }
    im->dec[SP_IPV4_TTL_OFS] = set->dec_ttl ? 0xff : 0;
}

/* Whether the rewrite of a packet with this TTL is refused by dec_ttl. */
static inline int
sp_ipv4_ttl_expired(const struct sp_ipv4_set *set, const uint8_t *ip)
{
    return set->dec_ttl && ip[SP_IPV4_TTL_OFS] <= 1;
}

#endif /* SP_IPV4_REWRITE_H */
