/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The datapath: rules (classifier + actions), PMD threads and counters.
 *
 * A PMD thread polls its share of the (port, queue) pairs. Each received
 * burst (one port) goes through miniflow extract, hash, EMC and classifier
 * (sp_emc_lookup, sp_emc_cls_misses), is grouped by action list (rules
 * with equal lists share one, sp_actions_intern), and each group runs its
 * actions, which append packets to per-port transmit batches; at the end of
 * the burst every batch is sent. Kernels are read through SP_KERNEL once per
 * burst, so a switch (impl-set) takes effect between bursts on every PMD
 * and no packet is lost.
 *
 * PMD threads are liburcu QSBR readers of the classifier: one quiescent
 * state per poll loop, after every rule pointer of the loop is dead.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <urcu-qsbr.h>

#include "simdpath/classifier.h"
#include "simdpath/datapath.h"
#include "simdpath/emc.h"
#include "simdpath/flow_format.h"
#include "simdpath/flow_parse.h"
#include "simdpath/mfex.h"
#include "simdpath/textfile.h"

#include "datapath/spsc.h"

/* Copies one burst can make: each packet copied for every output but the
 * last of up to this many outputs, as many as a FLOOD to every port has. */
#define MAX_COPIES (SP_BATCH_MAX * SP_DP_MAX_PORTS)

/* The EMC is bypassed while it answers fewer than EMC_BYPASS_EIGHTHS
 * lookups in 8: a working set far larger than the cache rarely hits,
 * and each packet would pay a hash and a probe for nothing. With one
 * subtable the classifier's lookup is itself one hash and one probe, so
 * the cache pays only while nearly every packet hits it
 * (EMC_BYPASS_EIGHTHS_ONE). A decision takes EMC_WINDOW looked-up
 * packets; bypassed, one burst in EMC_SAMPLE still looks up and inserts
 * (every miss), so that a working set which fits turns the cache back
 * on. */
#define EMC_WINDOW             8192
#define EMC_BYPASS_EIGHTHS     1
#define EMC_BYPASS_EIGHTHS_ONE 7
#define EMC_SAMPLE             16

/* Counters written by one PMD thread only and read by others: relaxed
 * atomic loads and stores, no read-modify-write. */
static inline void
bump(uint64_t *counter, uint64_t n)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n,
                     __ATOMIC_RELAXED);
}

static inline uint64_t
peek(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

struct port_counters {
    uint64_t rx, tx, copies, packet_in, packet_out;
    uint64_t drops[SP_DP_DROP_COUNT];
};

/* A PACKET_OUT's frame on its way to PMD 0: the actions to run (NULL:
 * the rules), freed by the channel's thread once PMD 0 is done. */
struct packet_out {
    struct sp_packet pkt;
    struct sp_actions *actions;
};

/* What the datapath keeps of a rule (rule->aux): one line per PMD, that
 * PMD's counters of the rule, which no other thread writes; the first
 * also holds when the rule was added, written before the rule is seen, and
 * the counts a reset left out, written under del_lock. */
struct flow_line {
    uint64_t packets, bytes;
    uint64_t used;  /* TSC of the last burst with a packet of it; 0: none */
    double created; /* line 0: CLOCK_MONOTONIC seconds */
    uint64_t reset_packets, reset_bytes; /* line 0: sums at the reset */
    uint64_t id;                         /* line 0: sp_dp_flow_stats.id */
} __attribute__((aligned(64)));

/* Packets in a row of a burst that matched one rule. */
struct rule_run {
    const struct sp_rule *rule;
    uint32_t packets, bytes;
};

struct pmd {
    struct sp_dp *dp;
    unsigned index;
    struct sp_emc emc;
    /* The EMC bypass: packets looked up and hits in this window, whether
     * the cache is bypassed, bursts since it was bypassed. */
    uint32_t emc_window, emc_window_hits, emc_bursts;
    bool emc_bypass;
    /* Whether the classifier is one rule, compared directly, which costs
     * less than a hash and a probe: then no burst looks up the EMC. Read
     * again at each new generation. */
    bool cls_sole;
    bool cls_one_subtable; /* the bypass's threshold, EMC_BYPASS_EIGHTHS */
    uint64_t cls_gen;
    struct sp_random rng;
    unsigned in_port; /* counters' index of the current burst's port */
    /* The rule whose packets run now when its actions output to the
     * controller (NULL: a PACKET_OUT's), and whether this burst queued
     * packets to the controller. */
    const struct sp_rule *rule;
    bool packet_in_queued;
    struct sp_spsc packet_in;
    uint64_t burst_tsc; /* when it was received, as of the last reading */
    uint32_t n_copies;
    /* The last burst's rule counts, added after the next receive, by
     * when the prefetched counter lines have arrived (see flush_counts). */
    uint32_t n_runs;
    uint64_t runs_tsc;
    struct rule_run runs[SP_BATCH_MAX];
    /* The profile: whether this poll times stages (read once per poll),
     * the TSC where the current stage began, the counters and their
     * baseline (perf_base, as below). */
    bool profiling;
    uint64_t stamp;
    struct sp_dp_pmd_perf perf;
    struct sp_action_ctx actions;
    struct sp_dp_pmd_stats stats;
    struct port_counters ports[SP_DP_MAX_PORTS + 1];
    struct sp_tx_batch tx[SP_DP_MAX_PORTS + 1]; /* by port number */
    /* The counters at the last clear, taken by the PMD itself between
     * bursts, so that what is reported always balances. */
    uint64_t clear_seen;
    struct sp_dp_pmd_stats stats_base;
    struct port_counters ports_base[SP_DP_MAX_PORTS + 1];
    uint64_t perf_clear_seen;
    struct sp_dp_pmd_perf perf_base;
    /* What a burst uses is above, on as few pages as can be: the copies
     * outputs make (32 KB) and PACKET_OUTs to the rules come last. */
    struct sp_packet copies[MAX_COPIES];
    struct sp_packet table[SP_BATCH_MAX];
};

struct sp_dp {
    struct sp_dp_config config;
    const struct sp_io_ops *io;
    struct sp_cls *cls;              /* the rules; it locks itself */
    struct sp_actions_pool *actions; /* every rule's, shared */
    /* Held by flow-del and flow-dump, so that no rule is removed (and
     * freed) while a dump prints it. */
    pthread_mutex_t del_lock;
    struct pmd *pmds[SP_DP_MAX_PMDS];
    bool stop;          /* atomic: set by sp_dp_stop, read by every PMD loop */
    uint64_t clear_gen; /* bumped by sp_dp_stats_clear() */
    uint64_t perf_clear_gen; /* and by sp_dp_perf_clear() */
    bool profile;            /* sp_dp_perf_enable() */
    unsigned running_pmds;   /* PMD loops running now */
    uint64_t last_rule_id;   /* atomic: the id of the rule added last */
    /* A TSC reading and the monotonic clock at creation, to turn rule
     * counters' TSC into seconds. */
    uint64_t tsc0;
    double clock0;
    /* The controller: connected (atomic), its notify callback (set
     * before connected), PACKET_OUT's queue to PMD 0 and the index up to
     * which the producer freed the actions of consumed entries. */
    bool controller;
    void (*notify)(void *aux);
    void *notify_aux;
    struct sp_spsc packet_out;
    uint32_t packet_out_freed;
    /* The queue's tail when PMD 0 last finished running PACKET_OUTs
     * (atomic): the ring's own tail moves on before a burst through the
     * rules is sent. */
    uint32_t packet_outs_run;
    /* Each port's SP_DP_PORT_* config (atomic), by port number. */
    uint32_t port_config[SP_DP_MAX_PORTS + 1];
};

/* Short names for reports and telemetry, by reason. */
static const char *const drop_names[] = {
#define SP_DP_DROP_NAME(id, name, description) name,
    SP_DP_DROP_REASONS(SP_DP_DROP_NAME)
#undef SP_DP_DROP_NAME
};

const char *
sp_dp_drop_name(unsigned reason)
{
    return reason < SP_DP_DROP_COUNT ? drop_names[reason] : "?";
}

static const char *const stage_names[SP_DP_STAGE_COUNT] = {
    [SP_DP_STAGE_RX] = "receive",      [SP_DP_STAGE_PARSE] = "parse",
    [SP_DP_STAGE_EMC] = "hash_emc",    [SP_DP_STAGE_CLASSIFIER] = "classifier",
    [SP_DP_STAGE_ACTIONS] = "actions", [SP_DP_STAGE_TX] = "transmit",
};

const char *
sp_dp_stage_name(unsigned stage)
{
    return stage < SP_DP_STAGE_COUNT ? stage_names[stage] : "?";
}

/* ---- the PMD loop ---- */

static void
copy_counters(uint64_t *dst, const uint64_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        __atomic_store_n(&dst[i], peek(&src[i]), __ATOMIC_RELAXED);
    }
}

