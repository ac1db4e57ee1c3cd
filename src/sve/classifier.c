/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup with SVE: the key masked in as many vectors as the
 * vector length needs and hashed with the Armv8 crc32cx instruction (the
 * hash kernel's value), prefetching the first bucket, then the probing
 * passes of src/generic/classifier.h with a bucket's 5 signatures compared
 * under a whilelt predicate that covers exactly them (one compare from 256
 * bits on, where NEON needs a vector and a scalar one), and the 64-byte key
 * compare of compare.h for the vector length (NEON's at 128 bits). Six
 * copies of the passes: two bucket layouts by three vector lengths.
 */
#include <arm_acle.h>

#include "dispatch/isa.h"
#include "generic/classifier.h"
#include "sve/compare.h"

static_assert(SP_CLS_SLOTS == 5, "sig_match compares 5 signatures");

/* From 256 bits on: the 5 signatures in one compare. */
static inline __attribute__((always_inline)) uint32_t
sig_match(const struct sp_cls_bucket *b, uint32_t hash)
{
    return sp_sve_sig_match(b->sigs, SP_CLS_SLOTS, hash);
}

/* At 128 bits: four, and the fifth on its own, as NEON does. */
static inline __attribute__((always_inline)) uint32_t
sig_match_128(const struct sp_cls_bucket *b, uint32_t hash)
{
    return sp_sve_sig_match(b->sigs, 4, hash) | (uint32_t)(b->sigs[4] == hash)
                                                    << 4;
}

/* The lookup for buckets of 'lines' lines, a constant, with the compares
 * that fit the vector length; 'one_vector' (512 bits and more): the key
 * masked in one vector, else in NEON's four. */
static inline __attribute__((always_inline)) uint32_t
classifier_lines(const struct sp_cls_subtable *st,
                 const struct sp_cls_buckets *buckets,
                 const struct sp_flow_key *keys, uint32_t todo,
                 const struct sp_rule **rules, uint32_t lines, bool one_vector,
                 sp_cls_sig_match_fn *sig_match_fn,
                 sp_cls_keys_equal_fn *keys_equal)
{
    struct sp_flow_key masked[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];
    const svbool_t pg = svwhilelt_b64_u32(0, SP_FLOW_KEY_BLOCKS);
    const svuint64_t mask = svld1_u64(pg, st->mask.blocks);
    const uint64x2x4_t mask_q = vld1q_u64_x4(st->mask.blocks);

    for (uint32_t pending = todo; pending; pending &= pending - 1) {
        unsigned i = (unsigned)__builtin_ctz(pending);
        uint32_t crc = UINT32_MAX;

        if (one_vector) {
            svst1_u64(pg, masked[i].blocks,
                      svand_u64_x(pg, svld1_u64(pg, keys[i].blocks), mask));
        } else {
            uint64x2x4_t k = vld1q_u64_x4(keys[i].blocks);

            for (unsigned q = 0; q < 4; q++) {
                k.val[q] = vandq_u64(k.val[q], mask_q.val[q]);
            }
            vst1q_u64_x4(masked[i].blocks, k);
        }
        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
            crc = __crc32cd(crc, masked[i].blocks[b]);
        }
        hashes[i] = ~crc;
        sp_cls_prefetch_bucket(
            sp_cls_bucket_lines(buckets, hashes[i], 0, lines));
    }
    return sp_cls_probe(buckets, masked, hashes, todo, rules, sig_match_fn,
                        keys_equal, lines);
}

/* The lookup for buckets of 'lines' lines, per vector length. */
static inline __attribute__((always_inline)) uint32_t
classifier_vl(const struct sp_cls_subtable *st,
              const struct sp_cls_buckets *buckets,
              const struct sp_flow_key *keys, uint32_t todo,
              const struct sp_rule **rules, uint32_t lines)
{
    if (svcntb() >= 64) {
        return classifier_lines(st, buckets, keys, todo, rules, lines, true,
                                sig_match, sp_sve_keys_equal_512);
    }
    if (svcntb() >= 32) {
        return classifier_lines(st, buckets, keys, todo, rules, lines, false,
                                sig_match, sp_sve_keys_equal_256);
    }
    return classifier_lines(st, buckets, keys, todo, rules, lines, false,
                            sig_match_128, sp_neon_keys_equal);
}

uint32_t
sp_sve_classifier(const struct sp_cls_subtable *st,
                  const struct sp_cls_buckets *buckets,
                  const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                  const struct sp_rule **rules)
{
    todo &= sp_batch_lanes(n);
    if (buckets->lines > 1) {
        return classifier_vl(st, buckets, keys, todo, rules,
                             SP_CLS_LINES_COPIES);
    }
    return classifier_vl(st, buckets, keys, todo, rules, 1);
}
