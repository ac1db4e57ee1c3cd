/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with AVX-512: the 20-byte header in one masked 256-bit load,
 * every field set by one bit-select (vpternlogd) against the set's image,
 * and the checksum terms of all touched words (~old + new) summed in 32-bit
 * lanes and reduced once; one masked store writes the header back. The
 * masked load and store never touch a byte past the header.
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
        uint32_t hlen, l4_sum, hdr_sum;
        uint8_t *ip = sp_ipv4_header(pkts[i], &hlen);
        __m256i old, new, terms_old, terms_new, sums;
        __m128i lo;

        if (!ip) {
            continue;
        }
        if (sp_ipv4_ttl_expired(set, ip)) {
            expired |= UINT32_C(1) << i;
            continue;
        }
        old = _mm256_maskz_loadu_epi8(HDR_BYTES, ip);
        new = _mm256_ternarylogic_epi32(_mm256_add_epi8(old, dec), value, mask,
                                        SELECT_B_IF_C);
        terms_old = _mm256_andnot_si256(old, touched);
        terms_new = _mm256_and_si256(new, touched);
        sums = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_srli_epi32(terms_old, 16),
                             _mm256_srli_epi32(terms_new, 16)),
            _mm256_add_epi32(_mm256_and_si256(terms_old, low_words),
                             _mm256_and_si256(terms_new, low_words)));
        /* 32-bit lanes 3 and 4 hold the source and destination terms. */
        lo = _mm256_castsi256_si128(sums);
        l4_sum = (uint32_t)_mm_extract_epi32(lo, 3) +
                 (uint32_t)_mm256_extract_epi32(sums, 4);
        lo = _mm_add_epi32(lo, _mm_shuffle_epi32(lo, 0x4e));
        lo = _mm_add_epi32(lo, _mm_shuffle_epi32(lo, 0xb1));
        hdr_sum = (uint32_t)_mm_cvtsi128_si32(lo) +
                  (uint32_t)_mm256_extract_epi32(sums, 4);
        new = _mm256_mask_set1_epi16(
            new, 1u << (SP_IPV4_CSUM_OFS / 2),
            (short)sp_csum_update(sp_load16(ip + SP_IPV4_CSUM_OFS), hdr_sum));
        _mm256_mask_storeu_epi8(ip, HDR_BYTES, new);
        if (addrs) {
            sp_ipv4_update_l4(pkts[i], ip, hlen, l4_sum);
        }
    }
    return expired;
}
