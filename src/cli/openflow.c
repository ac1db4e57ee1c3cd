/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simdpath run's OpenFlow channel (docs/openflow.md): a listening socket
 * (--openflow ptcp:PORT[:IP], or pssl: over TLS) and the controllers it
 * connects to (--controller tcp:HOST:PORT or ssl:), served by one thread
 * with poll() on non-blocking sockets; TLS is src/cli/tls.c. The protocol is
 * src/openflow's session; this file is the sockets and the switch the sessions
 * talk to: the datapath's rules through sp_dp_flow_add/del, the same path as
 * `simdpath ctl flow-add`, so rules from a controller, --flows and ctl are one
 * set.
 */
#define _GNU_SOURCE /* accept4, pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/openflow.h"
#include "cli/tls.h"
#include "simdpath/datapath.h"
#include "simdpath/io.h"
#include "simdpath/openflow.h"

/* Connections accepted on --openflow at once; each --controller has a
 * place of its own besides, which they cannot take. */
#define MAX_ACCEPTED 16
/* An accepted connection whose HELLO (after its TLS handshake) has not
 * come by then is closed: idle sockets hold no place for long. */
#define HELLO_WAIT_MS  10000
#define READ_CHUNK     65536
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 8000
#define LOOKUP_POLL_MS 20 /* how often a running name lookup is looked at */

/* What OpenFlow knows of a rule that the datapath does not keep: cookie,
 * timeouts, flags, when it was added and when last added or modified
 * (its hard timeout's start). Keyed by match and priority, and valid only
 * for the datapath rule of rule_id (sp_dp_flow_stats.id): not for one
 * added again through ctl after a ctl delete. */
struct meta {
    struct meta *next;
    struct sp_match match;
    uint16_t priority;
    uint64_t rule_id;
    uint16_t idle_timeout, hard_timeout, flags;
    uint64_t cookie;
    struct timespec added;
    uint64_t modified_ms;
    unsigned seen; /* snapshot generation that last saw the rule */
};

/* A host name being looked up by a thread of its own, so that a DNS
 * server that does not answer never holds the channel's thread (every
 * connection, the PACKET_INs) for the resolver's timeouts. 'state' is
 * atomic: the channel abandons a lookup it no longer waits for, and
 * whichever of the two comes last frees it. */
enum { LOOKUP_RUNNING, LOOKUP_DONE, LOOKUP_ABANDONED };

struct lookup {
    char host[256], port[8];
    int state, rc;
    struct addrinfo *result;
};

/* A --controller: connected, connecting, looking its name up, or waiting
 * to try again. */
struct controller {
    char host[256], port[8];
    bool tls;              /* ssl: */
    struct lookup *lookup; /* the name being looked up, or NULL */
    int fd;                /* connecting, or -1 */
    bool up;               /* a connection in conns[] */
    uint64_t next_ms;
    unsigned backoff_ms;
};

struct conn {
    int fd;
    struct sp_tls *tls;      /* over TLS, or NULL */
    char peer[80];           /* "ADDR port P" of an accepted one */
    struct controller *ctrl; /* the --controller it is, or NULL */
    uint64_t since_ms;       /* when it was made */
    bool eof; /* the peer closed its side: replies go on, then close */
    /* When the peer last sent anything, and when the probe that went
     * unanswered since was sent (0: none). */
    uint64_t heard_ms, probed_ms;
    struct sp_of_session s;
};

struct channel {
    /* Held by the channel's thread but while it waits in poll(), and by
     * what reads its state from other threads (sp_of_channel_show). */
    pthread_mutex_t lock;
    struct sp_dp *dp;
    const struct sp_dp_config *config;
    struct sp_of_switch sw;
    pthread_t thread;
    bool running; /* atomic: read by sp_of_channel_show */
    int wake[2];
    int listen_fd;
    bool listen_tls; /* pssl: */
    bool tls;        /* pssl: or an ssl: controller */
    struct controller ctrls[SP_OF_CONTROLLERS_MAX];
    unsigned n_ctrls, probe_ms;
    struct sp_of_election election;
    struct conn conns[MAX_ACCEPTED + SP_OF_CONTROLLERS_MAX];
    unsigned n_conns, n_accepted;
    /* meta table */
    struct meta **buckets;
    size_t n_buckets, n_meta, n_timed;
    unsigned generation;
    struct timespec started;
    /* The packet path: written by PMD threads when packets for the
     * controller wait. */
    int packet_in_fd;
    /* Each port's link as last told to the controllers. */
    bool link_down[SP_IO_MAX_PORTS + 1];
};

static struct channel ch = {.lock = PTHREAD_MUTEX_INITIALIZER,
                            .listen_fd = -1,
                            .wake = {-1, -1},
                            .packet_in_fd = -1};

static uint64_t
now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* ---- meta table ---- */

static size_t
meta_hash(const struct sp_match *m, uint16_t priority)
{
    uint64_t h = 14695981039346656037ull ^ priority;

    for (size_t i = 0; i < sizeof *m; i++) {
        h = (h ^ ((const uint8_t *)m)[i]) * 1099511628211ull;
    }
    return (size_t)(h ^ h >> 32);
}

static struct meta **
meta_slot(const struct sp_match *m, uint16_t priority)
{
    struct meta **p;

    if (!ch.n_buckets) {
        return NULL;
    }
    p = &ch.buckets[meta_hash(m, priority) & (ch.n_buckets - 1)];
    while (*p && ((*p)->priority != priority ||
                  memcmp(&(*p)->match, m, sizeof *m))) {
        p = &(*p)->next;
    }
    return p;
}

static struct meta *
meta_find(const struct sp_match *m, uint16_t priority)
{
    struct meta **p = meta_slot(m, priority);

    return p ? *p : NULL;
}

static bool
timed(const struct meta *e)
{
    return e->hard_timeout || e->idle_timeout;
}

static void
meta_remove(const struct sp_match *m, uint16_t priority)
{
    struct meta **p = meta_slot(m, priority), *e;

    if (p && *p) {
        e = *p;
        *p = e->next;
        ch.n_timed -= timed(e);
        ch.n_meta--;
        free(e);
    }
}

static int
meta_grow(void)
{
    size_t n = ch.n_buckets ? 2 * ch.n_buckets : 1024;
    struct meta **b = calloc(n, sizeof *b);

    if (!b) {
        return -1;
    }
    for (size_t i = 0; i < ch.n_buckets; i++) {
        for (struct meta *e = ch.buckets[i], *next; e; e = next) {
            size_t at = meta_hash(&e->match, e->priority) & (n - 1);

            next = e->next;
            e->next = b[at];
            b[at] = e;
        }
    }
    free(ch.buckets);
    ch.buckets = b;
    ch.n_buckets = n;
    return 0;
}

/* The new entry, or NULL when out of memory. */
static struct meta *
meta_set(const struct sp_of_flow_mod *fm, uint64_t rule_id)
{
    struct meta *e;
    struct meta **p;

    meta_remove(&fm->match, fm->priority);
    if (ch.n_meta >= ch.n_buckets && meta_grow()) {
        return NULL;
    }
    e = calloc(1, sizeof *e);
    if (!e) {
        return NULL;
    }
    e->match = fm->match;
    e->priority = fm->priority;
    e->rule_id = rule_id;
    e->cookie = fm->cookie;
    e->idle_timeout = fm->idle_timeout;
    e->hard_timeout = fm->hard_timeout;
    e->flags = fm->flags;
    e->seen = ch.generation;
    clock_gettime(CLOCK_MONOTONIC, &e->added);
    e->modified_ms = now_ms();
    p = &ch.buckets[meta_hash(&e->match, e->priority) & (ch.n_buckets - 1)];
    e->next = *p;
    *p = e;
    ch.n_meta++;
    ch.n_timed += timed(e);
    return e;
}

