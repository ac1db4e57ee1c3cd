/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Actions: what a flow rule does with the packets it matches, compiled
 * from the action part of a rule (docs/flow-syntax.md) and applied to a
 * group of packets that matched the same rule.
 *
 * Compiling checks the actions against the rule's match: a set of a field
 * the match does not guarantee is refused (mod_nw_* needs an IPv4 match,
 * set_field:...->ipv6_* an IPv6 one, mod_tp_* an exact nw_proto of TCP,
 * UDP or SCTP, mod_vlan_* a VLAN tag in the match or a push_vlan before),
 * and so is an output to a port the caller says does not exist.
 *
 * Executing rewrites the packets in place (IPv4 through the ipv4_rewrite
 * kernel, the rest in scalar code), appends them to per-port transmit
 * batches through the batch_copy kernel, and hands every packet it drops
 * back to the caller. No DPDK type appears here: the I/O layer supplies
 * callbacks.
 */
#ifndef SP_ACTIONS_H
#define SP_ACTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simdpath/dispatch.h"
#include "simdpath/match.h"
#include "simdpath/packet.h"

/* A compiled action list; immutable, so PMD threads share it. */
struct sp_actions;

/* X(id, short name, description): why the actions dropped packets. The
 * datapath's counters go on with its own reasons (SP_DP_DROP_REASONS in
 * datapath.h); the short names are the counters' and telemetry's. */
#define SP_DROP_REASONS(X)                                           \
    X(ACTION, "action", "drop action")                               \
    X(NO_OUTPUT, "no_output", "no output action")                    \
    X(TTL, "ttl", "TTL or hop limit expired")                        \
    X(NO_PORT, "no_port", "output port missing")                     \
    X(TX_FULL, "tx_full", "transmit batch still full after flush")   \
    X(NO_BUFFER, "no_buffer",                                        \
      "no free buffer for a copy or a multi-mbuf frame")             \
    X(NO_HEADROOM, "no_headroom", "no headroom to push a VLAN tag")  \
    X(NO_CONTROLLER, "no_controller",                                \
      "output to the controller with none connected")                \
    X(CONTROLLER_FULL, "controller_full",                            \
      "the queue to the controller was full")                        \
    X(IN_PORT, "in_port", "not sent back to the port it came in on") \
    X(NO_PACKET_IN, "no_packet_in",                                  \
      "to the controller from a port with NO_PACKET_IN")

enum sp_drop_reason {
#define SP_DROP_ENUM(id, name, description) SP_DROP_##id,
    SP_DROP_REASONS(SP_DROP_ENUM)
#undef SP_DROP_ENUM
        SP_DROP_COUNT
};

/* The description of an action's drop reason; NULL past the last. */
const char *sp_drop_reason_name(enum sp_drop_reason reason);

/* Whether an output port exists, asked while compiling. */
typedef bool sp_port_exists_fn(uint32_t port, void *aux);

/*
 * Compiles 'text' (the part after "actions=", NUL-terminated) for a rule
 * with 'match'. On success stores a new action list in *out and returns 0.
 * On error returns -1 with err->column the 1-based column in 'text' of
 * the problem (0 for one that is not about the text: out of memory) and
 * err->msg saying what was expected there; sp_err_text() shows them as
 *
 *     column 12: output to port 9, which does not exist
 *     column 1: mod_nw_src needs a match on IPv4 (ip, or dl_type=0x0800)
 */
int sp_actions_parse(const char *text, const struct sp_match *match,
                     sp_port_exists_fn *port_exists, void *aux,
                     struct sp_actions **out, struct sp_err *err);

void sp_actions_free(struct sp_actions *actions);

/*
 * A pool of shared action lists: rules whose compiled lists are equal (the
 * same bytes: they act alike on every packet and print alike) share one,
 * so the datapath runs their packets as one group. Thread-safe.
 */
struct sp_actions_pool;

struct sp_actions_pool *sp_actions_pool_create(void);
/* Frees the pool and every list still in it. */
void sp_actions_pool_destroy(struct sp_actions_pool *pool);
/* Takes 'actions' (from sp_actions_parse) and returns the pool's list equal
 * to it, freeing 'actions', or 'actions' itself, now in the pool; either
 * with one more reference. */
const struct sp_actions *sp_actions_intern(struct sp_actions_pool *pool,
                                           struct sp_actions *actions);
/* Drops a reference of a pooled list; the last one frees it, so the
 * caller calls it once no reader can see the list. */
void sp_actions_release(const struct sp_actions *actions);
/* Lists in the pool. */
unsigned sp_actions_pool_count(struct sp_actions_pool *pool);

