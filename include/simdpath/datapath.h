/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The datapath: ports polled by PMD threads, each batch going through
 * miniflow extract -> hash -> EMC -> classifier -> group by action list ->
 * actions
 * -> batch copy into per-port tx batches. Packet I/O comes in through
 * struct sp_io_ops, so the same loop runs on DPDK ports and, in tests, on
 * ports simulated in memory.
 */
#ifndef SP_DATAPATH_H
#define SP_DATAPATH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "simdpath/actions.h"
#include "simdpath/dispatch.h"
#include "simdpath/packet.h"

#define SP_DP_MAX_PORTS 32
#define SP_DP_MAX_PMDS  64

/* Frames rx took from a port but could not deliver in one contiguous
 * buffer (they came in several segments): freed by the I/O layer, counted
 * by the datapath as received and dropped. */
struct sp_rx_drops {
    uint32_t too_long;  /* longer than the largest buffer */
    uint32_t no_buffer; /* no buffer free to gather the segments into */
};

/* How the datapath moves packets; ports are numbered from 1. */
struct sp_io_ops {
    /* Receives up to max packets, each one contiguous at pkt->data for
     * pkt->len bytes; frees and counts in *drops a frame it cannot give
     * so. */
    uint32_t (*rx)(unsigned port, unsigned queue, struct sp_packet *pkts,
                   uint32_t max, struct sp_rx_drops *drops);
    /* Sends what it can, frees the rest, returns how many were sent. The
     * frame is pkt->data and pkt->len as the actions left them. */
    uint32_t (*tx)(unsigned port, unsigned queue,
                   struct sp_packet *const *pkts, uint32_t n);
    void (*free)(struct sp_packet *pkt);
    /* A copy of the frame at pkt->data, pkt->len bytes (as the actions
     * left it), in its own buffer with the same headroom; -1 when no
     * buffer is free. */
    int (*clone)(const struct sp_packet *pkt, struct sp_packet *copy);
    uint64_t (*tsc)(void);
    /* A packet of its own holding a copy of len bytes (a PACKET_OUT's
     * frame), with the usual headroom; -1 when no buffer is free or the
     * frame is too long. Called from the OpenFlow channel's thread; NULL
     * where PACKET_OUT is not offered. */
    int (*alloc)(const uint8_t *data, uint32_t len, struct sp_packet *pkt);
    uint32_t headroom; /* writable bytes in front of every packet */
};

struct sp_dp_config {
    unsigned n_ports;
    unsigned n_pmds;              /* PMD threads, 1.. */
    unsigned n_rxq;               /* receive queues per port */
    uint32_t emc_entries;         /* per PMD; 0 disables the EMC */
    uint32_t emc_insert_inv_prob; /* insert one miss in N */
    bool profile;                 /* the per-stage profile from the start */
};

#define SP_DP_DEFAULT_EMC_ENTRIES  8192
#define SP_DP_DEFAULT_EMC_INV_PROB 100

/* X(id, short name, description): every reason a packet is counted as
 * dropped, the actions' (SP_DROP_REASONS in actions.h) then the
 * datapath's own, so that SP_DP_DROP_x == SP_DROP_x for the actions'. */
#define SP_DP_DROP_REASONS(X)                                       \
    SP_DROP_REASONS(X)                                              \
    X(NO_MATCH, "no_match", "matched no rule")                      \
    X(TX_REFUSED, "tx_refused", "the device did not take it")       \
    X(TOO_LONG, "too_long", "in segments, too long for one buffer") \
    X(NO_RECV, "no_recv", "received on a port with NO_RECV")        \
    X(NO_FWD, "no_fwd", "sent to a port with NO_FWD")               \
    X(PORT_DOWN, "port_down", "sent to a port that is down")

enum sp_dp_drop_reason {
#define SP_DP_DROP_ENUM(id, name, description) SP_DP_DROP_##id,
    SP_DP_DROP_REASONS(SP_DP_DROP_ENUM)
#undef SP_DP_DROP_ENUM
        SP_DP_DROP_COUNT
};

/* "no_match", "ttl", ...: the name of any drop reason. */
const char *sp_dp_drop_name(unsigned reason);