#define N_WORDS(x) (sizeof(x) / (sizeof(uint64_t)))

/* Applies a pending clear: the current values become the baseline. */
static void
take_clear(struct pmd *pmd)
{
    uint64_t gen = __atomic_load_n(&pmd->dp->clear_gen, __ATOMIC_ACQUIRE);

    if (gen != pmd->clear_seen) {
        copy_counters((uint64_t *)&pmd->stats_base,
                      (const uint64_t *)&pmd->stats, N_WORDS(pmd->stats));
        copy_counters((uint64_t *)pmd->ports_base,
                      (const uint64_t *)pmd->ports, N_WORDS(pmd->ports));
        pmd->clear_seen = gen;
    }
    gen = __atomic_load_n(&pmd->dp->perf_clear_gen, __ATOMIC_ACQUIRE);
    if (gen != pmd->perf_clear_seen) {
        copy_counters((uint64_t *)&pmd->perf_base,
                      (const uint64_t *)&pmd->perf, N_WORDS(pmd->perf));
        pmd->perf_clear_seen = gen;
    }
}

/* Ends the current stage of a profiled burst: its cycles are those since
 * the previous stage ended, so the stages add up to the burst's. */
static inline void
stage_end(struct pmd *pmd, enum sp_dp_stage stage)
{
    if (pmd->profiling) {
        uint64_t now = pmd->dp->io->tsc();

        bump(&pmd->perf.stage_cycles[stage], now - pmd->stamp);
        pmd->stamp = now;
    }
}

static uint32_t
port_config(const struct sp_dp *dp, unsigned port)
{
    return __atomic_load_n(&dp->port_config[port], __ATOMIC_RELAXED);
}

/* Drops a burst's packets for reason, counted on the burst's port. */
static void
drop_all(struct pmd *pmd, struct sp_packet *const *pkts, uint32_t count,
         enum sp_dp_drop_reason reason)
{
    for (uint32_t i = 0; i < count; i++) {
        pmd->dp->io->free(pkts[i]);
    }
    bump(&pmd->ports[pmd->in_port].drops[reason], count);
}

/* Sends count packets to a port, counts those it took and refused. */
static void
send_port(struct pmd *pmd, uint32_t port, struct sp_packet *const *pkts,
          uint32_t count)
{
    uint32_t config = port_config(pmd->dp, port), sent;

    if (__builtin_expect(config & (SP_DP_PORT_DOWN | SP_DP_PORT_NO_FWD), 0)) {
        drop_all(pmd, pkts, count,
                 config & SP_DP_PORT_DOWN ? SP_DP_DROP_PORT_DOWN
                                          : SP_DP_DROP_NO_FWD);
        return;
    }
    sent = pmd->dp->io->tx(port, pmd->index, pkts, count);

    bump(&pmd->ports[port].tx, sent);
    bump(&pmd->ports[port].drops[SP_DP_DROP_TX_REFUSED], count - sent);
}

static void
flush_port(struct pmd *pmd, uint32_t port)
{
    struct sp_tx_batch *b = &pmd->tx[port];

    if (!b->count) {
        return;
    }
    send_port(pmd, port, b->pkts, b->count);
    b->count = 0;
}

static void
actions_flush(struct sp_action_ctx *ctx, uint32_t port)
{
    flush_port(ctx->aux, port);
}

static void
actions_send(struct sp_action_ctx *ctx, uint32_t port,
             struct sp_packet *const *pkts, uint32_t n)
{
    send_port(ctx->aux, port, pkts, n);
}

static struct sp_packet *
actions_clone(struct sp_action_ctx *ctx, const struct sp_packet *pkt)
{
    struct pmd *pmd = ctx->aux;
    struct sp_packet *copy;

    /* Counted when asked for: one that cannot be made is a no_buffer
     * drop, and the counters still balance. */
    bump(&pmd->ports[pmd->in_port].copies, 1);
    if (pmd->n_copies == MAX_COPIES) {
        return NULL;
    }
    copy = &pmd->copies[pmd->n_copies];
    if (pmd->dp->io->clone(pkt, copy)) {
        return NULL;
    }
    pmd->n_copies++;
    return copy;
}

static void
actions_free(struct sp_action_ctx *ctx, struct sp_packet *pkt)
{
    struct pmd *pmd = ctx->aux;

    pmd->dp->io->free(pkt);
}

static enum sp_drop_reason
actions_controller(struct sp_action_ctx *ctx, struct sp_packet *pkt,
                   uint16_t max_len)
{
    struct pmd *pmd = ctx->aux;
    struct sp_dp_packet_in *e;

    if (!__atomic_load_n(&pmd->dp->controller, __ATOMIC_ACQUIRE)) {
        return SP_DROP_NO_CONTROLLER;
    }
    if (port_config(pmd->dp, pmd->in_port) & SP_DP_PORT_NO_PACKET_IN) {
        return SP_DROP_NO_PACKET_IN;
    }
    e = sp_spsc_reserve(&pmd->packet_in);
    if (!e) {
        return SP_DROP_CONTROLLER_FULL;
    }
    e->pkt = *pkt;
    e->max_len = max_len;
    e->rule = pmd->rule != NULL;
    if (pmd->rule) {
        const struct flow_line *lines = pmd->rule->aux;

        e->match = pmd->rule->match;
        e->priority = pmd->rule->priority;
        e->rule_id = lines[0].id;
    }
    sp_spsc_publish(&pmd->packet_in);
    bump(&pmd->ports[pmd->in_port].packet_in, 1);
    pmd->packet_in_queued = true;
    return SP_DROP_COUNT;
}

/* Counts what the actions dropped in this burst on its input port: the
 * reasons they counted, not a test of each (most bursts drop nothing). */
static void
collect_action_drops(struct pmd *pmd)
{
    for (uint32_t m = pmd->actions.drop_reasons; m; m &= m - 1) {
        unsigned r = (unsigned)__builtin_ctz(m);

        bump(&pmd->ports[pmd->in_port].drops[r], pmd->actions.drops[r]);
        pmd->actions.drops[r] = 0;
    }
    pmd->actions.drop_reasons = 0;
}

/* A rule's action list, which flow-mod may swap at any time. */
static inline const struct sp_actions *
rule_actions(const struct sp_rule *rule)
{
    return __atomic_load_n(&rule->actions, __ATOMIC_ACQUIRE);
}

/* Adds the last burst's runs to their rules' counters on this PMD. It
 * runs after the next receive and before the quiescent state, so the rules
 * are still safe to use and their lines, prefetched a whole receive
 * earlier, are in cache. */
static void
flush_counts(struct pmd *pmd)
{
    for (uint32_t r = 0; r < pmd->n_runs; r++) {
        const struct rule_run *run = &pmd->runs[r];
        struct flow_line *c = (struct flow_line *)run->rule->aux + pmd->index;

        bump(&c->packets, run->packets);
        bump(&c->bytes, run->bytes);
        __atomic_store_n(&c->used, pmd->runs_tsc, __ATOMIC_RELAXED);
    }
    pmd->n_runs = 0;
}

/* Sends every port's batch, counts the actions' drops: a burst's end. */
static void
send_batches(struct pmd *pmd)
{
    for (uint32_t port = 1; port <= pmd->dp->config.n_ports; port++) {
        flush_port(pmd, port);
    }
    collect_action_drops(pmd);
    pmd->n_copies = 0;
}

