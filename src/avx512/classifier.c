/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup with AVX-512: crc32 hashes and the probing passes
 * (src/x86/classifier.h, src/generic/classifier.h) with a bucket's 5
 * signatures compared into a mask register and a 64-byte key in one 512-bit
 * compare (compare.h).
 */
#include "avx512/compare.h"
#include "dispatch/isa.h"
#include "x86/classifier.h"

/* The 256-bit load takes the bucket's first 32 bytes: the signatures, then
 * moved_hint and half a rule pointer, which the compare mask leaves out. */
static inline __attribute__((always_inline)) uint32_t
sig_match(const struct sp_cls_bucket *b, uint32_t hash)
{
    return _mm256_mask_cmpeq_epi32_mask((1u << SP_CLS_SLOTS) - 1,
                                        _mm256_load_si256((const __m256i *)b),
                                        _mm256_set1_epi32((int)hash));
}

uint32_t
sp_avx512_classifier(const struct sp_cls_subtable *st,
                     const struct sp_cls_buckets *buckets,
                     const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                     const struct sp_rule **rules)
{
    return sp_x86_classifier(st, buckets, keys, n, todo, rules, sig_match,
                             sp_avx512_keys_equal);
}
