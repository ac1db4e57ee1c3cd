/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Subtable lookup, the specification: mask each key, hash it with the
 * scalar hash kernel, probe its first bucket slot by slot and, if keys
 * moved out of it, its second, then the overflow buckets if they hold
 * any; compare the blocks of the mask (the block map) with the slot's key
 * copy or the rule's key.
 */
#include "dispatch/isa.h"
#include "generic/classifier.h"

/* Whether masked keys a and b are equal in the blocks of block_map. */
static bool
blocks_equal(const struct sp_flow_key *a, const struct sp_flow_key *b,
             uint8_t block_map)
{
    uint8_t differ = 0;

    for (unsigned blk = 0; blk < SP_FLOW_KEY_BLOCKS; blk++) {
        if (block_map & (1u << blk) && a->blocks[blk] != b->blocks[blk]) {
            differ = 1;
        }
    }
    return !differ;
}

/* The rule in bucket b matching masked key k (hash h), or NULL: the key
 * compared is the slot's copy if the buckets have copies, else the
 * rule's, as in the SIMD kernels (src/generic/classifier.h). */
static const struct sp_rule *
probe(const struct sp_cls_bucket *b, uint32_t h, const struct sp_flow_key *k,
      uint8_t block_map, bool copies)
{
    for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
        const struct sp_rule *r =
            __atomic_load_n(&b->rules[s], __ATOMIC_ACQUIRE);
        bool equal;

        if (b->sigs[s] != h || !r) {
            continue;
        }
        if (copies) {
            equal = blocks_equal(sp_cls_key_copy(b, s), k, block_map);
            if (sp_cls_slot_changed(b, s, r)) {
                equal = blocks_equal(&r->match.key, k, block_map);
            }
        } else {
            equal = blocks_equal(&r->match.key, k, block_map);
        }
        if (equal) {
            return r;
        }
    }
    return NULL;
}

/* The rule matching masked key k (hash h) in its first bucket, its second
 * if the key's bit is set in the first's moved_hint, then in the overflow
 * buckets if they hold any, or NULL. */
static const struct sp_rule *
lookup(const struct sp_cls_buckets *buckets, uint32_t h,
       const struct sp_flow_key *k, uint8_t block_map)
{
    const struct sp_cls_bucket *first = sp_cls_bucket(buckets, h, 0);
    bool copies = buckets->lines > 1;
    const struct sp_rule *r = probe(first, h, k, block_map, copies);

    if (r || !sp_cls_may_have_moved(first, h)) {
        return r;
    }
    r = probe(sp_cls_bucket(buckets, h, 1), h, k, block_map, copies);
    if (r || !__atomic_load_n(&buckets->n_overflow, __ATOMIC_ACQUIRE)) {
        return r;
    }
    for (uint32_t o = 0; !r && o < buckets->n_overflow_buckets; o++) {
        r = probe(sp_cls_overflow_bucket(buckets, o, buckets->lines), h, k,
                  block_map, copies);
    }
    return r;
}

uint32_t
sp_scalar_classifier(const struct sp_cls_subtable *st,
                     const struct sp_cls_buckets *buckets,
                     const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                     const struct sp_rule **rules)
{
    struct sp_flow_key masked[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];
    uint32_t found = 0;

    todo &= sp_batch_lanes(n);
    /* First every hash and a prefetch of the first bucket, so the bucket
     * misses of large tables overlap (src/generic/classifier.h). */
    for (uint32_t pending = todo; pending; pending &= pending - 1) {
        unsigned i = (unsigned)__builtin_ctz(pending);

        for (unsigned blk = 0; blk < SP_FLOW_KEY_BLOCKS; blk++) {
            masked[i].blocks[blk] = keys[i].blocks[blk] & st->mask.blocks[blk];
        }
        sp_scalar_hash(&masked[i], NULL, 1, &hashes[i]);
        sp_cls_prefetch_bucket(sp_cls_bucket(buckets, hashes[i], 0));
    }
    /* Then, still before any probe, the second bucket of keys that may
     * have moved and the key of a first signature match: only hints, the
     * probes below read every slot and moved_hint again. */
    for (uint32_t pending = todo; pending; pending &= pending - 1) {
        unsigned i = (unsigned)__builtin_ctz(pending);
        const struct sp_cls_bucket *b = sp_cls_bucket(buckets, hashes[i], 0);

        for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
            if (b->sigs[s] == hashes[i]) {
                sp_cls_prefetch_key(b, s, buckets->lines > 1);
                break;
            }
        }
        if (sp_cls_may_have_moved(b, hashes[i])) {
            sp_cls_prefetch_bucket(sp_cls_bucket(buckets, hashes[i], 1));
        }
    }
    for (uint32_t pending = todo; pending; pending &= pending - 1) {
        unsigned i = (unsigned)__builtin_ctz(pending);
        const struct sp_rule *r =
            lookup(buckets, hashes[i], &masked[i], st->block_map);

        if (r) {
            rules[i] = r;
            found |= UINT32_C(1) << i;
        }
    }
    return found;
}