/* Whether this burst looks its keys up in the EMC. */
static inline bool
emc_probes(struct pmd *pmd)
{
    uint64_t gen = sp_cls_generation(pmd->dp->cls);

    if (gen != pmd->cls_gen) {
        pmd->cls_gen = gen;
        pmd->cls_sole = sp_cls_sole(pmd->dp->cls);
        pmd->cls_one_subtable = sp_cls_subtables(pmd->dp->cls) == 1;
    }
    return pmd->emc.n_buckets && !pmd->cls_sole &&
           (!pmd->emc_bypass || ++pmd->emc_bursts % EMC_SAMPLE == 0);
}

/* Counts a burst's EMC lookups and hits, and at the end of a window
 * decides whether the next bursts bypass the cache. */
static inline void
emc_account(struct pmd *pmd, uint32_t n, uint32_t hits)
{
    pmd->emc_window += n;
    pmd->emc_window_hits += hits;
    if (pmd->emc_window >= EMC_WINDOW) {
        unsigned eighths = pmd->cls_one_subtable ? EMC_BYPASS_EIGHTHS_ONE
                                                 : EMC_BYPASS_EIGHTHS;

        pmd->emc_bypass = pmd->emc_window_hits * 8 < pmd->emc_window * eighths;
        pmd->emc_window = pmd->emc_window_hits = 0;
        /* Bypassed, the bursts that look up insert every miss: a cache
         * emptied by a rule change, or still cold, then fills in about as
         * many bursts as it would have without the bypass. */
        pmd->emc.insert_inv_prob =
            pmd->emc_bypass ? 1 : pmd->dp->config.emc_insert_inv_prob;
    }
}

/* Runs a received burst whose packets all go by one list. A list that
 * only outputs to another port than theirs, whose batch is empty, sends
 * the burst there as it is, as executing and the burst's end would; one
 * that rewrites IPv4 and outputs does that after the rewrite
 * (whole_burst). */
static void
execute_burst(struct pmd *pmd, const struct sp_actions *list,
              struct sp_packet *const *ptrs, uint32_t n)
{
    uint32_t port = sp_actions_output_only(list);

    if (port && port < pmd->actions.n_ports && pmd->actions.in_port &&
        port != pmd->actions.in_port && !pmd->tx[port].count) {
        send_port(pmd, port, ptrs, n);
        return;
    }
    pmd->actions.whole_burst = true;
    sp_actions_execute(list, ptrs, n, &pmd->actions);
    pmd->actions.whole_burst = false;
}

/* Tells the channel's thread that packets wait for it. */
static void
packet_in_notify(struct pmd *pmd)
{
    if (pmd->packet_in_queued) {
        pmd->packet_in_queued = false;
        pmd->dp->notify(pmd->dp->notify_aux);
    }
}

/* Points ptrs[i] at pkts[i] for a burst's room, once for as long as the
 * arrays are used: all of them, so that the compiler sees the kernels'
 * argument written whatever a burst's size. */
static void
point_at(struct sp_packet *pkts, struct sp_packet **ptrs)
{
    for (uint32_t i = 0; i < SP_BATCH_MAX; i++) {
        ptrs[i] = &pkts[i];
    }
}

/* The bytes of the packets of 'lanes' among the first n. */
static uint32_t
lane_bytes(const struct sp_packet *pkts, uint32_t n, uint32_t lanes)
{
    uint32_t bytes = 0;

    if (lanes == sp_batch_lanes(n)) { /* the common case: no bit scan */
        for (uint32_t i = 0; i < n; i++) {
            bytes += pkts[i].len;
        }
        return bytes;
    }
    for (; lanes; lanes &= lanes - 1) {
        bytes += pkts[__builtin_ctz(lanes)].len;
    }
    return bytes;
}

/* One received burst, from one port, through the whole pipeline; ptrs
 * point at pkts (point_at). */
static void
process_burst(struct pmd *pmd, struct sp_packet *pkts, struct sp_packet **ptrs,
              uint32_t n)
{
    struct sp_flow_key keys[SP_BATCH_MAX];
    uint32_t hashes[SP_BATCH_MAX];
    const struct sp_rule *rules[SP_BATCH_MAX];
    const struct sp_actions *actions[SP_BATCH_MAX];
    const struct sp_rule *sole = NULL;
    uint32_t found, unmatched, emc_hits, pending;
    uint32_t parse_errors, groups = 0, n_runs = 0;
    struct rule_run *runs = pmd->runs, run = {NULL, 0, 0};
    const struct sp_actions *run_list = NULL, *first_list = NULL;
    bool lists_differ = false;
    uint64_t gen;

    parse_errors = SP_KERNEL(mfex)(ptrs, n, keys);
    stage_end(pmd, SP_DP_STAGE_PARSE);
    if (emc_probes(pmd)) {
        emc_hits = sp_emc_lookup(&pmd->emc, pmd->dp->cls, keys, n, hashes,
                                 rules, &gen);
        /* The hits' lines that the counters' loop reads, on their way
         * while the classifier looks up the misses (it fetches those of
         * the rules it finds itself). */
        for (pending = emc_hits; pending; pending &= pending - 1) {
            __builtin_prefetch(&rules[__builtin_ctz(pending)]->actions);
        }
        emc_account(pmd, n, sp_batch_count(emc_hits, n));
        stage_end(pmd, SP_DP_STAGE_EMC);
        found =
            emc_hits | sp_emc_cls_misses(&pmd->emc, pmd->dp->cls, gen, keys, n,
                                         emc_hits, hashes, rules, &pmd->rng);
    } else {
        emc_hits = 0;
        bump(&pmd->stats.emc_bypassed, pmd->emc.n_buckets ? n : 0);
        stage_end(pmd, SP_DP_STAGE_EMC);
        /* A received burst's packets came in on one port (the actions'
         * in_port); PACKET_OUTs to the rules may differ. */
        sole = pmd->cls_sole
                   ? sp_cls_lookup_sole(pmd->dp->cls, keys, n,
                                        pmd->actions.in_port != 0, &found)
                   : NULL;
        if (!sole) {
            found =
                sp_cls_lookup(pmd->dp->cls, keys, n, sp_batch_lanes(n), rules);
        }
    }
    stage_end(pmd, SP_DP_STAGE_CLASSIFIER);
    bump(&pmd->stats.packets, n);
    bump(&pmd->stats.batches, 1);
    bump(&pmd->stats.parse_errors, parse_errors);
    bump(&pmd->stats.emc_hits, sp_batch_count(emc_hits, n));
    bump(&pmd->stats.classifier_hits, sp_batch_count(found & ~emc_hits, n));
    unmatched = sp_batch_lanes(n) & ~found;
    bump(&pmd->stats.misses, sp_batch_count(unmatched, n));

    /* Packets that matched no rule. */
    for (pending = unmatched; pending; pending &= pending - 1) {
        pmd->dp->io->free(ptrs[__builtin_ctz(pending)]);
    }
    bump(&pmd->ports[pmd->in_port].drops[SP_DP_DROP_NO_MATCH],
         sp_batch_count(unmatched, n));

    /* One rule: one run, one list, no look at each packet's rule; the
     * loops below get its rule and list per packet only where they
     * group the packets one by one. */
    if (sole && found) {
        run = (struct rule_run){sole, sp_batch_count(found, n),
                                lane_bytes(pkts, n, found)};
        first_list = rule_actions(sole);
        __builtin_prefetch((struct flow_line *)sole->aux + pmd->index, 1);
        if (found != sp_batch_lanes(n) ||
            sp_actions_to_controller(first_list)) {
            for (pending = found; pending; pending &= pending - 1) {
                rules[__builtin_ctz(pending)] = sole;
                actions[__builtin_ctz(pending)] = first_list;
            }
        }
    }

    /* Rule counters, one add per run of packets of one rule, made after
     * the next receive (flush_counts); their lines are prefetched now. The
     * current run is kept in locals, stored when the next one starts; a
     * rule's list is read once per run. */
    for (pending = sole ? 0 : found; pending; pending &= pending - 1) {
        unsigned i = (unsigned)__builtin_ctz(pending);

        if (rules[i] != run.rule) {
            if (run.rule) {
                runs[n_runs++] = run;
            }
            run = (struct rule_run){rules[i], 0, 0};
            run_list = rule_actions(rules[i]);
            first_list = first_list ? first_list : run_list;
            lists_differ |= run_list != first_list;
            __builtin_prefetch((struct flow_line *)rules[i]->aux + pmd->index,
                               1);
        }
        actions[i] = run_list;
        run.packets++;
        run.bytes += pkts[i].len;
    }
    if (run.rule) {
        runs[n_runs++] = run;
    }
    /* The packets of every rule with the same action list (rules share
     * equal lists), in arrival order, as one group; when every packet
     * goes by one list, the burst as it is (unless the list sends to the
     * controller, which is told which rule sent each packet). */
    pending = found;
    if (found == sp_batch_lanes(n) && !lists_differ &&
        !sp_actions_to_controller(first_list)) {
        pmd->rule = NULL;
        execute_burst(pmd, first_list, ptrs, n);
        groups++;
        pending = 0;
    }
    while (pending) {
        unsigned first = (unsigned)__builtin_ctz(pending);
        const struct sp_actions *list = actions[first];
        struct sp_packet *group[SP_BATCH_MAX];
        uint32_t count = 0;

        /* The controller is told which rule sent a packet. */
        pmd->rule = sp_actions_to_controller(list) ? rules[first] : NULL;
        for (uint32_t rest = pending; rest; rest &= rest - 1) {
            unsigned i = (unsigned)__builtin_ctz(rest);

            if (actions[i] == list && (!pmd->rule || rules[i] == pmd->rule)) {
                group[count++] = ptrs[i];
                pending &= ~(UINT32_C(1) << i);
            }
        }
        sp_actions_execute(list, group, count, &pmd->actions);
        groups++;
    }
    bump(&pmd->stats.groups, groups);
    pmd->n_runs = n_runs;
    pmd->runs_tsc = pmd->burst_tsc;
    stage_end(pmd, SP_DP_STAGE_ACTIONS);
    send_batches(pmd);
    stage_end(pmd, SP_DP_STAGE_TX);
}