static void
meta_free_all(void)
{
    for (size_t i = 0; i < ch.n_buckets; i++) {
        for (struct meta *e = ch.buckets[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    }
    free(ch.buckets);
    ch.buckets = NULL;
    ch.n_buckets = ch.n_meta = ch.n_timed = 0;
}

/* The meta of the datapath rule 'id' at this match and priority, if any;
 * one left by an earlier rule there is dropped. */
static struct meta *
meta_of(const struct sp_match *m, uint16_t priority, uint64_t id)
{
    struct meta *e = meta_find(m, priority);

    if (e && e->rule_id != id) {
        meta_remove(m, priority);
        return NULL;
    }
    return e;
}

/* ---- the switch ---- */

/* f's cookie, timeouts, flags and duration from e, the meta of its rule
 * (NULL: none). */
static void
fill_from_meta(struct sp_of_flow *f, const struct timespec *now,
               const struct meta *e)
{
    const struct timespec *since = e ? &e->added : now;
    long ns = now->tv_nsec - since->tv_nsec;
    time_t sec = now->tv_sec - since->tv_sec;

    if (ns < 0) {
        ns += 1000000000;
        sec--;
    }
    if (sec < 0) {
        sec = ns = 0; /* added after 'now' was taken */
    }
    f->duration_sec = (uint32_t)sec;
    f->duration_nsec = (uint32_t)ns;
    if (e) {
        f->cookie = e->cookie;
        f->idle_timeout = e->idle_timeout;
        f->hard_timeout = e->hard_timeout;
        f->flags = e->flags;
    }
}

/* A walk over every rule: each is given to fn as struct sp_of_flow, with
 * its counters and what the meta table knows of it; a rule for which fn
 * returns true is deleted (sp_dp_flows_foreach). */
typedef bool rule_fn(void *ctx, const struct sp_of_flow *f);

struct walk {
    rule_fn *fn;
    void *ctx;
    struct timespec now;
    struct sp_of_flow f; /* the rule at hand, one at a time */
};

static bool
walk_rule(void *aux, const struct sp_match *match, uint32_t priority,
          const struct sp_actions *actions,
          const struct sp_dp_flow_stats *stats)
{
    struct walk *w = aux;
    struct sp_of_flow *f = &w->f;
    struct meta *e;

    memset(f, 0, sizeof *f);
    f->match = *match;
    f->priority = (uint16_t)priority;
    sp_actions_format(actions, f->actions, sizeof f->actions);
    e = meta_of(match, f->priority, stats->id);
    if (!e) {
        /* A rule from --flows or ctl: its duration counts from when the
         * channel first sees it. */
        struct sp_of_flow_mod fm = {.match = *match, .priority = f->priority};

        e = meta_set(&fm, stats->id);
    } else {
        e->seen = ch.generation;
    }
    fill_from_meta(f, &w->now, e);
    f->packets = stats->packets;
    f->bytes = stats->bytes;
    f->idle_age = stats->idle_age;
    if (!w->fn(w->ctx, f)) {
        return false;
    }
    meta_remove(match, f->priority);
    return true;
}

/* Every rule of the datapath through fn, holding one rule at a time. Meta
 * entries of the rules deleted, and of rules that are gone (deleted
 * through ctl), are dropped. -1 on no memory. */
static int
walk_rules(rule_fn *fn, void *ctx)
{
    struct walk w = {.fn = fn, .ctx = ctx};

    clock_gettime(CLOCK_MONOTONIC, &w.now);
    ch.generation++;
    if (sp_dp_flows_foreach(ch.dp, walk_rule, &w)) {
        return -1;
    }
    for (size_t i = 0; i < ch.n_buckets; i++) {
        for (struct meta **p = &ch.buckets[i]; *p;) {
            if ((*p)->seen != ch.generation) {
                struct meta *gone = *p;

                *p = gone->next;
                ch.n_timed -= timed(gone);
                ch.n_meta--;
                free(gone);
            } else {
                p = &(*p)->next;
            }
        }
    }
    return 0;
}

struct listing {
    sp_of_flow_fn *fn;
    void *ctx;
};

static bool
list_rule(void *ctx, const struct sp_of_flow *f)
{
    struct listing *l = ctx;

    l->fn(l->ctx, f);
    return false;
}

/* The session's listing: flow and aggregate stats. */
static int
sw_flows(void *aux, sp_of_flow_fn *fn, void *ctx)
{
    struct listing l = {fn, ctx};

    (void)aux;
    return walk_rules(list_rule, &l);
}

static void
notify_removed(const struct sp_of_flow *f, uint8_t reason)
{
    if (!(f->flags & SP_OFPFF_SEND_FLOW_REM)) {
        return;
    }
    for (unsigned i = 0; i < ch.n_conns; i++) {
        sp_of_session_flow_removed(&ch.conns[i].s, f, reason);
    }
}

/* Deletes the rules flows[i] whose reasons[i] (a FLOW_REMOVED reason) is
 * not -1, in one batch under one lock (sp_dp_flows_del_exact). A rule
 * deleted meanwhile (ctl) is left out. -1 on no memory. */
static int
delete_rules(const struct sp_of_flow *flows, size_t n, const int *reasons)
{
    struct sp_match *matches = malloc((n ? n : 1) * sizeof *matches);
    uint32_t *priorities = malloc((n ? n : 1) * sizeof *priorities);
    size_t *which = malloc((n ? n : 1) * sizeof *which);
    bool *deleted = malloc(n ? n : 1);
    size_t m = 0;
    int rc = -1;

    if (matches && priorities && which && deleted) {
        for (size_t i = 0; i < n; i++) {
            if (reasons[i] >= 0) {
                matches[m] = flows[i].match;
                priorities[m] = flows[i].priority;
                which[m++] = i;
            }
        }
        sp_dp_flows_del_exact(ch.dp, matches, priorities, m, deleted);
        rc = 0;
    }
    for (size_t j = 0; !rc && j < m; j++) {
        const struct sp_of_flow *f = &flows[which[j]];

        if (deleted[j]) {
            notify_removed(f, (uint8_t)reasons[which[j]]);
            meta_remove(&f->match, f->priority);
        }
    }
    free(matches);
    free(priorities);
    free(which);
    free(deleted);
    return rc;
}

static int
add_rule(const struct sp_of_flow_mod *fm, struct sp_of_error *err)
{
    char text[SP_OF_RULE_TEXT_MAX];
    uint32_t priority = fm->priority;
    struct sp_dp_flow_stats stats;
    unsigned modified;
    struct sp_err e;
    bool found;

    sp_of_rule_text(text, sizeof text, &fm->match, fm->priority, fm->actions);
    /* An ADD replaces a rule with the same match and priority (OpenFlow
     * 1.3, 6.4); as ovs-vswitchd, in place, so that no packet finds it
     * gone, and with its counters unless RESET_COUNTS. */
    sp_dp_flows_stats_exact(ch.dp, &fm->match, &priority, 1, &stats, &found);
    if (found
            ? sp_dp_flow_mod(ch.dp, text, true,
                             fm->flags & SP_OFPFF_RESET_COUNTS, &modified, &e)
            : sp_dp_flow_add(ch.dp, text, &e)) {
        return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_UNKNOWN,
                          "%.150s", e.msg);
    }
    if (!found) { /* the id of the rule just added */
        sp_dp_flows_stats_exact(ch.dp, &fm->match, &priority, 1, &stats,
                                &found);
    }
    if (!meta_set(fm, found ? stats.id : 0)) {
        return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_TABLE_FULL,
                          "out of memory");
    }
    return 0;
}

/* Modify, as ovs-vswitchd: the rule keeps its cookie, timeouts, flags,
 * counters (unless the modify has RESET_COUNTS) and the time of its last
 * packet (its idle timeout goes on); its hard timeout starts again. The
 * actions are swapped in place (sp_dp_flow_mod), so forwarding has no
 * gap. */
static int
modify_rule(const struct sp_match *match, uint16_t priority,
            const struct sp_of_flow_mod *fm, struct sp_of_error *err)
{
    char text[SP_OF_RULE_TEXT_MAX];
    struct meta *e = meta_find(match, priority);
    struct sp_err e_dp;
    unsigned modified;

    sp_of_rule_text(text, sizeof text, match, priority, fm->actions);
    if (sp_dp_flow_mod(ch.dp, text, true, fm->flags & SP_OFPFF_RESET_COUNTS,
                       &modified, &e_dp)) {
        return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_UNKNOWN,
                          "%.150s", e_dp.msg);
    }
    if (e) {
        e->modified_ms = now_ms();
    }
    return 0;
}

/* A MODIFY_STRICT or DELETE_STRICT that does not select by output: its
 * one rule looked up by match and priority (sp_dp_flows_stats_exact), as
 * a listing of every rule for each would make a flood of them take
 * quadratic time. */
