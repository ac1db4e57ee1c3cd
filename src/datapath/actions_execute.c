/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Executing compiled actions on a group of packets that matched one rule.
 * IPv4 sets go through the ipv4_rewrite kernel and outputs through
 * batch_copy; the other actions stay scalar (docs/architecture.md says
 * why). Every packet ends in a transmit batch or is dropped, counted and
 * handed to ctx->free.
 */
#include <string.h>

#include "common/csum.h"
#include "common/proto.h"
#include "datapath/actions_internal.h"
#include "generic/ipv4_rewrite.h"
#include "common/crc32c_tables.h"
#include "simdpath/dispatch.h"

static const char *const drop_reason_names[] = {
#define SP_DROP_DESCRIPTION(id, name, description) description,
    SP_DROP_REASONS(SP_DROP_DESCRIPTION)
#undef SP_DROP_DESCRIPTION
};

const char *
sp_drop_reason_name(enum sp_drop_reason reason)
{
    return reason < SP_DROP_COUNT ? drop_reason_names[reason] : NULL;
}

/* The packets of a group still to act on. */
struct group {
    uint32_t n;
    struct sp_packet *pkts[SP_BATCH_MAX];
};

static void
count_drop(struct sp_action_ctx *ctx, enum sp_drop_reason reason)
{
    ctx->drops[reason]++;
    ctx->drop_reasons |= UINT32_C(1) << reason;
}

static void
drop_one(struct sp_action_ctx *ctx, struct sp_packet *pkt,
         enum sp_drop_reason reason)
{
    count_drop(ctx, reason);
    ctx->free(ctx, pkt);
}

/* Drops the packets whose bit is set in 'which', keeping the others in
 * order. */
static void
drop_selected(struct sp_action_ctx *ctx, struct group *g, uint32_t which,
              enum sp_drop_reason reason)
{
    uint32_t kept = 0;

    if (!(which & sp_batch_lanes(g->n))) {
        return;
    }
    for (uint32_t i = 0; i < g->n; i++) {
        if (which >> i & 1) {
            drop_one(ctx, g->pkts[i], reason);
        } else {
            g->pkts[kept++] = g->pkts[i];
        }
    }
    g->n = kept;
}

/* Appends the group to tx[port] with one room check for all of it. */
static void
output(struct sp_action_ctx *ctx, uint32_t port, struct group *g)
{
    struct sp_tx_batch *tx;

    if (port >= ctx->n_ports) {
        drop_selected(ctx, g, UINT32_MAX, SP_DROP_NO_PORT);
        return;
    }
    tx = &ctx->tx[port];
    if (tx->count + g->n > SP_BATCH_MAX) {
        ctx->flush(ctx, port);
        if (tx->count + g->n > SP_BATCH_MAX) {
            drop_selected(ctx, g, UINT32_MAX, SP_DROP_TX_FULL);
            return;
        }
    }
    tx->count += SP_KERNEL(batch_copy)((void **)tx->pkts + tx->count,
                                       (void *const *)g->pkts, g->n,
                                       sp_batch_lanes(g->n));
    g->n = 0;
}

/* The packets of g that came in on 'port'. */
static uint32_t
from_port(const struct sp_action_ctx *ctx, const struct group *g,
          uint32_t port)
{
    uint32_t which = 0;

    if (ctx->in_port) {
        return ctx->in_port == port ? sp_batch_lanes(g->n) : 0;
    }
    for (uint32_t i = 0; i < g->n; i++) {
        which |= (uint32_t)(g->pkts[i]->in_port == port) << i;
    }
    return which;
}

/* Puts in 'out', in order, the packets of g in 'send': those also in
 * 'take' themselves, which leave g (the last output of each), copies of
 * the others (an earlier output: later actions must not change what it
 * sent), or a no_buffer drop. */
static void
pick(struct sp_action_ctx *ctx, struct group *g, uint32_t send, uint32_t take,
     struct group *out)
{
    uint32_t kept = 0;

    out->n = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        struct sp_packet *pkt = g->pkts[i], *copy;