/* The counters' index of a packet's in_port: port 0 is the
 * controller's. */
static unsigned
port_index(const struct sp_dp *dp, unsigned in_port)
{
    return in_port >= 1 && in_port <= dp->config.n_ports ? in_port : 0;
}

/* PMD 0: the PACKET_OUTs queued since its last poll, at most a burst;
 * those for the rules (OFPP_TABLE) in bursts of one in_port. */
static void
run_packet_outs(struct pmd *pmd)
{
    struct sp_packet *table = pmd->table, *ptrs[SP_BATCH_MAX];
    struct packet_out *po;
    bool profiling = pmd->profiling;
    uint32_t n_table = 0;

    /* Not received bursts: the profile leaves them out, and the actions
     * look at each packet's in_port. */
    pmd->profiling = false;
    pmd->actions.in_port = 0;
    point_at(table, ptrs);
    for (unsigned n = 0;
         n < SP_BATCH_MAX && (po = sp_spsc_peek(&pmd->dp->packet_out)); n++) {
        struct sp_packet pkt = po->pkt, *ptr = &pkt;
        unsigned index = port_index(pmd->dp, pkt.in_port);

        if (n_table && (po->actions || index != pmd->in_port)) {
            flush_counts(pmd); /* process_burst reuses pmd->runs */
            process_burst(pmd, table, ptrs, n_table);
            n_table = 0;
        }
        pmd->in_port = index;
        bump(&pmd->ports[index].packet_out, 1);
        if (po->actions) {
            pmd->rule = NULL;
            sp_actions_execute(po->actions, &ptr, 1, &pmd->actions);
            send_batches(pmd);
        } else {
            table[n_table++] = pkt;
        }
        sp_spsc_release(&pmd->dp->packet_out);
    }
    if (n_table) {
        flush_counts(pmd);
        process_burst(pmd, table, ptrs, n_table);
    }
    pmd->profiling = profiling;
    packet_in_notify(pmd);
    __atomic_store_n(&pmd->dp->packet_outs_run, pmd->dp->packet_out.tail,
                     __ATOMIC_RELEASE);
}

/* Frames rx received but could not deliver: received and dropped. */
static void
count_lost(struct pmd *pmd, unsigned port, struct sp_rx_drops *lost)
{
    struct port_counters *c = &pmd->ports[port];

    bump(&c->rx, lost->too_long + lost->no_buffer);
    bump(&c->drops[SP_DP_DROP_TOO_LONG], lost->too_long);
    bump(&c->drops[SP_DROP_NO_BUFFER], lost->no_buffer);
    *lost = (struct sp_rx_drops){0};
}

unsigned
sp_dp_queue_pmd(const struct sp_dp_config *config, unsigned port,
                unsigned queue)
{
    return ((port - 1) * config->n_rxq + queue) % config->n_pmds;
}

/* Steps a (port, queue) pair 'by' pairs on, queues counting up to n_rxq
 * in each port: no division in the poll loop. */
static inline void
next_pair(unsigned *port, unsigned *queue, unsigned by, unsigned n_rxq)
{
    for (*queue += by; *queue >= n_rxq; *queue -= n_rxq) {
        (*port)++;
    }
}

/* A TSC read a round costs a saturated PMD a few percent
 * (docs/perf/pmd-loop.md). A round of polls that received a full burst is
 * most likely followed by another, so the loop reads the TSC after at
 * most this many such rounds, or after a round without one, and gives
 * the cycles since the last reading to busy if any of those rounds
 * received, else to idle: as OVS counts an iteration, a round that
 * received is busy whole. The error is one round: an idle round right
 * after loaded ones counts as busy. Profiled, every poll is timed on its
 * own. */
#define LOADED_ROUNDS_PER_READ 16

/* Adds the cycles of polls to busy or to idle. */
static void
count_cycles(struct pmd *pmd, bool busy, uint64_t cycles)
{
    bump(busy ? &pmd->stats.busy_cycles : &pmd->stats.idle_cycles, cycles);
}

/* Times the loaded rounds not yet timed, if any: busy, since *now. */
static void
time_rounds(struct pmd *pmd, uint64_t *now, uint32_t *untimed)
{
    if (*untimed) {
        uint64_t end = pmd->dp->io->tsc();

        count_cycles(pmd, true, end - *now);
        *now = end;
        *untimed = 0;
    }
}

