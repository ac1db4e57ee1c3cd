/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with AVX2: the 20-byte header as one 256-bit register built
 * from a 16-byte load and a 4-byte load (no vpmaskmov: qemu and valgrind do
 * not emulate its fault suppression), every field set by one bit-select
 * against the set's image, the checksum terms of all touched words
 * (~old + new) summed in 32-bit lanes and reduced once, and the header
 * stored back as 16 + 4 bytes.
 */
#include <immintrin.h>

#include "ipv4_rewrite.h"
#include "isa.h"

uint32_t
sp_avx2_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                     const struct sp_ipv4_set *set)
{
    struct sp_ipv4_image im;
    __m256i value, mask, touched, dec, low_words;
    int addrs = set->src_mask || set->dst_mask;
    uint32_t expired = 0;

    sp_ipv4_image_init(&im, set);
    value = _mm256_loadu_si256((const __m256i *)im.value);
    mask = _mm256_loadu_si256((const __m256i *)im.mask);
    touched = _mm256_loadu_si256((const __m256i *)im.touched);
    dec = _mm256_loadu_si256((const __m256i *)im.dec);
    low_words = _mm256_set1_epi32(0xffff);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen, l4_sum, hdr_sum, dst_sum;
        uint8_t *ip = sp_ipv4_header(pkts[i], &hlen);
        __m256i old, new, terms_old, terms_new, sums;
        __m128i lo;
        uint16_t csum;

        if (!ip) {
            continue;
        }
        if (sp_ipv4_ttl_expired(set, ip)) {
            expired |= UINT32_C(1) << i;
            continue;
        }
        old = _mm256_set_m128i(_mm_cvtsi32_si128((int)sp_load32(ip + 16)),
                               _mm_loadu_si128((const __m128i *)ip));
        new = _mm256_or_si256(
            _mm256_andnot_si256(mask, _mm256_add_epi8(old, dec)), value);
        terms_old = _mm256_andnot_si256(old, touched);
        terms_new = _mm256_and_si256(new, touched);
        sums = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_srli_epi32(terms_old, 16),
                             _mm256_srli_epi32(terms_new, 16)),
            _mm256_add_epi32(_mm256_and_si256(terms_old, low_words),
                             _mm256_and_si256(terms_new, low_words)));
        /* 32-bit lanes 3 and 4 hold the source and destination terms. */
        lo = _mm256_castsi256_si128(sums);
        dst_sum = (uint32_t)_mm256_extract_epi32(sums, 4);
        l4_sum = (uint32_t)_mm_extract_epi32(lo, 3) + dst_sum;
        lo = _mm_add_epi32(lo, _mm_shuffle_epi32(lo, 0x4e));
        lo = _mm_add_epi32(lo, _mm_shuffle_epi32(lo, 0xb1));
        hdr_sum = (uint32_t)_mm_cvtsi128_si32(lo) + dst_sum;
        csum = sp_csum_update(sp_load16(ip + SP_IPV4_CSUM_OFS), hdr_sum);
        _mm_storeu_si128((__m128i *)ip,
                         _mm_insert_epi16(_mm256_castsi256_si128(new), csum,
                                          SP_IPV4_CSUM_OFS / 2));
        sp_store32(ip + 16, (uint32_t)_mm256_extract_epi32(new, 4));
        if (addrs) {
            sp_ipv4_update_l4(pkts[i], ip, hlen, l4_sum);
        }
    }
    return expired;
}
