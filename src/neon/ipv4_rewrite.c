/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with NEON: the 20-byte header as a 128-bit and a 64-bit
 * register (16 + 4 bytes loaded, nothing past the header), every field set
 * by one bit-select (vbsl) against the set's image, the checksum terms of
 * all touched words (~old + new) summed pairwise into 32-bit lanes (vpaddl)
 * and reduced once (vaddv), and the header stored back as 16 + 4 bytes.
 */
#include <arm_neon.h>

#include "ipv4_rewrite.h"
#include "isa.h"

uint32_t
sp_neon_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                     const struct sp_ipv4_set *set)
{
    struct sp_ipv4_image im;
    uint8x16_t value, mask, touched, dec;
    uint8x8_t value_hi, mask_hi, touched_hi;
    int addrs = set->src_mask || set->dst_mask;
    uint32_t expired = 0;

    sp_ipv4_image_init(&im, set);
    value = vld1q_u8(im.value);
    mask = vld1q_u8(im.mask);
    touched = vld1q_u8(im.touched);
    dec = vld1q_u8(im.dec);
    value_hi = vld1_u8(im.value + 16);
    mask_hi = vld1_u8(im.mask + 16);
    touched_hi = vld1_u8(im.touched + 16);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen, dst_sum;
        uint8_t *ip = sp_ipv4_header(pkts[i], &hlen);
        uint8x16_t old, new;
        uint8x8_t old_hi, new_hi;
        uint32x4_t sums;
        uint32x2_t sums_hi;
        uint16_t csum;

        if (!ip) {
            continue;
        }
        if (sp_ipv4_ttl_expired(set, ip)) {
            expired |= UINT32_C(1) << i;
            continue;
        }
        old = vld1q_u8(ip);
        old_hi = vreinterpret_u8_u32(vdup_n_u32(sp_load32(ip + 16)));
        new = vbslq_u8(mask, value, vaddq_u8(old, dec));
        new_hi = vbsl_u8(mask_hi, value_hi, old_hi);
        /* Pairs of 16-bit terms into 32-bit lanes: lane 3 is the source,
         * the high part's lane 0 the destination. */
        sums = vpaddlq_u16(vreinterpretq_u16_u8(vbicq_u8(touched, old)));
        sums = vpadalq_u16(sums, vreinterpretq_u16_u8(vandq_u8(new, touched)));
        sums_hi = vpaddl_u16(vreinterpret_u16_u8(vbic_u8(touched_hi, old_hi)));
        sums_hi = vpadal_u16(sums_hi,
                             vreinterpret_u16_u8(vand_u8(new_hi, touched_hi)));
        dst_sum = vget_lane_u32(sums_hi, 0);
        csum = sp_csum_update(sp_load16(ip + SP_IPV4_CSUM_OFS),
                              (uint64_t)vaddvq_u32(sums) + dst_sum);
        vst1q_u8(ip,
                 vreinterpretq_u8_u16(vsetq_lane_u16(
                     csum, vreinterpretq_u16_u8(new), SP_IPV4_CSUM_OFS / 2)));
        sp_store32(ip + 16, vget_lane_u32(vreinterpret_u32_u8(new_hi), 0));
        if (addrs) {
            sp_ipv4_update_l4(pkts[i], ip, hlen,
                              (uint64_t)vgetq_lane_u32(sums, 3) + dst_sum);
        }
    }
    return expired;
}