        if (take >> i & 1) {
            out->pkts[out->n++] = pkt;
            continue;
        }
        g->pkts[kept++] = pkt;
        if (!(send >> i & 1)) {
            continue;
        }
        copy = ctx->clone(ctx, pkt);
        if (copy) {
            out->pkts[out->n++] = copy;
        } else {
            count_drop(ctx, SP_DROP_NO_BUFFER);
        }
    }
    g->n = kept;
}

/* output:PORT. Not to a packet's own in_port: OpenFlow sends there only
 * with IN_PORT; one whose last output that was is dropped (in_port). */
static void
to_port(struct sp_action_ctx *ctx, uint32_t port, bool last, struct group *g)
{
    uint32_t send = sp_batch_lanes(g->n) & ~from_port(ctx, g, port);
    struct group out;

    if (last && send == sp_batch_lanes(g->n)) {
        output(ctx, port, g);
        return;
    }
    pick(ctx, g, send, last ? send : 0, &out);
    output(ctx, port, &out);
}

/* IN_PORT: each packet back to the port it came in on (one that is not a
 * port, a PACKET_OUT's from the controller, is a no_port drop). */
static void
to_in_port(struct sp_action_ctx *ctx, bool last, struct group *g)
{
    uint32_t done = 0, todo;
    struct group out;

    while ((todo = sp_batch_lanes(g->n) & ~done)) {
        uint32_t port = g->pkts[__builtin_ctz(todo)]->in_port;
        uint32_t which = from_port(ctx, g, port);

        if (!last) {
            done |= which;
        }
        pick(ctx, g, which, last ? which : 0, &out);
        output(ctx, port, &out);
    }
}

/* FLOOD and ALL: every port but a packet's in_port, from 1 (OpenFlow's
 * first). A packet goes itself to the last of its ports (the last port,
 * or the one before for those that came in on it), copies to the others. */
static void
flood(struct sp_action_ctx *ctx, bool last, struct group *g)
{
    uint32_t end = ctx->n_ports - 1;
    struct group out;

    for (uint32_t port = 1; port <= end && g->n; port++) {
        uint32_t send = sp_batch_lanes(g->n) & ~from_port(ctx, g, port);
        uint32_t take = !last             ? 0
                        : port == end     ? send
                        : port + 1 == end ? from_port(ctx, g, end)
                                          : 0;

        pick(ctx, g, send, take, &out);
        output(ctx, port, &out);
    }
}

/* output:CONTROLLER: the packets go to the caller's controller queue;
 * one it does not take is dropped for the reason it gives. */
static void
to_controller(struct sp_action_ctx *ctx, uint16_t max_len, struct group *g)
{
    for (uint32_t i = 0; i < g->n; i++) {
        enum sp_drop_reason why =
            ctx->controller ? ctx->controller(ctx, g->pkts[i], max_len)
                            : SP_DROP_NO_CONTROLLER;

        if (why != SP_DROP_COUNT) {
            drop_one(ctx, g->pkts[i], why);
        }
    }
    g->n = 0;
}

static void
set_masked(uint8_t *field, const uint8_t *value, const uint8_t *mask,
           size_t len)
{
    for (size_t i = 0; i < len; i++) {
        field[i] = (uint8_t)((field[i] & ~mask[i]) | (value[i] & mask[i]));
    }
}

static void
set_eth(struct group *g, const struct sp_eth_set *set)
{
    for (uint32_t i = 0; i < g->n; i++) {
        struct sp_packet *pkt = g->pkts[i];

        if (pkt->len >= SP_ETH_ADDRS_LEN) {
            set_masked(pkt->data, set->dst, set->dst_mask, 6);
            set_masked(pkt->data + 6, set->src, set->src_mask, 6);
        }
    }
}

