/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with NEON, on the helpers of src/generic/ipv4_rewrite.h: the
 * 20-byte header as a 128-bit and a 64-bit register (16 + 4 bytes loaded,
 * nothing past the header), every field set by one bit-select (vbsl) against
 * the set's image, the checksum terms of every word at once as pairwise sums
 * of new minus those of old (see sp_ipv4_image), reduced by vaddv, and the
 * header stored back as 16 + 4 bytes. A set of addresses only works on their 8
 * bytes, as on x86. A set of the TTL alone (dec_ttl, the commonest) takes
 * four packets at a time: their lengths and offsets checked as vector
 * lanes, then bytes 8-11 of the four headers (TTL and checksum) rewritten
 * as lanes. A set of the TOS alone is the scalar per-field step, with the
 * set read once per batch.
 */
#include <arm_neon.h>
#include <assert.h>

#include "dispatch/isa.h"
#include "generic/ipv4_rewrite.h"

/* The 8 address bytes (12 to 19) alone; 'value' and 'mask' are those bytes
 * of the image, and the header's terms are the L4 ones. l4_csum and udp
 * are sp_ipv4_l4_csum's (constants at the calls of the plain shapes). */
static inline __attribute__((always_inline)) void
rewrite_addrs(uint8_t *ip, uint8_t *l4_csum, int udp, uint8x8_t value,
              uint8x8_t mask, uint32_t words)
{
    uint8x8_t old = vld1_u8(ip + SP_IPV4_SRC_OFS);
    uint8x8_t new = vbsl_u8(mask, value, old);
    /* new - old of each of the 4 address words, widened, then summed. */
    int32x4_t diffs = vreinterpretq_s32_u32(
        vsubl_u16(vreinterpret_u16_u8(new), vreinterpret_u16_u8(old)));
    uint32_t delta = sp_ipv4_delta(words, vaddvq_s32(diffs));

    vst1_u8(ip + SP_IPV4_SRC_OFS, new);
    sp_csum_update_at(ip + SP_IPV4_CSUM_OFS, delta);
    sp_ipv4_apply_l4(l4_csum, udp, delta);
}

/* The lanes of a set of the TTL alone, for bytes 8-11 of four headers as
 * 32-bit lanes (host order: TTL, protocol, then the checksum in the top
 * half). */
struct ttl_lanes {
    uint32x4_t dec;   /* 1 with dec_ttl */
    uint32x4_t keep;  /* the TTL bits the set keeps (~ttl_mask) */
    uint32x4_t value; /* ttl & ttl_mask, plus TTL_BIAS */
    uint32x4_t live;  /* the least TTL rewritten: 2 with dec_ttl, else 0 */
};

/* The header checksum's sum for the TTL's word, ~HC + ~m + m' =
 * 0x1fffe - HC + new - old (the TTL is the low byte of its host-order
 * word), need only be right modulo 0xffff and positive for the fold:
 * 0x1fffe + 254 * 0xffff is, and its low byte is 0, so that the low byte
 * of value + TTL_BIAS is still the new TTL. */
#define TTL_BIAS 0xffff00u

/* len, then l3_ofs in the top 16 bits of the 64-bit word at len. */
static_assert(offsetof(struct sp_packet, l3_ofs) ==
                      offsetof(struct sp_packet, len) + 6 &&
                  __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "sp_packet metadata layout");

/* A packet's data, and its len, in_port and l3_ofs as one 64-bit word. */
static inline __attribute__((always_inline)) uint8_t *
packet_meta(const struct sp_packet *pkt, uint64_t *meta)
{
    uint8_t *data = pkt->data;

    memcpy(meta, (const uint8_t *)pkt + offsetof(struct sp_packet, len),
           sizeof *meta);
    /* Both in general registers, loaded as a pair: GCC would load the
     * word into a vector register, move it back for l3_ofs, and load
     * 'data' apart. */
    __asm__("" : "+r"(data), "+r"(*meta));
    return data;
}

/* The packet's header, from packet_meta's data and word. */
static inline __attribute__((always_inline)) uint8_t *
packet_l3(uint8_t *data, uint64_t meta)
{
    uint8_t *ip = data + (meta >> 48);

    /* One add, not a shift and the load's and store's own adds. */
    __asm__("" : "+r"(ip));
    return ip;
}