/*
 * Counters. A packet is counted as dropped on the port it came in on,
 * except a refused transmit, counted on the port that refused it. Over all
 * ports: rx + copies + packet_out = tx + drops + packet_in, exactly.
 * 'copies' counts every copy an output asked for, also one dropped for
 * want of a buffer (no_buffer); 'packet_in' the packets handed to the
 * controller's queue (output:CONTROLLER), on the port they came in on;
 * 'packet_out' the frames a PACKET_OUT injected, on its in_port. Port 0
 * is the controller's: the PACKET_OUTs whose in_port is not a port
 * (OFPP_CONTROLLER), and what became of them.
 */
struct sp_dp_port_stats {
    uint64_t rx, tx, copies, packet_in, packet_out;
    uint64_t drops[SP_DP_DROP_COUNT];
};

struct sp_dp_pmd_stats {
    uint64_t packets, batches;
    uint64_t emc_hits, classifier_hits, misses;
    uint64_t emc_bypassed; /* packets not looked up in the EMC: it hit
                            * too rarely, or there is one rule (the
                            * classifier answered) */
    uint64_t parse_errors; /* packets whose parse stopped early */
    uint64_t groups;       /* action groups run, one per action list and
                            * burst: rules with equal lists share one */
    uint64_t busy_cycles, idle_cycles;
};

/* The stages of a burst the profile times, in pipeline order. */
enum sp_dp_stage {
    SP_DP_STAGE_RX,         /* the receive call that brought the burst */
    SP_DP_STAGE_PARSE,      /* miniflow extract, parse error count */
    SP_DP_STAGE_EMC,        /* hash and EMC lookup */
    SP_DP_STAGE_CLASSIFIER, /* classifier for the EMC misses, insertion */
    SP_DP_STAGE_ACTIONS,    /* grouping, actions, counters, no-match drops */
    SP_DP_STAGE_TX,         /* sending every port's batch */
    SP_DP_STAGE_COUNT
};

/* "receive", "parse", ...: the name of a stage. */
const char *sp_dp_stage_name(unsigned stage);

/*
 * The per-stage profile of one PMD, over the bursts it processed while the
 * profile was on: the stages' cycles add up to busy_cycles exactly (each
 * stage ends where the next starts). idle_cycles are those of receive
 * calls that brought nothing, while on.
 */
struct sp_dp_pmd_perf {
    uint64_t packets, batches;
    uint64_t busy_cycles, idle_cycles;
    uint64_t stage_cycles[SP_DP_STAGE_COUNT];
};

struct sp_dp;

struct sp_dp *sp_dp_create(const struct sp_dp_config *config,
                           const struct sp_io_ops *io, struct sp_err *err);
void sp_dp_destroy(struct sp_dp *dp);

/* Adds one rule in flow syntax; on error err->column points at the
 * fault. */
int sp_dp_flow_add(struct sp_dp *dp, const char *rule, struct sp_err *err);
/* Deletes the rule with exactly this match and priority (as ovs-ofctl
 * --strict); the text may end with actions=..., which is ignored. */
int sp_dp_flow_del(struct sp_dp *dp, const char *match, struct sp_err *err);
/* Deletes the rules with exactly matches[i] and priorities[i], all under
 * one lock, with no text to parse; deleted[i] says whether there was such
 * a rule. OpenFlow's deletes and expiries. */
void sp_dp_flows_del_exact(struct sp_dp *dp, const struct sp_match *matches,
                           const uint32_t *priorities, size_t n,
                           bool *deleted);
/* As ovs-ofctl del-flows: strict, the rule with exactly this match and
 * priority; loose, every rule whose match is within this one (each bit it
 * fixes fixed alike; priority ignored; an empty match takes every rule).
 * *deleted tells how many (0 is no error). Waits for a grace period: not
 * from a PMD thread. */
int sp_dp_flow_del_matching(struct sp_dp *dp, const char *match, bool strict,
                            unsigned *deleted, struct sp_err *err);
/* As ovs-ofctl mod-flows: the actions of 'rule' (MATCH,actions=...)
 * replace those of the rules it selects (strict or loose, as above), each
 * compiled for its rule's match and swapped whole, so forwarding goes on
 * without a gap and the counters are kept (or, with reset_counts, start
 * again from 0, as OpenFlow's OFPFF_RESET_COUNTS). No rule selected, or
 * actions refused for one, is an error that changes nothing. */
int sp_dp_flow_mod(struct sp_dp *dp, const char *rule, bool strict,
                   bool reset_counts, unsigned *modified, struct sp_err *err);
