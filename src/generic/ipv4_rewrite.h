/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every variant of the ipv4_rewrite kernel shares: finding a complete
 * IPv4 header and the L4 checksum an address change must update, exactly
 * as the contract in kernels.h says.
 *
 * Used by src/scalar/ipv4_rewrite.c, src/neon/ipv4_rewrite.c and, through
 * src/x86/ipv4_rewrite.h, the AVX2 and AVX-512 ones. Caller in the
 * datapath: execute_group (src/datapath/actions_execute.c), through
 * SP_KERNEL(ipv4_rewrite), for a rule's mod_nw_* or dec_ttl step; the
 * scalar actions also use its L4 checksum helpers for IPv6.
 */
#ifndef SP_IPV4_REWRITE_H
#define SP_IPV4_REWRITE_H

#include <stddef.h>
#include <string.h>

#include "common/csum.h"
#include "common/proto.h"
#include "simdpath/kernels.h"

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
    if (ip[0] == 0x45) { /* no options: its 20 bytes were checked above */
        *hlen = SP_IPV4_HDR_LEN;
        return ip;
    }
    *hlen = (ip[0] & 0x0fu) * 4;
    /* Version 4 and IHL 5..15 in one compare: 0x45..0x4f. */
    if ((uint8_t)(ip[0] - 0x45) > 0x0a || pkt->len - l3 < *hlen) {
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
    uint8_t proto = ip[SP_IPV4_PROTO_OFS];
    int tcp = proto == SP_IPPROTO_TCP;

    *udp = proto == SP_IPPROTO_UDP;
    /* A later fragment (offset not 0) has no L4 header. */
    if (!(tcp | *udp) || ((ip[6] & 0x1f) | ip[7]) ||
        pkt->len - l4 < (tcp ? 20u : 8u)) {
        return NULL;
    }
    return pkt->data + l4 + (tcp ? SP_TCP_CSUM_OFS : SP_UDP_CSUM_OFS);
}

/* The shape nearly every packet an address set meets has: no IPv4
 * options, protocol 'proto' (UDP or TCP), not a later fragment, its whole
 * L4 header in the frame and, under dec_ttl, a TTL above 1. For it
 * sp_ipv4_rewritable finds the header at l3_ofs, 20 bytes long, and
 * sp_ipv4_l4_csum the L4 checksum SP_UDP_CSUM_OFS or SP_TCP_CSUM_OFS
 * bytes past it.
 * Returns the header, or NULL for any other packet (which those two then
 * judge). Fewer instructions than theirs, and a protocol the caller's
 * code for the shape has as a constant: the SIMD variants' loops are
 * bound by the instructions they issue (docs/perf/kernels.md). */
static inline __attribute__((always_inline)) uint8_t *
sp_ipv4_plain_l4(const struct sp_packet *pkt, bool dec_ttl, uint8_t proto)
{
    uint32_t l3 = pkt->l3_ofs;
    uint32_t need =
        SP_IPV4_HDR_LEN +
        (proto == SP_IPPROTO_TCP ? SP_TCP_HDR_LEN : SP_UDP_HDR_LEN);
    uint8_t *ip;

    if (l3 == SP_OFS_NONE || pkt->len < l3 + need) {
        return NULL;
    }
    ip = pkt->data + l3;
    /* Bytes 6-9: flags and fragment offset (13 bits), TTL, protocol. */
    if (ip[0] != 0x45 || (ntohl(sp_load32(ip + 6)) & 0x1fff00ffu) != proto ||
        (dec_ttl && ip[SP_IPV4_TTL_OFS] <= 1)) {
        return NULL;
    }
    return ip;
}

/* Applies the address terms 'delta' to an L4 checksum found above. */
static inline void
sp_ipv4_apply_l4(uint8_t *csum, int udp, uint32_t delta)
{
    if (!csum) {
        return;
    }
    if (udp) {
        sp_csum_update_udp_at(csum, delta);
    } else {
        sp_csum_update_at(csum, delta);
    }
}

