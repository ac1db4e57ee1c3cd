/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The classifier's interface (simdpath/classifier.h): create and destroy,
 * insert, remove and find, the rule listing and the counts. The other
 * concerns are in the cls_*.c files (cls_internal.h lists them).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-qsbr.h>

#include "datapath/cls_internal.h"

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

const struct sp_rule *
sp_cls_insert(struct sp_cls *cls, const struct sp_match *match,
              uint32_t priority, const struct sp_actions *actions,
              struct sp_err *err)
{
    return sp_cls_insert_aux(cls, match, priority, actions, NULL, 0, err);
}

const struct sp_rule *
sp_cls_insert_aux(struct sp_cls *cls, const struct sp_match *match,
                  uint32_t priority, const struct sp_actions *actions,
                  const void *aux, size_t aux_size, struct sp_err *err)
{
    /* 128-byte aligned: the rule's last line and aux's first are one pair
     * for the CPU's adjacent-line prefetch. */
    size_t node_size = (sizeof(struct sp_cls_node) + 63) / 64 * 64;
    struct sp_cls_node *node;
    struct sp_cls_subtable *st;
    bool new_st = false;
    uint32_t old_max, old_at_max;

    if (sp_match_validate(match, err)) {
        return NULL;
    }
    node = aligned_alloc(128, (node_size + aux_size + 127) / 128 * 128);
    if (!node) {
        sp_err_set(err, "%s", "no memory for a rule");
        return NULL;
    }
    memset(node, 0, sizeof *node);
    node->rule.match = *match;
    node->rule.priority = priority;
    node->rule.actions = actions;
    if (aux_size) {
        node->rule.aux = memcpy((char *)node + node_size, aux, aux_size);
    }
    pthread_mutex_lock(&cls->lock);
    node->rule.seq = cls->next_seq++;
    st = sp_cls_find_subtable(cls, &match->mask);
    if (!st) {
        st = sp_cls_subtable_create(cls, &match->mask);
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
        sp_cls_publish_order(cls, new_st ? st : NULL, NULL)) {
        sp_err_set(err, "%s", "no memory for the subtable order");
        goto undo;
    }
    if (sp_cls_link_rule(cls, st, node, err)) {
        goto undo;
    }
    node->subtable = st;
    st->n_rules++;
    cls->n_rules++;
    __atomic_store_n(&st->sole, st->n_rules == 1 ? &node->rule : NULL,
                     __ATOMIC_RELEASE);
    bump_generation(cls);
    pthread_mutex_unlock(&cls->lock);
    return &node->rule;

undo:
    st->max_priority = old_max;
    st->n_at_max = old_at_max;
    if (new_st) {
        if (sp_cls_find_subtable(cls, &match->mask) == st) {
            sp_cls_publish_order(cls, NULL, st);
            sp_cls_defer_free(cls, st->buckets, false);
            sp_cls_defer_free(cls, st, false);
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

typedef void rule_fn(const struct sp_rule *rule, void *aux);

/* Calls fn on every rule of st: each slot's, then those queued behind it
 * (fn may free the rule). */
static void
for_each_rule(const struct sp_cls_subtable *st, rule_fn *fn, void *aux)
{
    const struct sp_cls_buckets *b = st->buckets;

    for (uint32_t i = 0; i < sp_cls_bucket_count(b); i++) {
        for (unsigned s = 0; s < SP_CLS_SLOTS; s++) {
            const struct sp_rule *r = sp_cls_bucket_at(b, i)->rules[s];

            while (r) {
                const struct sp_rule *next = node_of(r)->next_same;

                fn(r, aux);
                r = next;
            }
        }
    }
}

static void
count_priority(const struct sp_rule *r, void *aux)
{
    struct sp_cls_subtable *st = aux;

    if (!st->n_at_max || r->priority > st->max_priority) {
        st->max_priority = r->priority;
        st->n_at_max = 0;
    }
    st->n_at_max += r->priority == st->max_priority;
}

static void
take_rule(const struct sp_rule *r, void *aux)
{
    *(const struct sp_rule **)aux = r;
}

/* Publishes st's rule as its sole one if it has one rule left. */
static void
publish_sole(struct sp_cls_subtable *st)
{
    const struct sp_rule *sole = NULL;

    if (st->n_rules == 1) {
        for_each_rule(st, take_rule, &sole);
    }
    __atomic_store_n(&st->sole, sole, __ATOMIC_RELEASE);
}

/* Recomputes max_priority and n_at_max from every rule of st. */
static void
recount_priorities(struct sp_cls_subtable *st)
{
    st->max_priority = 0;
    st->n_at_max = 0;
    for_each_rule(st, count_priority, st);
}

void
sp_cls_remove(struct sp_cls *cls, const struct sp_rule *rule)
{
    struct sp_cls_node *node = node_of(rule);
    struct sp_cls_subtable *st = node->subtable;
    const struct sp_rule **slot, **prev;
    uint32_t hash = masked_hash(&rule->match.key);
    uint32_t candidate;

    pthread_mutex_lock(&cls->lock);
    /* Lookups from now on go by the buckets, which lose the rule next. */
    __atomic_store_n(&st->sole, NULL, __ATOMIC_RELEASE);
    slot = sp_cls_find_slot(st->buckets, &rule->match.key, hash, &candidate);
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
        sp_cls_publish_order(cls, NULL, st);
        sp_cls_defer_free(cls, st->buckets, false);
        sp_cls_defer_free(cls, st, false);
    } else {
        if (rule->priority == st->max_priority && !--st->n_at_max) {
            recount_priorities(st);
            sp_cls_publish_order(cls, NULL, NULL);
        }
        publish_sole(st);
    }
    bump_generation(cls);
    sp_cls_defer_free(cls, node, true);
    if (cls->n_garbage >= SP_CLS_RECLAIM_BATCH) {
        sp_cls_reclaim_locked(cls);
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
    st = sp_cls_find_subtable(cls, &match->mask);
    if (st) {
        uint32_t candidate;
        const struct sp_rule **slot = sp_cls_find_slot(
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

const struct sp_cls_buckets *
sp_cls_subtable_buckets(const struct sp_cls_subtable *st)
{
    return rcu_dereference(st->buckets);
}

struct listing {
    const struct sp_rule **rules;
    uint32_t n;
};

static void
list_rule(const struct sp_rule *r, void *aux)
{
    struct listing *l = aux;

    l->rules[l->n++] = r;
}

static int
compare_precedence(const void *a, const void *b)
{
    const struct sp_rule *x = *(const struct sp_rule *const *)a;
    const struct sp_rule *y = *(const struct sp_rule *const *)b;

    return precedes(x, y) ? -1 : precedes(y, x);
}

const struct sp_rule **
sp_cls_rules(struct sp_cls *cls)
{
    struct listing l = {NULL, 0};

    pthread_mutex_lock(&cls->lock);
    l.rules = malloc(((size_t)cls->n_rules + 1) * sizeof *l.rules);
    if (l.rules) {
        for (uint32_t i = 0; i < cls->order->n; i++) {
            for_each_rule(cls->order->e[i].st, list_rule, &l);
        }
        l.rules[l.n] = NULL;
    }
    pthread_mutex_unlock(&cls->lock);
    if (l.rules) {
        qsort(l.rules, l.n, sizeof *l.rules, compare_precedence);
    }
    return l.rules;
}

static void
free_rule(const struct sp_rule *r, void *cls)
{
    sp_cls_free_rule(cls, node_of(r));
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

        for_each_rule(st, free_rule, cls);
        free(st->buckets);
        free(st);
    }
    free(cls->order);
    free(cls->garbage);
    pthread_mutex_destroy(&cls->lock);
    free(cls);
}