/* Adds every rule of a file. An error in a line has err->line and
 * err->column, shown by sp_err_text(err, path, ...) as "FILE:LINE:COLUMN:
 * what"; one about the file as a whole names it in err->msg. */
int sp_dp_flows_load(struct sp_dp *dp, const char *path, struct sp_err *err);
/* Every rule in precedence order (highest priority first, then the
 * earliest added), as ovs-ofctl dump-flows prints it: " duration=1.234s,
 * n_packets=N, n_bytes=N, idle_age=S, priority=P,MATCH,actions=..." (which
 * flow-add takes back: it ignores the counters); -1 on no memory. */
int sp_dp_flows_dump(struct sp_dp *dp, FILE *out);
/* A rule's traffic: packets, and bytes as received, summed over the PMD
 * threads (flow-dump's n_packets and n_bytes), and its ages in seconds
 * (flow-dump's duration and idle_age, unrounded): since it was added, and
 * since the last burst of any PMD with a packet of it (since it was added
 * if none; never more than duration); and which rule it is: no other rule
 * of the datapath, before or after, has its id, so a rule deleted and
 * added again with the same match and priority is told apart. */
struct sp_dp_flow_stats {
    uint64_t packets, bytes;
    double duration, idle_age;
    uint64_t id;
};
/* Calls fn for every rule in precedence order, while nothing else can
 * delete one (fn must not add or delete rules itself); a rule for which fn
 * returns true is deleted at once, as sp_dp_flows_del_exact would, so that
 * a selection needs no memory of its own. -1 on no memory. The OpenFlow
 * channel's listing and loose deletes, with each rule's counters. */
typedef bool sp_dp_flow_fn(void *aux, const struct sp_match *match,
                           uint32_t priority, const struct sp_actions *actions,
                           const struct sp_dp_flow_stats *stats);
int sp_dp_flows_foreach(struct sp_dp *dp, sp_dp_flow_fn *fn, void *aux);
/* The counters of the rules with exactly matches[i] and priorities[i]
 * (found[i] false for none), read at one time, without listing every
 * rule: the OpenFlow channel's timeout checks. */
void sp_dp_flows_stats_exact(struct sp_dp *dp, const struct sp_match *matches,
                             const uint32_t *priorities, size_t n,
                             struct sp_dp_flow_stats *stats, bool *found);
unsigned sp_dp_flow_count(struct sp_dp *dp);

/* Housekeeping, about once a second from a control thread: subtables are
 * reordered by recent hits (within equal highest priority). */
void sp_dp_maintain(struct sp_dp *dp);

/* The PMD thread that polls receive queue 'queue' of 'port'. */
unsigned sp_dp_queue_pmd(const struct sp_dp_config *config, unsigned port,
                         unsigned queue);
/* The PMD loop of thread 'pmd' (0..n_pmds-1); returns after sp_dp_stop. */
int sp_dp_pmd_run(struct sp_dp *dp, unsigned pmd);
void sp_dp_stop(struct sp_dp *dp);
/* Returns once every PMD loop runs (or the datapath stops): from then on
 * sp_dp_sync waits for them; before, it has none to wait for. */
void sp_dp_wait_running(struct sp_dp *dp);

/*
 * The controller's packet path (docs/openflow.md). Each PMD hands the
 * packets its rules send to the controller to a queue of its own
 * (SP_DP_PACKET_IN_QUEUE entries, lock-free, never waited for: a full
 * queue drops with controller_full); one control thread takes them.
 * While no controller is connected they are dropped with no_controller.
 * PACKET_OUT frames go the other way, through one queue to PMD 0, which
 * runs their actions (or the rules) and sends them on its own transmit
 * queues, as DPDK's are not thread-safe.
 */
#define SP_DP_PACKET_IN_QUEUE  256
#define SP_DP_PACKET_OUT_QUEUE 256

/* A packet's in_port when a PACKET_OUT's in_port was OFPP_CONTROLLER. */
#define SP_DP_PORT_CONTROLLER 0xfffd

/* A packet a rule (or a PACKET_OUT's actions) sent to the controller. */
struct sp_dp_packet_in {
    struct sp_packet pkt;  /* the datapath's: give it back with
                            * sp_dp_packet_in_done() */
    struct sp_match match; /* of the rule that sent it */
    uint32_t priority;
    uint64_t rule_id; /* sp_dp_flow_stats.id of the rule */
    uint16_t max_len; /* output:CONTROLLER's */
    bool rule;        /* false: a PACKET_OUT's actions sent it */
};

