/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with AVX-512: the 20-byte header in one masked 256-bit load,
 * every field set by one bit-select (vpternlogd) against the set's image,
 * the checksum terms of every word at once from two vpmaddwd (see
 * sp_ipv4_image), and one masked store. The masked load and store never
 * touch a byte past the header.
 */
#include <immintrin.h>

#include "ipv4_rewrite.h"
#include "isa.h"

#define HDR_BYTES ((__mmask32)0xfffff)

/* The bit-select C ? B : A of vpternlogd. */
#define SELECT_B_IF_C 0xd8

uint32_t
sp_avx512_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                       const struct sp_ipv4_set *set)
{
    struct sp_ipv4_image im;
    __m256i value, mask, dec, bias, ones;
    int addrs = set->src_mask || set->dst_mask;
    uint32_t expired = 0;

    sp_ipv4_image_init(&im, set);
    value = _mm256_loadu_si256((const __m256i *)im.value);
    mask = _mm256_loadu_si256((const __m256i *)im.mask);
    dec = _mm256_loadu_si256((const __m256i *)im.dec);
    /* vpmaddwd multiplies signed words: flipping the top bit of old and
     * new alike makes each word w - 0x8000, which cancels in new - old. */
    bias = _mm256_set1_epi16((short)0x8000);
    ones = _mm256_set1_epi16(1);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen;
        uint8_t *ip = sp_ipv4_header(pkts[i], &hlen);
        uint8_t *l4_csum;
        int udp = 0;
        int32_t l4_diff;
        __m256i old, new, diffs;
        __m128i lo, hi;
        uint16_t csum;

        if (!ip) {
            continue;
        }
        if (sp_ipv4_ttl_expired(set, ip)) {
            expired |= UINT32_C(1) << i;
            continue;
        }
        /* Found before the header store: a narrow load of just-stored
         * bytes would wait for store forwarding to fail. */
        l4_csum = addrs ? sp_ipv4_l4_csum(pkts[i], ip, hlen, &udp) : NULL;
        old = _mm256_maskz_loadu_epi8(HDR_BYTES, ip);
        new = _mm256_ternarylogic_epi32(_mm256_add_epi8(old, dec), value, mask,
                                        SELECT_B_IF_C);
        /* 32-bit lane k: new - old of words 2k and 2k + 1; lanes 3 and 4
         * are the source and destination addresses. */
        diffs = _mm256_sub_epi32(
            _mm256_madd_epi16(_mm256_xor_si256(new, bias), ones),
            _mm256_madd_epi16(_mm256_xor_si256(old, bias), ones));
        lo = _mm256_castsi256_si128(diffs);
        hi = _mm256_extracti128_si256(diffs, 1);
        l4_diff = _mm_extract_epi32(lo, 3) + _mm_cvtsi128_si32(hi);
        lo = _mm_add_epi32(lo, hi);
        lo = _mm_add_epi32(lo, _mm_shuffle_epi32(lo, 0x4e));
        lo = _mm_add_epi32(lo, _mm_shuffle_epi32(lo, 0xb1));
        csum =
            sp_csum_update(sp_load16(ip + SP_IPV4_CSUM_OFS),
                           sp_ipv4_delta(im.hdr_words, _mm_cvtsi128_si32(lo)));
        new = _mm256_mask_set1_epi16(new, 1u << (SP_IPV4_CSUM_OFS / 2),
                                     (short)csum);
        _mm256_mask_storeu_epi8(ip, HDR_BYTES, new);
        sp_ipv4_apply_l4(l4_csum, udp, sp_ipv4_delta(im.l4_words, l4_diff));
    }
    return expired;
}
