/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with NEON, on the helpers of src/generic/ipv4_rewrite.h: the
 * 20-byte header as a 128-bit and a 64-bit register (16 + 4 bytes loaded,
 * nothing past the header), every field set by one bit-select (vbsl) against
 * the set's image, the checksum terms of every word at once as pairwise sums
 * of new minus those of old (see sp_ipv4_image), reduced by vaddv, and the
 * header stored back as 16 + 4 bytes. A set of addresses only works on their 8
 * bytes, as on x86; a set of one word (the TTL or the TOS) is the scalar
 * per-field step, with the set read once per batch.
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
    /* new - old of each of the 4 address words, widened, then summed. */
    int32x4_t diffs = vreinterpretq_s32_u32(
        vsubl_u16(vreinterpret_u16_u8(new), vreinterpret_u16_u8(old)));
    uint32_t delta = sp_ipv4_delta(words, vaddvq_s32(diffs));
    int udp;
    uint8_t *l4_csum = sp_ipv4_l4_csum(pkt, ip, hlen, &udp);

    vst1_u8(ip + SP_IPV4_SRC_OFS, new);
    sp_csum_update_at(ip + SP_IPV4_CSUM_OFS, delta);
    sp_ipv4_apply_l4(l4_csum, udp, delta);
}

/* The set of one byte of the header: 'ofs' and 'dec' for it. */
static inline __attribute__((always_inline)) uint32_t
rewrite_byte(struct sp_packet *const *pkts, uint32_t n, unsigned ofs, bool dec,
             uint8_t value, uint8_t mask)
{
    uint32_t expired = 0;

    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen;
        uint8_t *ip = sp_ipv4_rewritable(pkts[i], dec, i, &expired, &hlen);

        if (ip) {
            sp_ipv4_set_byte(ip, ofs, dec, value, mask);
        }
    }
    return expired;
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
    uint32_t expired = 0;

    /* One header word (the TTL, dec_ttl, or the TOS alone): the per-field
     * step of the specification takes fewer instructions than the whole
     * header in vectors, and with the set read once, not per packet as
     * the specification must (stores to packets may alias it), fewer than
     * the specification (docs/perf/arm.md). */
    if (!addrs && !set->tos_mask != !(set->ttl_mask || dec_ttl)) {
        return set->tos_mask
                   ? rewrite_byte(pkts, n, 1, false, set->tos, set->tos_mask)
                   : rewrite_byte(pkts, n, SP_IPV4_TTL_OFS, dec_ttl, set->ttl,
                                  set->ttl_mask);
    }
    sp_ipv4_image_init(&im, set);
    if (im.hdr_words == im.l4_words) {
        uint8x8_t addr_value = vld1_u8(im.value + SP_IPV4_SRC_OFS);
        uint8x8_t addr_mask = vld1_u8(im.mask + SP_IPV4_SRC_OFS);

        for (uint32_t i = 0; i < n; i++) {
            uint32_t hlen;
            uint8_t *ip =
                sp_ipv4_rewritable(pkts[i], dec_ttl, i, &expired, &hlen);

            if (ip) {
                rewrite_addrs(pkts[i], ip, hlen, addr_value, addr_mask,
                              im.l4_words);
            }
        }
        return expired;
    }
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
        uint8x16_t old, new;
        uint8x8_t old_hi, new_hi;
        uint16x8_t new16, old16;
        int32x4_t lo, hi, top;
        uint16_t csum;

        if (!ip) {
            continue;
        }
        /* Found before the header store: a narrow load of just-stored
         * bytes would wait for store forwarding to fail. */
        l4_csum = addrs ? sp_ipv4_l4_csum(pkts[i], ip, hlen, &udp) : NULL;
        old = vld1q_u8(ip);
        /* Bytes 16-19; the rest zero, in old and so in new. */
        old_hi = vcreate_u8(sp_load32(ip + 16));
        new = vbslq_u8(mask, value, vaddq_u8(old, dec));
        new_hi = vbsl_u8(mask_hi, value_hi, old_hi);
        /* new - old of each word, widened: words 0-3, 4-7 (6 and 7: the
         * source) and 8-9 (the destination). */
        new16 = vreinterpretq_u16_u8(new);
        old16 = vreinterpretq_u16_u8(old);
        lo = vreinterpretq_s32_u32(
            vsubl_u16(vget_low_u16(new16), vget_low_u16(old16)));
        hi = vreinterpretq_s32_u32(vsubl_high_u16(new16, old16));
        top = vreinterpretq_s32_u32(vsubl_u16(vreinterpret_u16_u8(new_hi),
                                              vreinterpret_u16_u8(old_hi)));
        csum = sp_csum_update(
            sp_load16(ip + SP_IPV4_CSUM_OFS),
            sp_ipv4_delta(im.hdr_words,
                          vaddvq_s32(vaddq_s32(vaddq_s32(lo, hi), top))));
        vst1q_u8(ip,
                 vreinterpretq_u8_u16(vsetq_lane_u16(
                     csum, vreinterpretq_u16_u8(new), SP_IPV4_CSUM_OFS / 2)));
        sp_store32(ip + 16, vget_lane_u32(vreinterpret_u32_u8(new_hi), 0));
        sp_ipv4_apply_l4(
            l4_csum, udp,
            sp_ipv4_delta(im.l4_words, vaddvq_s32(vextq_s32(hi, top, 2))));
    }
    return expired;
}
