/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup with AVX2: crc32 hashes (mask_hash.h), then per key and
 * bucket probed (the second only if keys moved out of the first) one
 * 256-bit compare of the 8 signatures, and for each candidate slot in
 * order the 64-byte key in two 256-bit compares.
 */
#include "avx2/mask_hash.h"
#include "isa.h"

uint32_t
sp_avx2_classifier(const struct sp_cls_subtable *st,
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
        __m256i want = _mm256_set1_epi32((int)hashes[i]);
        __m256i k0 = _mm256_load_si256((const __m256i *)&masked[i]);
        __m256i k1 = _mm256_load_si256((const __m256i *)&masked[i] + 1);

        for (unsigned w = 0; w < 2 && !(found >> i & 1); w++) {
            const struct sp_cls_bucket *b =
                &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, w)];
            uint32_t slots = (uint32_t)_mm256_movemask_ps(
                _mm256_castsi256_ps(_mm256_cmpeq_epi32(
                    _mm256_load_si256((const __m256i *)b->sigs), want)));

            for (; slots; slots &= slots - 1) {
                const struct sp_rule *r = __atomic_load_n(
                    &b->rules[__builtin_ctz(slots)], __ATOMIC_ACQUIRE);
                const __m256i *rk;
                __m256i diff;

                if (!r) {
                    continue;
                }
                rk = (const __m256i *)&r->match.key;
                diff = _mm256_or_si256(
                    _mm256_xor_si256(_mm256_load_si256(rk), k0),
                    _mm256_xor_si256(_mm256_load_si256(rk + 1), k1));
                if (_mm256_testz_si256(diff, diff)) {
                    rules[i] = r;
                    found |= UINT32_C(1) << i;
                    break;
                }
            }
            if (!__atomic_load_n(&b->n_moved, __ATOMIC_ACQUIRE)) {
                break;
            }
        }
    }
    return found;
}
