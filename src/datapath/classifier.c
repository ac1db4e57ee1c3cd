/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The classifier's table code: subtables, rule insertion and removal under
 * RCU (liburcu QSBR), and the batch lookup that runs the classifier kernel
 * over the subtables in order. The contract is in classifier.h.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-qsbr.h>

#include "simdpath/classifier.h"

/* A rule and what only the writer uses. */
struct rule_node {
    struct sp_rule rule; /* first: rule pointers are node pointers */
    struct sp_cls_subtable *subtable;
    /* Rules with the same match and lower precedence; the slot holds the
     * head. Only the writer walks it. */
    const struct sp_rule *next_same;
};

/* The subtables in search order: highest priority first (a snapshot of
 * each one's max_priority, so the search can stop), then most hits. */
struct order {
    uint32_t n;
    struct order_entry {
        struct sp_cls_subtable *st;
        uint32_t max_priority;
    } e[];
};

/* Something lookups may still see, freed after the next grace period. */
struct garbage {
    void *ptr;
    bool is_rule;
};

struct sp_cls {
    pthread_mutex_t lock; /* writers */
    struct order *order;  /* RCU-published */
    uint64_t gen;         /* atomic; see sp_cls_generation */
    uint64_t next_seq;
    uint32_t n_rules;
    sp_actions_free_fn *free_actions;
    struct garbage *garbage;
    size_t n_garbage, garbage_cap;
    uint32_t copies_min_buckets;   /* see sp_cls_set_copies_min_buckets */
    uint32_t overflow_min_buckets; /* see sp_cls_set_overflow_min_buckets */
};

/* The node of a rule the classifier allocated (the rule is its first
 * member, so the conversion is exact). */
static struct rule_node *
node_of(const struct sp_rule *rule)
{
    return (struct rule_node *)rule;
}

/* Whether a takes precedence over b. */
static bool
precedes(const struct sp_rule *a, const struct sp_rule *b)
{
    return a->priority > b->priority ||
           (a->priority == b->priority && a->seq < b->seq);
}

static uint32_t
masked_hash(const struct sp_flow_key *masked_key)
{
    uint32_t hash;

    SP_KERNEL(hash)(masked_key, NULL, 1, &hash);
    return hash;
}

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

static void
free_rule(struct sp_cls *cls, struct rule_node *node)
{
    if (cls->free_actions && node->rule.actions) {
        cls->free_actions(node->rule.actions);
    }
    free(node);
}

/* sp_cls_reclaim with the lock held. */
static void
reclaim(struct sp_cls *cls)
{
    if (!cls->n_garbage) {
        return;
    }
    synchronize_rcu();
    for (size_t i = 0; i < cls->n_garbage; i++) {
        if (cls->garbage[i].is_rule) {
            free_rule(cls, cls->garbage[i].ptr);
        } else {
            free(cls->garbage[i].ptr);
        }
    }
    cls->n_garbage = 0;
}

void
sp_cls_reclaim(struct sp_cls *cls)
{
    pthread_mutex_lock(&cls->lock);
    reclaim(cls);
    pthread_mutex_unlock(&cls->lock);
}

/* Queues ptr for freeing after a grace period. If the queue cannot grow,
 * waits for one now rather than leak or free early. */
static void
defer_free(struct sp_cls *cls, void *ptr, bool is_rule)
{
    if (cls->n_garbage == cls->garbage_cap) {
        size_t cap = cls->garbage_cap ? 2 * cls->garbage_cap : 64;
        struct garbage *g = realloc(cls->garbage, cap * sizeof *g);

        if (g) {
            cls->garbage = g;
            cls->garbage_cap = cap;
        } else {
            reclaim(cls);
        }
    }
    if (cls->n_garbage < cls->garbage_cap) {
        cls->garbage[cls->n_garbage++] = (struct garbage){ptr, is_rule};
    } else {
        synchronize_rcu();
        if (is_rule) {
            free_rule(cls, ptr);
        } else {
            free(ptr);
        }
    }
}