static bool
vlan_tagged(const struct sp_packet *pkt)
{
    const uint8_t *t;

    if (pkt->len < SP_ETH_HDR_LEN + SP_VLAN_HDR_LEN) {
        return false;
    }
    t = pkt->data + SP_ETH_ADDRS_LEN;
    return sp_load_be16(t) == SP_ETH_TYPE_VLAN ||
           sp_load_be16(t) == SP_ETH_TYPE_QINQ;
}

static void
shift_offsets(struct sp_packet *pkt, int by)
{
    if (pkt->l3_ofs != SP_OFS_NONE) {
        pkt->l3_ofs = (uint16_t)(pkt->l3_ofs + by);
    }
    if (pkt->l4_ofs != SP_OFS_NONE) {
        pkt->l4_ofs = (uint16_t)(pkt->l4_ofs + by);
    }
}

/* A new outer tag after the addresses; it copies the VID and PCP of the
 * tag it goes in front of, as OpenFlow's push_vlan does. Frames too short
 * for an Ethernet header, or whose offsets would overflow, are left as
 * they are. */
static void
push_vlan(struct group *g, uint16_t tpid)
{
    for (uint32_t i = 0; i < g->n; i++) {
        struct sp_packet *pkt = g->pkts[i];
        uint16_t tci = 0;
        uint8_t *d;

        if (pkt->len < SP_ETH_HDR_LEN ||
            (pkt->l3_ofs != SP_OFS_NONE &&
             pkt->l3_ofs >= SP_OFS_NONE - SP_VLAN_HDR_LEN) ||
            (pkt->l4_ofs != SP_OFS_NONE &&
             pkt->l4_ofs >= SP_OFS_NONE - SP_VLAN_HDR_LEN)) {
            continue;
        }
        if (vlan_tagged(pkt)) {
            const uint8_t *old = pkt->data + SP_ETH_HDR_LEN;

            tci = (uint16_t)(sp_load_be16(old) & ~0x1000);
        }
        d = pkt->data -= SP_VLAN_HDR_LEN;
        memmove(d, d + SP_VLAN_HDR_LEN, SP_ETH_ADDRS_LEN);
        sp_store_be16(d + 12, tpid);
        sp_store_be16(d + 14, tci);
        pkt->len += SP_VLAN_HDR_LEN;
        pkt->reframed = true;
        shift_offsets(pkt, SP_VLAN_HDR_LEN);
    }
}

static void
strip_vlan(struct group *g)
{
    for (uint32_t i = 0; i < g->n; i++) {
        struct sp_packet *pkt = g->pkts[i];

        if (!vlan_tagged(pkt) ||
            (pkt->l3_ofs != SP_OFS_NONE &&
             pkt->l3_ofs < SP_ETH_HDR_LEN + SP_VLAN_HDR_LEN) ||
            (pkt->l4_ofs != SP_OFS_NONE &&
             pkt->l4_ofs < SP_ETH_HDR_LEN + SP_VLAN_HDR_LEN)) {
            continue;
        }
        memmove(pkt->data + SP_VLAN_HDR_LEN, pkt->data, SP_ETH_ADDRS_LEN);
        pkt->data += SP_VLAN_HDR_LEN;
        pkt->len -= SP_VLAN_HDR_LEN;
        pkt->reframed = true;
        shift_offsets(pkt, -SP_VLAN_HDR_LEN);
    }
}

static void
set_vlan(struct group *g, uint16_t tci, uint16_t mask)
{
    for (uint32_t i = 0; i < g->n; i++) {
        struct sp_packet *pkt = g->pkts[i];
        uint8_t *t;
        uint16_t old;

        if (!vlan_tagged(pkt)) {
            continue;
        }
        t = pkt->data + SP_ETH_HDR_LEN;
        old = sp_load_be16(t);
        sp_store_be16(t, (uint16_t)((old & ~mask) | (tci & mask)));
    }
}

/* The L4 checksum an IPv6 address change must update: TCP, UDP or
 * ICMPv6 (all cover the pseudo header) with its header in the frame. The
 * protocol is the match's, or the next header when no extension header
 * sits between. */
