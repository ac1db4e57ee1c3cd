/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The search order: subtables by highest priority, then by recent hits,
 * RCU-published with a snapshot of each one's highest priority so that a
 * lookup knows where it may stop; and, on each sp_cls_sort, the layout
 * the hits call for (key copies for a large subtable answering most
 * lookups).
 */
#include <stdlib.h>
#include <string.h>
#include <urcu-qsbr.h>

#include "datapath/cls_internal.h"

static int
compare_entries(const void *a, const void *b)
{
    const struct sp_cls_order_entry *x = a, *y = b;
    uint64_t hx = sp_cls_subtable_hits(x->st);
    uint64_t hy = sp_cls_subtable_hits(y->st);

    if (x->max_priority != y->max_priority) {
        return x->max_priority > y->max_priority ? -1 : 1;
    }
    return (hx < hy) - (hx > hy);
}

int
sp_cls_publish_order(struct sp_cls *cls, struct sp_cls_subtable *add,
                     const struct sp_cls_subtable *drop)
{
    struct sp_cls_order *old = cls->order;
    struct sp_cls_order *o = malloc(sizeof *o + (old->n + 1) * sizeof o->e[0]);

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
    sp_cls_defer_free(cls, old, false);
    return 0;
}

struct sp_cls_subtable *
sp_cls_find_subtable(const struct sp_cls *cls, const struct sp_flow_key *mask)
{
    for (uint32_t i = 0; i < cls->order->n; i++) {
        if (!memcmp(&cls->order->e[i].st->mask, mask, sizeof *mask)) {
            return cls->order->e[i].st;
        }
    }
    return NULL;
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
sp_cls_sort(struct sp_cls *cls)
{
    uint64_t total = 0;

    pthread_mutex_lock(&cls->lock);
    sp_cls_publish_order(cls, NULL, NULL);
    for (uint32_t i = 0; i < cls->order->n; i++) {
        total += sp_cls_subtable_hits(cls->order->e[i].st);
    }
    for (uint32_t i = 0; i < cls->order->n; i++) {
        struct sp_cls_subtable *st = cls->order->e[i].st;
        uint32_t lines =
            wanted_lines(cls, st, sp_cls_subtable_hits(st), total);

        /* Without the memory, the subtable keeps its layout. */
        if (lines != st->buckets->lines) {
            sp_cls_rebuild(cls, st, st->buckets->mask + 1, lines);
        }
        sp_cls_halve_hits(st);
    }
    pthread_mutex_unlock(&cls->lock);
}

const struct sp_cls_subtable *
sp_cls_subtable_at(const struct sp_cls *cls, uint32_t i)
{
    const struct sp_cls_order *o = rcu_dereference(cls->order);

    return i < o->n ? o->e[i].st : NULL;
}