static int
strict_flow_mod(const struct sp_of_flow_mod *fm, struct sp_of_error *err)
{
    struct sp_of_flow *f = calloc(1, sizeof *f);
    uint32_t priority = fm->priority;
    struct sp_dp_flow_stats stats;
    struct timespec now;
    int rc = 0;
    bool found;

    if (!f) {
        return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_UNKNOWN,
                          "out of memory");
    }
    sp_dp_flows_stats_exact(ch.dp, &fm->match, &priority, 1, &stats, &found);
    if (found) {
        f->match = fm->match;
        f->priority = fm->priority;
        clock_gettime(CLOCK_MONOTONIC, &now);
        fill_from_meta(f, &now, meta_of(&f->match, f->priority, stats.id));
        f->packets = stats.packets;
        f->bytes = stats.bytes;
    }
    if (found && sp_of_flow_selected(fm, f, true)) {
        if (fm->command != SP_OFPFC_DELETE_STRICT) {
            rc = modify_rule(&f->match, f->priority, fm, err);
        } else if (delete_rules(f, 1, &(int){SP_OFPRR_DELETE})) {
            rc = sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_UNKNOWN,
                            "out of memory");
        }
    }
    free(f);
    return rc;
}

static bool
overlaps(const struct sp_match *a, const struct sp_match *b)
{
    for (unsigned i = 0; i < SP_FLOW_KEY_BLOCKS; i++) {
        if ((a->key.blocks[i] ^ b->key.blocks[i]) & a->mask.blocks[i] &
            b->mask.blocks[i]) {
            return false;
        }
    }
    return true;
}

/* A FLOW_MOD's selection over a walk of every rule (walk_rules). */
struct selection {
    const struct sp_of_flow_mod *fm;
    bool strict;
    bool overlap;                /* ADD: a rule of its priority overlaps */
    bool no_memory;              /* MODIFY: the list below is short */
    struct rule_ids *ids, *last; /* MODIFY: the rules selected, in order */
};

/* Rules a MODIFY selected, by match and priority, in blocks: no more
 * than that is kept of them while the walk goes on. */
#define IDS_PER_BLOCK 256
struct rule_ids {
    struct rule_ids *next;
    unsigned n;
    struct {
        struct sp_match match;
        uint16_t priority;
    } id[IDS_PER_BLOCK];
};

static bool
find_overlap(void *ctx, const struct sp_of_flow *f)
{
    struct selection *sel = ctx;

    sel->overlap |= f->priority == sel->fm->priority &&
                    overlaps(&f->match, &sel->fm->match) &&
                    memcmp(&f->match, &sel->fm->match, sizeof f->match);
    return false;
}

/* DELETE: a selected rule goes in the walk itself, so none is listed. */
static bool
delete_selected(void *ctx, const struct sp_of_flow *f)
{
    struct selection *sel = ctx;

    if (!sp_of_flow_selected(sel->fm, f, sel->strict)) {
        return false;
    }
    notify_removed(f, SP_OFPRR_DELETE);
    return true;
}

/* MODIFY: sp_dp_flow_mod cannot run inside the walk (it takes the lock
 * the walk holds), so the selected rules are noted for after it. */
static bool
note_selected(void *ctx, const struct sp_of_flow *f)
{
    struct selection *sel = ctx;
    struct rule_ids *b = sel->last;

    if (sel->no_memory || !sp_of_flow_selected(sel->fm, f, sel->strict)) {
        return false;
    }
    if (!b || b->n == IDS_PER_BLOCK) {
        b = malloc(sizeof *b);
        if (!b) {
            sel->no_memory = true;
            return false;
        }
        b->next = NULL;
        b->n = 0;
        *(sel->last ? &sel->last->next : &sel->ids) = b;
        sel->last = b;
    }
    b->id[b->n].match = f->match;
    b->id[b->n++].priority = f->priority;
    return false;
}

static int
sw_flow_mod(void *aux, const struct sp_of_flow_mod *fm,
            struct sp_of_error *err)
{
    struct selection sel = {
        .fm = fm,
        .strict = fm->command == SP_OFPFC_MODIFY_STRICT ||
                  fm->command == SP_OFPFC_DELETE_STRICT,
    };
    rule_fn *fn = fm->command == SP_OFPFC_ADD      ? find_overlap
                  : fm->command >= SP_OFPFC_DELETE ? delete_selected
                                                   : note_selected;
    int rc = 0;

    (void)aux;
    if (fm->command == SP_OFPFC_ADD && !(fm->flags & SP_OFPFF_CHECK_OVERLAP)) {
        return add_rule(fm, err);
    }
    if (sel.strict && fm->out_port == SP_OFPP_ANY &&
        fm->out_group == SP_OFPG_ANY) {
        return strict_flow_mod(fm, err);
    }
    if (walk_rules(fn, &sel) || sel.no_memory) {
        rc = sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_UNKNOWN,
                        "out of memory");
    } else if (sel.overlap) {
        rc = sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_OVERLAP,
                        "a rule of priority %u overlaps", fm->priority);
    } else if (fm->command == SP_OFPFC_ADD) {
        rc = add_rule(fm, err);
    }
    for (struct rule_ids *b = sel.ids, *next; b; b = next) {
        for (unsigned i = 0; i < b->n && !rc; i++) {
            rc = modify_rule(&b->id[i].match, b->id[i].priority, fm, err);
        }
        next = b->next;
        free(b);
    }
    return rc;
}