/* The 32-bit lanes 'lane' (0 or 2) of four headers' first 16 bytes. */
static inline uint32x4_t
header_lanes(uint32x4_t t01, uint32x4_t t23, int lane)
{
    uint64x2_t a = vreinterpretq_u64_u32(t01), b = vreinterpretq_u64_u32(t23);

    return vreinterpretq_u32_u64(lane ? vzip2q_u64(a, b) : vzip1q_u64(a, b));
}

/* Rewrites the TTL of pkts[0..3] when all four have a 20-byte IPv4 header
 * (version 4, IHL 5) inside the frame and none expires; else writes
 * nothing and returns false. The four are read before any is written:
 * packets do not overlap (kernels.h). */
static inline __attribute__((always_inline)) bool
rewrite_ttl4(struct sp_packet *const *pkts, const struct ttl_lanes *k)
{
    uint64_t m0, m1, m2, m3;
    uint8_t *d0 = packet_meta(pkts[0], &m0), *d1 = packet_meta(pkts[1], &m1);
    uint8_t *d2 = packet_meta(pkts[2], &m2), *d3 = packet_meta(pkts[3], &m3);
    uint32x4_t m01 =
        vreinterpretq_u32_u64(vcombine_u64(vcreate_u64(m0), vcreate_u64(m1)));
    uint32x4_t m23 =
        vreinterpretq_u32_u64(vcombine_u64(vcreate_u64(m2), vcreate_u64(m3)));
    uint32x4_t len = vuzp1q_u32(m01, m23);
    uint32x4_t l3 = vshrq_n_u32(vuzp2q_u32(m01, m23), 16);
    uint8_t *ip0, *ip1, *ip2, *ip3;
    uint32x4_t first, w, t01, t23, old, ok, next, sum, out;

    /* len >= l3 + 20 and l3 not SP_OFS_NONE: with len capped at
     * SP_OFS_NONE + 19, l3 + 20 of SP_OFS_NONE is above it. */
    ok = vcgeq_u32(vminq_u32(len, vdupq_n_u32(SP_OFS_NONE + 19)),
                   vaddq_u32(l3, vdupq_n_u32(SP_IPV4_HDR_LEN)));
    if (!vminvq_u32(ok)) {
        return false;
    }
    ip0 = packet_l3(d0, m0);
    ip1 = packet_l3(d1, m1);
    ip2 = packet_l3(d2, m2);
    ip3 = packet_l3(d3, m3);
    /* Bytes 0-3 and 8-11 of the four headers, a lane each. */
    t01 = vtrn1q_u32(vreinterpretq_u32_u8(vld1q_u8(ip0)),
                     vreinterpretq_u32_u8(vld1q_u8(ip1)));
    t23 = vtrn1q_u32(vreinterpretq_u32_u8(vld1q_u8(ip2)),
                     vreinterpretq_u32_u8(vld1q_u8(ip3)));
    first = header_lanes(t01, t23, 0);
    w = header_lanes(t01, t23, 1);
    old = vandq_u32(w, vdupq_n_u32(0xff));
    ok = vandq_u32(
        vceqq_u32(vandq_u32(first, vdupq_n_u32(0xff)), vdupq_n_u32(0x45)),
        vcgeq_u32(old, k->live));
    if (!vminvq_u32(ok)) {
        return false;
    }
    /* The new TTL in the low byte (TTL_BIAS above it), the checksum's
     * sum, folded by adding it to itself with its halves swapped. */
    next = vaddq_u32(vandq_u32(vsubq_u32(w, k->dec), k->keep), k->value);
    sum = vsubq_u32(next, vsraq_n_u32(old, w, 16));
    sum = vaddq_u32(
        sum, vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(sum))));
    out = vbslq_u32(vdupq_n_u32(0xffff0000), vmvnq_u32(sum),
                    vbslq_u32(vdupq_n_u32(0xff), next, w));
    sp_store32(ip0 + SP_IPV4_TTL_OFS, vgetq_lane_u32(out, 0));
    sp_store32(ip1 + SP_IPV4_TTL_OFS, vgetq_lane_u32(out, 1));
    sp_store32(ip2 + SP_IPV4_TTL_OFS, vgetq_lane_u32(out, 2));
    sp_store32(ip3 + SP_IPV4_TTL_OFS, vgetq_lane_u32(out, 3));
    return true;
}