/* Writes the actions in the syntax sp_actions_parse() reads, as snprintf
 * does: returns the length of the whole text, writes at most size bytes
 * including the terminating NUL. */
int sp_actions_format(const struct sp_actions *actions, char *buf,
                      size_t size);

/* Whether the actions output to the controller: the caller then runs
 * them for one rule's packets at a time, so that the controller learns
 * which rule sent each. */
bool sp_actions_to_controller(const struct sp_actions *actions);

/* The port of a list that is one output:PORT and nothing else, which
 * then needs no more than the packets appended to tx[PORT] (unless they
 * came in on PORT); 0 for any other list. */
uint32_t sp_actions_output_only(const struct sp_actions *actions);

/* Bytes of headroom in front of pkt->data that executing needs in every
 * packet (4 per push_vlan). */
uint32_t sp_actions_headroom(const struct sp_actions *actions);

/* One port's packets waiting to be sent. */
struct sp_tx_batch {
    uint32_t count;
    struct sp_packet *pkts[SP_BATCH_MAX];
};

/*
 * What executing needs from its caller (the PMD loop), and the drop
 * counters it keeps. Every callback is required and gets the context back;
 * 'aux' is the caller's.
 *
 * Packet buffers: every packet handed to execute, and every packet clone()
 * returns, has at least 'headroom' writable bytes in front of pkt->data.
 * push_vlan moves pkt->data back by 4 bytes and strip_vlan forward by 4
 * (both keep l3_ofs/l4_ofs pointing at the same headers): the I/O layer
 * takes the frame's start and length from pkt->data and pkt->len when it
 * transmits.
 */
struct sp_action_ctx {
    struct sp_tx_batch *tx; /* tx[port] for port < n_ports; FLOOD and ALL
                             * send to ports 1 to n_ports - 1 */
    uint32_t n_ports;
    /* When not 0, the in_port of every packet given (a received burst's
     * port), so that outputs need not look at each packet's; 0: they do. */
    uint32_t in_port;
    uint32_t headroom;
    /* Sends (or queues) tx[port] and leaves it empty. Called before an
     * output that would not fit, once per output, not per packet. */
    void (*flush)(struct sp_action_ctx *ctx, uint32_t port);
    /* When whole_burst is set: the packets given are all of a burst, on
     * one action list, so that nothing else will be queued after them. A
     * list of one IPv4 rewrite and one output to a port whose tx batch is
     * empty then sends them through send (which may be NULL: they are
     * queued) as flush would send them from the batch. */
    bool whole_burst;
    void (*send)(struct sp_action_ctx *ctx, uint32_t port,
                 struct sp_packet *const *pkts, uint32_t n);
    /* A copy of pkt: the pkt->len bytes at pkt->data as the actions so
     * far left them, in a buffer of its own with 'headroom' bytes in
     * front, and the same metadata; NULL when no buffer is free (that copy
     * is then dropped and counted). */
    struct sp_packet *(*clone)(struct sp_action_ctx *ctx,
                               const struct sp_packet *pkt);
    /* Gives back a packet that was dropped. */
    void (*free)(struct sp_action_ctx *ctx, struct sp_packet *pkt);
    /* Takes pkt for the controller (output:CONTROLLER, max_len bytes of
     * it to be sent) and returns SP_DROP_COUNT, or returns why it did not
     * (SP_DROP_NO_CONTROLLER, SP_DROP_CONTROLLER_FULL): the packet is then
     * dropped and counted. NULL: there is no controller. */
    enum sp_drop_reason (*controller)(struct sp_action_ctx *ctx,
                                      struct sp_packet *pkt, uint16_t max_len);
    void *aux;
    uint64_t drops[SP_DROP_COUNT]; /* packets dropped, per reason */
    uint32_t drop_reasons;         /* bit r set once drops[r] is added to */
};

/*
 * Applies the actions, in order, to pkts[0..n), which all matched the same
 * rule (more than SP_BATCH_MAX are taken SP_BATCH_MAX at a time). The packets
 * pass to the context: each one ends in a transmit batch or is dropped
 * (counted, then ctx->free). The last output sends the packets themselves; an
 * earlier one sends copies made by ctx->clone, so later actions do not change
 * what it sent. Actions after the last output have nothing left to act on.
 * As in OpenFlow, no output sends a packet to its pkt->in_port but IN_PORT.
 */
void sp_actions_execute(const struct sp_actions *actions,
                        struct sp_packet *const *pkts, uint32_t n,
                        struct sp_action_ctx *ctx);

#endif /* SP_ACTIONS_H */