static void
sw_port(void *aux, unsigned port, struct sp_of_port *out)
{
    struct sp_dp_port_stats s;
    struct timespec now;

    (void)aux;
    sp_dp_port_stats(ch.dp, port, &s);
    snprintf(out->name, sizeof out->name, "%s", sp_io_port_name(port));
    sp_io_port_mac(port, out->hw_addr);
    out->rx_packets = s.rx;
    out->tx_packets = s.tx;
    out->rx_bytes = out->tx_bytes = SP_OF_NO_COUNT;
    out->rx_errors = out->tx_errors = SP_OF_NO_COUNT;
    out->tx_dropped = s.drops[SP_DP_DROP_TX_REFUSED];
    out->rx_dropped = 0;
    for (unsigned r = 0; r < SP_DP_DROP_COUNT; r++) {
        out->rx_dropped += r == SP_DP_DROP_TX_REFUSED ? 0 : s.drops[r];
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    out->duration_sec = (uint32_t)(now.tv_sec - ch.started.tv_sec);
    out->link_down = !sp_io_port_link_up(port);
    out->config = sp_dp_port_config(ch.dp, port);
}

/* The datapath takes OpenFlow's port config bits as they are. */
_Static_assert(SP_OFPPC_PORT_DOWN == SP_DP_PORT_DOWN &&
                   SP_OFPPC_NO_RECV == SP_DP_PORT_NO_RECV &&
                   SP_OFPPC_NO_FWD == SP_DP_PORT_NO_FWD &&
                   SP_OFPPC_NO_PACKET_IN == SP_DP_PORT_NO_PACKET_IN,
               "OpenFlow's port config bits are the datapath's");

/* PORT_STATUS (MODIFY) of port p to every connection but 'except'. */
static void
port_status_all(const struct sp_of_port *p, const struct sp_of_session *except)
{
    for (unsigned i = 0; i < ch.n_conns; i++) {
        if (&ch.conns[i].s != except) {
            sp_of_session_port_status(&ch.conns[i].s, p, SP_OFPPR_MODIFY);
        }
    }
}

/* Sets a port's config bits of 'mask' to those of 'config'. PORT_DOWN
 * also sets the device's link down (or up), as ovs-vswitchd does for a
 * DPDK port, where the device can (net_tap, most NICs; not net_null or
 * net_pcap: the port then only stops being polled and sent to). Returns
 * 0 (*changed: whether the config did), or -1 with err saying why the
 * device refused, nothing changed then. */
static int
port_mod_apply(struct sp_dp *dp, uint32_t port, uint32_t config, uint32_t mask,
               bool *changed, struct sp_err *err)
{
    uint32_t old = sp_dp_port_config(dp, port);
    uint32_t want = (old & ~mask) | (config & mask);

    *changed = false;
    if ((old ^ want) & SP_DP_PORT_DOWN) {
        int rc = sp_io_port_set_link(port, !(want & SP_DP_PORT_DOWN));

        if (rc && rc != -ENOTSUP) {
            return sp_err_set(err,
                              "port %u: the device did not set its link %s: "
                              "%s",
                              port, want & SP_DP_PORT_DOWN ? "down" : "up",
                              strerror(-rc));
        }
    }
    if (want != old) {
        sp_dp_port_config_set(dp, port, want);
        *changed = true;
    }
    return 0;
}

/* A port's new config to every connection but 'except' as PORT_STATUS;
 * as ovs-vswitchd before OpenFlow 1.5, not to the one that asked. */
static void
port_mod_tell(uint32_t port, const struct sp_of_session *except)
{
    struct sp_of_port p = {.port_no = port};

    sw_port(NULL, port, &p);
    /* The link it set is told now, not again by the next poll. */
    ch.link_down[port] = p.link_down;
    port_status_all(&p, except);
}

static int
sw_port_mod(void *aux, const struct sp_of_session *from, uint32_t port,
            uint32_t config, uint32_t mask, struct sp_of_error *err)
{
    struct sp_err e;
    bool changed;

    (void)aux;
    if (port_mod_apply(ch.dp, port, config, mask, &changed, &e)) {
        return sp_of_fail(err, SP_OFPET_PORT_MOD_FAILED, SP_OFPPMFC_EPERM,
                          "%.150s", e.msg);
    }
    if (changed) {
        port_mod_tell(port, from);
    }
    return 0;
}

/* Ports' links, polled about once a second (DPDK's link-state interrupt
 * is not available on every device): a change goes to every connection
 * as PORT_STATUS (MODIFY, with the port's description), as ovs-vswitchd
 * sends it when a carrier comes or goes. */
static void
poll_links(void)
{
    for (unsigned port = 1; port <= ch.config->n_ports; port++) {
        struct sp_of_port p = {.port_no = port};

        sw_port(NULL, port, &p);
        if (p.link_down == ch.link_down[port]) {
            continue;
        }
        ch.link_down[port] = p.link_down;
        port_status_all(&p, NULL);
    }
}

static void
sw_table(void *aux, struct sp_of_table *out)
{
    (void)aux;
    out->active_count = sp_dp_flow_count(ch.dp);
    out->lookup_count = out->matched_count = 0;
    for (unsigned t = 0; t < ch.config->n_pmds; t++) {
        struct sp_dp_pmd_stats s;

        sp_dp_pmd_stats(ch.dp, t, &s);
        out->lookup_count += s.packets;
        out->matched_count += s.emc_hits + s.classifier_hits;
    }
}

#define EXPIRE_BATCH 1024

/* The timeouts of n rules (at most EXPIRE_BATCH) with a timeout: their
 * counters read by match (sp_dp_flows_stats_exact), those due deleted in
 * one batch. A rule deleted meanwhile through ctl loses its entry. */
static void
expire_batch(struct meta *const *timed_rules, size_t n, uint64_t now,
             const struct timespec *now_ts)
{
    struct sp_match *matches = malloc(n * sizeof *matches);
    uint32_t *priorities = malloc(n * sizeof *priorities);
    struct sp_dp_flow_stats *stats = malloc(n * sizeof *stats);
    bool *found = malloc(n);
    struct sp_of_flow *flows = calloc(n, sizeof *flows);
    int *reasons = malloc(n * sizeof *reasons);

    /* Out of memory: tried again at the next check. */
    if (matches && priorities && stats && found && flows && reasons) {
        for (size_t i = 0; i < n; i++) {
            matches[i] = timed_rules[i]->match;
            priorities[i] = timed_rules[i]->priority;
        }
        sp_dp_flows_stats_exact(ch.dp, matches, priorities, n, stats, found);
        for (size_t i = 0; i < n; i++) {
            struct sp_of_flow *f = &flows[i];

            /* Gone, or deleted and added again through ctl: the meta is
             * not of the rule there, and goes below. */
            found[i] = found[i] && timed_rules[i]->rule_id == stats[i].id;
            reasons[i] = -1;
            if (!found[i]) {
                continue;
            }
            f->match = matches[i];
            f->priority = (uint16_t)priorities[i];
            fill_from_meta(f, now_ts, timed_rules[i]);
            f->packets = stats[i].packets;
            f->bytes = stats[i].bytes;
            reasons[i] = sp_of_flow_expiry(f, timed_rules[i]->modified_ms, now,
                                           stats[i].idle_age);
        }
        delete_rules(flows, n, reasons);
        for (size_t i = 0; i < n; i++) {
            if (!found[i]) {
                meta_remove(&matches[i], (uint16_t)priorities[i]);
            }
        }
    }
    free(matches);
    free(priorities);
    free(stats);
    free(found);
    free(flows);
    free(reasons);
}

/* Hard and idle timeouts, checked about once a second (as
 * ovs-vswitchd), here and never in a PMD: the idle time is the rules'
 * per-PMD time of their last packet. Only the rules with a timeout are
 * read, not a listing of every rule (which, for 100,000 rules, took a
 * tenth of a CPU to watch one timeout). */
static void
expire_rules(void)
{
    struct meta **timed_rules;
    struct timespec now_ts;
    uint64_t now;
    size_t n = 0;

    if (!ch.n_timed) {
        return;
    }
    timed_rules = malloc(ch.n_timed * sizeof *timed_rules);
    if (!timed_rules) {
        return;
    }
    for (size_t b = 0; b < ch.n_buckets; b++) {
        for (struct meta *e = ch.buckets[b]; e && n < ch.n_timed;
             e = e->next) {
            if (timed(e)) {
                timed_rules[n++] = e;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &now_ts);
    now = now_ms();
    for (size_t at = 0; at < n; at += EXPIRE_BATCH) {
        expire_batch(timed_rules + at,
                     n - at < EXPIRE_BATCH ? n - at : EXPIRE_BATCH, now,
                     &now_ts);
    }
    free(timed_rules);
}

/* ---- the packet path ---- */

/* Called by a PMD thread: never blocks (the eventfd is non-blocking and
 * a full count is as good as any). */
static void
packet_in_notify(void *aux)
{
    (void)aux;
    (void)!write(ch.packet_in_fd, &(uint64_t){1}, sizeof(uint64_t));
}

int
sp_of_channel_port_mod(struct sp_dp *dp, unsigned port, uint32_t config,
                       uint32_t mask, struct sp_err *err)
{
    bool changed;
    int rc;

    pthread_mutex_lock(&ch.lock);
    rc = port_mod_apply(dp, port, config, mask, &changed, err);
    if (!rc && changed && __atomic_load_n(&ch.running, __ATOMIC_ACQUIRE)) {
        port_mod_tell(port, NULL);
        /* The thread waits in poll() for what it knew: woken, it sends
         * the PORT_STATUS now. */
        packet_in_notify(NULL);
    }
    pthread_mutex_unlock(&ch.lock);
    return rc;
}

/* Whether a connection takes PACKET_INs now: the datapath queues packets
 * for the controller only then. */
static void
packet_in_update(void)
{
    sp_dp_controller_set(ch.dp, ch.n_conns > 0, NULL, NULL);
}

/* As OVS: a table-miss rule (priority 0, matching everything) sends
 * NO_MATCH, any other ACTION. */
static uint8_t
packet_in_reason(const struct sp_dp_packet_in *p)
{
    static const struct sp_flow_key none;

    return p->rule && !p->priority &&
                   !memcmp(&p->match.mask, &none, sizeof none)
               ? SP_OFPR_NO_MATCH
               : SP_OFPR_ACTION;
}

/* Sends every queued packet to every connection as a PACKET_IN. */
static void
packet_in_send(void)
{
    struct sp_dp_packet_in batch[32];
    unsigned n;
    uint64_t count;

    (void)!read(ch.packet_in_fd, &count, sizeof count);
    while ((n = sp_dp_packet_in_take(ch.dp, batch, 32))) {
        for (unsigned i = 0; i < n; i++) {
            struct sp_dp_packet_in *p = &batch[i];
            const struct meta *e =
                p->rule ? meta_find(&p->match, (uint16_t)p->priority) : NULL;
            struct sp_of_packet_in pin;

            /* Queued by a rule since deleted (and added again): the meta
             * is not of it, and stays, as it may be the rule's there now. */
            if (e && e->rule_id != p->rule_id) {
                e = NULL;
            }
            pin = (struct sp_of_packet_in){
                .in_port = p->pkt.in_port == SP_DP_PORT_CONTROLLER
                               ? SP_OFPP_CONTROLLER
                               : p->pkt.in_port,
                .reason = packet_in_reason(p),
                .max_len = p->max_len,
                /* As OVS: all ones when no rule sent it. */
                .cookie = e         ? e->cookie
                          : p->rule ? 0
                                    : UINT64_MAX,
                .data = p->pkt.data,
                .len = p->pkt.len,
            };

            /* A connection without room loses it (its session says
             * when). */
            for (unsigned c = 0; c < ch.n_conns; c++) {
                sp_of_session_packet_in(&ch.conns[c].s, &pin);
            }
            sp_dp_packet_in_done(ch.dp, &p->pkt);
        }
    }
}

/* A new master: the others that were master become slaves, as the
 * specification asks (the one election of all connections). */
static void
sw_master(void *aux, const struct sp_of_session *s)
{
    (void)aux;
    for (unsigned i = 0; i < ch.n_conns; i++) {
        if (&ch.conns[i].s != s &&
            ch.conns[i].s.role == SP_OFPCR_ROLE_MASTER) {
            ch.conns[i].s.role = SP_OFPCR_ROLE_SLAVE;
        }
    }
}

/* BARRIER: the PMDs past every earlier change, then the PACKET_INs they
 * queued until then, so that none from a rule the controller deleted
 * follows the reply. */
static void
sw_barrier(void *aux)
{
    (void)aux;
    sp_dp_sync(ch.dp);
    packet_in_send();
}

/* The datapath's in_port of an OpenFlow one (a port or CONTROLLER). */
static uint16_t
dp_port(uint32_t of_port)
{
    return of_port == SP_OFPP_CONTROLLER ? SP_DP_PORT_CONTROLLER
                                         : (uint16_t)of_port;
}

static void
sw_frame_match(void *aux, const uint8_t *data, size_t len, uint32_t in_port,
               struct sp_match *m)
{
    (void)aux;
    sp_dp_frame_match(data, (uint32_t)len, dp_port(in_port), m);
}

static int
sw_packet_out(void *aux, const struct sp_of_packet_out *po,
              struct sp_of_error *err)
{
    struct sp_err e;

    (void)aux;
    if (sp_dp_packet_out(ch.dp, po->data, (uint32_t)po->len,
                         dp_port(po->in_port), po->table ? NULL : po->actions,
                         &e)) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_EPERM, "%.150s",
                          e.msg);
    }
    return 0;
}

/* ---- options ---- */

/* Splits "A:B" at the last colon (an IPv6 address has colons). */
static int
split_host_port(char *text, const char **host, const char **port)
{
    char *colon = strrchr(text, ':');

    if (!colon || colon == text || !colon[1]) {
        return -1;
    }
    *colon = '\0';
    *host = text;
    *port = colon + 1;
    if (**host == '[' && colon[-1] == ']') {
        colon[-1] = '\0';
        (*host)++;
    }
    return 0;
}

static int
valid_port(const char *text, bool zero_ok)
{
    char *end;
    unsigned long v = strtoul(text, &end, 10);

    return *text && !*end && text[0] != '-' && v <= 65535 && (zero_ok || v);
}

int
sp_of_channel_parse_listen(const char *spec, struct sp_of_channel_config *c,
                           struct sp_err *err)
{
    char buf[300];
    const char *rest, *colon;
    bool tls = !strncmp(spec, "pssl:", 5);

    if ((strncmp(spec, "ptcp:", 5) && !tls) || strlen(spec) >= sizeof buf) {
        return sp_err_set(err,
                          "--openflow: '%s'; expected ptcp:PORT[:IP] or "
                          "pssl:PORT[:IP], e.g. ptcp:6653",
                          spec);
    }
    rest = spec + 5;
    colon = strchr(rest, ':');
    snprintf(buf, sizeof buf, "%.*s",
             colon ? (int)(colon - rest) : (int)strlen(rest), rest);
    if (!valid_port(buf, true)) {
        return sp_err_set(err,
                          "--openflow: port '%s' in '%s'; expected 0 to "
                          "65535",
                          buf, spec);
    }
    if (colon && strlen(colon + 1) >= sizeof c->listen_ip) {
        return sp_err_set(err, "--openflow: address too long in '%s'", spec);
    }
    snprintf(c->listen_port, sizeof c->listen_port, "%.7s", buf);
    snprintf(c->listen_ip, sizeof c->listen_ip, "%.63s",
             colon ? colon + 1 : "127.0.0.1");
    c->listen = true;
    c->listen_tls = tls;
    return 0;
}

int
sp_of_channel_parse_controller(const char *spec,
                               struct sp_of_channel_config *c,
                               struct sp_err *err)
{
    char buf[300];
    const char *host, *port;
    struct sp_of_controller_addr *a;
    bool tls = !strncmp(spec, "ssl:", 4);

    if ((strncmp(spec, "tcp:", 4) && !tls) || strlen(spec) >= sizeof buf) {
        return sp_err_set(err,
                          "--controller: '%s'; expected tcp:HOST:PORT or "
                          "ssl:HOST:PORT, e.g. tcp:127.0.0.1:6653",
                          spec);
    }
    snprintf(buf, sizeof buf, "%s", spec + 4);
    if (split_host_port(buf, &host, &port) || !valid_port(port, false)) {
        return sp_err_set(err,
                          "--controller: '%s'; expected %s:HOST:PORT with a "
                          "port from 1 to 65535",
                          spec, tls ? "ssl" : "tcp");
    }
    for (unsigned i = 0; i < c->n_controllers; i++) {
        if (!strcmp(c->controllers[i].host, host) &&
            !strcmp(c->controllers[i].port, port)) {
            return sp_err_set(err, "--controller: '%s' is given twice", spec);
        }
    }
    if (c->n_controllers == SP_OF_CONTROLLERS_MAX) {
        return sp_err_set(err, "--controller: '%s'; at most %d controllers",
                          spec, SP_OF_CONTROLLERS_MAX);
    }
    a = &c->controllers[c->n_controllers++];
    snprintf(a->host, sizeof a->host, "%.255s", host);
    snprintf(a->port, sizeof a->port, "%.7s", port);
    a->tls = tls;
    return 0;
}

int
sp_of_channel_parse_tls(const char *option, const char *value,
                        struct sp_of_channel_config *c, struct sp_err *err)
{
    struct sp_tls_config *t = &c->tls;
    char *to = !strcmp(option, "private-key")   ? t->key
               : !strcmp(option, "certificate") ? t->cert
                                                : t->ca;
    char name[16];

    if (!strcmp(option, "ssl-protocols")) {
        return sp_tls_parse_protocols(value, &t->protocols, err);
    }
    if (!strcmp(option, "ssl-ciphers")) {
        if (strlen(value) >= sizeof t->ciphers) {
            return sp_err_set(err,
                              "--ssl-ciphers: '%.40s...'; at most %zu "
                              "characters",
                              value, sizeof t->ciphers - 1);
        }
        if (sp_tls_ciphers_check(value, err)) {
            return -1;
        }
        snprintf(t->ciphers, sizeof t->ciphers, "%s", value);
        return 0;
    }
    if (!*value || strlen(value) >= sizeof t->key) {
        return sp_err_set(err, "--%s: '%s'; expected a file's path", option,
                          value);
    }
    /* Checked here, a file that cannot be read or holds no PEM key or
     * certificate, or a key that is not the certificate's, is named with
     * its --config line. */
    snprintf(name, sizeof name, "--%s", option);
    if (sp_tls_file_check(name, value, err)) {
        return -1;
    }
    snprintf(to, sizeof t->key, "%s", value);
    if (to != t->ca && *t->key && *t->cert) {
        return sp_tls_pair_check(t->key, t->cert, err);
    }
    return 0;
}

int
sp_of_channel_parse_fail_mode(const char *mode, struct sp_err *err)
{
    if (strcmp(mode, "secure")) {
        return sp_err_set(err,
                          "--fail-mode: '%s'; only 'secure' (the rules stay "
                          "while no controller is connected)",
                          mode);
    }
    return 0;
}

int
sp_of_channel_parse_probe(const char *ms, struct sp_of_channel_config *c,
                          struct sp_err *err)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(ms, &end, 10);
    if (ms[0] < '0' || ms[0] > '9' || *end || errno ||
        (v && (v < 1000 || v > 3600000))) {
        return sp_err_set(err,
                          "--inactivity-probe: '%s'; expected milliseconds, "
                          "0 (no probe) or 1000 to 3600000",
                          ms);
    }
    c->probe_ms = (unsigned)v;
    return 0;
}

