/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pool of shared action lists: a chained hash table of the lists, by a
 * hash of their compiled bytes, each with a reference count.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "actions_internal.h"

struct sp_actions_pool {
    pthread_mutex_t lock;
    struct sp_actions **buckets;
    uint32_t mask; /* buckets - 1, a power of two minus one */
    unsigned count;
};

#define POOL_MIN_BUCKETS 64

struct sp_actions_pool *
sp_actions_pool_create(void)
{
    struct sp_actions_pool *pool = calloc(1, sizeof *pool);

    if (pool) {
        pool->buckets = calloc(POOL_MIN_BUCKETS, sizeof *pool->buckets);
        if (!pool->buckets) {
            free(pool);
            return NULL;
        }
        pool->mask = POOL_MIN_BUCKETS - 1;
        pthread_mutex_init(&pool->lock, NULL);
    }
    return pool;
}

void
sp_actions_pool_destroy(struct sp_actions_pool *pool)
{
    if (!pool) {
        return;
    }
    for (uint32_t b = 0; b <= pool->mask; b++) {
        for (struct sp_actions *a = pool->buckets[b], *next; a; a = next) {
            next = a->next;
            sp_actions_free(a);
        }
    }
    free(pool->buckets);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

/* FNV-1a, continued from h. */
static uint32_t
fnv(uint32_t h, const void *data, size_t len)
{
    const uint8_t *p = data;

    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * 16777619u;
    }
    return h;
}

/* The compiled bytes: the header's values, the steps and the written
 * actions (both zeroed before they are filled, padding included). */
static uint32_t
actions_hash(const struct sp_actions *a)
{
    uint32_t head[4] = {a->n_actions, a->n_steps, a->last_output,
                        a->headroom | (uint32_t)a->drop << 31};
    uint32_t h = fnv(2166136261u, head, sizeof head);

    h = fnv(h, a->steps, a->n_steps * sizeof *a->steps);
    return fnv(h, a->actions, a->n_actions * sizeof *a->actions);
}

static bool
actions_equal(const struct sp_actions *a, const struct sp_actions *b)
{
    return a->n_actions == b->n_actions && a->n_steps == b->n_steps &&
           a->last_output == b->last_output && a->headroom == b->headroom &&
           a->drop == b->drop &&
           !memcmp(a->steps, b->steps, a->n_steps * sizeof *a->steps) &&
           !memcmp(a->actions, b->actions, a->n_actions * sizeof *a->actions);
}

/* Doubles the buckets once there are more lists than buckets; staying as
 * it is when there is no memory only makes chains longer. */
static void
grow(struct sp_actions_pool *pool)
{
    uint32_t n = 2 * (pool->mask + 1);
    struct sp_actions **buckets;

    if (pool->count <= pool->mask + 1 ||
        !(buckets = calloc(n, sizeof *buckets))) {
        return;
    }
    for (uint32_t b = 0; b <= pool->mask; b++) {
        for (struct sp_actions *a = pool->buckets[b], *next; a; a = next) {
            next = a->next;
            a->next = buckets[a->hash & (n - 1)];
            buckets[a->hash & (n - 1)] = a;
        }
    }
    free(pool->buckets);
    pool->buckets = buckets;
    pool->mask = n - 1;
}

const struct sp_actions *
sp_actions_intern(struct sp_actions_pool *pool, struct sp_actions *actions)
{
    uint32_t hash = actions_hash(actions);
    struct sp_actions *found;

    pthread_mutex_lock(&pool->lock);
    for (found = pool->buckets[hash & pool->mask]; found;
         found = found->next) {
        if (found->hash == hash && actions_equal(found, actions)) {
            break;
        }
    }
    if (found) {
        found->refs++;
        sp_actions_free(actions);
    } else {
        found = actions;
        found->pool = pool;
        found->refs = 1;
        found->hash = hash;
        found->next = pool->buckets[hash & pool->mask];
        pool->buckets[hash & pool->mask] = found;
        pool->count++;
        grow(pool);
    }
    pthread_mutex_unlock(&pool->lock);
    return found;
}

void
sp_actions_release(const struct sp_actions *actions)
{
    struct sp_actions *a = (struct sp_actions *)actions;
    struct sp_actions_pool *pool = a->pool;

    pthread_mutex_lock(&pool->lock);
    if (!--a->refs) {
        struct sp_actions **link = &pool->buckets[a->hash & pool->mask];

        while (*link != a) {
            link = &(*link)->next;
        }
        *link = a->next;
        pool->count--;
        sp_actions_free(a);
    }
    pthread_mutex_unlock(&pool->lock);
}

unsigned
sp_actions_pool_count(struct sp_actions_pool *pool)
{
    unsigned n;

    pthread_mutex_lock(&pool->lock);
    n = pool->count;
    pthread_mutex_unlock(&pool->lock);
    return n;
}