/* A set of the TTL alone: four packets at a time when all four are plain
 * IPv4 and none expires, otherwise the specification's per-field step. Not
 * inlined: the registers it needs would be saved on every set's path. */
static __attribute__((noinline)) uint32_t
rewrite_ttl(struct sp_packet *const *pkts, uint32_t n,
            const struct sp_ipv4_set *set)
{
    bool dec_ttl = set->dec_ttl;
    uint8_t ttl = set->ttl, ttl_mask = set->ttl_mask;
    uint32_t keep = (uint8_t)~ttl_mask;
    uint32_t value = (ttl & ttl_mask) + TTL_BIAS;
    const struct ttl_lanes k = {
        .dec = vdupq_n_u32(dec_ttl),
        .keep = vdupq_n_u32(keep),
        .value = vdupq_n_u32(value),
        .live = vdupq_n_u32(dec_ttl ? 2 : 0),
    };
    struct sp_packet *const *p = pkts, *const *end = pkts + (n & ~3u);
    uint32_t expired = 0;

    for (; p != end; p += 4) {
        if (!rewrite_ttl4(p, &k)) {
            expired |= sp_ipv4_rewrite_byte(p, 4, SP_IPV4_TTL_OFS, dec_ttl,
                                            ttl, ttl_mask)
                       << (p - pkts);
        }
    }
    if (n & 3) {
        expired |= sp_ipv4_rewrite_byte(p, n & 3, SP_IPV4_TTL_OFS, dec_ttl,
                                        ttl, ttl_mask)
                   << (p - pkts);
    }
    return expired;
}

/* The first 16 bytes of an image's words as a vector, made in registers
 * (sp_ipv4_image). */
static inline uint8x16_t
image_vector(const uint64_t *words)
{
    return vreinterpretq_u8_u64(
        vcombine_u64(vcreate_u64(words[0]), vcreate_u64(words[1])));
}

/* The whole-header image as vectors. */
struct header_vectors {
    uint8x16_t value, mask, dec;
    uint8x8_t value_hi, mask_hi;
    uint32_t hdr_words, l4_words;
};

/* Rewrites the header at ip by the image and, if l4_csum, the L4
 * checksum there (udp: a UDP one). 'udp' and whether l4_csum is NULL are
 * constants at the calls of the plain shapes. l4_csum is found before
 * the header store: a narrow load of just-stored bytes would wait for
 * store forwarding to fail. */
static inline __attribute__((always_inline)) void
rewrite_header(uint8_t *ip, uint8_t *l4_csum, int udp,
               const struct header_vectors *v)
{
    uint8x16_t old = vld1q_u8(ip), new;
    /* Bytes 16-19; the rest zero, in old and so in new. */
    uint8x8_t old_hi = vcreate_u8(sp_load32(ip + 16)), new_hi;
    uint16x8_t new16, old16;
    int32x4_t lo, hi, top;
    uint16_t csum;

    new = vbslq_u8(v->mask, v->value, vaddq_u8(old, v->dec));
    new_hi = vbsl_u8(v->mask_hi, v->value_hi, old_hi);
    /* new - old of each word, widened: words 0-3, 4-7 (6 and 7: the
     * source) and 8-9 (the destination). */
    new16 = vreinterpretq_u16_u8(new);
    old16 = vreinterpretq_u16_u8(old);
    lo = vreinterpretq_s32_u32(
        vsubl_u16(vget_low_u16(new16), vget_low_u16(old16)));
    hi = vreinterpretq_s32_u32(vsubl_high_u16(new16, old16));
    top = vreinterpretq_s32_u32(
        vsubl_u16(vreinterpret_u16_u8(new_hi), vreinterpret_u16_u8(old_hi)));
    csum = sp_csum_update(
        sp_load16(ip + SP_IPV4_CSUM_OFS),
        sp_ipv4_delta(v->hdr_words,
                      vaddvq_s32(vaddq_s32(vaddq_s32(lo, hi), top))));
    vst1q_u8(ip, vreinterpretq_u8_u16(vsetq_lane_u16(
                     csum, vreinterpretq_u16_u8(new), SP_IPV4_CSUM_OFS / 2)));
    sp_store32(ip + 16, vget_lane_u32(vreinterpret_u32_u8(new_hi), 0));
    sp_ipv4_apply_l4(
        l4_csum, udp,
        sp_ipv4_delta(v->l4_words, vaddvq_s32(vextq_s32(hi, top, 2))));
}

