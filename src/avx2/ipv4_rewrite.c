/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with AVX2: the 20-byte header as one 256-bit register built
 * from a 16-byte and a 4-byte load (no vpmaskmov: qemu and valgrind do not
 * emulate its fault suppression), every field set by one bit-select
 * against the set's image, the checksum terms of every word at once from
 * two vpmaddwd (see sp_ipv4_image), and the header stored back as 16 + 4
 * bytes.
 */
#include <immintrin.h>

#include "ipv4_rewrite.h"
#include "isa.h"

uint32_t
sp_avx2_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
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
        old = _mm256_set_m128i(_mm_cvtsi32_si128((int)sp_load32(ip + 16)),
                               _mm_loadu_si128((const __m128i *)ip));
        new = _mm256_or_si256(
            _mm256_andnot_si256(mask, _mm256_add_epi8(old, dec)), value);
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
        _mm_storeu_si128((__m128i *)ip,
                         _mm_insert_epi16(_mm256_castsi256_si128(new), csum,
                                          SP_IPV4_CSUM_OFS / 2));
        sp_store32(ip + 16, (uint32_t)_mm256_extract_epi32(new, 4));
        sp_ipv4_apply_l4(l4_csum, udp, sp_ipv4_delta(im.l4_words, l4_diff));
    }
    return expired;
}
