/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The x86 SIMD variants of ipv4_rewrite, which differ only in how a 20-byte
 * header comes into a 256-bit register and goes back: AVX-512 with masked
 * loads and stores, AVX2 with a 16-byte and a 4-byte access. Each folder
 * passes its own load and store, which always_inline turns into direct
 * code. Needs AVX2. The callers are those of src/generic/ipv4_rewrite.h.
 */
#ifndef SP_X86_IPV4_REWRITE_H
#define SP_X86_IPV4_REWRITE_H

#include <immintrin.h>

#include "generic/ipv4_rewrite.h"

/* Reads the 20 header bytes at ip into the low bytes of a register (the
 * rest zero); writes them back. */
typedef __m256i sp_ipv4_load_fn(const uint8_t *ip);
typedef void sp_ipv4_store_fn(uint8_t *ip, __m256i hdr);

/* A set that touches only the addresses changes 8 contiguous bytes (12 to
 * 19): one 64-bit lane holds them, and the header's terms are the L4
 * ones. 'value' and 'mask' are those bytes of the image; l4_csum and udp
 * are sp_ipv4_l4_csum's (constants at the calls of the plain shapes). */
static inline __attribute__((always_inline)) void
sp_ipv4_rewrite_addrs(uint8_t *ip, uint8_t *l4_csum, int udp, __m128i value,
                      __m128i mask, uint32_t words)
{
    const __m128i bias = _mm_set1_epi16((short)0x8000);
    const __m128i ones = _mm_set1_epi16(1);
    __m128i old = _mm_loadl_epi64((const __m128i *)(ip + SP_IPV4_SRC_OFS));
    __m128i new = _mm_or_si128(_mm_andnot_si128(mask, old), value);
    /* Lanes 0 and 1: new - old of the source and destination words. */
    uint64_t diffs = (uint64_t)_mm_cvtsi128_si64(
        _mm_sub_epi32(_mm_madd_epi16(_mm_xor_si128(new, bias), ones),
                      _mm_madd_epi16(_mm_xor_si128(old, bias), ones)));
    uint32_t delta = sp_ipv4_delta(
        words, (int32_t)(uint32_t)diffs + (int32_t)(uint32_t)(diffs >> 32));

    _mm_storel_epi64((__m128i *)(ip + SP_IPV4_SRC_OFS), new);
    sp_csum_update_at(ip + SP_IPV4_CSUM_OFS, delta);
    sp_ipv4_apply_l4(l4_csum, udp, delta);
}

/* The loop for a set of addresses alone: apart from the whole-header one,
 * so that AVX2's 16 registers need not hold that loop's vectors too. */
static inline uint32_t
sp_ipv4_rewrite_addrs_only(struct sp_packet *const *pkts, uint32_t n,
                           const struct sp_ipv4_image *im)
{
    __m128i value =
        _mm_cvtsi64_si128((long long)sp_ipv4_image_addrs(im->value));
    __m128i mask = _mm_cvtsi64_si128((long long)sp_ipv4_image_addrs(im->mask));
    uint32_t words = im->l4_words;

    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen;
        uint8_t *ip;
        int udp;

        if ((ip = sp_ipv4_plain_l4(pkts[i], false, SP_IPPROTO_UDP))) {
            sp_ipv4_rewrite_addrs(ip, ip + SP_IPV4_HDR_LEN + SP_UDP_CSUM_OFS,
                                  1, value, mask, words);
        } else if ((ip = sp_ipv4_plain_l4(pkts[i], false, SP_IPPROTO_TCP))) {
            sp_ipv4_rewrite_addrs(ip, ip + SP_IPV4_HDR_LEN + SP_TCP_CSUM_OFS,
                                  0, value, mask, words);
        } else if ((ip = sp_ipv4_header(pkts[i], &hlen))) {
            uint8_t *l4_csum = sp_ipv4_l4_csum(pkts[i], ip, hlen, &udp);

            sp_ipv4_rewrite_addrs(ip, l4_csum, udp, value, mask, words);
        }
    }
    return 0; /* no dec_ttl, nothing expires */
}

/* A set that touches neither address changes the TOS byte (1) and the
 * TTL byte (8) at most: done in general-purpose registers, with the
 * image's value, mask and decrement, and the header checksum updated with
 * the differences of the words as the vector code sums them (host-order
 * words: TOS is the high byte of its word, TTL the low one of its). The
 * vector's round trip is longer, for lanes mostly unchanged. */