int
sp_dp_pmd_run(struct sp_dp *dp, unsigned index)
{
    struct pmd *pmd = dp->pmds[index];
    const struct sp_io_ops *io = dp->io;
    unsigned n_rxq = dp->config.n_rxq, n_pmds = dp->config.n_pmds;
    unsigned n_queues = dp->config.n_ports * n_rxq;
    unsigned first_port = index / n_rxq + 1, first_queue = index % n_rxq;
    struct sp_packet pkts[SP_BATCH_MAX], *ptrs[SP_BATCH_MAX];
    struct sp_rx_drops lost = {0};
    /* The last TSC reading and the loaded rounds since
     * (LOADED_ROUNDS_PER_READ): the next poll starts there, exactly when
     * profiled. */
    uint64_t now;
    uint32_t untimed = 0;

    point_at(pkts, ptrs);
    rcu_register_thread();
    __atomic_add_fetch(&dp->running_pmds, 1, __ATOMIC_ACQ_REL);
    now = io->tsc();
    while (!__atomic_load_n(&dp->stop, __ATOMIC_ACQUIRE)) {
        unsigned port = first_port, queue = first_queue;
        bool received = false, full = false;

        take_clear(pmd);
        pmd->profiling = __atomic_load_n(&dp->profile, __ATOMIC_RELAXED);
        if (pmd->profiling) { /* its first burst starts at a reading */
            time_rounds(pmd, &now, &untimed);
        }
        /* The (port, queue) pairs i with i % n_pmds == index are ours
         * (sp_dp_queue_pmd): pair i is queue i % n_rxq of port
         * i / n_rxq + 1. */
        for (unsigned q = index; q < n_queues;
             q += n_pmds, next_pair(&port, &queue, n_pmds, n_rxq)) {
            uint64_t start = now;
            uint32_t config = port_config(dp, port);
            uint32_t n = config & SP_DP_PORT_DOWN
                             ? 0
                             : io->rx(port, queue, pkts, SP_BATCH_MAX, &lost);

            if (n) {
                pmd->burst_tsc = start;
                pmd->stamp = start;
                stage_end(pmd, SP_DP_STAGE_RX);
            }
            if (pmd->n_runs) {
                flush_counts(pmd);
                if (n) {
                    stage_end(pmd, SP_DP_STAGE_ACTIONS);
                }
            }
            /* Once a poll, after the first receive: the previous burst's
             * rules were used last just above. */
            if (q == index) {
                rcu_quiescent_state();
            }
            if (lost.too_long | lost.no_buffer) {
                count_lost(pmd, port, &lost);
            }
            if (n) {
                pmd->in_port = port;
                pmd->actions.in_port = port; /* rx gives it to each */
                bump(&pmd->ports[port].rx, n);
                if (__builtin_expect(config & SP_DP_PORT_NO_RECV, 0)) {
                    drop_all(pmd, ptrs, n, SP_DP_DROP_NO_RECV);
                } else {
                    process_burst(pmd, pkts, ptrs, n);
                    packet_in_notify(pmd);
                }
            }
            received |= n != 0;
            full |= n == SP_BATCH_MAX;
            if (pmd->profiling) {
                /* Each poll timed: a burst ends where its last stage
                 * did. */
                uint64_t end = n ? pmd->stamp : io->tsc();

                count_cycles(pmd, n != 0, end - start);
                bump(n ? &pmd->perf.busy_cycles : &pmd->perf.idle_cycles,
                     end - start);
                bump(&pmd->perf.packets, n);
                bump(&pmd->perf.batches, n != 0);
                now = end;
            }
        }
        if (!pmd->profiling &&
            (!full || ++untimed == LOADED_ROUNDS_PER_READ)) {
            uint64_t end = io->tsc();

            count_cycles(pmd, received || untimed, end - now);
            now = end;
            untimed = 0;
        }
        if (index == 0 && sp_spsc_peek(&dp->packet_out)) {
            time_rounds(pmd, &now, &untimed);
            run_packet_outs(pmd);
            now = io->tsc();
        }
        if (index >= n_queues) { /* no queue: holds no rule */
            rcu_quiescent_state();
        }
    }
    flush_counts(pmd);
    time_rounds(pmd, &now, &untimed);
    __atomic_sub_fetch(&dp->running_pmds, 1, __ATOMIC_ACQ_REL);
    rcu_unregister_thread();
    return 0;
}

void
sp_dp_wait_running(struct sp_dp *dp)
{
    while (__atomic_load_n(&dp->running_pmds, __ATOMIC_ACQUIRE) <
               dp->config.n_pmds &&
           !__atomic_load_n(&dp->stop, __ATOMIC_ACQUIRE)) {
        sched_yield();
    }
}

/* Waits until PMD 0 has run the PACKET_OUTs queued before index 'upto'
 * of the queue, or no PMD runs to run them. */
static void
packet_outs_wait(struct sp_dp *dp, uint32_t upto)
{
    while ((int32_t)(upto - __atomic_load_n(&dp->packet_outs_run,
                                            __ATOMIC_ACQUIRE)) > 0 &&
           __atomic_load_n(&dp->running_pmds, __ATOMIC_ACQUIRE)) {
        sched_yield();
    }
}

void
sp_dp_sync(struct sp_dp *dp)
{
    packet_outs_wait(dp,
                     __atomic_load_n(&dp->packet_out.head, __ATOMIC_ACQUIRE));
    /* A PMD passes a quiescent state once a poll, after its last burst's
     * rules are dead (sp_dp_pmd_run); with none registered this returns
     * at once. */
    synchronize_rcu();
}

void
sp_dp_maintain(struct sp_dp *dp)
{
    sp_cls_sort(dp->cls);
}

void
sp_dp_stop(struct sp_dp *dp)
{
    __atomic_store_n(&dp->stop, true, __ATOMIC_RELEASE);
}

/* ---- creation ---- */

static double
monotonic_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct pmd *
pmd_create(struct sp_dp *dp, unsigned index, struct sp_err *err)
{
    struct pmd *pmd = calloc(1, sizeof *pmd);

    if (!pmd) {
        sp_err_set(err, "out of memory for PMD thread %u", index);
        return NULL;
    }
    if (sp_emc_init(&pmd->emc, dp->config.emc_entries,
                    dp->config.emc_insert_inv_prob, err)) {
        free(pmd);
        return NULL;
    }
    pmd->dp = dp;
    pmd->index = index;
    pmd->rng.state = 0x5eed0000u + index;
    pmd->actions = (struct sp_action_ctx){
        .tx = pmd->tx,
        .n_ports = dp->config.n_ports + 1,
        .headroom = dp->io->headroom,
        .flush = actions_flush,
        .send = actions_send,
        .clone = actions_clone,
        .free = actions_free,
        .controller = actions_controller,
        .aux = pmd,
    };
    if (sp_spsc_init(&pmd->packet_in, SP_DP_PACKET_IN_QUEUE,
                     sizeof(struct sp_dp_packet_in))) {
        sp_err_set(err, "out of memory for PMD thread %u", index);
        sp_emc_destroy(&pmd->emc);
        free(pmd);
        return NULL;
    }
    return pmd;
}

struct sp_dp *
sp_dp_create(const struct sp_dp_config *config, const struct sp_io_ops *io,
             struct sp_err *err)
{
    struct sp_dp *dp;

    if (config->n_ports == 0 || config->n_ports > SP_DP_MAX_PORTS) {
        sp_err_set(err, "%u ports; 1 to %d are supported", config->n_ports,
                   SP_DP_MAX_PORTS);
        return NULL;
    }
    if (config->n_pmds == 0 || config->n_pmds > SP_DP_MAX_PMDS ||
        config->n_rxq == 0) {
        sp_err_set(err,
                   "%u PMD threads and %u queues per port; 1 to %d "
                   "threads and at least 1 queue are supported",
                   config->n_pmds, config->n_rxq, SP_DP_MAX_PMDS);
        return NULL;
    }
    dp = calloc(1, sizeof *dp);
    if (!dp) {
        sp_err_set(err, "out of memory");
        return NULL;
    }
    dp->config = *config;
    dp->io = io;
    /* A datapath that never runs (tests, fuzzers) may have no clock. */
    dp->tsc0 = io->tsc ? io->tsc() : 0;
    dp->clock0 = monotonic_seconds();
    dp->profile = config->profile;
    pthread_mutex_init(&dp->del_lock, NULL);
    dp->actions = sp_actions_pool_create();
    dp->cls = sp_cls_create(sp_actions_release);
    if (!dp->cls || !dp->actions ||
        sp_spsc_init(&dp->packet_out, SP_DP_PACKET_OUT_QUEUE,
                     sizeof(struct packet_out))) {
        sp_err_set(err, "out of memory for the classifier");
        sp_dp_destroy(dp);
        return NULL;
    }
    for (unsigned i = 0; i < config->n_pmds; i++) {
        dp->pmds[i] = pmd_create(dp, i, err);
        if (!dp->pmds[i]) {
            sp_dp_destroy(dp);
            return NULL;
        }
    }
    return dp;
}

void
sp_dp_destroy(struct sp_dp *dp)
{
    if (!dp) {
        return;
    }
    sp_dp_controller_drain(dp);
    for (unsigned i = 0; i < SP_DP_MAX_PMDS; i++) {
        if (dp->pmds[i]) {
            sp_emc_destroy(&dp->pmds[i]->emc);
            sp_spsc_free(&dp->pmds[i]->packet_in);
            free(dp->pmds[i]);
        }
    }
    sp_spsc_free(&dp->packet_out);
    if (dp->cls) {
        sp_cls_destroy(dp->cls); /* frees every rule, actions and counters */
    }
    sp_actions_pool_destroy(dp->actions);
    pthread_mutex_destroy(&dp->del_lock);
    free(dp);
}

/* ---- rules ---- */

static bool
port_exists(uint32_t port, void *aux)
{
    const struct sp_dp *dp = aux;

    return port >= 1 && port <= dp->config.n_ports;
}

/* Parses a rule's match and its actions, compiled for 'match' (the
 * rule's own when that is not the text's), into a pooled list. */
static int
parse_rule(struct sp_dp *dp, const char *text, struct sp_flow_spec *spec,
           const struct sp_match *match, const struct sp_actions **actions,
           struct sp_err *err)
{
    struct sp_actions *parsed;

