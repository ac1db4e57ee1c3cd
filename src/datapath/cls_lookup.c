/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The batch lookup: the classifier kernel over the subtables in search
 * order (a subtable of one rule compared with it directly), stopping once
 * every key's best rule outranks what is left; and the hit counts it keeps,
 * one stripe per looking-up thread.
 */
#include <limits.h>
#include <urcu-qsbr.h>

#include "datapath/cls_internal.h"

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

void
sp_cls_halve_hits(struct sp_cls_subtable *st)
{
    for (unsigned i = 0; i < SP_CLS_HIT_STRIPES; i++) {
        uint64_t *count = &st->hits[i].n;

        __atomic_store_n(count, __atomic_load_n(count, __ATOMIC_RELAXED) / 2,
                         __ATOMIC_RELAXED);
    }
}

/* The keys of 'todo' (among the first n) a subtable's one rule matches,
 * as its kernel finds them but with no hash and no bucket: each key masked
 * and compared with the rule's. A mask of one block (in_port, or an
 * EtherType: the common rules) takes that block alone, every key up to
 * the last of 'todo' without a branch: first all of them at once, then,
 * when one differs, each from the last down, its result shifted in at
 * bit 0 (a shift by a variable count costs x86 three micro-ops); a wider
 * mask the key_match kernel. */
static uint32_t
sole_match(const struct sp_cls_subtable *st, const struct sp_rule *rule,
           const struct sp_flow_key *keys, uint32_t n, uint32_t todo)
{
    if (st->block_map && !(st->block_map & (st->block_map - 1))) {
        unsigned b = (unsigned)__builtin_ctz(st->block_map);
        uint64_t mask = st->mask.blocks[b], want = rule->match.key.blocks[b];
        uint64_t differ = 0;
        uint32_t hit = 0;

        /* All matching, the common case, by one OR with no chain from
         * key to key ('want' is inside the mask). */
        for (unsigned i = 0; i < sp_batch_end(todo); i++) {
            differ |= keys[i].blocks[b] ^ want;
        }
        if (!(differ & mask)) {
            return todo;
        }
        for (unsigned i = sp_batch_end(todo); i-- > 0;) {
            hit = hit * 2 + !((keys[i].blocks[b] & mask) ^ want);
        }
        return hit & todo;
    }
    /* The blocks the mask does not use are 0 in the mask and in the
     * rule's key (sp_match_check refuses a value outside its mask). */
    return SP_KERNEL(key_match)(keys, n, todo, &st->mask, &rule->match.key);
}

/* sole_match, with got[i] set for every key it matched. */
static uint32_t
sole_lookup(const struct sp_cls_subtable *st, const struct sp_rule *rule,
            const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
            const struct sp_rule **got)
{
    uint32_t hit = sole_match(st, rule, keys, n, todo);

    for (uint32_t p = hit; p; p &= p - 1) {
        got[__builtin_ctz(p)] = rule;
    }
    return hit;
}

bool
sp_cls_sole(const struct sp_cls *cls)
{
    const struct sp_cls_order *o = rcu_dereference(cls->order);

    return o->n == 1 && __atomic_load_n(&o->e[0].st->sole, __ATOMIC_ACQUIRE);
}

uint32_t
sp_cls_subtables(const struct sp_cls *cls)
{
    return rcu_dereference(cls->order)->n;
}

/* Whether a subtable's mask is in_port's alone. */
static bool
in_port_only(const struct sp_cls_subtable *st)
{
    static const struct sp_flow_key mask = {.in_port = UINT16_MAX};
    unsigned b = SP_KEY_OFS(in_port) / sizeof mask.blocks[0];

    return st->block_map == 1u << b && st->mask.blocks[b] == mask.blocks[b];
}

const struct sp_rule *
sp_cls_lookup_sole(const struct sp_cls *cls, const struct sp_flow_key *keys,
                   uint32_t n, bool one_port, uint32_t *found)
{
    const struct sp_cls_order *o = rcu_dereference(cls->order);
    struct sp_cls_subtable *st = o->n == 1 ? o->e[0].st : NULL;
    const struct sp_rule *sole =
        st ? __atomic_load_n(&st->sole, __ATOMIC_ACQUIRE) : NULL;
    uint32_t all = sp_batch_lanes(n);

    if (!sole) {
        return NULL;
    }
    if (n && one_port && in_port_only(st)) {
        *found = keys[0].in_port == sole->match.key.in_port ? all : 0;
    } else {
        *found = sole_match(st, sole, keys, n, all);
    }
    if (*found) {
        count_hits(st, hit_stripe(), sp_batch_count(*found, n));
    }
    return sole;
}

uint32_t
sp_cls_lookup(const struct sp_cls *cls, const struct sp_flow_key *keys,
              uint32_t n, uint32_t todo, const struct sp_rule **rules)
{
    const struct sp_cls_order *o = rcu_dereference(cls->order);
    sp_classifier_fn *lookup = SP_KERNEL(classifier);
    unsigned stripe = hit_stripe();
    uint32_t found = 0, done = 0;

    todo &= sp_batch_lanes(n);
    for (uint32_t j = 0; j < o->n; j++) {
        const struct sp_rule *got[SP_BATCH_MAX];
        struct sp_cls_subtable *st = o->e[j].st;
        const struct sp_rule *sole;
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
        sole = __atomic_load_n(&st->sole, __ATOMIC_ACQUIRE);
        hit = sole ? sole_lookup(st, sole, keys, n, need, got)
                   : lookup(st, rcu_dereference(st->buckets), keys, n, need,
                            got);
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