struct sp_cls *
sp_cls_create(sp_actions_free_fn *free_actions)
{
    struct sp_cls *cls = calloc(1, sizeof *cls);

    /* Lookups and updates call kernels through the active table. */
    sp_dispatch_init();
    if (!cls) {
        return NULL;
    }
    cls->order = calloc(1, sizeof *cls->order);
    if (!cls->order) {
        free(cls);
        return NULL;
    }
    pthread_mutex_init(&cls->lock, NULL);
    cls->gen = 1;
    cls->free_actions = free_actions;
    cls->copies_min_buckets = SP_CLS_COPIES_MIN_BUCKETS;
    cls->overflow_min_buckets = SP_CLS_OVERFLOW_MIN_BUCKETS;
    return cls;
}

static void
bump_generation(struct sp_cls *cls)
{
    __atomic_add_fetch(&cls->gen, 1, __ATOMIC_RELEASE);
}

uint64_t
sp_cls_generation(const struct sp_cls *cls)
{
    return __atomic_load_n(&cls->gen, __ATOMIC_ACQUIRE);
}

uint64_t
sp_cls_subtable_hits(const struct sp_cls_subtable *st)
{
    uint64_t sum = 0;

    for (unsigned i = 0; i < SP_CLS_HIT_STRIPES; i++) {
        sum += __atomic_load_n(&st->hits[i].n, __ATOMIC_RELAXED);
    }
    return sum;
}

/* The calling thread's stripe of the hit counts: threads take them in
 * turn as they first look up. */
static unsigned
hit_stripe(void)
{
    static unsigned next;
    static _Thread_local unsigned mine = UINT_MAX;

    if (__builtin_expect(mine == UINT_MAX, 0)) {
        mine = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) %
               SP_CLS_HIT_STRIPES;
    }
    return mine;
}

/* The stripes are changed with a load and a store, no locked add: a
 * stripe is one thread's alone unless more threads than stripes look up,
 * and sp_cls_sort() halves them while lookups count. A count or a halving
 * lost then only shifts a hint. */
static inline void
count_hits(struct sp_cls_subtable *st, unsigned stripe, uint64_t hits)
{
    uint64_t *count = &st->hits[stripe].n;

    __atomic_store_n(count, __atomic_load_n(count, __ATOMIC_RELAXED) + hits,
                     __ATOMIC_RELAXED);
}

static void
halve_hits(struct sp_cls_subtable *st)
{
    for (unsigned i = 0; i < SP_CLS_HIT_STRIPES; i++) {
        uint64_t *count = &st->hits[i].n;

        __atomic_store_n(count, __atomic_load_n(count, __ATOMIC_RELAXED) / 2,
                         __ATOMIC_RELAXED);
    }
}

static int
compare_entries(const void *a, const void *b)
{
    const struct order_entry *x = a, *y = b;
    uint64_t hx = sp_cls_subtable_hits(x->st);
    uint64_t hy = sp_cls_subtable_hits(y->st);

    if (x->max_priority != y->max_priority) {
        return x->max_priority > y->max_priority ? -1 : 1;
    }
    return (hx < hy) - (hx > hy);
}

/* Publishes a new order: the current subtables without 'drop', plus 'add',
 * with their current max_priority. Returns -1 on no memory (nothing
 * changed). */
static int
publish_order(struct sp_cls *cls, struct sp_cls_subtable *add,
              const struct sp_cls_subtable *drop)
{
    struct order *old = cls->order;
    struct order *o = malloc(sizeof *o + (old->n + 1) * sizeof o->e[0]);

    if (!o) {
        return -1;
    }
    o->n = 0;
    for (uint32_t i = 0; i < old->n; i++) {
        if (old->e[i].st != drop) {
            o->e[o->n].st = old->e[i].st;
            o->e[o->n++].max_priority = old->e[i].st->max_priority;
        }
    }
    if (add) {
        o->e[o->n].st = add;
        o->e[o->n++].max_priority = add->max_priority;
    }
    qsort(o->e, o->n, sizeof o->e[0], compare_entries);
    rcu_assign_pointer(cls->order, o);
    defer_free(cls, old, false);
    return 0;
}

