/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The first pass of the x86 subtable lookups (AVX2 and AVX-512): mask each
 * key, hash it with the SSE4.2 crc32 instruction (the hash kernel's value)
 * and prefetch the first candidate bucket, so that the bucket misses of
 * large tables overlap before the probing passes (cls_probe.h) need them.
 */
#ifndef SP_AVX2_MASK_HASH_H
#define SP_AVX2_MASK_HASH_H

#include <immintrin.h>

#include "cls_probe.h"

static inline void
sp_x86_mask_and_hash(const struct sp_cls_subtable *st,
                     const struct sp_cls_buckets *buckets,
                     const struct sp_flow_key *keys, uint32_t todo,
                     struct sp_flow_key *masked, uint32_t *hashes)
{
    for (; todo; todo &= todo - 1) {
        unsigned i = (unsigned)__builtin_ctz(todo);
        uint64_t crc = UINT32_MAX;

        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
            masked[i].blocks[b] = keys[i].blocks[b] & st->mask.blocks[b];
            crc = _mm_crc32_u64(crc, masked[i].blocks[b]);
        }
        hashes[i] = ~(uint32_t)crc;
        sp_cls_prefetch_bucket(
            &buckets->b[sp_cls_bucket_index(hashes[i], buckets->mask, 0)]);
    }
}

#endif /* SP_AVX2_MASK_HASH_H */
