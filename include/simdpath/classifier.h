/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The classifier: rules with priorities and wildcards, in tuple-space
 * subtables (one per distinct mask). The layouts the classifier kernel
 * reads (struct sp_cls_subtable, struct sp_cls_buckets) are private to the
 * library, in src/datapath/cls_layout.h; the code is in src/datapath/
 * (classifier.c and the cls_*.c files).
 *
 * Semantics (OpenFlow): the highest-priority matching rule wins; among
 * matching rules of equal priority the one inserted first (lowest seq)
 * wins, on every ISA.
 *
 * Concurrency (liburcu, QSBR flavour):
 * - Lookups (sp_cls_lookup, sp_cls_generation, and sp_emc_cls_lookup in
 *   emc.h) take no lock. They must run on a thread registered with
 *   rcu_register_thread() and online; the rules they return stay valid
 *   until that thread's next rcu_quiescent_state() (or rcu_thread_offline).
 *   A PMD thread reports one quiescent state per poll loop, after it has
 *   finished with every rule of the loop's batches.
 * - Updates (sp_cls_insert, sp_cls_remove, sp_cls_find, sp_cls_sort,
 *   sp_cls_reclaim) take the classifier's mutex and may wait for a grace
 *   period (synchronize_rcu): call them from any thread that is not inside
 *   a lookup (an unregistered thread, or a registered one, which QSBR puts
 *   offline while it waits). Never from a PMD thread between its quiescent
 *   states while it holds rule pointers.
 * - Rule lifetime: the classifier allocates and owns every rule. A removed
 *   rule is unlinked at once and freed after a grace period, in batches
 *   (or at sp_cls_reclaim / sp_cls_destroy); the
 *   actions destructor given to sp_cls_create is called on its actions
 *   then, never earlier.
 */
#ifndef SP_CLASSIFIER_H
#define SP_CLASSIFIER_H

#include <stdbool.h>
#include <stdint.h>

#include "simdpath/dispatch.h"
#include "simdpath/match.h"

/* Defined by the actions; the classifier only stores the pointer. */
struct sp_actions;

struct sp_rule {
    struct sp_match match; /* key already ANDed with mask */
    uint32_t priority;     /* higher wins */
    uint64_t seq;          /* insertion order: equal priorities, lower wins */
    const struct sp_actions *actions;
    void *aux; /* the inserter's (sp_cls_insert_aux), e.g. counters */
};

struct sp_cls;
struct sp_cls_subtable;
struct sp_cls_buckets;

typedef void sp_actions_free_fn(const struct sp_actions *actions);

/* A new, empty classifier; free_actions (may be NULL) is called on a removed
 * rule's actions once no lookup can see the rule. NULL on no memory. */
struct sp_cls *sp_cls_create(sp_actions_free_fn *free_actions);

/* Frees the classifier and every rule in it (calling free_actions). No
 * lookup may be running or start on it. */
void sp_cls_destroy(struct sp_cls *cls);

/* Adds a rule: the match is checked with sp_match_validate(). Returns the
 * rule (owned by the classifier) or NULL with the reason in err (invalid
 * match, a rule with the same match and priority exists, no memory). */
const struct sp_rule *sp_cls_insert(struct sp_cls *cls,
                                    const struct sp_match *match,
                                    uint32_t priority,
                                    const struct sp_actions *actions,
                                    struct sp_err *err);

/* sp_cls_insert, with a copy of aux_size bytes of aux stored with the rule
 * (rule->aux, 64-byte aligned) before any lookup can see it, and freed with
 * the rule. In the same allocation, a lookup that reads the rule also
 * brings the start of aux near, and no second free can be forgotten. */
const struct sp_rule *
sp_cls_insert_aux(struct sp_cls *cls, const struct sp_match *match,
                  uint32_t priority, const struct sp_actions *actions,
                  const void *aux, size_t aux_size, struct sp_err *err);

/* Removes a rule sp_cls_insert returned; it is freed after a grace period. */
void sp_cls_remove(struct sp_cls *cls, const struct sp_rule *rule);

/* The rule with exactly this match and priority, or NULL. */
const struct sp_rule *sp_cls_find(struct sp_cls *cls,
                                  const struct sp_match *match,
                                  uint32_t priority);

