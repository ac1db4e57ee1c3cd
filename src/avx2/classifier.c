/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup with AVX2: crc32 hashes (mask_hash.h), then the probing
 * passes of cls_probe.h with one 256-bit compare of a bucket's 5
 * signatures and two 256-bit compares of a 64-byte key.
 */
#include "avx2/mask_hash.h"
#include "cls_probe.h"
#include "isa.h"

/* The 256-bit load takes the bucket's first 32 bytes: the signatures, then
 * n_moved and half a rule pointer, whose lanes are masked off. */
static inline __attribute__((always_inline)) uint32_t
sig_match(const struct sp_cls_bucket *b, uint32_t hash)
{
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(
               _mm256_cmpeq_epi32(_mm256_load_si256((const __m256i *)b),
                                  _mm256_set1_epi32((int)hash)))) &
           ((1u << SP_CLS_SLOTS) - 1);
}

static inline __attribute__((always_inline)) bool
keys_equal(const struct sp_flow_key *a, const struct sp_flow_key *b)
{
    const __m256i *x = (const __m256i *)a, *y = (const __m256i *)b;
    __m256i diff = _mm256_or_si256(
        _mm256_xor_si256(_mm256_load_si256(x), _mm256_load_si256(y)),
        _mm256_xor_si256(_mm256_load_si256(x + 1), _mm256_load_si256(y + 1)));

    return _mm256_testz_si256(diff, diff);
}

uint32_t
sp_avx2_classifier(const struct sp_cls_subtable *st,
                   const struct sp_cls_buckets *buckets,
                   const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                   const struct sp_rule **rules)
{
    struct sp_flow_key masked[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];

    todo &= sp_batch_lanes(n);
    sp_x86_mask_and_hash(st, buckets, keys, todo, masked, hashes);
    return sp_cls_probe(buckets, masked, hashes, todo, rules, sig_match,
                        keys_equal);
}