/* The L4 checksum sp_ipv4_apply_l4 would leave, from its value 'old' read
 * before: for a variant that stores the header first with a wide store
 * covering these bytes too, after which a load of them would wait for the
 * store to complete. */
static inline uint16_t
sp_ipv4_l4_updated(uint16_t old, int udp, uint32_t delta)
{
    uint16_t csum = sp_csum_update(old, delta);

    return !udp ? csum : !old ? 0 : csum ? csum : 0xffff;
}

/* Sets the masked bits of the byte at 'ofs' ('dec' subtracts 1 first) and
 * updates the header checksum for its word: the specification's step for
 * the TOS or the TTL (src/scalar/ipv4_rewrite.c). The new word is made in
 * registers: loading it back after the byte store would wait for the
 * store to complete (a wider load is not forwarded). */
static inline void
sp_ipv4_set_byte(uint8_t *ip, unsigned ofs, uint8_t dec, uint8_t value,
                 uint8_t mask)
{
    uint8_t word[2];
    uint16_t old;

    memcpy(word, ip + (ofs & ~1u), sizeof word);
    old = sp_load16(word);
    word[ofs & 1] =
        (uint8_t)(((word[ofs & 1] - dec) & ~mask) | (value & mask));
    ip[ofs] = word[ofs & 1];
    sp_csum_update_at(ip + SP_IPV4_CSUM_OFS,
                      sp_csum_delta16(old, sp_load16(word)));
}

/* dec_ttl alone on a header whose TTL is above 1: the TTL's word drops by
 * the TTL's place value in it, so the word's terms ~old + new that
 * sp_ipv4_set_byte would sum are 0xffff less that place, whatever the
 * word held. */
static inline void
sp_ipv4_dec_ttl(uint8_t *ip)
{
    static const uint8_t ttl_one[2] = {1, 0}; /* the TTL leads its word */

    ip[SP_IPV4_TTL_OFS]--;
    sp_csum_update_at(ip + SP_IPV4_CSUM_OFS, 0xffffu - sp_load16(ttl_one));
}

/*
 * The set laid out as the first 20 header bytes, for the SIMD variants.
 * Their checksum sums use that, for a touched word, ~old + new equals
 * 0xffff + (new - old), and untouched words have new == old: the sum over
 * touched words is words * 0xffff plus the sum of (new - old) over all
 * words, a signed sum of the whole header with no per-word mask.
 *
 * Byte k of the 32-byte layout is in word k / 8, least significant byte
 * first (the byte order of every SIMD target), so that the variants make
 * their vectors from the words in registers: bytes stored one by one and
 * loaded as a vector stall the load, as store forwarding cannot merge
 * several stores into one load (docs/perf/kernels.md).
 */
struct sp_ipv4_image {
    uint64_t value[4]; /* the set's values, already masked */
    uint64_t mask[4];
    uint64_t dec[4];    /* 0xff at the TTL when decrementing: adds -1 */
    uint32_t hdr_words; /* 16-bit words the header checksum counts */
    uint32_t l4_words;  /* ...of them, address words (L4 checksum) */
};

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "sp_ipv4_image's words hold their bytes least first");

/* Puts 'bits' at byte 'ofs' of an image's words (bits of one word). */
static inline void
sp_ipv4_image_put(uint64_t *words, unsigned ofs, uint64_t bits)
{
    words[ofs / 8] |= bits << (ofs % 8 * 8);
}

/* The byte at 'ofs' of an image's words. */
static inline uint8_t
sp_ipv4_image_byte(const uint64_t *words, unsigned ofs)
{
    return (uint8_t)(words[ofs / 8] >> (ofs % 8 * 8));
}

/* Bytes 12 to 19 of an image's words: the source and destination
 * addresses. */
