/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup with NEON: mask with 128-bit ANDs and hash with the
 * Armv8 crc32cx instruction (the hash kernel's value), prefetching the
 * first bucket, then the probing passes of src/generic/classifier.h with a
 * bucket's signatures compared by one 128-bit compare and one scalar one, and
 * a 64-byte key compare per candidate slot (compare.h).
 */
#include <arm_acle.h>

#include "dispatch/isa.h"
#include "generic/classifier.h"
#include "neon/compare.h"

static_assert(SP_CLS_SLOTS == 5, "sig_match compares 4 + 1 signatures");

/* Signatures 0-3 in one 128-bit compare, the fifth on its own. */
static inline __attribute__((always_inline)) uint32_t
sig_match(const struct sp_cls_bucket *b, uint32_t hash)
{
    static const uint32_t weights[4] = {1, 2, 4, 8};

    return vaddvq_u32(
               vandq_u32(vceqq_u32(vld1q_u32(b->sigs), vdupq_n_u32(hash)),
                         vld1q_u32(weights))) |
           (uint32_t)(b->sigs[4] == hash) << 4;
}

/* The lookup for buckets of 'lines' lines, a constant. */
static inline __attribute__((always_inline)) uint32_t
classifier_lines(const struct sp_cls_subtable *st,
                 const struct sp_cls_buckets *buckets,
                 const struct sp_flow_key *keys, uint32_t todo,
                 const struct sp_rule **rules, uint32_t lines)
{
    struct sp_flow_key masked[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];
    uint64x2_t m[4];

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
        sp_cls_prefetch_bucket(
            sp_cls_bucket_lines(buckets, hashes[i], 0, lines));
    }
    return sp_cls_probe(buckets, masked, hashes, todo, rules, sig_match,
                        sp_neon_keys_equal, lines);
}

uint32_t
sp_neon_classifier(const struct sp_cls_subtable *st,
                   const struct sp_cls_buckets *buckets,
                   const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                   const struct sp_rule **rules)
{
    todo &= sp_batch_lanes(n);
    if (buckets->lines > 1) {
        return classifier_lines(st, buckets, keys, todo, rules,
                                SP_CLS_LINES_COPIES);
    }
    return classifier_lines(st, buckets, keys, todo, rules, 1);
}