/* ---- sockets ---- */

static int
nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    return flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) ? -1 : 0;
}

/* Binds --openflow's socket. */
static int
open_listener(const struct sp_of_channel_config *c, struct sp_err *err)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags =
                                 AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai;
    int fd, one = 1, rc;

    rc = getaddrinfo(c->listen_ip, c->listen_port, &hints, &ai);
    if (rc) {
        return sp_err_set(err, "--openflow: address '%s': %s", c->listen_ip,
                          gai_strerror(rc));
    }
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16) ||
        nonblocking(fd)) {
        int e = errno;

        if (fd >= 0) {
            close(fd);
        }
        freeaddrinfo(ai);
        return sp_err_set(err, "--openflow: cannot listen on %s port %s: %s",
                          c->listen_ip, c->listen_port, strerror(e));
    }
    freeaddrinfo(ai);
    ch.listen_fd = fd;
    return 0;
}

int
sp_of_channel_open(const struct sp_of_channel_config *c, struct sp_err *err)
{
    bool tls = false;

    ch.n_ctrls = c->n_controllers;
    for (unsigned i = 0; i < ch.n_ctrls; i++) {
        ch.ctrls[i] =
            (struct controller){.fd = -1, .backoff_ms = BACKOFF_MIN_MS};
        memcpy(ch.ctrls[i].host, c->controllers[i].host,
               sizeof ch.ctrls[i].host);
        memcpy(ch.ctrls[i].port, c->controllers[i].port,
               sizeof ch.ctrls[i].port);
        ch.ctrls[i].tls = c->controllers[i].tls;
        tls |= ch.ctrls[i].tls;
    }
    ch.probe_ms = c->probe_ms;
    ch.listen_tls = c->listen && c->listen_tls;
    ch.tls = tls || ch.listen_tls;
    if (ch.tls) {
        if (!*c->tls.key || !*c->tls.cert || !*c->tls.ca) {
            return sp_err_set(err,
                              "%s needs --private-key, --certificate and "
                              "--ca-cert",
                              ch.listen_tls ? "--openflow pssl:"
                                            : "--controller ssl:");
        }
        if (sp_tls_setup(&c->tls, err)) {
            return -1;
        }
    }
    if (c->listen && open_listener(c, err)) {
        sp_tls_teardown();
        return -1;
    }
    return 0;
}