static struct sp_cls_subtable *
find_subtable(const struct sp_cls *cls, const struct sp_flow_key *mask)
{
    for (uint32_t i = 0; i < cls->order->n; i++) {
        if (!memcmp(&cls->order->e[i].st->mask, mask, sizeof *mask)) {
            return cls->order->e[i].st;
        }
    }
    return NULL;
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

/* The slot holding masked key 'key' (hash) in b, or NULL; *candidate
 * tells which of the key's buckets it is in (sp_cls_candidate). */
static const struct sp_rule **
find_slot(struct sp_cls_buckets *b, const struct sp_flow_key *key,
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
static int
rebuild(struct sp_cls *cls, struct sp_cls_subtable *st, uint32_t count,
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
            defer_free(cls, old, false);
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
    return rebuild(cls, st, (st->buckets->mask + 1) * 2, st->buckets->lines);
}

static struct sp_cls_subtable *
subtable_create(const struct sp_cls *cls, const struct sp_flow_key *mask)
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

/* Links node into st (whose order entry is already up to date). */
static int
link_rule(struct sp_cls *cls, struct sp_cls_subtable *st,
          struct rule_node *node, struct sp_err *err)
{
    const struct sp_flow_key *key = &node->rule.match.key;
    uint32_t hash = masked_hash(key);
    uint32_t candidate;
    const struct sp_rule **slot =
        find_slot(st->buckets, key, hash, &candidate);

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

const struct sp_rule *
sp_cls_insert(struct sp_cls *cls, const struct sp_match *match,
              uint32_t priority, const struct sp_actions *actions,
              struct sp_err *err)
{
    struct rule_node *node;
    struct sp_cls_subtable *st;
    bool new_st = false;
    uint32_t old_max, old_at_max;

    if (sp_match_validate(match, err)) {
        return NULL;
    }
    node = aligned_alloc(64, (sizeof *node + 63) / 64 * 64);
    if (!node) {
        sp_err_set(err, "%s", "no memory for a rule");
        return NULL;
    }
    memset(node, 0, sizeof *node);
    node->rule.match = *match;
    node->rule.priority = priority;
    node->rule.actions = actions;
    pthread_mutex_lock(&cls->lock);
    node->rule.seq = cls->next_seq++;
    st = find_subtable(cls, &match->mask);
    if (!st) {
        st = subtable_create(cls, &match->mask);
        new_st = true;
        if (!st) {
            sp_err_set(err, "%s", "no memory for a subtable");
            goto fail;
        }
    }
    old_max = st->max_priority;
    old_at_max = st->n_at_max;
    if (!st->n_rules || priority > st->max_priority) {
        st->max_priority = priority;
        st->n_at_max = 0;
    }
    st->n_at_max += priority == st->max_priority;
    /* The order first: a lookup that can see the rule must not stop
     * before its subtable. */
    if ((new_st || st->max_priority != old_max) &&
        publish_order(cls, new_st ? st : NULL, NULL)) {
        sp_err_set(err, "%s", "no memory for the subtable order");
        goto undo;
    }
    if (link_rule(cls, st, node, err)) {
        goto undo;
    }
    node->subtable = st;
    st->n_rules++;
    cls->n_rules++;
    bump_generation(cls);
    pthread_mutex_unlock(&cls->lock);
    return &node->rule;

undo:
    st->max_priority = old_max;
    st->n_at_max = old_at_max;
    if (new_st) {
        if (find_subtable(cls, &match->mask) == st) {
            publish_order(cls, NULL, st);
            defer_free(cls, st->buckets, false);
            defer_free(cls, st, false);
        } else {
            free(st->buckets);
            free(st);
        }
    }
fail:
    pthread_mutex_unlock(&cls->lock);
    free(node);
    return NULL;
}

/* Recomputes max_priority and n_at_max from every rule of st. */
static void
recount_priorities(struct sp_cls_subtable *st)
{
    st->max_priority = 0;
    st->n_at_max = 0;
    for (uint32_t i = 0; i < sp_cls_bucket_count(st->buckets); i++) {
        for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
            for (const struct sp_rule *r =
                     sp_cls_bucket_at(st->buckets, i)->rules[s];
                 r; r = node_of(r)->next_same) {
                if (!st->n_at_max || r->priority > st->max_priority) {
                    st->max_priority = r->priority;
                    st->n_at_max = 0;
                }
                st->n_at_max += r->priority == st->max_priority;
            }
        }
    }
}

void
sp_cls_remove(struct sp_cls *cls, const struct sp_rule *rule)
{
    struct rule_node *node = node_of(rule);
    struct sp_cls_subtable *st = node->subtable;
    const struct sp_rule **slot, **prev;
    uint32_t hash = masked_hash(&rule->match.key);
    uint32_t candidate;

    pthread_mutex_lock(&cls->lock);
    slot = find_slot(st->buckets, &rule->match.key, hash, &candidate);
    prev = slot;
    while (*prev != rule) {
        prev = &node_of(*prev)->next_same;
    }
    __atomic_store_n(prev, node->next_same, __ATOMIC_RELEASE);
    if (!*slot && candidate > 0) {
        struct sp_cls_buckets *b = st->buckets;
        uint32_t first = sp_cls_bucket_index(hash, b->mask, 0);

        /* The hint keeps the bits of keys gone until the last goes: which
         * bits the others set is not known here. */
        if (!--b->n_moved[first]) {
            __atomic_store_n(&sp_cls_bucket_at(b, first)->moved_hint, 0,
                             __ATOMIC_RELEASE);
        }
        if (candidate >= SP_CLS_FIRST_OVERFLOW) {
            __atomic_sub_fetch(&b->n_overflow, 1, __ATOMIC_RELEASE);
        }
    }
    st->n_rules--;
    cls->n_rules--;
    if (!st->n_rules) {
        publish_order(cls, NULL, st);
        defer_free(cls, st->buckets, false);
        defer_free(cls, st, false);
    } else if (rule->priority == st->max_priority && !--st->n_at_max) {
        recount_priorities(st);
        publish_order(cls, NULL, NULL);
    }
    bump_generation(cls);
    defer_free(cls, node, true);
    if (cls->n_garbage >= SP_CLS_RECLAIM_BATCH) {
        reclaim(cls);
    }
    pthread_mutex_unlock(&cls->lock);
}

const struct sp_rule *
sp_cls_find(struct sp_cls *cls, const struct sp_match *match,
            uint32_t priority)
{
    const struct sp_rule *found = NULL;
    struct sp_cls_subtable *st;

    pthread_mutex_lock(&cls->lock);
    st = find_subtable(cls, &match->mask);
    if (st) {
        uint32_t candidate;
        const struct sp_rule **slot = find_slot(
            st->buckets, &match->key, masked_hash(&match->key), &candidate);

        for (const struct sp_rule *r = slot ? *slot : NULL; r;
             r = node_of(r)->next_same) {
            if (r->priority == priority) {
                found = r;
            }
        }
    }
    pthread_mutex_unlock(&cls->lock);
    return found;
}

/* The layout st calls for: key copies from half the hits, if it has the
 * buckets for them to pay; one-line buckets under a quarter; between
 * them the one it has (so that a share near a threshold does not rebuild
 * at every call). */
static uint32_t
wanted_lines(const struct sp_cls *cls, const struct sp_cls_subtable *st,
             uint64_t hits, uint64_t total)
{
    if (st->buckets->mask + 1 < cls->copies_min_buckets || hits * 4 < total) {
        return 1;
    }
    if (hits * 2 >= total && hits) {
        return SP_CLS_LINES_COPIES;
    }
    return st->buckets->lines;
}

void
sp_cls_set_copies_min_buckets(struct sp_cls *cls, uint32_t min_buckets)
{
    pthread_mutex_lock(&cls->lock);
    cls->copies_min_buckets = min_buckets;
    pthread_mutex_unlock(&cls->lock);
}

void
sp_cls_set_overflow_min_buckets(struct sp_cls *cls, uint32_t min_buckets)
{
    pthread_mutex_lock(&cls->lock);
    cls->overflow_min_buckets = min_buckets;
    pthread_mutex_unlock(&cls->lock);
}

void
sp_cls_sort(struct sp_cls *cls)
{
    uint64_t total = 0;

    pthread_mutex_lock(&cls->lock);
    publish_order(cls, NULL, NULL);
    for (uint32_t i = 0; i < cls->order->n; i++) {
        total += sp_cls_subtable_hits(cls->order->e[i].st);
    }
    for (uint32_t i = 0; i < cls->order->n; i++) {
        struct sp_cls_subtable *st = cls->order->e[i].st;
        uint32_t lines =
            wanted_lines(cls, st, sp_cls_subtable_hits(st), total);

        /* Without the memory, the subtable keeps its layout. */
        if (lines != st->buckets->lines) {
            rebuild(cls, st, st->buckets->mask + 1, lines);
        }
        halve_hits(st);
    }
    pthread_mutex_unlock(&cls->lock);
}

uint32_t
sp_cls_rule_count(struct sp_cls *cls)
{
    uint32_t n;

    pthread_mutex_lock(&cls->lock);
    n = cls->n_rules;
    pthread_mutex_unlock(&cls->lock);
    return n;
}

uint32_t
sp_cls_subtable_count(struct sp_cls *cls)
{
    uint32_t n;

    pthread_mutex_lock(&cls->lock);
    n = cls->order->n;
    pthread_mutex_unlock(&cls->lock);
    return n;
}

const struct sp_cls_subtable *
sp_cls_rule_subtable(const struct sp_rule *rule)
{
    return node_of(rule)->subtable;
}

const struct sp_cls_subtable *
sp_cls_subtable_at(const struct sp_cls *cls, uint32_t i)
{
    const struct order *o = rcu_dereference(cls->order);

    return i < o->n ? o->e[i].st : NULL;
}

void
sp_cls_destroy(struct sp_cls *cls)
{
    if (!cls) {
        return;
    }
    sp_cls_reclaim(cls);
    for (uint32_t i = 0; i < cls->order->n; i++) {
        struct sp_cls_subtable *st = cls->order->e[i].st;

        for (uint32_t b = 0; b < sp_cls_bucket_count(st->buckets); b++) {
            for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
                const struct sp_rule *r =
                    sp_cls_bucket_at(st->buckets, b)->rules[s];

                while (r) {
                    const struct sp_rule *next = node_of(r)->next_same;

                    free_rule(cls, node_of(r));
                    r = next;
                }
            }
        }
        free(st->buckets);
        free(st);
    }
    free(cls->order);
    free(cls->garbage);
    pthread_mutex_destroy(&cls->lock);
    free(cls);
}

uint32_t
sp_cls_lookup(const struct sp_cls *cls, const struct sp_flow_key *keys,
              uint32_t n, uint32_t todo, const struct sp_rule **rules)
{
    const struct order *o = rcu_dereference(cls->order);
    sp_classifier_fn *lookup = SP_KERNEL(classifier);
    unsigned stripe = hit_stripe();
    uint32_t found = 0, done = 0;

    todo &= sp_batch_lanes(n);
    for (uint32_t j = 0; j < o->n; j++) {
        const struct sp_rule *got[SP_BATCH_MAX];
        struct sp_cls_subtable *st = o->e[j].st;
        uint32_t hit, need;

        /* A key is done once its best rule outranks every rule left:
         * equal priorities go on, an earlier-inserted rule may follow.
         * A key's best is at most the highest priority searched, so that
         * can happen only where the highest priority falls, and only
         * there are the rules read (a line each, from memory in large
         * tables, for as many keys as were found). */
        if (j && o->e[j].max_priority != o->e[j - 1].max_priority) {
            for (uint32_t p = found & ~done; p; p &= p - 1) {
                unsigned i = (unsigned)__builtin_ctz(p);

                if (rules[i]->priority > o->e[j].max_priority) {
                    done |= UINT32_C(1) << i;
                }
            }
        }
        need = todo & ~done;
        if (!need) {
            break;
        }
        hit = lookup(st, rcu_dereference(st->buckets), keys, n, need, got);
        if (hit) {
            count_hits(st, stripe, (uint64_t)__builtin_popcount(hit));
        }
        for (uint32_t p = hit; p; p &= p - 1) {
            unsigned i = (unsigned)__builtin_ctz(p);

            if (!(found & (UINT32_C(1) << i)) || precedes(got[i], rules[i])) {
                rules[i] = got[i];
            }
        }
        found |= hit;
    }
    return found;
}
