/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the classifier's own files share and nothing else sees: the
 * classifier, its rule nodes, the search order and the reclamation list,
 * and the functions each file gives the others. The files, by concern:
 * - classifier.c: create and destroy, insert, remove and find, listing;
 * - cls_place.c: buckets, placing keys in them, growth and rebuild;
 * - cls_order.c: the search order, re-sorted by hits, and the layout
 *   (key copies or not) that follows from them;
 * - cls_lookup.c: the lookup, and the hit stripes it writes;
 * - cls_reclaim.c: freeing what lookups may still see, after a grace
 *   period.
 * Writers hold cls->lock in every function declared here but the lookup's.
 */
#ifndef SP_CLS_INTERNAL_H
#define SP_CLS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datapath/cls_layout.h"

/* Removed rules and replaced tables wait in a list; once it holds this
 * many, one synchronize_rcu() frees them all. */
#define SP_CLS_RECLAIM_BATCH 256

/* A rule and what only the writer uses. */
struct sp_cls_node {
    struct sp_rule rule; /* first: rule pointers are node pointers */
    struct sp_cls_subtable *subtable;
    /* Rules with the same match and lower precedence; the slot holds the
     * head. Only the writer walks it. */
    const struct sp_rule *next_same;
};

/* The subtables in search order: highest priority first (a snapshot of
 * each one's max_priority, so the search can stop), then most hits. */
struct sp_cls_order {
    uint32_t n;
    struct sp_cls_order_entry {
        struct sp_cls_subtable *st;
        uint32_t max_priority;
    } e[];
};

/* Something lookups may still see, freed after the next grace period. */
struct sp_cls_garbage {
    void *ptr;
    bool is_rule;
};

struct sp_cls {
    pthread_mutex_t lock;       /* writers */
    struct sp_cls_order *order; /* RCU-published */
    uint64_t gen;               /* atomic; see sp_cls_generation */
    uint64_t next_seq;
    uint32_t n_rules;
    sp_actions_free_fn *free_actions;
    struct sp_cls_garbage *garbage;
    size_t n_garbage, garbage_cap;
    uint32_t copies_min_buckets;   /* see sp_cls_set_copies_min_buckets */
    uint32_t overflow_min_buckets; /* see sp_cls_set_overflow_min_buckets */
};

/* The node of a rule the classifier allocated (the rule is its first
 * member, so the conversion is exact). */
static inline struct sp_cls_node *
node_of(const struct sp_rule *rule)
{
    return (struct sp_cls_node *)rule;
}

/* Whether a takes precedence over b. */
static inline bool
precedes(const struct sp_rule *a, const struct sp_rule *b)
{
    return a->priority > b->priority ||
           (a->priority == b->priority && a->seq < b->seq);
}

/* The hash a masked key is stored under: the hash kernel's, as the EMC's. */
static inline uint32_t
masked_hash(const struct sp_flow_key *masked_key)
{
    uint32_t hash;

    SP_KERNEL(hash)(masked_key, NULL, 1, &hash);
    return hash;
}

/* cls_reclaim.c */

/* Queues ptr (a rule node if is_rule) for freeing after a grace period. */
void sp_cls_defer_free(struct sp_cls *cls, void *ptr, bool is_rule);
/* sp_cls_reclaim with the lock held. */
void sp_cls_reclaim_locked(struct sp_cls *cls);
/* Frees a node no lookup can see, and its actions. */
void sp_cls_free_rule(struct sp_cls *cls, struct sp_cls_node *node);

/* cls_place.c */

/* A new subtable for mask, with one empty bucket; NULL on no memory. */
struct sp_cls_subtable *sp_cls_subtable_create(const struct sp_cls *cls,
                                               const struct sp_flow_key *mask);
/* The slot holding masked key 'key' (hash) in b, or NULL; *candidate
 * tells which of the key's buckets it is in (sp_cls_candidate). */
const struct sp_rule **sp_cls_find_slot(struct sp_cls_buckets *b,
                                        const struct sp_flow_key *key,
                                        uint32_t hash, uint32_t *candidate);
/* Links node into st (whose order entry is already up to date): behind
 * the rules of its match, or in a slot of its own, growing the table if
 * need be. -1 with the reason in err. */
int sp_cls_link_rule(struct sp_cls *cls, struct sp_cls_subtable *st,
                     struct sp_cls_node *node, struct sp_err *err);
/* Replaces st's buckets with 'count' buckets of 'lines' lines (more if
 * its rules do not fit) and publishes them; -1 on no memory (nothing
 * changed). */
int sp_cls_rebuild(struct sp_cls *cls, struct sp_cls_subtable *st,
                   uint32_t count, uint32_t lines);

/* cls_order.c */

/* Publishes a new order: the current subtables without 'drop', plus
 * 'add', with their current max_priority. -1 on no memory (nothing
 * changed). */
int sp_cls_publish_order(struct sp_cls *cls, struct sp_cls_subtable *add,
                         const struct sp_cls_subtable *drop);
/* The subtable of this mask, or NULL. */
struct sp_cls_subtable *sp_cls_find_subtable(const struct sp_cls *cls,
                                             const struct sp_flow_key *mask);

/* cls_lookup.c */

/* Halves st's hit counts (sp_cls_sort). */
void sp_cls_halve_hits(struct sp_cls_subtable *st);

#endif /* SP_CLS_INTERNAL_H */