unsigned
sp_of_channel_listen_port(void)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;

    if (ch.listen_fd < 0 ||
        getsockname(ch.listen_fd, (struct sockaddr *)&addr, &len)) {
        return 0;
    }
    return ntohs(addr.ss_family == AF_INET6
                     ? ((struct sockaddr_in6 *)&addr)->sin6_port
                     : ((struct sockaddr_in *)&addr)->sin_port);
}

/* Room for what ctrl_name and conn_name write. */
#define NAME_LEN 300

/* How logs and openflow-show name a --controller: "controller
 * ssl:HOST:PORT", as given. */
static void
ctrl_name(const struct controller *ctrl, char *buf, size_t size)
{
    snprintf(buf, size, "controller %s:%s:%s", ctrl->tls ? "ssl" : "tcp",
             ctrl->host, ctrl->port);
}

/* ...and a connection: its --controller, or the address it came from
 * (read as it is accepted: a peer that reset it has none). */
static void
conn_name(const struct conn *c, char *buf, size_t size)
{
    if (c->ctrl) {
        ctrl_name(c->ctrl, buf, size);
    } else {
        snprintf(buf, size, "connection from %s", c->peer);
    }
}

static void
peer_address(int fd, char *buf, size_t size)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    char host[64] = "?", port[8] = "?";

    if (!getpeername(fd, (struct sockaddr *)&addr, &len)) {
        getnameinfo((struct sockaddr *)&addr, len, host, sizeof host, port,
                    sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
    }
    snprintf(buf, size, "%s port %s", host, port);
}

/* Takes connected socket fd (TLS for an ssl: controller or on pssl:);
 * false, with fd closed, when there is no memory for its TLS. */
static bool
add_conn(int fd, struct controller *ctrl)
{
    struct conn *c;
    struct sp_tls *tls = NULL;
    int one = 1;

    if (ctrl ? ctrl->tls : ch.listen_tls) {
        tls = sp_tls_new(fd, !ctrl);
        if (!tls) {
            close(fd);
            return false;
        }
    }
    c = &ch.conns[ch.n_conns++];
    ch.n_accepted += !ctrl;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    c->tls = tls;
    if (!ctrl) {
        peer_address(fd, c->peer, sizeof c->peer);
    }
    c->ctrl = ctrl;
    c->since_ms = now_ms();
    c->eof = false;
    c->heard_ms = now_ms();
    c->probed_ms = 0;
    sp_of_session_init(&c->s, &ch.sw);
    packet_in_update();
    return true;
}

static void
schedule_reconnect(struct controller *ctrl)
{
    ctrl->next_ms = now_ms() + ctrl->backoff_ms;
    ctrl->backoff_ms = ctrl->backoff_ms * 2 > BACKOFF_MAX_MS
                           ? BACKOFF_MAX_MS
                           : ctrl->backoff_ms * 2;
}

static void
close_conn(unsigned i)
{
    struct conn *c = &ch.conns[i];

    if (c->ctrl) {
        c->ctrl->up = false;
        schedule_reconnect(c->ctrl);
    }
    ch.n_accepted -= !c->ctrl;
    sp_tls_free(c->tls);
    close(c->fd);
    sp_of_session_free(&c->s);
    ch.conns[i] = ch.conns[--ch.n_conns];
    packet_in_update();
    if (!ch.n_conns) {
        /* As OVS drops what a closed connection had not sent: a
         * controller that connects later gets no PACKET_IN queued before
         * it. Once the PMDs are past their look at the flag, what they
         * queued is given back by sending it to no connection. */
        sp_dp_sync(ch.dp);
        packet_in_send();
    }
}

static void *
lookup_main(void *arg)
{
    struct lookup *l = arg;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    int running = LOOKUP_RUNNING;

    l->rc = getaddrinfo(l->host, l->port, &hints, &l->result);
    if (!__atomic_compare_exchange_n(&l->state, &running, LOOKUP_DONE, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (!l->rc) {
            freeaddrinfo(l->result);
        }
        free(l);
    }
    return NULL;
}

/* The channel no longer waits for ctrl's lookup. */
static void
lookup_abandon(struct controller *ctrl)
{
    struct lookup *l = ctrl->lookup;
    int running = LOOKUP_RUNNING;

    ctrl->lookup = NULL;
    if (!l || __atomic_compare_exchange_n(
                  &l->state, &running, LOOKUP_ABANDONED, false,
                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        return; /* the thread frees it */
    }
    if (!l->rc) {
        freeaddrinfo(l->result);
    }
    free(l);
}

static void
lookup_start(struct controller *ctrl)
{
    struct lookup *l = calloc(1, sizeof *l);
    pthread_attr_t attr;
    pthread_t thread;
    int rc = -1;

    if (l && !pthread_attr_init(&attr)) {
        memcpy(l->host, ctrl->host, sizeof l->host);
        memcpy(l->port, ctrl->port, sizeof l->port);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&thread, &attr, lookup_main, l);
        pthread_attr_destroy(&attr);
    }
    if (rc) {
        free(l);
        schedule_reconnect(ctrl);
        return;
    }
    ctrl->lookup = l;
}

static void
connect_to(struct controller *ctrl, const struct addrinfo *ai)
{
    int fd;

    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 ||
        (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS)) {
        if (fd >= 0) {
            close(fd);
        }
        schedule_reconnect(ctrl);
        return;
    }
    ctrl->fd = fd;
}

/* An address connects at once; a name is looked up first
 * (lookup_finish). */
static void
start_connect(struct controller *ctrl)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
    struct addrinfo *ai;
    int rc = getaddrinfo(ctrl->host, ctrl->port, &hints, &ai);

    if (rc == EAI_NONAME) {
        lookup_start(ctrl);
    } else if (rc) {
        schedule_reconnect(ctrl);
    } else {
        connect_to(ctrl, ai);
        freeaddrinfo(ai);
    }
}