/* Whether a controller is connected (packets to it are queued) and what
 * to call, from a PMD thread, when a queue that was empty got packets
 * (it must not block: write to an eventfd, say). */
void sp_dp_controller_set(struct sp_dp *dp, bool connected,
                          void (*notify)(void *aux), void *aux);
/* Returns once PMD 0 has run every PACKET_OUT queued before the call
 * and every PMD thread has ended the poll it was in: what they did with
 * those frames and with rules removed or changed before the call (sends,
 * counts, the PACKET_INs queued) is done. Not from a PMD thread. */
void sp_dp_sync(struct sp_dp *dp);
/* Takes up to max queued packets, oldest first per PMD; one thread only. */
unsigned sp_dp_packet_in_take(struct sp_dp *dp, struct sp_dp_packet_in *out,
                              unsigned max);
void sp_dp_packet_in_done(struct sp_dp *dp, struct sp_packet *pkt);
/* The match of a frame's own headers, every field exact: what the
 * actions of a PACKET_OUT are checked against, as if a rule matched it. */
void sp_dp_frame_match(const uint8_t *data, uint32_t len, uint16_t in_port,
                       struct sp_match *m);
/* Queues a frame for PMD 0 as if it came in on in_port (a port, or
 * SP_DP_PORT_CONTROLLER): with 'actions' (flow syntax, checked against
 * the frame's own headers, as OVS checks a PACKET_OUT's), or with NULL to
 * run it through the rules (OFPP_TABLE). A full queue waits for PMD 0.
 * One thread only; -1 with err when the actions are refused, no buffer
 * is free, or the queue is full and no PMD runs. */
int sp_dp_packet_out(struct sp_dp *dp, const uint8_t *data, uint32_t len,
                     uint16_t in_port, const char *actions,
                     struct sp_err *err);
/* Gives back every packet still queued either way, once no PMD runs. */
void sp_dp_controller_drain(struct sp_dp *dp);

/*
 * A port's OpenFlow config (PORT_MOD: ofp_port_config bits), applied as
 * ovs-vswitchd applies them, from each PMD thread's next poll on (so
 * sp_dp_sync() returns once all apply it). Drops are counted on the port
 * the packet came in on.
 */
/* Not polled; what is sent to it dropped as port_down. */
#define SP_DP_PORT_DOWN 0x01
/* What it receives dropped as no_recv. */
#define SP_DP_PORT_NO_RECV 0x04
/* What is sent to it dropped as no_fwd. */
#define SP_DP_PORT_NO_FWD 0x20
/* What it received, sent to the controller, dropped as no_packet_in. */
#define SP_DP_PORT_NO_PACKET_IN 0x40
#define SP_DP_PORT_CONFIG_ALL                                   \
    (SP_DP_PORT_DOWN | SP_DP_PORT_NO_RECV | SP_DP_PORT_NO_FWD | \
     SP_DP_PORT_NO_PACKET_IN)

/* Sets port's config (bits of SP_DP_PORT_CONFIG_ALL); one thread. */
void sp_dp_port_config_set(struct sp_dp *dp, unsigned port, uint32_t config);
uint32_t sp_dp_port_config(const struct sp_dp *dp, unsigned port);

void sp_dp_port_stats(struct sp_dp *dp, unsigned port,
                      struct sp_dp_port_stats *out);
void sp_dp_pmd_stats(struct sp_dp *dp, unsigned pmd,
                     struct sp_dp_pmd_stats *out);
/* Zeroes every counter, the profile's too. */
void sp_dp_stats_clear(struct sp_dp *dp);

/* Turns the profile on or off, taking effect at every PMD's next poll;
 * off, a burst costs two TSC reads (busy and idle cycles), on, seven. */
void sp_dp_perf_enable(struct sp_dp *dp, bool on);
bool sp_dp_perf_enabled(struct sp_dp *dp);
void sp_dp_pmd_perf(struct sp_dp *dp, unsigned pmd,
                    struct sp_dp_pmd_perf *out);
/* Zeroes the profile only. */
void sp_dp_perf_clear(struct sp_dp *dp);

#endif /* SP_DATAPATH_H */
