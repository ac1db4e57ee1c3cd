/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A subtable's buckets: keys placed in their first bucket, else their
 * second, else an overflow bucket; a table that holds no more doubles,
 * built aside and published (cls_layout.h describes the layout). Slots
 * change under lookups only by single atomic stores, in the order
 * fill_slot explains.
 */
#include <stdlib.h>
#include <string.h>
#include <urcu-qsbr.h>

#include "datapath/cls_internal.h"

/* On 4 KiB pages: transparent huge pages (madvise) made lookups of many
 * active flows slower and those of few no faster
 * (docs/perf/classifier.md). */
static struct sp_cls_buckets *
buckets_alloc(const struct sp_cls *cls, uint32_t count, uint32_t lines)
{
    uint32_t overflow =
        count >= cls->overflow_min_buckets ? SP_CLS_OVERFLOW_BUCKETS : 0;
    size_t buckets_size =
        ((size_t)count + overflow) * lines * sizeof(struct sp_cls_bucket);
    size_t size = sizeof(struct sp_cls_buckets) + buckets_size +
                  count * sizeof(uint32_t);
    struct sp_cls_buckets *b = aligned_alloc(64, (size + 63) / 64 * 64);

    if (b) {
        memset(b, 0, size);
        b->mask = count - 1;
        b->lines = lines;
        b->n_overflow_buckets = overflow;
        b->n_moved = (uint32_t *)((char *)b->b + buckets_size);
    }
    return b;
}

/* The slot of bucket 'bucket' holding masked key 'key' (hash), or NULL. */
static const struct sp_rule **
slot_of(struct sp_cls_bucket *bucket, const struct sp_flow_key *key,
        uint32_t hash)
{
    for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
        if (bucket->rules[s] && bucket->sigs[s] == hash &&
            !memcmp(&bucket->rules[s]->match.key, key, sizeof *key)) {
            return &bucket->rules[s];
        }
    }
    return NULL;
}

const struct sp_rule **
sp_cls_find_slot(struct sp_cls_buckets *b, const struct sp_flow_key *key,
                 uint32_t hash, uint32_t *candidate)
{
    for (uint32_t c = 0; c < sp_cls_candidate_count(b); c++) {
        const struct sp_rule **slot =
            slot_of(sp_cls_candidate(b, hash, c), key, hash);

        if (slot) {
            *candidate = c;
            return slot;
        }
    }
    return NULL;
}

/* Copies key into a slot's key copy, the slot empty: after a release
 * fence, so that a reader that sees any of it also sees the slot emptied
 * (sp_cls_slot_changed). */
static void
write_key_copy(struct sp_flow_key *copy, const struct sp_flow_key *key)
{
    __atomic_thread_fence(__ATOMIC_RELEASE);
    for (unsigned blk = 0; blk < SP_FLOW_KEY_BLOCKS; blk++) {
        __atomic_store_n(&copy->blocks[blk], key->blocks[blk],
                         __ATOMIC_RELAXED);
    }
}

/* Puts a rule in a free slot of candidate bucket c of its key, if that
 * has one. */
static bool
fill_slot(struct sp_cls_buckets *b, uint32_t c, const struct sp_rule *rule,
          uint32_t hash)
{
    struct sp_cls_bucket *bucket = sp_cls_candidate(b, hash, c);

    for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
        if (bucket->rules[s]) {
            continue;
        }
        /* Counts first, signature and key copy next, rule last: a reader
         * that can see the rule probes this bucket and checks its key.
         * One still comparing the copy of a rule that left the slot sees
         * the slot change after the fence (sp_cls_slot_changed). */
        if (c >= SP_CLS_FIRST_OVERFLOW) {
            __atomic_add_fetch(&b->n_overflow, 1, __ATOMIC_RELEASE);
        }
        if (c > 0) {
            uint32_t first = sp_cls_bucket_index(hash, b->mask, 0);

            b->n_moved[first]++;
            __atomic_or_fetch(&sp_cls_bucket_at(b, first)->moved_hint,
                              sp_cls_moved_bit(hash), __ATOMIC_RELEASE);
        }
        __atomic_store_n(&bucket->sigs[s], hash, __ATOMIC_RELEASE);
        if (b->lines > 1) {
            write_key_copy(sp_cls_key_copy(bucket, s), &rule->match.key);
        }
        __atomic_store_n(&bucket->rules[s], rule, __ATOMIC_RELEASE);
        return true;
    }
    return false;
}

