/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with NEON, on the helpers of src/generic/ipv4_rewrite.h: the
 * 20-byte header as a 128-bit and a 64-bit register (16 + 4 bytes loaded,
 * nothing past the header), every field set by one bit-select (vbsl) against
 * the set's image, the checksum terms of every word at once as pairwise sums
 * of new minus those of old (see sp_ipv4_image), reduced by vaddv, and the
 * header stored back as 16 + 4 bytes. A set of addresses only works on their 8
 * bytes, as on x86; a set of one word (the TTL or the TOS) is the scalar
 * per-field code.
 */
#include <arm_neon.h>

#include "dispatch/isa.h"
#include "generic/ipv4_rewrite.h"

/* The 8 address bytes (12 to 19) alone; 'value' and 'mask' are those bytes
 * of the image, and the header's terms are the L4 ones. */
static void
rewrite_addrs(const struct sp_packet *pkt, uint8_t *ip, uint32_t hlen,
              uint8x8_t value, uint8x8_t mask, uint32_t words)
{
    uint8x8_t old = vld1_u8(ip + SP_IPV4_SRC_OFS);
    uint8x8_t new = vbsl_u8(mask, value, old);
    /* Lanes 0 and 1: new - old of the source and destination words. */
    int32x2_t diffs =
        vreinterpret_s32_u32(vsub_u32(vpaddl_u16(vreinterpret_u16_u8(new)),
                                      vpaddl_u16(vreinterpret_u16_u8(old))));
    uint32_t delta = sp_ipv4_delta(words, vget_lane_s32(diffs, 0) +
                                              vget_lane_s32(diffs, 1));
    int udp;
    uint8_t *l4_csum = sp_ipv4_l4_csum(pkt, ip, hlen, &udp);

    vst1_u8(ip + SP_IPV4_SRC_OFS, new);
    sp_csum_update_at(ip + SP_IPV4_CSUM_OFS, delta);
    sp_ipv4_apply_l4(l4_csum, udp, delta);
}

uint32_t
sp_neon_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                     const struct sp_ipv4_set *set)
{
    struct sp_ipv4_image im;
    uint8x16_t value, mask, dec;
    uint8x8_t value_hi, mask_hi;
    /* Locals: stores to packets could alias *set for the compiler. */
    bool addrs = set->src_mask || set->dst_mask, dec_ttl = set->dec_ttl;
    bool only_addrs;
    uint32_t expired = 0;

    /* One header word (the TTL, dec_ttl, or the TOS alone): the per-field
     * specification takes fewer instructions than the whole header in
     * vectors (docs/perf/arm.md). */
    if (!addrs && !set->tos_mask != !(set->ttl_mask || dec_ttl)) {
        return sp_scalar_ipv4_rewrite(pkts, n, set);
    }
    sp_ipv4_image_init(&im, set);
    only_addrs = im.hdr_words == im.l4_words;
    value = vld1q_u8(im.value);
    mask = vld1q_u8(im.mask);
    dec = vld1q_u8(im.dec);
    value_hi = vld1_u8(im.value + 16);
    mask_hi = vld1_u8(im.mask + 16);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen;
        uint8_t *ip = sp_ipv4_rewritable(pkts[i], dec_ttl, i, &expired, &hlen);
        uint8_t *l4_csum;
        int udp = 0;
        int32_t dst_diff;
        uint8x16_t old, new;
        uint8x8_t old_hi, new_hi;
        int32x4_t diffs;
        uint16_t csum;

        if (!ip) {
            continue;
        }
        if (only_addrs) {
            rewrite_addrs(pkts[i], ip, hlen,
                          vld1_u8(im.value + SP_IPV4_SRC_OFS),
                          vld1_u8(im.mask + SP_IPV4_SRC_OFS), im.l4_words);
            continue;
        }
        /* Found before the header store: a narrow load of just-stored
         * bytes would wait for store forwarding to fail. */
        l4_csum = addrs ? sp_ipv4_l4_csum(pkts[i], ip, hlen, &udp) : NULL;
        old = vld1q_u8(ip);
        old_hi = vreinterpret_u8_u32(vdup_n_u32(sp_load32(ip + 16)));
        new = vbslq_u8(mask, value, vaddq_u8(old, dec));
        new_hi = vbsl_u8(mask_hi, value_hi, old_hi);
        /* Lane k: new - old of words 2k and 2k + 1 (lane 3: the source);
         * the destination from the high part. */
        diffs = vreinterpretq_s32_u32(
            vsubq_u32(vpaddlq_u16(vreinterpretq_u16_u8(new)),
                      vpaddlq_u16(vreinterpretq_u16_u8(old))));
        dst_diff = vget_lane_s32(vreinterpret_s32_u32(vsub_u32(
                                     vpaddl_u16(vreinterpret_u16_u8(new_hi)),
                                     vpaddl_u16(vreinterpret_u16_u8(old_hi)))),
                                 0);
        csum = sp_csum_update(
            sp_load16(ip + SP_IPV4_CSUM_OFS),
            sp_ipv4_delta(im.hdr_words, vaddvq_s32(diffs) + dst_diff));
        vst1q_u8(ip,
                 vreinterpretq_u8_u16(vsetq_lane_u16(
                     csum, vreinterpretq_u16_u8(new), SP_IPV4_CSUM_OFS / 2)));
        sp_store32(ip + 16, vget_lane_u32(vreinterpret_u32_u8(new_hi), 0));
        sp_ipv4_apply_l4(
            l4_csum, udp,
            sp_ipv4_delta(im.l4_words, vgetq_lane_s32(diffs, 3) + dst_diff));
    }
    return expired;
}
