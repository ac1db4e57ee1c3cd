/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup with AVX-512: crc32 hashes (avx2/mask_hash.h); then the
 * signatures of every key: its first bucket's 8, or when keys moved out of
 * that bucket the 16 of both buckets in one 512-bit compare (the first in
 * the low half, so bit order is probing order), prefetching the first
 * candidate's rule; then for each candidate slot in order the 64-byte key
 * in one 512-bit compare. Splitting the passes overlaps the rule misses of
 * the whole batch.
 */
#include "avx2/mask_hash.h"
#include "isa.h"

uint32_t
sp_avx512_classifier(const struct sp_cls_subtable *st,
                     const struct sp_cls_buckets *buckets,
                     const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                     const struct sp_rule **rules)
{
    struct sp_flow_key masked[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX], slots[SP_BATCH_MAX];
    const struct sp_cls_bucket *probed[SP_BATCH_MAX][2];
    uint32_t found = 0;

    todo &= sp_batch_lanes(n);
    sp_x86_mask_and_hash(st, buckets, keys, todo, masked, hashes);
    for (uint32_t p = todo; p; p &= p - 1) {
        unsigned i = (unsigned)__builtin_ctz(p);
        const struct sp_cls_bucket *b0 =
            &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, 0)];
        __m512i sigs = _mm512_castsi256_si512(
            _mm256_load_si256((const __m256i *)b0->sigs));
        __mmask16 lanes = 0xff;

        probed[i][0] = b0;
        if (__atomic_load_n(&b0->n_moved, __ATOMIC_ACQUIRE)) {
            probed[i][1] =
                &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, 1)];
            sigs = _mm512_inserti64x4(
                sigs, _mm256_load_si256((const __m256i *)probed[i][1]->sigs),
                1);
            lanes = 0xffff;
        }
        slots[i] = _mm512_mask_cmpeq_epi32_mask(
            lanes, sigs, _mm512_set1_epi32((int)hashes[i]));
        if (slots[i]) {
            unsigned s = (unsigned)__builtin_ctz(slots[i]);

            _mm_prefetch(
                (const char *)__atomic_load_n(
                    &probed[i][s / SP_CLS_SLOTS]->rules[s % SP_CLS_SLOTS],
                    __ATOMIC_RELAXED),
                _MM_HINT_T0);
        }
    }
    for (uint32_t p = todo; p; p &= p - 1) {
        unsigned i = (unsigned)__builtin_ctz(p);
        __m512i key = _mm512_load_si512(&masked[i]);

        for (uint32_t m = slots[i]; m; m &= m - 1) {
            unsigned s = (unsigned)__builtin_ctz(m);
            const struct sp_rule *r = __atomic_load_n(
                &probed[i][s / SP_CLS_SLOTS]->rules[s % SP_CLS_SLOTS],
                __ATOMIC_ACQUIRE);

            if (r && !_mm512_cmpneq_epi64_mask(
                         _mm512_load_si512(&r->match.key), key)) {
                rules[i] = r;
                found |= UINT32_C(1) << i;
                break;
            }
        }
    }
    return found;
}