/* Reorders subtables by hit counts within equal highest priority (and
 * halves the counts, so the order follows recent traffic), and gives key
 * copies to a subtable of SP_CLS_COPIES_MIN_BUCKETS (cls_layout.h) or more
 * buckets with
 * at least half the (halved) hit counts, taking them from one under a
 * quarter (without memory for the new buckets, a subtable keeps its
 * layout). Call it now and then, as sp_dp_maintain does. */
void sp_cls_sort(struct sp_cls *cls);

/* The fewest buckets a subtable must have to get key copies from
 * sp_cls_sort (SP_CLS_COPIES_MIN_BUCKETS, none, unless set; 0: any). */
void sp_cls_set_copies_min_buckets(struct sp_cls *cls, uint32_t min_buckets);

/* The fewest buckets a subtable's table must have to get overflow buckets
 * (SP_CLS_OVERFLOW_MIN_BUCKETS unless set; 0: any), from its next growth
 * or change of layout on. */
void sp_cls_set_overflow_min_buckets(struct sp_cls *cls, uint32_t min_buckets);

/* Waits for a grace period and frees everything removed so far. */
void sp_cls_reclaim(struct sp_cls *cls);

uint32_t sp_cls_rule_count(struct sp_cls *cls);
uint32_t sp_cls_subtable_count(struct sp_cls *cls);

/* The lookups st answered (halved by each sp_cls_sort()). */
uint64_t sp_cls_subtable_hits(const struct sp_cls_subtable *st);

/* The subtable holding rule (valid as long as the rule). */
const struct sp_cls_subtable *sp_cls_rule_subtable(const struct sp_rule *rule);

/* The i-th subtable in search order, or NULL past the end (for dumps and
 * tests; valid like a looked-up rule, or while no update runs). */
const struct sp_cls_subtable *sp_cls_subtable_at(const struct sp_cls *cls,
                                                 uint32_t i);

/* The buckets a lookup of st reads now, what the classifier kernel takes
 * beside st (for callers of the kernel; valid like st). */
const struct sp_cls_buckets *
sp_cls_subtable_buckets(const struct sp_cls_subtable *st);

/* Every rule, in precedence order (highest priority first, then the
 * earliest inserted), in a new NULL-terminated array the caller frees;
 * NULL on no memory. The rules stay valid until they are removed: a
 * caller that removes rules on another thread keeps it from doing so
 * while it uses them (sp_dp does). */
const struct sp_rule **sp_cls_rules(struct sp_cls *cls);

/* Bumped after every insert and remove: an EMC entry made under an older
 * generation is never used. */
uint64_t sp_cls_generation(const struct sp_cls *cls);

/* Whether every lookup now is one rule's direct compare: one subtable,
 * holding one rule. As up to date as a generation read before it. */
bool sp_cls_sole(const struct sp_cls *cls);
/* How many subtables a lookup now searches, from an RCU reader (a PMD);
 * as up to date as a generation read before it. */
uint32_t sp_cls_subtables(const struct sp_cls *cls);

/* Looks up the keys of 'todo' (bits of the first n <= SP_BATCH_MAX keys)
 * through the classifier kernel. Returns the keys that matched; rules[i] is
 * set for those only. Lock-free; see the concurrency contract above. */
uint32_t sp_cls_lookup(const struct sp_cls *cls,
                       const struct sp_flow_key *keys, uint32_t n,
                       uint32_t todo, const struct sp_rule **rules);

/* sp_cls_lookup of the first n keys while the classifier is one
 * subtable holding one rule (sp_cls_sole): returns that rule, every key
 * of *found matched it. NULL when the classifier is not that (any more):
 * nothing was looked up. With one_port, every key has the in_port of the
 * first (a received burst's), and a rule on in_port alone is compared
 * once. Lock-free, like sp_cls_lookup. */
const struct sp_rule *sp_cls_lookup_sole(const struct sp_cls *cls,
                                         const struct sp_flow_key *keys,
                                         uint32_t n, bool one_port,
                                         uint32_t *found);

#endif /* SP_CLASSIFIER_H */