uint32_t
sp_neon_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                     const struct sp_ipv4_set *set)
{
    struct sp_ipv4_image im;
    struct header_vectors v;
    /* Locals: stores to packets could alias *set for the compiler. */
    bool addrs = set->src_mask || set->dst_mask, dec_ttl = set->dec_ttl;
    uint32_t expired = 0;

    /* One header word (the TTL, dec_ttl, or the TOS alone): fewer
     * instructions than the whole header in vectors (docs/perf/arm.md). The
     * TOS alone is the per-field step of the specification, with the set
     * read once, not per packet as the specification must (stores to
     * packets may alias it). */
    if (sp_ipv4_set_one_byte(set)) {
        return set->tos_mask ? sp_ipv4_rewrite_byte(pkts, n, 1, false,
                                                    set->tos, set->tos_mask)
                             : rewrite_ttl(pkts, n, set);
    }
    sp_ipv4_image_init(&im, set);
    if (im.hdr_words == im.l4_words) {
        uint8x8_t addr_value = vcreate_u8(sp_ipv4_image_addrs(im.value));
        uint8x8_t addr_mask = vcreate_u8(sp_ipv4_image_addrs(im.mask));

        for (uint32_t i = 0; i < n; i++) {
            uint32_t hlen;
            uint8_t *ip, *l4_csum;
            int udp;

            if ((ip = sp_ipv4_plain_l4(pkts[i], false, SP_IPPROTO_UDP))) {
                rewrite_addrs(ip, ip + SP_IPV4_HDR_LEN + SP_UDP_CSUM_OFS, 1,
                              addr_value, addr_mask, im.l4_words);
            } else if ((ip = sp_ipv4_plain_l4(pkts[i], false,
                                              SP_IPPROTO_TCP))) {
                rewrite_addrs(ip, ip + SP_IPV4_HDR_LEN + SP_TCP_CSUM_OFS, 0,
                              addr_value, addr_mask, im.l4_words);
            } else if ((ip = sp_ipv4_header(pkts[i], &hlen))) {
                l4_csum = sp_ipv4_l4_csum(pkts[i], ip, hlen, &udp);
                rewrite_addrs(ip, l4_csum, udp, addr_value, addr_mask,
                              im.l4_words);
            }
        }
        return expired;
    }
    v.value = image_vector(im.value);
    v.mask = image_vector(im.mask);
    v.dec = image_vector(im.dec);
    v.value_hi = vcreate_u8(im.value[2]);
    v.mask_hi = vcreate_u8(im.mask[2]);
    v.hdr_words = im.hdr_words;
    v.l4_words = im.l4_words;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen;
        uint8_t *ip, *l4_csum;
        int udp = 0;

        if (addrs) {
            if ((ip = sp_ipv4_plain_l4(pkts[i], dec_ttl, SP_IPPROTO_UDP))) {
                rewrite_header(ip, ip + SP_IPV4_HDR_LEN + SP_UDP_CSUM_OFS, 1,
                               &v);
                continue;
            }
            if ((ip = sp_ipv4_plain_l4(pkts[i], dec_ttl, SP_IPPROTO_TCP))) {
                rewrite_header(ip, ip + SP_IPV4_HDR_LEN + SP_TCP_CSUM_OFS, 0,
                               &v);
                continue;
            }
        }
        ip = sp_ipv4_rewritable(pkts[i], dec_ttl, i, &expired, &hlen);
        if (!ip) {
            continue;
        }
        l4_csum = addrs ? sp_ipv4_l4_csum(pkts[i], ip, hlen, &udp) : NULL;
        rewrite_header(ip, l4_csum, udp, &v);
    }
    return expired;
}