static uint8_t *
ipv6_l4_csum(const struct sp_packet *pkt, const uint8_t *ip6, uint8_t proto,
             int *udp)
{
    uint32_t l4 = pkt->l4_ofs, room;

    if (l4 == SP_OFS_NONE || l4 >= pkt->len) {
        return NULL;
    }
    if (!proto && l4 == pkt->l3_ofs + (uint32_t)SP_IPV6_HDR_LEN) {
        proto = ip6[6];
    }
    room = pkt->len - l4;
    *udp = proto == SP_IPPROTO_UDP;
    if (proto == SP_IPPROTO_TCP && room >= SP_TCP_HDR_LEN) {
        return pkt->data + l4 + SP_TCP_CSUM_OFS;
    }
    if (*udp && room >= SP_UDP_HDR_LEN) {
        return pkt->data + l4 + SP_UDP_CSUM_OFS;
    }
    if (proto == SP_IPPROTO_ICMPV6 && room >= SP_ICMP_HDR_LEN) {
        return pkt->data + l4 + 2;
    }
    return NULL;
}

/* Sets the masked bytes of a 16-byte address; returns its checksum
 * terms. */
static uint32_t
set_ipv6_addr(uint8_t *addr, const uint8_t *value, const uint8_t *mask)
{
    uint32_t delta = 0;

    for (unsigned w = 0; w < 16; w += 2) {
        uint16_t old = sp_load16(addr + w);

        set_masked(addr + w, value + w, mask + w, 2);
        delta += sp_csum_delta16(old, sp_load16(addr + w));
    }
    return delta;
}

/* IPv6 has no header checksum: only the L4 one changes, for addresses.
 * Returns the packets whose hop limit expired under dec_ttl. */
static uint32_t
set_ipv6(struct group *g, const struct sp_ipv6_set *set)
{
    bool src = sp_any_set(set->src_mask, 16),
         dst = sp_any_set(set->dst_mask, 16);
    uint32_t expired = 0;

    for (uint32_t i = 0; i < g->n; i++) {
        struct sp_packet *pkt = g->pkts[i];
        uint32_t delta = 0;
        uint8_t *ip6, *l4_csum;
        int udp = 0;
        uint8_t tc;

        if (pkt->l3_ofs == SP_OFS_NONE ||
            pkt->len < pkt->l3_ofs + (uint32_t)SP_IPV6_HDR_LEN) {
            continue;
        }
        ip6 = pkt->data + pkt->l3_ofs;
        if (ip6[0] >> 4 != 6) {
            continue;
        }
        if (set->dec_hlimit && ip6[7] <= 1) {
            expired |= UINT32_C(1) << i;
            continue;
        }
        ip6[7] = (uint8_t)(((ip6[7] - set->dec_hlimit) & ~set->hlimit_mask) |
                           (set->hlimit & set->hlimit_mask));
        tc = (uint8_t)(ip6[0] << 4 | ip6[1] >> 4);
        tc = (uint8_t)((tc & ~set->tclass_mask) |
                       (set->tclass & set->tclass_mask));
        ip6[0] = (uint8_t)(0x60 | tc >> 4);
        ip6[1] = (uint8_t)((tc << 4) | (ip6[1] & 0x0f));
        if (src) {
            delta += set_ipv6_addr(ip6 + 8, set->src, set->src_mask);
        }
        if (dst) {
            delta += set_ipv6_addr(ip6 + 24, set->dst, set->dst_mask);
        }
        l4_csum =
            src || dst ? ipv6_l4_csum(pkt, ip6, set->l4_proto, &udp) : NULL;
        sp_ipv4_apply_l4(l4_csum, udp, delta);
    }
    return expired;
}

/* The end of the IP payload by the header's length field, within the
 * frame; 0 if the IP header is not complete. */
