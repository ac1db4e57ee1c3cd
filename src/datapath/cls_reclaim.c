/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What lookups may still see (removed rules, replaced bucket arrays and
 * orders, emptied subtables) is freed after a grace period, one
 * synchronize_rcu() for a batch of them. Not call_rcu: it wants writers to
 * be registered, online reader threads, which a control thread is not.
 */
#include <stdlib.h>
#include <urcu-qsbr.h>

#include "datapath/cls_internal.h"

void
sp_cls_free_rule(struct sp_cls *cls, struct sp_cls_node *node)
{
    if (cls->free_actions && node->rule.actions) {
        cls->free_actions(node->rule.actions);
    }
    free(node);
}

void
sp_cls_reclaim_locked(struct sp_cls *cls)
{
    if (!cls->n_garbage) {
        return;
    }
    synchronize_rcu();
    for (size_t i = 0; i < cls->n_garbage; i++) {
        if (cls->garbage[i].is_rule) {
            sp_cls_free_rule(cls, cls->garbage[i].ptr);
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
    sp_cls_reclaim_locked(cls);
    pthread_mutex_unlock(&cls->lock);
}

/* Queues ptr for freeing after a grace period. If the queue cannot grow,
 * waits for one now rather than leak or free early. */
void
sp_cls_defer_free(struct sp_cls *cls, void *ptr, bool is_rule)
{
    if (cls->n_garbage == cls->garbage_cap) {
        size_t cap = cls->garbage_cap ? 2 * cls->garbage_cap : 64;
        struct sp_cls_garbage *g = realloc(cls->garbage, cap * sizeof *g);

        if (g) {
            cls->garbage = g;
            cls->garbage_cap = cap;
        } else {
            sp_cls_reclaim_locked(cls);
        }
    }
    if (cls->n_garbage < cls->garbage_cap) {
        cls->garbage[cls->n_garbage++] = (struct sp_cls_garbage){ptr, is_rule};
    } else {
        synchronize_rcu();
        if (is_rule) {
            sp_cls_free_rule(cls, ptr);
        } else {
            free(ptr);
        }
    }
}