/* Puts a rule in a free slot of its first bucket, else of its second, else
 * of an overflow bucket (the last two counted in the first's n_moved, and
 * marked in its moved_hint). Returns false when all are full. */
static bool
place(struct sp_cls_buckets *b, const struct sp_rule *rule, uint32_t hash)
{
    for (uint32_t c = 0; c < sp_cls_candidate_count(b); c++) {
        if (fill_slot(b, c, rule, hash)) {
            return true;
        }
    }
    return false;
}

/* Replaces the subtable's buckets with 'count' buckets of 'lines' lines
 * (more buckets if its rules do not fit) and publishes them. The keys in
 * their first bucket go first, then the others, so that with the same
 * count the keys that fitted in their first bucket still do. */
int
sp_cls_rebuild(struct sp_cls *cls, struct sp_cls_subtable *st, uint32_t count,
               uint32_t lines)
{
    struct sp_cls_buckets *old = st->buckets;

    for (;; count *= 2) {
        struct sp_cls_buckets *b = buckets_alloc(cls, count, lines);
        bool ok = b != NULL;

        for (unsigned moved = 0; moved < 2; moved++) {
            for (uint32_t i = 0; ok && i < sp_cls_bucket_count(old); i++) {
                const struct sp_cls_bucket *ob = sp_cls_bucket_at(old, i);

                for (unsigned s = 0; ok && s < SP_CLS_SLOTS; s++) {
                    const struct sp_rule *r = ob->rules[s];
                    uint32_t home =
                        sp_cls_bucket_index(ob->sigs[s], old->mask, 0);

                    if (r && (home != i) == moved) {
                        ok = place(b, r, ob->sigs[s]);
                    }
                }
            }
        }
        if (ok) {
            rcu_assign_pointer(st->buckets, b);
            sp_cls_defer_free(cls, old, false);
            return 0;
        }
        free(b);
        if (!b) {
            return -1;
        }
    }
}

/* Doubles the subtable's buckets. */
static int
grow(struct sp_cls *cls, struct sp_cls_subtable *st)
{
    return sp_cls_rebuild(cls, st, (st->buckets->mask + 1) * 2,
                          st->buckets->lines);
}

struct sp_cls_subtable *
sp_cls_subtable_create(const struct sp_cls *cls,
                       const struct sp_flow_key *mask)
{
    struct sp_cls_subtable *st = aligned_alloc(64, sizeof *st);

    if (!st) {
        return NULL;
    }
    memset(st, 0, sizeof *st);
    st->mask = *mask;
    for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
        st->block_map |= (uint8_t)((mask->blocks[b] != 0) << b);
    }
    st->buckets = buckets_alloc(cls, 1, 1);
    if (!st->buckets) {
        free(st);
        return NULL;
    }
    return st;
}

int
sp_cls_link_rule(struct sp_cls *cls, struct sp_cls_subtable *st,
                 struct sp_cls_node *node, struct sp_err *err)
{
    const struct sp_flow_key *key = &node->rule.match.key;
    uint32_t hash = masked_hash(key);
    uint32_t candidate;
    const struct sp_rule **slot =
        sp_cls_find_slot(st->buckets, key, hash, &candidate);

    if (slot) {
        const struct sp_rule **prev = slot;

        for (const struct sp_rule *at = *slot; at;
             at = node_of(at)->next_same) {
            if (at->priority == node->rule.priority) {
                sp_err_set(err, "%s",
                           "a rule with the same match and priority "
                           "exists");
                return -1;
            }
        }
        while (*prev && precedes(*prev, &node->rule)) {
            prev = &node_of(*prev)->next_same;
        }
        node->next_same = *prev;
        __atomic_store_n(prev, &node->rule, __ATOMIC_RELEASE);
        return 0;
    }
    while (!place(st->buckets, &node->rule, hash)) {
        if (grow(cls, st)) {
            sp_err_set(err, "%s", "no memory to grow a subtable");
            return -1;
        }
    }
    return 0;
}