static uint32_t
ip_payload_end(const struct sp_packet *pkt)
{
    uint32_t l3 = pkt->l3_ofs, end;
    const uint8_t *ip;

    if (pkt->len < l3 + SP_IPV4_HDR_LEN) {
        return 0;
    }
    ip = pkt->data + l3;
    if (ip[0] >> 4 == 4) {
        end = l3 + (uint32_t)(ip[2] << 8 | ip[3]);
    } else if (ip[0] >> 4 == 6 && pkt->len >= l3 + SP_IPV6_HDR_LEN) {
        end = l3 + SP_IPV6_HDR_LEN + (uint32_t)(ip[4] << 8 | ip[5]);
    } else {
        return 0;
    }
    return end < pkt->len ? end : pkt->len;
}

/* SCTP's checksum: CRC-32C of the whole packet with the checksum field
 * zero, stored least significant byte first (RFC 4960, appendix B). */
static void
sctp_checksum(uint8_t *sctp, uint32_t len)
{
    uint32_t crc = UINT32_MAX;

    memset(sctp + 8, 0, 4);
    for (uint32_t i = 0; i < len; i++) {
        crc = (crc >> 8) ^ sp_crc32c_tables[0][(crc ^ sctp[i]) & 0xff];
    }
    crc = ~crc;
    for (unsigned b = 0; b < 4; b++) {
        sctp[8 + b] = (uint8_t)(crc >> (8 * b));
    }
}

static void
set_tp(struct group *g, const struct sp_tp_set *set)
{
    uint32_t need = set->proto == SP_IPPROTO_TCP   ? 20
                    : set->proto == SP_IPPROTO_UDP ? 8
                                                   : 12;

    for (uint32_t i = 0; i < g->n; i++) {
        struct sp_packet *pkt = g->pkts[i];
        uint16_t old_src, old_dst, src, dst;
        uint32_t delta, end;
        uint8_t *l4;

        if (pkt->l4_ofs == SP_OFS_NONE || pkt->l3_ofs == SP_OFS_NONE ||
            pkt->len < pkt->l4_ofs || pkt->len - pkt->l4_ofs < need) {
            continue;
        }
        l4 = pkt->data + pkt->l4_ofs;
        old_src = sp_load16(l4);
        old_dst = sp_load16(l4 + 2);
        src = (uint16_t)((old_src & ~set->src_mask) |
                         (set->src & set->src_mask));
        dst = (uint16_t)((old_dst & ~set->dst_mask) |
                         (set->dst & set->dst_mask));
        if (set->proto == SP_IPPROTO_SCTP) {
            end = ip_payload_end(pkt);
            if (end >= pkt->l4_ofs + need) {
                sp_store16(l4, src);
                sp_store16(l4 + 2, dst);
                sctp_checksum(l4, end - pkt->l4_ofs);
            }
            continue;
        }
        sp_store16(l4, src);
        sp_store16(l4 + 2, dst);
        delta = (set->src_mask ? sp_csum_delta16(old_src, src) : 0) +
                (set->dst_mask ? sp_csum_delta16(old_dst, dst) : 0);
        sp_ipv4_apply_l4(l4 + (set->proto == SP_IPPROTO_TCP ? SP_TCP_CSUM_OFS
                                                            : SP_UDP_CSUM_OFS),
                         set->proto == SP_IPPROTO_UDP, delta);
    }
}