static inline void
sp_ipv4_rewrite_tos_ttl(uint8_t *ip, const struct sp_ipv4_image *im)
{
    unsigned ttl_ofs = SP_IPV4_TTL_OFS;
    uint8_t tos = ip[1], ttl = ip[ttl_ofs];
    uint8_t new_tos = (uint8_t)((tos & ~sp_ipv4_image_byte(im->mask, 1)) |
                                sp_ipv4_image_byte(im->value, 1));
    uint8_t new_ttl = (uint8_t)(((ttl + sp_ipv4_image_byte(im->dec, ttl_ofs)) &
                                 ~sp_ipv4_image_byte(im->mask, ttl_ofs)) |
                                sp_ipv4_image_byte(im->value, ttl_ofs));
    int32_t diff = (new_tos - tos) * 256 + (new_ttl - ttl);

    sp_csum_update_at(ip + SP_IPV4_CSUM_OFS,
                      sp_ipv4_delta(im->hdr_words, diff));
    ip[1] = new_tos;
    ip[ttl_ofs] = new_ttl;
}

/* An image's words as a vector, made in registers (sp_ipv4_image). */
static inline __m256i
sp_ipv4_image_vector(const uint64_t *words)
{
    return _mm256_set_epi64x((long long)words[3], (long long)words[2],
                             (long long)words[1], (long long)words[0]);
}

/* The whole-header loop's image as vectors. vpmaddwd multiplies signed
 * words: flipping the top bit of old and new alike (bias) makes each word
 * w - 0x8000, which cancels in new - old. */
struct sp_ipv4_vectors {
    __m256i value, mask, dec, bias, ones;
    uint32_t hdr_words, l4_words;
};

/* Rewrites the header at ip by the image and, if l4_csum, the L4
 * checksum there (udp: a UDP one). 'udp' and whether l4_csum is NULL are
 * constants at the calls of the plain shapes. */
static inline __attribute__((always_inline)) void
sp_ipv4_rewrite_header(uint8_t *ip, uint8_t *l4_csum, int udp,
                       const struct sp_ipv4_vectors *v, sp_ipv4_load_fn *load,
                       sp_ipv4_store_fn *store)
{
    /* Read before the header store: a narrow load of just-stored bytes
     * would wait for store forwarding to fail, and one of bytes the
     * AVX-512 masked store only covers (it is 32 bytes wide) for that
     * store to complete. */
    uint16_t hdr_old = sp_load16(ip + SP_IPV4_CSUM_OFS);
    uint16_t l4_old = l4_csum ? sp_load16(l4_csum) : 0;
    __m256i old = load(ip), new, diffs;
    __m128i lo, hi;
    int32_t l4_diff;

    new = _mm256_or_si256(
        _mm256_andnot_si256(v->mask, _mm256_add_epi8(old, v->dec)), v->value);
    /* 32-bit lane k: new - old of words 2k and 2k + 1; lanes 3 and 4 are
     * the source and destination addresses. */
    diffs = _mm256_sub_epi32(
        _mm256_madd_epi16(_mm256_xor_si256(new, v->bias), v->ones),
        _mm256_madd_epi16(_mm256_xor_si256(old, v->bias), v->ones));
    lo = _mm256_castsi256_si128(diffs);
    hi = _mm256_extracti128_si256(diffs, 1);
    l4_diff = _mm_extract_epi32(lo, 3) + _mm_cvtsi128_si32(hi);
    lo = _mm_add_epi32(lo, hi);
    lo = _mm_add_epi32(lo, _mm_shuffle_epi32(lo, 0x4e));
    lo = _mm_add_epi32(lo, _mm_shuffle_epi32(lo, 0xb1));
    /* The header's checksum by a store of its own, after the header's:
     * that store then waits for none of the sums. */
    store(ip, new);
    sp_store16(ip + SP_IPV4_CSUM_OFS,
               sp_csum_update(hdr_old, sp_ipv4_delta(v->hdr_words,
                                                     _mm_cvtsi128_si32(lo))));
    if (l4_csum) {
        sp_store16(l4_csum,
                   sp_ipv4_l4_updated(l4_old, udp,
                                      sp_ipv4_delta(v->l4_words, l4_diff)));
    }
}

/* The loop for a set with an address: the plain shapes first, with their
 * protocol a constant; dec_ttl is one at each call, so that no packet
 * tests it. */