/* Connects once ctrl's lookup is done. */
static void
lookup_finish(struct controller *ctrl)
{
    struct lookup *l = ctrl->lookup;

    if (__atomic_load_n(&l->state, __ATOMIC_ACQUIRE) != LOOKUP_DONE) {
        return;
    }
    ctrl->lookup = NULL;
    if (l->rc) {
        char name[NAME_LEN];

        ctrl_name(ctrl, name, sizeof name);
        sp_cli_log(SP_LOG_WARNING, "OpenFlow: %s: %s", name,
                   gai_strerror(l->rc));
        schedule_reconnect(ctrl);
    } else {
        connect_to(ctrl, l->result);
        freeaddrinfo(l->result);
    }
    free(l);
}

static void
finish_connect(struct controller *ctrl)
{
    int e = 0;
    socklen_t len = sizeof e;

    if (getsockopt(ctrl->fd, SOL_SOCKET, SO_ERROR, &e, &len) || e) {
        close(ctrl->fd);
        schedule_reconnect(ctrl);
    } else if (add_conn(ctrl->fd, ctrl)) {
        ctrl->up = true; /* the backoff restarts once it is heard */
    } else {
        schedule_reconnect(ctrl);
    }
    ctrl->fd = -1;
}

/* A failed read or write: a TLS failure (a certificate refused, not TLS
 * at all, a peer gone during the handshake) is logged, as the operator
 * must mend it; 'why' when TLS has no reason of its own. */
static void
conn_failed(const struct conn *c, const char *why)
{
    char name[NAME_LEN];

    if (c->tls && (errno == EPROTO || !sp_tls_established(c->tls))) {
        conn_name(c, name, sizeof name);
        sp_cli_log(SP_LOG_WARNING, "OpenFlow: %s: TLS: %s", name,
                   why ? why : sp_tls_error(c->tls));
    }
}

/* Reads what is there and hands it to the session; false to close. What
 * TLS has decrypted is read on while the session takes input: poll()
 * does not see it. */
static bool
conn_read(struct conn *c)
{
    static uint8_t buf[READ_CHUNK];
    ssize_t n;

    do {
        n = c->tls ? sp_tls_recv(c->tls, buf, sizeof buf)
                   : read(c->fd, buf, sizeof buf);
        if (n == 0 && c->tls && !sp_tls_established(c->tls)) {
            conn_failed(c, "the peer closed during the handshake");
            return false;
        }
        if (n == 0) {
            c->eof = true;
            return true;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                return true;
            }
            conn_failed(c, NULL);
            return false;
        }
        c->heard_ms = now_ms();
        c->probed_ms = 0;
        if (c->ctrl) {
            c->ctrl->backoff_ms = BACKOFF_MIN_MS;
        }
        sp_of_session_input(&c->s, buf, (size_t)n);
    } while (c->tls && sp_tls_pending(c->tls) &&
             sp_of_session_wants_input(&c->s));
    return true;
}

/* As ovs-vswitchd's inactivity probe of its controller: a controller that
 * went silent (its host gone, the network cut) is noticed and connected
 * to again, where TCP alone could wait for many minutes. False when the
 * connection is to close. */
static bool
conn_probe(struct conn *c, uint64_t now)
{
    if (!ch.probe_ms || !c->ctrl || c->eof) {
        return true;
    }
    if (c->probed_ms && now - c->probed_ms >= ch.probe_ms) {
        char name[NAME_LEN];

        conn_name(c, name, sizeof name);
        sp_cli_log(SP_LOG_WARNING,
                   "OpenFlow: %s: no reply to an echo request in %u ms; "
                   "connecting again",
                   name, ch.probe_ms);
        return false;
    }
    if (!c->probed_ms && now - c->heard_ms >= ch.probe_ms &&
        !sp_of_session_echo_request(&c->s)) {
        c->probed_ms = now;
    }
    return true;
}

/* Whether an accepted connection is closed for not having said HELLO
 * (logged). */
static bool
conn_hello_late(const struct conn *c, uint64_t now)
{
    char name[NAME_LEN];

    if (c->ctrl || c->s.hello_received || now - c->since_ms < HELLO_WAIT_MS) {
        return false;
    }
    conn_name(c, name, sizeof name);
    sp_cli_log(SP_LOG_WARNING, "OpenFlow: %s: no HELLO in %u s; closed", name,
               HELLO_WAIT_MS / 1000);
    return true;
}

static bool
conn_write(struct conn *c)
{
    ssize_t n = c->tls
                    ? sp_tls_send(c->tls, c->s.out.data, c->s.out.len)
                    : send(c->fd, c->s.out.data, c->s.out.len, MSG_NOSIGNAL);

    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) {
            return true;
        }
        conn_failed(c, NULL);
        return false;
    }
    sp_of_buf_consume(&c->s.out, (size_t)n);
    /* Room in the output: a pending reply goes on, queued input is
     * handled. */
    sp_of_session_input(&c->s, NULL, 0);
    return true;
}

/* What TLS waited for in its last send: POLLIN while a handshake must
 * read before the session's output can go; 0 over TCP. */
static short
send_want(const struct conn *c)
{
    return c->tls ? sp_tls_send_want(c->tls) : 0;
}

/* Whether TLS holds decrypted bytes the session would take, which poll()
 * cannot see. */
static bool
conn_buffered(const struct conn *c)
{
    return c->tls && !c->eof && sp_tls_pending(c->tls) &&
           sp_of_session_wants_input(&c->s);
}

/* What a connection waits for: its session's wants and, over TLS, what
 * TLS waits for, which may be the other direction (a handshake reads
 * while the session has output). */
static short
conn_events(const struct conn *c)
{
    short ev = 0;

    if ((!c->eof && sp_of_session_wants_input(&c->s)) ||
        send_want(c) == POLLIN) {
        ev |= POLLIN;
    }
    if ((c->s.out.len && send_want(c) != POLLIN) ||
        (c->tls && sp_tls_recv_want(c->tls) == POLLOUT)) {
        ev |= POLLOUT;
    }
    return ev;
}

/* A connection poll() found ready either way, or holding decrypted
 * input: reads first, so that a handshake a write waited for is done,
 * then writes. False to close. */
static bool
conn_serve(struct conn *c, short revents)
{
    if (!(revents & (POLLIN | POLLOUT | POLLHUP)) && !conn_buffered(c)) {
        return true;
    }
    if (!c->eof &&
        (sp_of_session_wants_input(&c->s) || send_want(c) == POLLIN) &&
        !conn_read(c)) {
        return false;
    }
    return !c->s.out.len || conn_write(c);
}

static void *
channel_thread(void *arg)
{
    uint64_t next_expiry = now_ms() + 1000;

    (void)arg;
    pthread_mutex_lock(&ch.lock);
    for (;;) {
        /* A controller is connecting or has a connection, not both. */
        struct pollfd fds[MAX_ACCEPTED + SP_OF_CONTROLLERS_MAX + 3];
        int ready;
        unsigned n = 0, first_conn, listen_at = ~0u;
        unsigned ctrl_at[SP_OF_CONTROLLERS_MAX];
        uint64_t now = now_ms();
        int timeout = 1000;

        fds[n++] = (struct pollfd){ch.wake[0], POLLIN, 0};
        fds[n++] = (struct pollfd){ch.packet_in_fd, POLLIN, 0};
        if (ch.listen_fd >= 0 && ch.n_accepted < MAX_ACCEPTED) {
            listen_at = n;
            fds[n++] = (struct pollfd){ch.listen_fd, POLLIN, 0};
        }
        for (unsigned k = 0; k < ch.n_ctrls; k++) {
            struct controller *ctrl = &ch.ctrls[k];

            if (ctrl->lookup) {
                lookup_finish(ctrl);
            } else if (!ctrl->up && ctrl->fd < 0 && now >= ctrl->next_ms) {
                start_connect(ctrl);
            }
            ctrl_at[k] = ~0u;
            if (ctrl->lookup) {
                /* Looked at again soon: the thread does not wake us. */
                timeout = timeout < LOOKUP_POLL_MS ? timeout : LOOKUP_POLL_MS;
            } else if (ctrl->fd >= 0) {
                ctrl_at[k] = n;
                fds[n++] = (struct pollfd){ctrl->fd, POLLOUT, 0};
            } else if (!ctrl->up) {
                uint64_t wait = ctrl->next_ms > now ? ctrl->next_ms - now : 0;

                timeout = wait < (uint64_t)timeout ? (int)wait : timeout;
            }
        }
        first_conn = n;
        for (unsigned i = 0; i < ch.n_conns; i++) {
            struct conn *c = &ch.conns[i];

            if (conn_buffered(c)) {
                timeout = 0;
            }
            fds[n++] = (struct pollfd){c->fd, conn_events(c), 0};
        }
        pthread_mutex_unlock(&ch.lock);
        ready = poll(fds, n, timeout);
        pthread_mutex_lock(&ch.lock);
        if (ready < 0 && errno != EINTR) {
            break;
        }
        if (fds[0].revents) {
            break; /* stop */
        }
        if (fds[1].revents & POLLIN) {
            packet_in_send();
        }
        for (unsigned i = ch.n_conns; i-- > 0;) {
            struct pollfd *p = &fds[first_conn + i];
            struct conn *c = &ch.conns[i];
            bool keep = true;

            if (p->revents & (POLLERR | POLLNVAL)) {
                /* A TLS peer gone in its handshake is logged, with its
                 * alert where the socket still holds it. */
                if (c->tls && !sp_tls_established(c->tls) && conn_read(c)) {
                    conn_failed(c, "the connection failed during the "
                                   "handshake");
                }
                keep = false;
            }
            keep = keep && conn_serve(c, p->revents);
            keep = keep && conn_probe(c, now_ms()) &&
                   !conn_hello_late(c, now_ms());
            /* An empty output after a write or a read means the session
             * has nothing more to say (conn_write resumes it). */
            if (!keep || ((c->s.closing || c->eof) && !c->s.out.len)) {
                close_conn(i);
            }
        }
        for (unsigned k = 0; k < ch.n_ctrls; k++) {
            if (ctrl_at[k] != ~0u && fds[ctrl_at[k]].revents) {
                finish_connect(&ch.ctrls[k]);
            }
        }
        if (listen_at != ~0u && (fds[listen_at].revents & POLLIN)) {
            int fd = accept4(ch.listen_fd, NULL, NULL,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);

            if (fd >= 0) {
                add_conn(fd, NULL); /* closes fd if it cannot */
            }
        }
        if (now_ms() >= next_expiry) {
            expire_rules();
            poll_links();
            next_expiry = now_ms() + 1000;
        }
    }
    pthread_mutex_unlock(&ch.lock);
    return NULL;
}

