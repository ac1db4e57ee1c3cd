/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup with AVX-512: crc32 hashes (avx2/mask_hash.h), then per
 * key the 16 signatures of both candidate buckets in one 512-bit compare
 * (bucket 0 in the low half, so the bit order is the probing order), and
 * for each candidate slot the 64-byte key in one 512-bit compare.
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
    uint32_t hashes[SP_BATCH_MAX];
    uint32_t found = 0;

    todo &= sp_batch_lanes(n);
    sp_x86_mask_and_hash(st, buckets, keys, todo, masked, hashes);
    for (; todo; todo &= todo - 1) {
        unsigned i = (unsigned)__builtin_ctz(todo);
        const struct sp_cls_bucket *b[2] = {
            &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, 0)],
            &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, 1)],
        };
        __m512i sigs = _mm512_inserti64x4(
            _mm512_castsi256_si512(
                _mm256_load_si256((const __m256i *)b[0]->sigs)),
            _mm256_load_si256((const __m256i *)b[1]->sigs), 1);
        uint32_t slots =
            _mm512_cmpeq_epi32_mask(sigs, _mm512_set1_epi32((int)hashes[i]));
        __m512i key = _mm512_load_si512(&masked[i]);

        for (; slots; slots &= slots - 1) {
            unsigned s = (unsigned)__builtin_ctz(slots);
            const struct sp_rule *r =
                __atomic_load_n(&b[s / SP_CLS_SLOTS]->rules[s % SP_CLS_SLOTS],
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