    if (sp_flow_parse_match(text, spec, err)) {
        return -1;
    }
    if (!spec->actions_ofs) {
        return sp_err_set_at(err, (unsigned)strlen(text) + 1,
                             "missing actions=...; a rule ends with its "
                             "actions (actions=drop to drop)");
    }
    if (sp_actions_parse(text + spec->actions_ofs,
                         match ? match : &spec->match, port_exists, dp,
                         &parsed, err)) {
        /* Its column counts in the actions, an error without one is
         * theirs as a whole. */
        if (err) {
            err->column =
                (unsigned)spec->actions_ofs + (err->column ? err->column : 1);
        }
        return -1;
    }
    *actions = sp_actions_intern(dp->actions, parsed);
    return 0;
}

int
sp_dp_flow_add(struct sp_dp *dp, const char *text, struct sp_err *err)
{
    struct sp_flow_spec spec;
    const struct sp_actions *actions;
    const struct sp_rule *rule = NULL;
    struct flow_line lines[SP_DP_MAX_PMDS];

    if (parse_rule(dp, text, &spec, NULL, &actions, err)) {
        return -1;
    }
    memset(lines, 0, dp->config.n_pmds * sizeof *lines);
    lines[0].created = monotonic_seconds();
    lines[0].id = __atomic_add_fetch(&dp->last_rule_id, 1, __ATOMIC_RELAXED);
    rule = sp_cls_insert_aux(dp->cls, &spec.match, spec.priority, actions,
                             lines, dp->config.n_pmds * sizeof *lines, err);
    if (!rule) {
        if (err) {
            err->column = 1;
        }
        sp_actions_release(actions);
        return -1;
    }
    return 0;
}

/* Whether a rule is within 'match' as ovs-ofctl's loose commands take it:
 * every bit the match fixes, the rule fixes to the same value. */
static bool
rule_within(const struct sp_rule *rule, const struct sp_match *match)
{
    const uint64_t *rk = (const uint64_t *)&rule->match.key;
    const uint64_t *rm = (const uint64_t *)&rule->match.mask;
    const uint64_t *k = (const uint64_t *)&match->key;
    const uint64_t *m = (const uint64_t *)&match->mask;

    for (size_t i = 0; i < sizeof match->key / sizeof *k; i++) {
        if ((rm[i] & m[i]) != m[i] || (rk[i] & m[i]) != (k[i] & m[i])) {
            return false;
        }
    }
    return true;
}

/* The rules a command selects, in a new NULL-terminated array (NULL on no
 * memory); under del_lock. A strict one is looked up, not searched for,
 * so that replacing rules one by one (OpenFlow's adds) stays fast. */
static const struct sp_rule **
select_rules(struct sp_dp *dp, const struct sp_flow_spec *spec, bool strict,
             unsigned *n)
{
    const struct sp_rule **rules;

    *n = 0;
    if (strict) {
        rules = calloc(2, sizeof *rules);
        if (rules &&
            (rules[0] = sp_cls_find(dp->cls, &spec->match, spec->priority))) {
            *n = 1;
        }
        return rules;
    }
    rules = sp_cls_rules(dp->cls);
    for (size_t i = 0; rules && rules[i]; i++) {
        if (rule_within(rules[i], &spec->match)) {
            rules[(*n)++] = rules[i];
        }
    }
    if (rules) {
        rules[*n] = NULL;
    }
    return rules;
}

int
sp_dp_flow_del_matching(struct sp_dp *dp, const char *text, bool strict,
                        unsigned *deleted, struct sp_err *err)
{
    struct sp_flow_spec spec;
    const struct sp_rule **rules;
    unsigned n;

    *deleted = 0;
    if (sp_flow_parse_match(text, &spec, err)) {
        return -1;
    }
    pthread_mutex_lock(&dp->del_lock);
    rules = select_rules(dp, &spec, strict, &n);
    if (!rules) {
        pthread_mutex_unlock(&dp->del_lock);
        return sp_err_set_at(err, 1, "out of memory");
    }
    for (unsigned i = 0; i < n; i++) {
        /* Actions and counters go with the rule, after a grace period. */
        sp_cls_remove(dp->cls, rules[i]);
    }
    pthread_mutex_unlock(&dp->del_lock);
    free(rules);
    *deleted = n;
    return 0;
}

void
sp_dp_flows_del_exact(struct sp_dp *dp, const struct sp_match *matches,
                      const uint32_t *priorities, size_t n, bool *deleted)
{
    pthread_mutex_lock(&dp->del_lock);
    for (size_t i = 0; i < n; i++) {
        /* A removed rule is unlinked at once: named twice, it is found
         * once. */
        const struct sp_rule *r =
            sp_cls_find(dp->cls, &matches[i], priorities[i]);

        deleted[i] = r != NULL;
        if (r) {
            /* Actions and counters go with the rule, after a grace
             * period. */
            sp_cls_remove(dp->cls, r);
        }
    }
    pthread_mutex_unlock(&dp->del_lock);
}

int
sp_dp_flow_del(struct sp_dp *dp, const char *text, struct sp_err *err)
{
    unsigned deleted;

    if (sp_dp_flow_del_matching(dp, text, true, &deleted, err)) {
        return -1;
    }
    if (!deleted) {
        struct sp_flow_spec spec;

        sp_flow_parse_match(text, &spec, NULL);
        return sp_err_set_at(err, 1,
                             "no rule with this match and priority %u "
                             "(flow-dump lists them)",
                             spec.priority);
    }
    return 0;
}

/* A rule's counters since it was added, summed over the PMD threads;
 * *used is the TSC of its last packet, 0 for none. */
static void
rule_sums(struct sp_dp *dp, const struct sp_rule *rule, uint64_t *packets,
          uint64_t *bytes, uint64_t *used)
{
    const struct flow_line *lines = rule->aux;

    *packets = *bytes = *used = 0;
    for (unsigned p = 0; p < dp->config.n_pmds; p++) {
        uint64_t u = peek(&lines[p].used);

        *packets += peek(&lines[p].packets);
        *bytes += peek(&lines[p].bytes);
        *used = u > *used ? u : *used;
    }
}

/* A rule's counters since it was added or last reset. */
static void
rule_stats(struct sp_dp *dp, const struct sp_rule *rule, uint64_t *packets,
           uint64_t *bytes, uint64_t *used)
{
    const struct flow_line *lines = rule->aux;

    rule_sums(dp, rule, packets, bytes, used);
    *packets -= peek(&lines[0].reset_packets);
    *bytes -= peek(&lines[0].reset_bytes);
}

/* Zeroes a rule's counters as the listings show them; the PMDs' own lines
 * go on counting, as only their PMD writes them. Under del_lock. */
static void
rule_reset_counts(struct sp_dp *dp, const struct sp_rule *rule)
{
    struct flow_line *line0 = rule->aux;
    uint64_t packets, bytes, used;

    rule_sums(dp, rule, &packets, &bytes, &used);
    __atomic_store_n(&line0->reset_packets, packets, __ATOMIC_RELAXED);
    __atomic_store_n(&line0->reset_bytes, bytes, __ATOMIC_RELAXED);
}

int
sp_dp_flow_mod(struct sp_dp *dp, const char *text, bool strict,
               bool reset_counts, unsigned *modified, struct sp_err *err)
{
    struct sp_flow_spec spec, rule_spec;
    const struct sp_actions **lists = NULL;
    const struct sp_rule **rules;
    unsigned n = 0, n_selected;
    int rc = 0;

    *modified = 0;
    if (sp_flow_parse_match(text, &spec, err)) {
        return -1;
    }
    pthread_mutex_lock(&dp->del_lock);
    rules = select_rules(dp, &spec, strict, &n_selected);
    lists =
        rules ? malloc((n_selected ? n_selected : 1) * sizeof *lists) : NULL;
    if (!lists) {
        rc = sp_err_set_at(err, 1, "out of memory");
    }
    /* Every rule's new list first, compiled for its own match: an error
     * changes nothing. */
    for (unsigned i = 0; !rc && i < n_selected; i++) {
        if (parse_rule(dp, text, &rule_spec, &rules[i]->match, &lists[n],
                       err)) {
            rc = -1;
            break;
        }
        n++;
    }
    if (!rc && !n) {
        rc = sp_err_set_at(err, 1, "no rule matches%s (flow-dump lists them)",
                           strict ? " this match and priority" : "");
    }
    if (rc) {
        for (unsigned i = 0; i < n; i++) {
            sp_actions_release(lists[i]);
        }
        n = 0;
    }
    /* Each rule's list is swapped whole: a PMD runs a packet by the old
     * list or the new one, and no cache entry is lost. */
    for (unsigned i = 0; i < n; i++) {
        lists[i] =
            __atomic_exchange_n((const struct sp_actions **)&rules[i]->actions,
                                lists[i], __ATOMIC_ACQ_REL);
        if (reset_counts) {
            rule_reset_counts(dp, rules[i]);
        }
    }
    pthread_mutex_unlock(&dp->del_lock);
    if (n) {
        synchronize_rcu();
    }
    for (unsigned i = 0; i < n; i++) {
        sp_actions_release(lists[i]);
    }
    free(lists);
    free(rules);
    *modified = n;
    return rc;
}