/* One group of at most SP_BATCH_MAX packets. */
static void
execute_group(const struct sp_actions *actions, struct sp_packet *const *pkts,
              uint32_t n, struct sp_action_ctx *ctx)
{
    /* The n pointers alone: a whole-struct initialiser cleared 264 bytes
     * (rep stos) and the memcpy of a variable size was a rep movs, each
     * dearer than the copy kernel for a burst. */
    struct group g, copies;

    g.n = SP_KERNEL(batch_copy)((void **)g.pkts, (void *const *)pkts, n,
                                sp_batch_lanes(n));
    if (actions->drop || actions->last_output == SP_NO_OUTPUT) {
        drop_selected(ctx, &g, UINT32_MAX,
                      actions->drop ? SP_DROP_ACTION : SP_DROP_NO_OUTPUT);
        return;
    }
    if (actions->headroom > ctx->headroom) {
        drop_selected(ctx, &g, UINT32_MAX, SP_DROP_NO_HEADROOM);
        return;
    }
    for (uint32_t i = 0; i <= actions->last_output && g.n; i++) {
        const struct sp_step *s = &actions->steps[i];
        bool last = i == actions->last_output;

        switch (s->type) {
        case SP_STEP_OUTPUT:
            to_port(ctx, s->port, last, &g);
            break;
        case SP_STEP_IN_PORT:
            to_in_port(ctx, last, &g);
            break;
        case SP_STEP_FLOOD:
            flood(ctx, last, &g);
            break;
        case SP_STEP_CONTROLLER:
            if (last) {
                to_controller(ctx, s->max_len, &g);
            } else {
                pick(ctx, &g, sp_batch_lanes(g.n), 0, &copies);
                to_controller(ctx, s->max_len, &copies);
            }
            break;
        case SP_STEP_IPV4:
            drop_selected(ctx, &g,
                          SP_KERNEL(ipv4_rewrite)(g.pkts, g.n, &s->ipv4),
                          SP_DROP_TTL);
            break;
        case SP_STEP_IPV6:
            drop_selected(ctx, &g, set_ipv6(&g, &s->ipv6), SP_DROP_TTL);
            break;
        case SP_STEP_ETH:
            set_eth(&g, &s->eth);
            break;
        case SP_STEP_PUSH_VLAN:
            push_vlan(&g, s->tpid);
            break;
        case SP_STEP_SET_VLAN:
            set_vlan(&g, s->vlan.tci, s->vlan.mask);
            break;
        case SP_STEP_STRIP_VLAN:
            strip_vlan(&g);
            break;
        case SP_STEP_TP:
            set_tp(&g, &s->tp);
            break;
        }
    }
    /* Left by a last output to their in_port. */
    drop_selected(ctx, &g, UINT32_MAX, SP_DROP_IN_PORT);
}

/* A whole burst (ctx->whole_burst) on a list of one IPv4 step and one
 * output, to a port whose batch is empty, the commonest list after output
 * alone: the rewrite on the caller's pointers and the burst sent from
 * them, none of a group's copies and passes. Returns whether it applied;
 * it does what execute_group would. */
static bool
execute_rewrite_burst(const struct sp_actions *actions,
                      struct sp_packet *const *pkts, uint32_t n,
                      struct sp_action_ctx *ctx)
{
    const struct sp_step *s = actions->steps;
    uint32_t port, expired;
    struct group g;

    if (!ctx->whole_burst || !ctx->send || !ctx->in_port || n > SP_BATCH_MAX ||
        actions->drop || actions->n_steps != 2 || actions->last_output != 1 ||
        s[0].type != SP_STEP_IPV4 || s[1].type != SP_STEP_OUTPUT) {
        return false;
    }
    port = s[1].port; /* the second step read once there is one */
    if (port >= ctx->n_ports || port == ctx->in_port || ctx->tx[port].count) {
        return false;
    }
    expired = SP_KERNEL(ipv4_rewrite)(pkts, n, &s[0].ipv4);
    if (!(expired & sp_batch_lanes(n))) {
        ctx->send(ctx, port, pkts, n);
        return true;
    }
    g.n = SP_KERNEL(batch_copy)((void **)g.pkts, (void *const *)pkts, n,
                                sp_batch_lanes(n));
    drop_selected(ctx, &g, expired, SP_DROP_TTL);
    if (g.n) {
        ctx->send(ctx, port, g.pkts, g.n);
    }
    return true;
}

void
sp_actions_execute(const struct sp_actions *actions,
                   struct sp_packet *const *pkts, uint32_t n,
                   struct sp_action_ctx *ctx)
{
    if (execute_rewrite_burst(actions, pkts, n, ctx)) {
        return;
    }
    for (uint32_t done = 0; done < n; done += SP_BATCH_MAX) {
        uint32_t chunk = n - done < SP_BATCH_MAX ? n - done : SP_BATCH_MAX;

        execute_group(actions, pkts + done, chunk, ctx);
    }
}
