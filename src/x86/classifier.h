/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The first pass of the x86 subtable lookups (AVX2 and AVX-512): mask each
 * key, hash it with the carry-less fold of the AVX2 hash kernel (the same
 * value, half the time of a chain of crc32 steps) and prefetch the first
 * candidate bucket, so that the bucket misses of large tables overlap
 * before the probing passes (src/generic/classifier.h) need them.
 * Instantiated by src/avx2/classifier.c and src/avx512/classifier.c; the
 * callers are those of src/generic/classifier.h.
 */
#ifndef SP_X86_CLASSIFIER_H
#define SP_X86_CLASSIFIER_H

#include <immintrin.h>

#include "generic/classifier.h"
#include "x86/crc32c.h"

static inline __attribute__((always_inline)) void
sp_x86_mask_and_hash(const struct sp_cls_subtable *st,
                     const struct sp_cls_buckets *buckets,
                     const struct sp_flow_key *keys, uint32_t todo,
                     struct sp_flow_key *masked, uint32_t *hashes,
                     uint32_t lines)
{
    const __m256i *mask = (const __m256i *)&st->mask;
    __m256i m0 = _mm256_loadu_si256(mask), m1 = _mm256_loadu_si256(mask + 1);

    for (; todo; todo &= todo - 1) {
        unsigned i = (unsigned)__builtin_ctz(todo);
        const __m256i *key = (const __m256i *)&keys[i];
        __m256i lo = _mm256_and_si256(_mm256_loadu_si256(key), m0);
        __m256i hi = _mm256_and_si256(_mm256_loadu_si256(key + 1), m1);

        _mm256_store_si256((__m256i *)&masked[i], lo);
        _mm256_store_si256((__m256i *)&masked[i] + 1, hi);
        hashes[i] = sp_x86_crc32c_key(lo, hi);
        sp_cls_prefetch_bucket(
            sp_cls_bucket_lines(buckets, hashes[i], 0, lines));
    }
}

/* The passes for buckets of 'lines' lines, a constant. */
static inline __attribute__((always_inline)) uint32_t
sp_x86_classifier_lines(const struct sp_cls_subtable *st,
                        const struct sp_cls_buckets *buckets,
                        const struct sp_flow_key *keys, uint32_t todo,
                        const struct sp_rule **rules,
                        sp_cls_sig_match_fn *sig_match,
                        sp_cls_keys_equal_fn *keys_equal, uint32_t lines)
{
    struct sp_flow_key masked[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];

    sp_x86_mask_and_hash(st, buckets, keys, todo, masked, hashes, lines);
    return sp_cls_probe(buckets, masked, hashes, todo, rules, sig_match,
                        keys_equal, lines);
}

/* The x86 subtable lookup: the first pass above, then the probing passes
 * of src/generic/classifier.h with the ISA's signature and key compares,
 * compiled once per bucket layout. */
static inline __attribute__((always_inline)) uint32_t
sp_x86_classifier(const struct sp_cls_subtable *st,
                  const struct sp_cls_buckets *buckets,
                  const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                  const struct sp_rule **rules, sp_cls_sig_match_fn *sig_match,
                  sp_cls_keys_equal_fn *keys_equal)
{
    todo &= sp_batch_lanes(n);
    if (buckets->lines > 1) {
        return sp_x86_classifier_lines(st, buckets, keys, todo, rules,
                                       sig_match, keys_equal,
                                       SP_CLS_LINES_COPIES);
    }
    return sp_x86_classifier_lines(st, buckets, keys, todo, rules, sig_match,
                                   keys_equal, 1);
}

#endif /* SP_X86_CLASSIFIER_H */