/* The longest rule line of a flow file, its line end not counted. */
#define FLOW_LINE_MAX 4095

/* Refuses what no rule holds and a terminal should not be sent: a NUL
 * anywhere (a binary file, or one cut short), control and non-ASCII bytes
 * outside comments. */
static int
check_bytes(const char *line, long len, struct sp_err *err)
{
    const char *nul = memchr(line, '\0', (size_t)len);
    bool comment = line[strspn(line, " \t")] == '#';

    if (nul) {
        return sp_err_set_at(err, (unsigned)(nul - line) + 1,
                             "NUL byte; a flow file is text");
    }
    for (long i = 0; i < len && !comment; i++) {
        unsigned char c = (unsigned char)line[i];

        if ((c < 0x20 && c != '\t') || c >= 0x7f) {
            return sp_err_set_at(err, (unsigned)i + 1,
                                 "byte 0x%02x; rules are printable ASCII", c);
        }
    }
    return 0;
}

int
sp_dp_flows_load(struct sp_dp *dp, const char *path, struct sp_err *err)
{
    FILE *f = sp_text_open(path, "flow rules", err);
    char line[FLOW_LINE_MAX + 1];
    unsigned line_no = 0;
    long len;
    int rc = 0;

    if (!f) {
        return -1;
    }
    while (!rc && (len = sp_text_read_line(f, line, FLOW_LINE_MAX)) != -1) {
        size_t skip = strspn(line, " \t");

        line_no++;
        if (len == -2) {
            rc = sp_err_set(err, "line longer than %d bytes", FLOW_LINE_MAX);
        } else if (check_bytes(line, len, err) ||
                   (line[skip] != '#' && line[skip] &&
                    sp_dp_flow_add(dp, line, err))) {
            rc = -1;
        }
        if (rc && err) {
            err->line = line_no;
        }
    }
    if (!rc && ferror(f)) {
        rc = sp_err_set(err, "%s: cannot read flow rules: %s", path,
                        strerror(errno));
    }
    fclose(f);
    return rc;
}

/* When a listing of the rules is taken: the TSC and the monotonic clock,
 * and the TSC's rate since the datapath was made, to turn the rules' TSC
 * of their last packet into seconds. */
struct clock_reading {
    uint64_t tsc;
    double now, hz;
};

static void
read_clock(const struct sp_dp *dp, struct clock_reading *c)
{
    c->tsc = dp->io->tsc ? dp->io->tsc() : 0;
    c->now = monotonic_seconds();
    c->hz = c->now > dp->clock0
                ? (double)(c->tsc - dp->tsc0) / (c->now - dp->clock0)
                : 0;
}

/* A rule's counters and ages (flow-dump's duration and idle_age: the
 * seconds since its last packet, the latest of any PMD's, or since it was
 * added when it had none). */
static void
rule_flow_stats(struct sp_dp *dp, const struct sp_rule *rule,
                const struct clock_reading *c, struct sp_dp_flow_stats *out)
{
    const struct flow_line *lines = rule->aux;
    uint64_t used;
    double idle;

    rule_stats(dp, rule, &out->packets, &out->bytes, &used);
    /* A rule added after the clock was read is 0 seconds old. */
    out->duration = c->now > lines[0].created ? c->now - lines[0].created : 0;
    out->id = lines[0].id;
    idle = !used                        ? out->duration
           : c->hz > 0 && c->tsc > used ? (double)(c->tsc - used) / c->hz
                                        : 0;
    out->idle_age = idle < out->duration ? idle : out->duration;
}

/* A rule's counters as ovs-ofctl dump-flows prints them. */
static void
print_rule_stats(struct sp_dp *dp, const struct sp_rule *rule,
                 const struct clock_reading *c, FILE *out)
{
    struct sp_dp_flow_stats s;

    rule_flow_stats(dp, rule, c, &s);
    fprintf(out,
            " duration=%.3fs, n_packets=%llu, n_bytes=%llu, "
            "idle_age=%llu, ",
            s.duration, (unsigned long long)s.packets,
            (unsigned long long)s.bytes, (unsigned long long)s.idle_age);
}

int
sp_dp_flows_dump(struct sp_dp *dp, FILE *out)
{
    const struct sp_rule **rules;
    struct clock_reading c;

    read_clock(dp, &c);
    pthread_mutex_lock(&dp->del_lock);
    rules = sp_cls_rules(dp->cls);
    for (unsigned i = 0; rules && rules[i]; i++) {
        const struct sp_rule *r = rules[i];
        char match[1024];
        int len = sp_actions_format(r->actions, NULL, 0);
        char *actions = malloc((size_t)len + 1);

        /* The match has a bounded number of fields; the actions not. */
        sp_flow_format(&r->match.key, &r->match.mask, match, sizeof match);
        if (actions) {
            sp_actions_format(r->actions, actions, (size_t)len + 1);
        }
        print_rule_stats(dp, r, &c, out);
        fprintf(out, "priority=%u%s%s,actions=%s\n", r->priority,
                match[0] ? "," : "", match, actions ? actions : "");
        free(actions);
    }
    pthread_mutex_unlock(&dp->del_lock);
    if (!rules) {
        return -1;
    }
    free(rules);
    return 0;
}

int
sp_dp_flows_foreach(struct sp_dp *dp, sp_dp_flow_fn *fn, void *aux)
{
    const struct sp_rule **rules;
    struct clock_reading c;

    read_clock(dp, &c);
    pthread_mutex_lock(&dp->del_lock);
    rules = sp_cls_rules(dp->cls);
    for (unsigned i = 0; rules && rules[i]; i++) {
        struct sp_dp_flow_stats stats;

        rule_flow_stats(dp, rules[i], &c, &stats);
        if (fn(aux, &rules[i]->match, rules[i]->priority, rules[i]->actions,
               &stats)) {
            /* The listing is this walk's own: the rules after it stay
             * (only this lock's holder deletes); actions and counters go
             * with the rule, after a grace period. */
            sp_cls_remove(dp->cls, rules[i]);
        }
    }
    pthread_mutex_unlock(&dp->del_lock);
    if (!rules) {
        return -1;
    }
    free(rules);
    return 0;
}

void
sp_dp_flows_stats_exact(struct sp_dp *dp, const struct sp_match *matches,
                        const uint32_t *priorities, size_t n,
                        struct sp_dp_flow_stats *stats, bool *found)
{
    struct clock_reading c;

    read_clock(dp, &c);
    pthread_mutex_lock(&dp->del_lock);
    for (size_t i = 0; i < n; i++) {
        const struct sp_rule *r =
            sp_cls_find(dp->cls, &matches[i], priorities[i]);

        found[i] = r != NULL;
        if (r) {
            rule_flow_stats(dp, r, &c, &stats[i]);
        }
    }
    pthread_mutex_unlock(&dp->del_lock);
}

unsigned
sp_dp_flow_count(struct sp_dp *dp)
{
    return sp_cls_rule_count(dp->cls);
}

/* ---- the controller's packets ---- */

void
sp_dp_controller_set(struct sp_dp *dp, bool connected,
                     void (*notify)(void *aux), void *aux)
{
    if (notify) {
        dp->notify = notify;
        dp->notify_aux = aux;
    }
    __atomic_store_n(&dp->controller, connected && dp->notify,
                     __ATOMIC_RELEASE);
}

