/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup with NEON: mask with 128-bit ANDs and hash with the
 * Armv8 crc32cx instruction (the hash kernel's value), prefetch the first
 * bucket, then per bucket probed (the second only if keys moved out of the
 * first) two 128-bit signature compares and a 64-byte key compare per
 * candidate slot (compare.h).
 */
#include <arm_acle.h>

#include "isa.h"
#include "neon/compare.h"
#include "simdpath/classifier.h"

uint32_t
sp_neon_classifier(const struct sp_cls_subtable *st,
                   const struct sp_cls_buckets *buckets,
                   const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                   const struct sp_rule **rules)
{
    struct sp_flow_key masked[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];
    uint64x2_t m[4];
    uint32_t found = 0;

    todo &= sp_batch_lanes(n);
    for (unsigned q = 0; q < 4; q++) {
        m[q] = vld1q_u64(&st->mask.blocks[2 * q]);
    }
    for (uint32_t pending = todo; pending; pending &= pending - 1) {
        unsigned i = (unsigned)__builtin_ctz(pending);
        uint32_t crc = UINT32_MAX;

        for (unsigned q = 0; q < 4; q++) {
            vst1q_u64(&masked[i].blocks[2 * q],
                      vandq_u64(vld1q_u64(&keys[i].blocks[2 * q]), m[q]));
        }
        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
            crc = __crc32cd(crc, masked[i].blocks[b]);
        }
        hashes[i] = ~crc;
        __builtin_prefetch(
            &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, 0)]);
    }
    for (; todo; todo &= todo - 1) {
        unsigned i = (unsigned)__builtin_ctz(todo);

        for (unsigned w = 0; w < 2 && !(found >> i & 1); w++) {
            const struct sp_cls_bucket *b =
                &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, w)];
            uint32_t slots = sp_neon_sig_match(b->sigs, hashes[i]);

            for (; slots; slots &= slots - 1) {
                const struct sp_rule *r = __atomic_load_n(
                    &b->rules[__builtin_ctz(slots)], __ATOMIC_ACQUIRE);

                if (r && sp_neon_keys_equal(&r->match.key, &masked[i])) {
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
