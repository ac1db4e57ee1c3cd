/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup with AVX2: crc32 hashes and the probing passes
 * (src/x86/classifier.h, src/generic/classifier.h) with one 256-bit compare of
 * a bucket's 5 signatures and two 256-bit compares of a 64-byte key
 * (compare.h).
 */
#include "avx2/compare.h"
#include "dispatch/isa.h"
#include "x86/classifier.h"

/* The 256-bit load takes the bucket's first 32 bytes: the signatures, then
 * moved_hint and half a rule pointer, whose lanes are masked off. */
static inline __attribute__((always_inline)) uint32_t
sig_match(const struct sp_cls_bucket *b, uint32_t hash)
{
    return sp_avx2_sig_match8(b->sigs, hash) & ((1u << SP_CLS_SLOTS) - 1);
}

uint32_t
sp_avx2_classifier(const struct sp_cls_subtable *st,
                   const struct sp_cls_buckets *buckets,
                   const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                   const struct sp_rule **rules)
{
    return sp_x86_classifier(st, buckets, keys, n, todo, rules, sig_match,
                             sp_avx2_keys_equal);
}