unsigned
sp_dp_packet_in_take(struct sp_dp *dp, struct sp_dp_packet_in *out,
                     unsigned max)
{
    unsigned n = 0;

    /* A datapath whose creation failed half way has fewer PMDs. */
    for (unsigned t = 0; t < dp->config.n_pmds && dp->pmds[t]; t++) {
        struct sp_spsc *r = &dp->pmds[t]->packet_in;
        struct sp_dp_packet_in *e;

        while (n < max && (e = sp_spsc_peek(r))) {
            out[n++] = *e;
            sp_spsc_release(r);
        }
    }
    return n;
}

void
sp_dp_packet_in_done(struct sp_dp *dp, struct sp_packet *pkt)
{
    dp->io->free(pkt);
}

/* Frees the actions of the PACKET_OUTs PMD 0 is done with. */
static void
packet_out_reclaim(struct sp_dp *dp)
{
    uint32_t tail = __atomic_load_n(&dp->packet_out.tail, __ATOMIC_ACQUIRE);

    for (; dp->packet_out_freed != tail; dp->packet_out_freed++) {
        struct packet_out *po =
            sp_spsc_slot(&dp->packet_out, dp->packet_out_freed);

        sp_actions_free(po->actions);
        po->actions = NULL;
    }
}

/* Parses pkt (its offsets set, as for a received one) into the match of
 * its own headers. */
static void
frame_parse(struct sp_packet *pkt, struct sp_match *m)
{
    SP_KERNEL(mfex)(&pkt, 1, &m->key);
    memset(&m->mask, 0xff, sizeof m->mask);
}

void
sp_dp_frame_match(const uint8_t *data, uint32_t len, uint16_t in_port,
                  struct sp_match *m)
{
    /* The parser only reads the frame. */
    struct sp_packet pkt = {
        .data = (uint8_t *)data, .len = len, .in_port = in_port};

    frame_parse(&pkt, m);
}

int
sp_dp_packet_out(struct sp_dp *dp, const uint8_t *data, uint32_t len,
                 uint16_t in_port, const char *actions, struct sp_err *err)
{
    struct sp_actions *parsed = NULL;
    struct sp_packet pkt;
    struct packet_out *po;
    struct sp_match match;

    packet_out_reclaim(dp);
    po = sp_spsc_reserve(&dp->packet_out);
    if (!po) { /* a burst from the controller: wait for PMD 0 */
        packet_outs_wait(dp, dp->packet_out.head);
        packet_out_reclaim(dp);
        po = sp_spsc_reserve(&dp->packet_out);
    }
    if (!po) {
        return sp_err_set(err,
                          "the queue of PACKET_OUTs to PMD 0 is full "
                          "(%d frames) and no PMD runs",
                          SP_DP_PACKET_OUT_QUEUE);
    }
    if (!dp->io->alloc) {
        return sp_err_set(err, "this datapath's I/O sends no PACKET_OUT");
    }
    if (dp->io->alloc(data, len, &pkt)) {
        return sp_err_set(err, "no packet buffer for a frame of %u bytes",
                          len);
    }
    pkt.in_port = in_port;
    frame_parse(&pkt, &match);
    if (actions) {
        if (sp_actions_parse(actions, &match, port_exists, dp, &parsed, err)) {
            dp->io->free(&pkt);
            return -1;
        }
    }
    po->pkt = pkt;
    po->actions = parsed;
    sp_spsc_publish(&dp->packet_out);
    return 0;
}

void
sp_dp_controller_drain(struct sp_dp *dp)
{
    struct sp_dp_packet_in pin;
    struct packet_out *po;

    __atomic_store_n(&dp->controller, false, __ATOMIC_RELEASE);
    while (sp_dp_packet_in_take(dp, &pin, 1)) {
        dp->io->free(&pin.pkt);
    }
    if (!dp->packet_out.items) {
        return;
    }
    while ((po = sp_spsc_peek(&dp->packet_out))) {
        dp->io->free(&po->pkt);
        sp_spsc_release(&dp->packet_out);
    }
    packet_out_reclaim(dp);
    __atomic_store_n(&dp->packet_outs_run, dp->packet_out.tail,
                     __ATOMIC_RELEASE);
}

/* ---- counters ---- */

/* PMD threads own their counters: a clear is a request each applies
 * between bursts; with none running, it is applied here. */
void
sp_dp_stats_clear(struct sp_dp *dp)
{
    __atomic_add_fetch(&dp->clear_gen, 1, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(&dp->perf_clear_gen, 1, __ATOMIC_ACQ_REL);
    if (!__atomic_load_n(&dp->running_pmds, __ATOMIC_ACQUIRE)) {
        for (unsigned i = 0; i < dp->config.n_pmds; i++) {
            take_clear(dp->pmds[i]);
        }
    }
}

void
sp_dp_perf_enable(struct sp_dp *dp, bool on)
{
    __atomic_store_n(&dp->profile, on, __ATOMIC_RELAXED);
}

bool
sp_dp_perf_enabled(struct sp_dp *dp)
{
    return __atomic_load_n(&dp->profile, __ATOMIC_RELAXED);
}

/* As sp_dp_stats_clear, for the profile only. */
void
sp_dp_perf_clear(struct sp_dp *dp)
{
    __atomic_add_fetch(&dp->perf_clear_gen, 1, __ATOMIC_ACQ_REL);
    if (!__atomic_load_n(&dp->running_pmds, __ATOMIC_ACQUIRE)) {
        for (unsigned i = 0; i < dp->config.n_pmds; i++) {
            take_clear(dp->pmds[i]);
        }
    }
}

void
sp_dp_port_config_set(struct sp_dp *dp, unsigned port, uint32_t config)
{
    if (port >= 1 && port <= dp->config.n_ports) {
        __atomic_store_n(&dp->port_config[port],
                         config & SP_DP_PORT_CONFIG_ALL, __ATOMIC_RELAXED);
    }
}

uint32_t
sp_dp_port_config(const struct sp_dp *dp, unsigned port)
{
    return port >= 1 && port <= dp->config.n_ports ? port_config(dp, port) : 0;
}

void
sp_dp_port_stats(struct sp_dp *dp, unsigned port, struct sp_dp_port_stats *out)
{
    memset(out, 0, sizeof *out);
    if (port > dp->config.n_ports) {
        return;
    }
    for (unsigned i = 0; i < dp->config.n_pmds; i++) {
        const struct port_counters *c = &dp->pmds[i]->ports[port];
        const struct port_counters *b = &dp->pmds[i]->ports_base[port];

        out->rx += peek(&c->rx) - peek(&b->rx);
        out->tx += peek(&c->tx) - peek(&b->tx);
        out->copies += peek(&c->copies) - peek(&b->copies);
        out->packet_in += peek(&c->packet_in) - peek(&b->packet_in);
        out->packet_out += peek(&c->packet_out) - peek(&b->packet_out);
        for (unsigned r = 0; r < SP_DP_DROP_COUNT; r++) {
            out->drops[r] += peek(&c->drops[r]) - peek(&b->drops[r]);
        }
    }
}

/* Reads n counters of a PMD against their baseline. */
static void
read_counters(uint64_t *out, const uint64_t *c, const uint64_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = peek(&c[i]) - peek(&b[i]);
    }
}

void
sp_dp_pmd_stats(struct sp_dp *dp, unsigned index, struct sp_dp_pmd_stats *out)
{
    memset(out, 0, sizeof *out);
    if (index < dp->config.n_pmds) {
        read_counters(
            (uint64_t *)out, (const uint64_t *)&dp->pmds[index]->stats,
            (const uint64_t *)&dp->pmds[index]->stats_base, N_WORDS(*out));
    }
}

void
sp_dp_pmd_perf(struct sp_dp *dp, unsigned index, struct sp_dp_pmd_perf *out)
{
    memset(out, 0, sizeof *out);
    if (index < dp->config.n_pmds) {
        read_counters(
            (uint64_t *)out, (const uint64_t *)&dp->pmds[index]->perf,
            (const uint64_t *)&dp->pmds[index]->perf_base, N_WORDS(*out));
    }
}