static inline __attribute__((always_inline)) uint32_t
sp_ipv4_rewrite_headers(struct sp_packet *const *pkts, uint32_t n,
                        bool dec_ttl, const struct sp_ipv4_vectors *v,
                        sp_ipv4_load_fn *load, sp_ipv4_store_fn *store)
{
    uint32_t expired = 0;

    for (uint32_t i = 0; i < n; i++) {
        uint8_t *ip, *l4_csum;
        uint32_t hlen;
        int udp;

        if ((ip = sp_ipv4_plain_l4(pkts[i], dec_ttl, SP_IPPROTO_UDP))) {
            sp_ipv4_rewrite_header(ip, ip + SP_IPV4_HDR_LEN + SP_UDP_CSUM_OFS,
                                   1, v, load, store);
            continue;
        }
        if ((ip = sp_ipv4_plain_l4(pkts[i], dec_ttl, SP_IPPROTO_TCP))) {
            sp_ipv4_rewrite_header(ip, ip + SP_IPV4_HDR_LEN + SP_TCP_CSUM_OFS,
                                   0, v, load, store);
            continue;
        }
        ip = sp_ipv4_rewritable(pkts[i], dec_ttl, i, &expired, &hlen);
        if (ip) {
            l4_csum = sp_ipv4_l4_csum(pkts[i], ip, hlen, &udp);
            sp_ipv4_rewrite_header(ip, l4_csum, udp, v, load, store);
        }
    }
    return expired;
}

/* The loop for a set of the TOS and the TTL, no address. */
static inline uint32_t
sp_ipv4_rewrite_tos_ttl_only(struct sp_packet *const *pkts, uint32_t n,
                             bool dec_ttl, const struct sp_ipv4_image *im)
{
    uint32_t expired = 0;

    for (uint32_t i = 0; i < n; i++) {
        uint32_t hlen;
        uint8_t *ip = sp_ipv4_rewritable(pkts[i], dec_ttl, i, &expired, &hlen);

        if (ip) {
            sp_ipv4_rewrite_tos_ttl(ip, im);
        }
    }
    return expired;
}

static inline __attribute__((always_inline)) uint32_t
sp_ipv4_rewrite_x86(struct sp_packet *const *pkts, uint32_t n,
                    const struct sp_ipv4_set *set, sp_ipv4_load_fn *load,
                    sp_ipv4_store_fn *store)
{
    struct sp_ipv4_image im;
    struct sp_ipv4_vectors v;
    /* A local: stores to packets could alias *set for the compiler. */
    bool dec_ttl = set->dec_ttl;

    /* A set of the TTL alone (dec_ttl, the commonest) or of the TOS alone
     * changes a byte and a checksum word: the per-field step beats
     * whole-header vector work (docs/perf/kernels.md). */
    if (sp_ipv4_set_one_byte(set)) {
        if (set->tos_mask) {
            return sp_ipv4_rewrite_byte(pkts, n, 1, false, set->tos,
                                        set->tos_mask);
        }
        /* dec_ttl alone, in a loop of its own: sp_ipv4_dec_ttl's constant
         * checksum terms, and no set to read. */
        return dec_ttl && !set->ttl_mask
                   ? sp_ipv4_rewrite_byte(pkts, n, SP_IPV4_TTL_OFS, true, 0, 0)
                   : sp_ipv4_rewrite_byte(pkts, n, SP_IPV4_TTL_OFS, dec_ttl,
                                          set->ttl, set->ttl_mask);
    }
    sp_ipv4_image_init(&im, set);
    if (!im.l4_words) {
        return sp_ipv4_rewrite_tos_ttl_only(pkts, n, dec_ttl, &im);
    }
    if (im.hdr_words == im.l4_words) {
        return sp_ipv4_rewrite_addrs_only(pkts, n, &im);
    }
    v.value = sp_ipv4_image_vector(im.value);
    v.mask = sp_ipv4_image_vector(im.mask);
    v.dec = sp_ipv4_image_vector(im.dec);
    v.bias = _mm256_set1_epi16((short)0x8000);
    v.ones = _mm256_set1_epi16(1);
    v.hdr_words = im.hdr_words;
    v.l4_words = im.l4_words;
    return dec_ttl ? sp_ipv4_rewrite_headers(pkts, n, true, &v, load, store)
                   : sp_ipv4_rewrite_headers(pkts, n, false, &v, load, store);
}

#endif /* SP_X86_IPV4_REWRITE_H */