static inline uint64_t
sp_ipv4_image_addrs(const uint64_t *words)
{
    return words[SP_IPV4_SRC_OFS / 8] >> 32 | words[SP_IPV4_DST_OFS / 8] << 32;
}

static inline void
sp_ipv4_image_init(struct sp_ipv4_image *im, const struct sp_ipv4_set *set)
{
    *im = (struct sp_ipv4_image){0};
    sp_ipv4_image_put(im->value, 1, set->tos & set->tos_mask);
    sp_ipv4_image_put(im->mask, 1, set->tos_mask);
    sp_ipv4_image_put(im->value, SP_IPV4_TTL_OFS, set->ttl & set->ttl_mask);
    sp_ipv4_image_put(im->mask, SP_IPV4_TTL_OFS, set->ttl_mask);
    sp_ipv4_image_put(im->value, SP_IPV4_SRC_OFS, set->src & set->src_mask);
    sp_ipv4_image_put(im->mask, SP_IPV4_SRC_OFS, set->src_mask);
    sp_ipv4_image_put(im->value, SP_IPV4_DST_OFS, set->dst & set->dst_mask);
    sp_ipv4_image_put(im->mask, SP_IPV4_DST_OFS, set->dst_mask);
    sp_ipv4_image_put(im->dec, SP_IPV4_TTL_OFS, set->dec_ttl ? 0xff : 0);
    im->l4_words = (set->src_mask ? 2 : 0) + (set->dst_mask ? 2 : 0);
    im->hdr_words = im->l4_words + (set->tos_mask ? 1 : 0) +
                    (set->ttl_mask || set->dec_ttl ? 1 : 0);
}

/* The terms of 'words' touched words whose (new - old) sum to 'diff'. */
static inline uint32_t
sp_ipv4_delta(uint32_t words, int32_t diff)
{
    return (uint32_t)((int32_t)words * 0xffff + diff);
}

/* The header of packet i to rewrite, or NULL: not a complete IPv4 header
 * (sp_ipv4_header), or dec_ttl and a TTL of 0 or 1 (then bit i is set in
 * *expired). */
static inline uint8_t *
sp_ipv4_rewritable(const struct sp_packet *pkt, bool dec_ttl, uint32_t i,
                   uint32_t *expired, uint32_t *hlen)
{
    uint8_t *ip = sp_ipv4_header(pkt, hlen);

    if (ip && dec_ttl && ip[SP_IPV4_TTL_OFS] <= 1) {
        *expired |= UINT32_C(1) << i;
        return NULL;
    }
    return ip;
}

/* Whether a set changes one header byte alone: no address, and the TOS
 * or the TTL (dec_ttl counts as the TTL) but not both. */
static inline bool
sp_ipv4_set_one_byte(const struct sp_ipv4_set *set)
{
    return !set->src_mask && !set->dst_mask &&
           !set->tos_mask != !(set->ttl_mask || set->dec_ttl);
}

/* The specification's per-field step on every packet, for a set of one
 * header byte alone: the TTL at 'ofs' (with dec_ttl, which expires
 * packets) or the TOS. The SIMD variants' loop for such sets: the set's
 * fields are arguments, where the specification reads them per packet
 * (packet stores could alias *set). */
static inline __attribute__((always_inline)) uint32_t
sp_ipv4_rewrite_byte(struct sp_packet *const *pkts, uint32_t n, unsigned ofs,
                     bool dec_ttl, uint8_t value, uint8_t mask)
{
    uint32_t expired = 0;

    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen;
        uint8_t *ip = sp_ipv4_rewritable(pkts[i], dec_ttl, i, &expired, &hlen);

        if (ip && dec_ttl && !mask) {
            sp_ipv4_dec_ttl(ip);
        } else if (ip && (mask || dec_ttl)) {
            sp_ipv4_set_byte(ip, ofs, dec_ttl, value, mask);
        }
    }
    return expired;
}

#endif /* SP_IPV4_REWRITE_H */