int
sp_of_channel_start(struct sp_dp *dp, const struct sp_dp_config *config,
                    struct sp_err *err)
{
    uint8_t mac[6];
    uint64_t dpid = 0;

    if (ch.listen_fd < 0 && !ch.n_ctrls) {
        return 0;
    }
    /* As OVS: the datapath id is an Ethernet address of the switch. */
    sp_io_port_mac(1, mac);
    for (int i = 0; i < 6; i++) {
        dpid = dpid << 8 | mac[i];
    }
    ch.dp = dp;
    ch.config = config;
    ch.sw = (struct sp_of_switch){
        .aux = &ch,
        .datapath_id = dpid,
        .n_ports = config->n_ports,
        .flow_mod = sw_flow_mod,
        .flows = sw_flows,
        .port = sw_port,
        .table = sw_table,
        .frame_match = sw_frame_match,
        .packet_out = sw_packet_out,
        .barrier = sw_barrier,
        .port_mod = sw_port_mod,
        .election = &ch.election,
        .master = sw_master,
    };
    ch.election = (struct sp_of_election){0};
    clock_gettime(CLOCK_MONOTONIC, &ch.started);
    for (unsigned port = 1; port <= config->n_ports; port++) {
        ch.link_down[port] = !sp_io_port_link_up(port);
    }
    if (pipe2(ch.wake, O_CLOEXEC)) {
        return sp_err_set(err, "openflow: pipe: %s", strerror(errno));
    }
    ch.packet_in_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ch.packet_in_fd < 0) {
        close(ch.wake[0]);
        close(ch.wake[1]);
        ch.wake[0] = ch.wake[1] = -1;
        return sp_err_set(err, "openflow: eventfd: %s", strerror(errno));
    }
    sp_dp_controller_set(dp, false, packet_in_notify, NULL);
    if (pthread_create(&ch.thread, NULL, channel_thread, NULL)) {
        close(ch.wake[0]);
        close(ch.wake[1]);
        close(ch.packet_in_fd);
        ch.wake[0] = ch.wake[1] = ch.packet_in_fd = -1;
        return sp_err_set(err, "openflow: cannot start its thread");
    }
    __atomic_store_n(&ch.running, true, __ATOMIC_RELEASE);
    return 0;
}

void
sp_of_channel_stop(void)
{
    if (ch.running) {
        (void)!write(ch.wake[1], "", 1);
        pthread_join(ch.thread, NULL);
        __atomic_store_n(&ch.running, false, __ATOMIC_RELEASE);
        close(ch.wake[0]);
        close(ch.wake[1]);
        ch.wake[0] = ch.wake[1] = -1;
    }
    pthread_mutex_lock(&ch.lock);
    while (ch.n_conns) {
        close_conn(ch.n_conns - 1);
    }
    /* The PMD threads are stopped (run stops them first): none can write
     * to the eventfd any more. */
    if (ch.packet_in_fd >= 0) {
        close(ch.packet_in_fd);
        ch.packet_in_fd = -1;
    }
    for (unsigned k = 0; k < ch.n_ctrls; k++) {
        lookup_abandon(&ch.ctrls[k]);
        if (ch.ctrls[k].fd >= 0) {
            close(ch.ctrls[k].fd);
        }
    }
    ch.n_ctrls = 0;
    if (ch.listen_fd >= 0) {
        close(ch.listen_fd);
        ch.listen_fd = -1;
    }
    sp_tls_teardown();
    ch.tls = false;
    pthread_mutex_unlock(&ch.lock);
    meta_free_all();
}

static const char *
role_name(uint32_t role)
{
    return role == SP_OFPCR_ROLE_MASTER  ? "master"
           : role == SP_OFPCR_ROLE_SLAVE ? "slave"
                                         : "equal";
}

static void
show_conn(FILE *out, const struct conn *c, uint64_t now)
{
    fprintf(out, "connected for %llu s, role %s, errors answered %llu%s",
            (unsigned long long)((now - c->since_ms) / 1000),
            role_name(c->s.role), (unsigned long long)c->s.n_errors,
            c->s.hello_received ? "" : ", no HELLO yet");
    if (c->tls && sp_tls_established(c->tls)) {
        sp_tls_show_session(out, c->tls);
    }
    fputc('\n', out);
}

void
sp_of_channel_show(FILE *out)
{
    uint64_t now = now_ms();

    pthread_mutex_lock(&ch.lock);
    if (!__atomic_load_n(&ch.running, __ATOMIC_ACQUIRE)) {
        fprintf(out, "OpenFlow: off\n");
        pthread_mutex_unlock(&ch.lock);
        return;
    }
    if (ch.listen_fd >= 0) {
        fprintf(out, "listening on port %u%s\n", sp_of_channel_listen_port(),
                ch.listen_tls ? " (TLS)" : "");
    }
    if (ch.tls) {
        sp_tls_show(out);
    }
    for (unsigned k = 0; k < ch.n_ctrls; k++) {
        const struct controller *ctrl = &ch.ctrls[k];
        char name[NAME_LEN];

        ctrl_name(ctrl, name, sizeof name);
        fprintf(out, "%s: ", name);
        if (ctrl->up) {
            for (unsigned i = 0; i < ch.n_conns; i++) {
                if (ch.conns[i].ctrl == ctrl) {
                    show_conn(out, &ch.conns[i], now);
                }
            }
        } else if (ctrl->lookup) {
            fprintf(out, "looking its name up\n");
        } else if (ctrl->fd >= 0) {
            fprintf(out, "connecting\n");
        } else {
            fprintf(
                out, "not connected, next try in %llu s\n",
                (unsigned long long)(ctrl->next_ms > now
                                         ? (ctrl->next_ms - now + 999) / 1000
                                         : 0));
        }
    }
    for (unsigned i = 0; i < ch.n_conns; i++) {
        const struct conn *c = &ch.conns[i];
        char name[NAME_LEN];

        if (c->ctrl) {
            continue;
        }
        conn_name(c, name, sizeof name);
        fprintf(out, "%s: ", name);
        show_conn(out, c, now);
    }
    if (ch.election.have_generation) {
        fprintf(out, "master election: generation %llu\n",
                (unsigned long long)ch.election.generation);
    } else {
        fprintf(out, "master election: no generation yet\n");
    }
    pthread_mutex_unlock(&ch.lock);
}
