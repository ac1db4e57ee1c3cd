/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One OpenFlow 1.3 connection's protocol: framing, version negotiation,
 * the switch's answers, and multipart replies that go out in pieces as the
 * output drains, so that the output stays bounded; a dump of many rules is
 * encoded as the switch lists them and holds no more than its reply.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openflow/internal.h"

#define ERROR_DATA_MAX 64 /* bytes of the offending message echoed */
#define MP_HDR_LEN     16 /* multipart header: ofp header + type, flags */
#define MP_REPLY_MAX   SP_OFP_MAX_MSG_LEN

static const char sw_desc[] = "simdpath " SP_OF_SW_VERSION;

/* The reasons of OpenFlow 1.3 for PORT_STATUS (add, delete, modify) and
 * FLOW_REMOVED (idle, hard, delete; a group's delete has no rule here),
 * as ovs-vswitchd's default masks hold them. */
#define ALL_PORT_REASONS    0x7u
#define ALL_REMOVED_REASONS 0x7u

/* One whole message of a FLOW reply, waiting for room in the output. */
struct sp_of_reply_part {
    struct sp_of_reply_part *next;
    struct sp_of_buf msg;
};

static void
pending_free(struct sp_of_session *s)
{
    while (s->pending) {
        struct sp_of_reply_part *p = s->pending;

        s->pending = p->next;
        sp_of_buf_free(&p->msg);
        free(p);
    }
}

static int
put_error(struct sp_of_session *s, uint32_t xid, const struct sp_of_error *e,
          const uint8_t *data, size_t len)
{
    size_t start = s->out.len;

    s->n_errors++;
    if (sp_of_header(&s->out, SP_OFPT_ERROR, xid) ||
        sp_of_put16(&s->out, e->type) || sp_of_put16(&s->out, e->code)) {
        return -1;
    }
    if (e->type == SP_OFPET_HELLO_FAILED) {
        /* Its data is text, as the specification asks. */
        data = (const uint8_t *)e->why;
        len = strlen(e->why);
    } else if (len > ERROR_DATA_MAX) {
        len = ERROR_DATA_MAX;
    }
    if (sp_of_put_bytes(&s->out, data, len)) {
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

static int
reply_empty(struct sp_of_session *s, uint8_t type, uint32_t xid)
{
    size_t start = s->out.len;

    if (sp_of_header(&s->out, type, xid)) {
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

/* Whether the session takes an asynchronous message of this reason by
 * its role and masks; none before HELLO came, when the peer's version
 * is not known to be 1.3. */
static bool
takes_async(const struct sp_of_session *s, const uint32_t masks[2],
            uint8_t reason)
{
    return s->hello_received && reason < 32 &&
           (masks[s->role == SP_OFPCR_ROLE_SLAVE] >> reason & 1);
}

/* A slave changes nothing, as OpenFlow 1.3 says (6.3.5). */
static int
refuse_slave(const struct sp_of_session *s, struct sp_of_error *err)
{
    if (s->role != SP_OFPCR_ROLE_SLAVE) {
        return 0;
    }
    return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_IS_SLAVE,
                      "this connection is a slave (ROLE_REQUEST): it reads "
                      "but changes nothing");
}

void
sp_of_session_init(struct sp_of_session *s, const struct sp_of_switch *sw)
{
    size_t start;

    memset(s, 0, sizeof *s);
    s->sw = sw;
    s->miss_send_len = 128;
    s->role = SP_OFPCR_ROLE_EQUAL;
    s->async = (struct sp_of_async){
        .packet_in = {1u << SP_OFPR_NO_MATCH | 1u << SP_OFPR_ACTION, 0},
        .port_status = {ALL_PORT_REASONS, ALL_PORT_REASONS},
        .flow_removed = {ALL_REMOVED_REASONS, 0},
    };
    /* HELLO with a version bitmap holding 1.3 only. */
    start = s->out.len;
    if (!sp_of_header(&s->out, SP_OFPT_HELLO, 0) && !sp_of_put16(&s->out, 1) &&
        !sp_of_put16(&s->out, 8) &&
        !sp_of_put32(&s->out, 1u << SP_OFP_VERSION)) {
        sp_of_finish(&s->out, start);
        s->hello_sent = true;
    }
}

void
sp_of_session_free(struct sp_of_session *s)
{
    sp_of_buf_free(&s->in);
    sp_of_buf_free(&s->out);
    pending_free(s);
}

bool
sp_of_session_wants_input(const struct sp_of_session *s)
{
    return !s->closing && !s->pending && s->in.len < SP_OF_INPUT_MAX &&
           s->out.len < SP_OF_OUTPUT_HIGH;
}

/* HELLO: 1.3 when the peer's bitmap has it, or without a bitmap when the
 * peer's version is 1.3 or later. */
static int
handle_hello(struct sp_of_session *s, const uint8_t *msg, size_t len,
             struct sp_of_error *err)
{
    bool ok = msg[0] >= SP_OFP_VERSION;

    for (size_t ofs = SP_OFP_HEADER_LEN; ofs + 4 <= len;) {
        uint16_t type = sp_of_get16(msg + ofs);
        uint16_t elen = sp_of_get16(msg + ofs + 2);

        if (elen < 4 || elen > len - ofs) {
            return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                              "hello element of length %u in %zu bytes", elen,
                              len - ofs);
        }
        if (type == 1 && elen >= 8) {
            ok = sp_of_get32(msg + ofs + 4) & (1u << SP_OFP_VERSION);
        }
        ofs += (elen + 7u) / 8 * 8;
    }
    if (!ok) {
        s->closing = true;
        return sp_of_fail(err, SP_OFPET_HELLO_FAILED, SP_OFPHFC_INCOMPATIBLE,
                          "simdpath speaks OpenFlow 1.3 (version 0x04) "
                          "only; the peer offers version 0x%02x",
                          msg[0]);
    }
    s->hello_received = true;
    return 0;
}

static int
fixed_len(size_t len, size_t want, struct sp_of_error *err)
{
    if (len != want) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                          "message of %zu bytes, expected %zu", len, want);
    }
    return 0;
}

static int
reply_features(struct sp_of_session *s, uint32_t xid)
{
    size_t start = s->out.len;

    /* One table, no buffers; FLOW_STATS, TABLE_STATS and PORT_STATS
     * (OFPC_*). */
    if (sp_of_header(&s->out, SP_OFPT_FEATURES_REPLY, xid) ||
        sp_of_put64(&s->out, s->sw->datapath_id) || sp_of_put32(&s->out, 0) ||
        sp_of_put_bytes(&s->out, (uint8_t[]){1, 0, 0, 0}, 4) ||
        sp_of_put32(&s->out, 1 | 2 | 4) || sp_of_put32(&s->out, 0)) {
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

static int
reply_config(struct sp_of_session *s, uint32_t xid)
{
    size_t start = s->out.len;

    if (sp_of_header(&s->out, SP_OFPT_GET_CONFIG_REPLY, xid) ||
        sp_of_put16(&s->out, s->config_flags) ||
        sp_of_put16(&s->out, s->miss_send_len)) {
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

static int
mp_header(struct sp_of_buf *b, uint32_t xid, uint16_t type, uint16_t flags)
{
    return sp_of_header(b, SP_OFPT_MULTIPART_REPLY, xid) ||
           sp_of_put16(b, type) || sp_of_put16(b, flags) ||
           !sp_of_buf_put(b, 4);
}

static int
mp_start(struct sp_of_session *s, uint32_t xid, uint16_t type, uint16_t flags)
{
    return mp_header(&s->out, xid, type, flags);
}

static int
put_str(struct sp_of_buf *b, const char *str, size_t size)
{
    uint8_t *p = sp_of_buf_put(b, size);

    if (!p) {
        return -1;
    }
    memcpy(p, str, strnlen(str, size - 1));
    return 0;
}

static int
reply_desc(struct sp_of_session *s, uint32_t xid)
{
    size_t start = s->out.len;

    if (mp_start(s, xid, SP_OFPMP_DESC, 0) ||
        put_str(&s->out, "simdpath", 256) ||
        put_str(&s->out, "DPDK userspace datapath", 256) ||
        put_str(&s->out, sw_desc, 256) || put_str(&s->out, "None", 32) ||
        put_str(&s->out, "simdpath", 256)) {
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

static int
reply_table(struct sp_of_session *s, uint32_t xid)
{
    struct sp_of_table t;
    size_t start = s->out.len;

    s->sw->table(s->sw->aux, &t);
    if (mp_start(s, xid, SP_OFPMP_TABLE, 0) || !sp_of_buf_put(&s->out, 4) ||
        sp_of_put32(&s->out, t.active_count) ||
        sp_of_put64(&s->out, t.lookup_count) ||
        sp_of_put64(&s->out, t.matched_count)) {
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

static int
put_port_stats(struct sp_of_buf *b, const struct sp_of_port *p)
{
    const uint64_t c[] = {p->rx_packets, p->tx_packets, p->rx_bytes,
                          p->tx_bytes,   p->rx_dropped, p->tx_dropped,
                          p->rx_errors,  p->tx_errors};

    if (sp_of_put32(b, p->port_no) || !sp_of_buf_put(b, 4)) {
        return -1;
    }
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        if (sp_of_put64(b, c[i])) {
            return -1;
        }
    }
    /* rx_frame_err, rx_over_err, rx_crc_err, collisions: not kept. */
    for (int i = 0; i < 4; i++) {
        if (sp_of_put64(b, SP_OF_NO_COUNT)) {
            return -1;
        }
    }
    return sp_of_put32(b, p->duration_sec) || sp_of_put32(b, 0);
}

static int
put_port_desc(struct sp_of_buf *b, const struct sp_of_port *p)
{
    /* State as ovs-vswitchd has it, LIVE when the link is up, else
     * LINK_DOWN; speeds unknown (0). */
    uint32_t state = p->link_down ? SP_OFPPS_LINK_DOWN : SP_OFPPS_LIVE;

    return sp_of_put32(b, p->port_no) || !sp_of_buf_put(b, 4) ||
           sp_of_put_bytes(b, p->hw_addr, 6) || !sp_of_buf_put(b, 2) ||
           put_str(b, p->name, 16) || sp_of_put32(b, p->config) ||
           sp_of_put32(b, state) || !sp_of_buf_put(b, 24);
}

int
sp_of_session_echo_request(struct sp_of_session *s)
{
    return reply_empty(s, SP_OFPT_ECHO_REQUEST, 0);
}

int
sp_of_session_port_status(struct sp_of_session *s, const struct sp_of_port *p,
                          uint8_t reason)
{
    size_t start = s->out.len;

    if (!takes_async(s, s->async.port_status, reason)) {
        return 0;
    }
    if (sp_of_header(&s->out, SP_OFPT_PORT_STATUS, 0) ||
        sp_of_put_bytes(&s->out, &reason, 1) || !sp_of_buf_put(&s->out, 7) ||
        put_port_desc(&s->out, p)) {
        s->out.len = start;
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

#define PORT_MOD_LEN 40

/* PORT_MOD: its port and address are checked as ovs-vswitchd does, the
 * config bits of OpenFlow 1.3 in its mask go to the switch (others are
 * left alone, as ovs-vswitchd does); one that would change the
 * advertised features is refused whole: simdpath sets no link speeds. */
static int
handle_port_mod(struct sp_of_session *s, const uint8_t *msg, size_t len,
                struct sp_of_error *err)
{
    uint32_t port_no, config, mask, advertise;
    struct sp_of_port p;

    if (len != PORT_MOD_LEN) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                          "port mod of %zu bytes, expected %d", len,
                          PORT_MOD_LEN);
    }
    port_no = sp_of_get32(msg + 8);
    config = sp_of_get32(msg + 24) & SP_OFPPC_ALL;
    mask = sp_of_get32(msg + 28) & SP_OFPPC_ALL;
    advertise = sp_of_get32(msg + 32);
    if (port_no < 1 || port_no > s->sw->n_ports) {
        return sp_of_fail(err, SP_OFPET_PORT_MOD_FAILED, SP_OFPPMFC_BAD_PORT,
                          "port %#x: the ports are 1 to %u", port_no,
                          s->sw->n_ports);
    }
    memset(&p, 0, sizeof p);
    s->sw->port(s->sw->aux, port_no, &p);
    if (memcmp(p.hw_addr, msg + 16, 6)) {
        return sp_of_fail(err, SP_OFPET_PORT_MOD_FAILED,
                          SP_OFPPMFC_BAD_HW_ADDR,
                          "hw_addr is not port %u's address", port_no);
    }
    if (advertise) {
        return sp_of_fail(err, SP_OFPET_PORT_MOD_FAILED,
                          SP_OFPPMFC_BAD_ADVERTISE,
                          "advertise %#x: simdpath changes no port's "
                          "advertised features",
                          advertise);
    }
    if (!mask) {
        return 0;
    }
    if (!s->sw->port_mod) {
        return sp_of_fail(err, SP_OFPET_PORT_MOD_FAILED, SP_OFPPMFC_BAD_CONFIG,
                          "port config bits %#x: this switch changes no "
                          "port's config",
                          mask);
    }
    return s->sw->port_mod(s->sw->aux, s, port_no, config & mask, mask, err);
}

static int
reply_ports(struct sp_of_session *s, uint32_t xid, uint16_t type,
            uint32_t which)
{
    size_t start = s->out.len;

    if (mp_start(s, xid, type, 0)) {
        return -1;
    }
    for (unsigned port = 1; port <= s->sw->n_ports; port++) {
        struct sp_of_port p;

        if (which != SP_OFPP_ANY && which != port) {
            continue;
        }
        memset(&p, 0, sizeof p);
        s->sw->port(s->sw->aux, port, &p);
        p.port_no = port;
        if (type == SP_OFPMP_PORT_STATS ? put_port_stats(&s->out, &p)
                                        : put_port_desc(&s->out, &p)) {
            return -1;
        }
    }
    sp_of_finish(&s->out, start);
    return 0;
}

/* One table feature property: its ids are written by put_ids. */
static int
put_prop(struct sp_of_buf *b, uint16_t type, const uint16_t *ids, size_t n,
         int oxm)
{
    size_t start = b->len;

    if (sp_of_put16(b, type) || sp_of_put16(b, 0)) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        /* Instruction and action ids: type and length 4. */
        if (sp_of_put16(b, ids[i]) || sp_of_put16(b, 4)) {
            return -1;
        }
    }
    if (oxm >= 0 && sp_of_put_oxm_ids(b, (enum sp_of_oxm_ids)oxm)) {
        return -1;
    }
    sp_of_set16(b, start + 2, (uint16_t)(b->len - start));
    return sp_of_pad8(b, start);
}

/* Table 0's features: apply-actions (and clear-actions) only, no next
 * tables, the actions and fields codec.c takes. */
static int
reply_table_features(struct sp_of_session *s, uint32_t xid)
{
    static const uint16_t insts[] = {4, 5};
    static const uint16_t acts[] = {0, 17, 18, 23, 24, 25};
    size_t start = s->out.len, entry;

    if (mp_start(s, xid, SP_OFPMP_TABLE_FEATURES, 0)) {
        return -1;
    }
    entry = s->out.len;
    if (sp_of_put16(&s->out, 0) || !sp_of_buf_put(&s->out, 6) ||
        put_str(&s->out, "classifier", 32) || sp_of_put64(&s->out, 0) ||
        sp_of_put64(&s->out, 0) || sp_of_put32(&s->out, 0) ||
        sp_of_put32(&s->out, UINT32_MAX) ||
        put_prop(&s->out, 0, insts, 2, -1) ||
        put_prop(&s->out, 2, NULL, 0, -1) ||
        put_prop(&s->out, 4, NULL, 0, -1) ||
        put_prop(&s->out, 6, acts, 6, -1) ||
        put_prop(&s->out, 8, NULL, 0, SP_OF_OXM_IDS_MATCH) ||
        put_prop(&s->out, 10, NULL, 0, SP_OF_OXM_IDS_WILDCARDS) ||
        put_prop(&s->out, 12, NULL, 0, -1) ||
        put_prop(&s->out, 14, NULL, 0, SP_OF_OXM_IDS_SET_FIELD)) {
        return -1;
    }
    sp_of_set16(&s->out, entry, (uint16_t)(s->out.len - entry));
    sp_of_finish(&s->out, start);
    return 0;
}

/* One ofp_flow_stats entry. */
static int
put_flow_stats(struct sp_of_buf *b, const struct sp_of_flow *f)
{
    size_t start = b->len;

    if (sp_of_put16(b, 0) || sp_of_put_bytes(b, (uint8_t[]){0, 0}, 2) ||
        sp_of_put32(b, f->duration_sec) || sp_of_put32(b, f->duration_nsec) ||
        sp_of_put16(b, f->priority) || sp_of_put16(b, f->idle_timeout) ||
        sp_of_put16(b, f->hard_timeout) || sp_of_put16(b, f->flags) ||
        !sp_of_buf_put(b, 4) || sp_of_put64(b, f->cookie) ||
        sp_of_put64(b, f->packets) || sp_of_put64(b, f->bytes) ||
        sp_of_encode_match(b, &f->match) ||
        sp_of_encode_actions(b, f->actions, &f->match)) {
        b->len = start;
        return -1;
    }
    sp_of_set16(b, start, (uint16_t)(b->len - start));
    return 0;
}

int
sp_of_session_flow_removed(struct sp_of_session *s, const struct sp_of_flow *f,
                           uint8_t reason)
{
    size_t start = s->out.len;

    if (!takes_async(s, s->async.flow_removed, reason)) {
        return 0;
    }
    if (sp_of_header(&s->out, SP_OFPT_FLOW_REMOVED, 0) ||
        sp_of_put64(&s->out, f->cookie) || sp_of_put16(&s->out, f->priority) ||
        sp_of_put_bytes(&s->out, (uint8_t[]){reason, 0}, 2) ||
        sp_of_put32(&s->out, f->duration_sec) ||
        sp_of_put32(&s->out, f->duration_nsec) ||
        sp_of_put16(&s->out, f->idle_timeout) ||
        sp_of_put16(&s->out, f->hard_timeout) ||
        sp_of_put64(&s->out, f->packets) || sp_of_put64(&s->out, f->bytes) ||
        sp_of_encode_match(&s->out, &f->match)) {
        s->out.len = start;
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

/* Moves whole messages of the pending FLOW reply to the output while it
 * has room. */
static int
pump_flows(struct sp_of_session *s)
{
    while (s->pending && s->out.len < SP_OF_OUTPUT_HIGH) {
        struct sp_of_reply_part *p = s->pending;

        if (sp_of_put_bytes(&s->out, p->msg.data, p->msg.len)) {
            pending_free(s);
            return -1;
        }
        s->pending = p->next;
        sp_of_buf_free(&p->msg);
        free(p);
    }
    return 0;
}

/* A FLOW or AGGREGATE reply built as the switch lists its rules. */
struct flow_reply {
    const struct sp_of_flow_mod *filter; /* match, cookie, out_port */
    uint32_t xid;
    uint16_t type;
    bool failed; /* out of memory */
    /* AGGREGATE: the sums. */
    uint32_t count;
    uint64_t packets, bytes;
    /* FLOW: the messages done, the one being filled, an entry. */
    struct sp_of_reply_part *head, **tail;
    struct sp_of_buf msg, entry;
};

/* Ends the message being filled (MORE unless it is the last) and queues
 * it. */
static int
reply_part_done(struct flow_reply *r, bool last)
{
    struct sp_of_reply_part *p = malloc(sizeof *p);

    if (!p) {
        return -1;
    }
    if (last) {
        sp_of_set16(&r->msg, 10, 0);
    }
    sp_of_finish(&r->msg, 0);
    p->next = NULL;
    p->msg = r->msg;
    *r->tail = p;
    r->tail = &p->next;
    memset(&r->msg, 0, sizeof r->msg);
    return 0;
}

static void
reply_flow(void *ctx, const struct sp_of_flow *f)
{
    struct flow_reply *r = ctx;

    if (r->failed || !sp_of_flow_selected(r->filter, f, false)) {
        return;
    }
    if (r->type == SP_OFPMP_AGGREGATE) {
        r->count++;
        /* A count not kept for one rule is not kept for the sum. */
        r->packets =
            r->packets == SP_OF_NO_COUNT || f->packets == SP_OF_NO_COUNT
                ? SP_OF_NO_COUNT
                : r->packets + f->packets;
        r->bytes = r->bytes == SP_OF_NO_COUNT || f->bytes == SP_OF_NO_COUNT
                       ? SP_OF_NO_COUNT
                       : r->bytes + f->bytes;
        return;
    }
    r->entry.len = 0;
    if (put_flow_stats(&r->entry, f) ||
        (r->msg.len + r->entry.len > MP_REPLY_MAX &&
         (reply_part_done(r, false) ||
          mp_header(&r->msg, r->xid, SP_OFPMP_FLOW, SP_OFPMPF_MORE))) ||
        sp_of_put_bytes(&r->msg, r->entry.data, r->entry.len)) {
        r->failed = true;
    }
}

/* FLOW: every message of the reply is encoded as the rules are listed
 * (one snapshot, as the specification asks), and goes out as the output
 * drains; AGGREGATE: only the sums are kept. */
static int
reply_flows(struct sp_of_session *s, uint32_t xid, uint16_t type,
            const struct sp_of_flow_mod *filter, struct sp_of_error *err)
{
    struct flow_reply r = {.filter = filter, .xid = xid, .type = type};
    size_t start = s->out.len;
    int rc = -1;

    r.tail = &r.head;
    if (type == SP_OFPMP_FLOW &&
        mp_header(&r.msg, xid, SP_OFPMP_FLOW, SP_OFPMPF_MORE)) {
        r.failed = true;
    } else if (s->sw->flows(s->sw->aux, reply_flow, &r)) {
        sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_EPERM,
                   "out of memory for a snapshot of the rules");
        r.failed = true;
    }
    if (!r.failed && type == SP_OFPMP_AGGREGATE) {
        if (!mp_start(s, xid, SP_OFPMP_AGGREGATE, 0) &&
            !sp_of_put64(&s->out, r.packets) &&
            !sp_of_put64(&s->out, r.bytes) && !sp_of_put32(&s->out, r.count) &&
            sp_of_buf_put(&s->out, 4)) {
            sp_of_finish(&s->out, start);
            rc = 0;
        }
    } else if (!r.failed && !reply_part_done(&r, true)) {
        rc = 0;
    }
    s->pending = r.head;
    sp_of_buf_free(&r.msg);
    sp_of_buf_free(&r.entry);
    if (rc) {
        pending_free(s);
        return -1;
    }
    return pump_flows(s);
}

#define FLOW_REQ_FIXED 32 /* table_id to cookie_mask */

static int
handle_flow_request(struct sp_of_session *s, const uint8_t *msg, size_t len,
                    uint16_t type, struct sp_of_error *err)
{
    const uint8_t *body = msg + MP_HDR_LEN;
    size_t body_len = len - MP_HDR_LEN, used;
    struct sp_of_flow_mod filter;

    if (body_len < FLOW_REQ_FIXED + 8) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                          "flow stats request body of %zu bytes, at least "
                          "%d",
                          body_len, FLOW_REQ_FIXED + 8);
    }
    memset(&filter, 0, sizeof filter);
    if (body[0] != 0 && body[0] != SP_OFPTT_ALL) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_TABLE_ID,
                          "table %u: simdpath has one table, 0", body[0]);
    }
    filter.out_port = sp_of_get32(body + 4);
    filter.out_group = sp_of_get32(body + 8);
    filter.cookie = sp_of_get64(body + 16);
    filter.cookie_mask = sp_of_get64(body + 24);
    if (sp_of_decode_match(body + FLOW_REQ_FIXED, body_len - FLOW_REQ_FIXED,
                           &filter.match, &used, err)) {
        return -1;
    }
    if (FLOW_REQ_FIXED + used != body_len) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                          "%zu bytes after the match",
                          body_len - FLOW_REQ_FIXED - used);
    }
    return reply_flows(s, sp_of_get32(msg + 4), type, &filter, err);
}

/* A multipart reply of 'zeros' zero bytes: no groups or meters, listed
 * (empty) or as features (none supported, every field 0), as a switch
 * without them answers; controllers ask for these as they connect. */
static int
reply_none(struct sp_of_session *s, uint32_t xid, uint16_t type, size_t zeros)
{
    size_t start = s->out.len;

    if (mp_start(s, xid, type, 0) ||
        (zeros && !sp_of_buf_put(&s->out, zeros))) {
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

#define GROUP_FEATURES_LEN 40
#define METER_FEATURES_LEN 16

/* A request's port: one of the switch's, or all (OFPP_ANY); else the
 * error of type and code. */
static int
port_or_any(const struct sp_of_session *s, uint32_t port, uint16_t type,
            uint16_t code, struct sp_of_error *err)
{
    if (port != SP_OFPP_ANY && (port < 1 || port > s->sw->n_ports)) {
        return sp_of_fail(err, type, code, "port %#x: the ports are 1 to %u",
                          port, s->sw->n_ports);
    }
    return 0;
}

static int
queue_port(const struct sp_of_session *s, uint32_t port,
           struct sp_of_error *err)
{
    return port_or_any(s, port, SP_OFPET_QUEUE_OP_FAILED, SP_OFPQOFC_BAD_PORT,
                       err);
}

/* Queue statistics as ovs-vswitchd gives them for ports without queues:
 * none for all of them, a named queue is OFPQOFC_BAD_QUEUE. */
static int
handle_queue_stats(struct sp_of_session *s, const uint8_t *msg, size_t len,
                   uint32_t xid, struct sp_of_error *err)
{
    uint32_t queue;

    if (fixed_len(len, MP_HDR_LEN + 8, err) ||
        queue_port(s, sp_of_get32(msg + MP_HDR_LEN), err)) {
        return -1;
    }
    queue = sp_of_get32(msg + MP_HDR_LEN + 4);
    if (queue != SP_OFPQ_ALL) {
        return sp_of_fail(err, SP_OFPET_QUEUE_OP_FAILED, SP_OFPQOFC_BAD_QUEUE,
                          "queue %u: simdpath's ports have no queues", queue);
    }
    return reply_none(s, xid, SP_OFPMP_QUEUE, 0);
}

static int
handle_multipart(struct sp_of_session *s, const uint8_t *msg, size_t len,
                 struct sp_of_error *err)
{
    uint32_t xid = sp_of_get32(msg + 4);
    uint16_t type, flags;

    if (len < MP_HDR_LEN) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                          "multipart request of %zu bytes, at least %d", len,
                          MP_HDR_LEN);
    }
    type = sp_of_get16(msg + 8);
    flags = sp_of_get16(msg + 10);
    if (flags & SP_OFPMPF_MORE) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_MULTIPART,
                          "multipart request of type %u in several parts",
                          type);
    }
    switch (type) {
    case SP_OFPMP_DESC:
        return fixed_len(len, MP_HDR_LEN, err) ?: reply_desc(s, xid);
    case SP_OFPMP_TABLE:
        return fixed_len(len, MP_HDR_LEN, err) ?: reply_table(s, xid);
    case SP_OFPMP_TABLE_FEATURES:
        /* A body would change the tables' features. */
        if (len != MP_HDR_LEN) {
            return sp_of_fail(err, SP_OFPET_TABLE_FEATURES_FAILED,
                              SP_OFPTFFC_EPERM,
                              "simdpath's table features cannot be "
                              "changed");
        }
        return reply_table_features(s, xid);
    case SP_OFPMP_PORT_DESC:
        return fixed_len(len, MP_HDR_LEN, err)
                   ?: reply_ports(s, xid, type, SP_OFPP_ANY);
    case SP_OFPMP_PORT_STATS: {
        uint32_t port;

        if (fixed_len(len, MP_HDR_LEN + 8, err)) {
            return -1;
        }
        port = sp_of_get32(msg + MP_HDR_LEN);
        return port_or_any(s, port, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_PORT,
                           err)
                   ?: reply_ports(s, xid, type, port);
    }
    case SP_OFPMP_FLOW:
    case SP_OFPMP_AGGREGATE:
        return handle_flow_request(s, msg, len, type, err);
    case SP_OFPMP_QUEUE:
        return handle_queue_stats(s, msg, len, xid, err);
    case SP_OFPMP_GROUP: /* a group id, or all */
    case SP_OFPMP_METER: /* a meter id, or all */
    case SP_OFPMP_METER_CONFIG:
        return fixed_len(len, MP_HDR_LEN + 8, err)
                   ?: reply_none(s, xid, type, 0);
    case SP_OFPMP_GROUP_DESC:
        return fixed_len(len, MP_HDR_LEN, err) ?: reply_none(s, xid, type, 0);
    case SP_OFPMP_GROUP_FEATURES:
        return fixed_len(len, MP_HDR_LEN, err)
                   ?: reply_none(s, xid, type, GROUP_FEATURES_LEN);
    case SP_OFPMP_METER_FEATURES:
        return fixed_len(len, MP_HDR_LEN, err)
                   ?: reply_none(s, xid, type, METER_FEATURES_LEN);
    default:
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_MULTIPART,
                          "multipart type %u is not one simdpath answers "
                          "(docs/openflow.md)",
                          type);
    }
}

static int
handle_packet_out(struct sp_of_session *s, const uint8_t *msg, size_t len,
                  struct sp_of_error *err)
{
    struct sp_of_packet_out po;

    if (sp_of_decode_packet_out(msg, len, s->sw->n_ports, s->sw->frame_match,
                                s->sw->aux, &po, err)) {
        return -1;
    }
    if (s->sw->packet_out(s->sw->aux, &po, err)) {
        /* Not a reason to close: the frame is lost, as on a wire. */
        if (err->type == 0xffff) {
            sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_EPERM,
                       "the switch could not send the frame");
        }
        return -1;
    }
    return 0;
}

int
sp_of_session_packet_in(struct sp_of_session *s,
                        const struct sp_of_packet_in *pin)
{
    /* Half the output at most: a flood of them never holds the output
     * at its limit, where the peer's messages (a FLOW_MOD to stop the
     * flood) would wait. */
    if (s->closing || !s->hello_received ||
        s->out.len >= SP_OF_OUTPUT_HIGH / 2) {
        return -1;
    }
    if (!takes_async(s, s->async.packet_in, pin->reason)) {
        return 0;
    }
    return sp_of_encode_packet_in(&s->out, pin);
}

#define ROLE_LEN  24
#define ASYNC_LEN 32

/* ROLE_REQUEST as ovs-vswitchd answers it: MASTER and SLAVE carry a
 * generation_id that must not be older than the last one taken (in
 * two's complement distance, as the specification says); EQUAL and
 * NOCHANGE carry none. A new master makes the old one a slave. The reply
 * gives the role now and the last generation_id, all ones before any. */
static int
handle_role_request(struct sp_of_session *s, const uint8_t *msg, size_t len,
                    uint32_t xid, struct sp_of_error *err)
{
    struct sp_of_election *e = s->sw->election;
    uint32_t role;
    uint64_t generation;
    size_t start;

    if (fixed_len(len, ROLE_LEN, err)) {
        return -1;
    }
    role = sp_of_get32(msg + 8);
    generation = sp_of_get64(msg + 16);
    if (role > SP_OFPCR_ROLE_SLAVE) {
        return sp_of_fail(err, SP_OFPET_ROLE_REQUEST_FAILED,
                          SP_OFPRRFC_BAD_ROLE,
                          "role %u: expected 0 (no change), 1 (equal), 2 "
                          "(master) or 3 (slave)",
                          role);
    }
    if (role == SP_OFPCR_ROLE_MASTER || role == SP_OFPCR_ROLE_SLAVE) {
        if (e->have_generation && (int64_t)(generation - e->generation) < 0) {
            return sp_of_fail(err, SP_OFPET_ROLE_REQUEST_FAILED,
                              SP_OFPRRFC_STALE,
                              "generation_id %llu is older than %llu",
                              (unsigned long long)generation,
                              (unsigned long long)e->generation);
        }
        e->have_generation = true;
        e->generation = generation;
    }
    if (role == SP_OFPCR_ROLE_MASTER) {
        s->sw->master(s->sw->aux, s);
    }
    if (role != SP_OFPCR_ROLE_NOCHANGE) {
        s->role = role;
    }
    start = s->out.len;
    if (sp_of_header(&s->out, SP_OFPT_ROLE_REPLY, xid) ||
        sp_of_put32(&s->out, s->role) || sp_of_put32(&s->out, 0) ||
        sp_of_put64(&s->out,
                    e->have_generation ? e->generation : UINT64_MAX)) {
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

/* The masks in their order on the wire (ofp_async_config). */
static uint32_t *
async_mask(struct sp_of_async *a, unsigned i)
{
    uint32_t *masks[3] = {a->packet_in, a->port_status, a->flow_removed};

    return &masks[i / 2][i % 2];
}

/* SET_ASYNC takes any bits, as ovs-vswitchd does: a reason simdpath never
 * sends is never sent. */
static int
handle_set_async(struct sp_of_session *s, const uint8_t *msg, size_t len,
                 struct sp_of_error *err)
{
    if (fixed_len(len, ASYNC_LEN, err)) {
        return -1;
    }
    for (unsigned i = 0; i < 6; i++) {
        *async_mask(&s->async, i) = sp_of_get32(msg + 8 + 4 * i);
    }
    return 0;
}

static int
reply_async(struct sp_of_session *s, uint32_t xid)
{
    size_t start = s->out.len;

    if (sp_of_header(&s->out, SP_OFPT_GET_ASYNC_REPLY, xid)) {
        return -1;
    }
    for (unsigned i = 0; i < 6; i++) {
        if (sp_of_put32(&s->out, *async_mask(&s->async, i))) {
            return -1;
        }
    }
    sp_of_finish(&s->out, start);
    return 0;
}

/* QUEUE_GET_CONFIG: the port's queues, none. */
static int
reply_queue_config(struct sp_of_session *s, const uint8_t *msg, size_t len,
                   uint32_t xid, struct sp_of_error *err)
{
    size_t start = s->out.len;
    uint32_t port;

    if (fixed_len(len, 16, err)) {
        return -1;
    }
    port = sp_of_get32(msg + 8);
    if (queue_port(s, port, err) ||
        sp_of_header(&s->out, SP_OFPT_QUEUE_GET_CONFIG_REPLY, xid) ||
        sp_of_put32(&s->out, port) || !sp_of_buf_put(&s->out, 4)) {
        return -1;
    }
    sp_of_finish(&s->out, start);
    return 0;
}

/* Handles one whole message; -1 with err to answer an error (a failure
 * to append to the output, out of memory, gives -1 with err->type 0xffff
 * and closes). */
static int
handle(struct sp_of_session *s, const uint8_t *msg, size_t len,
       struct sp_of_error *err)
{
    uint8_t type = msg[1];
    uint32_t xid = sp_of_get32(msg + 4);

    if (type == SP_OFPT_HELLO) {
        return handle_hello(s, msg, len, err);
    }
    if (msg[0] != SP_OFP_VERSION) {
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_VERSION,
                          "version 0x%02x; this connection speaks 0x04",
                          msg[0]);
    }
    switch (type) {
    case SP_OFPT_ERROR:
    case SP_OFPT_ECHO_REPLY:
        return 0;
    case SP_OFPT_ECHO_REQUEST: {
        size_t start = s->out.len;

        if (sp_of_header(&s->out, SP_OFPT_ECHO_REPLY, xid) ||
            sp_of_put_bytes(&s->out, msg + SP_OFP_HEADER_LEN,
                            len - SP_OFP_HEADER_LEN)) {
            return -1;
        }
        sp_of_finish(&s->out, start);
        return 0;
    }
    case SP_OFPT_FEATURES_REQUEST:
        return fixed_len(len, 8, err) ?: reply_features(s, xid);
    case SP_OFPT_GET_CONFIG_REQUEST:
        return fixed_len(len, 8, err) ?: reply_config(s, xid);
    case SP_OFPT_SET_CONFIG: {
        uint16_t flags;

        if (fixed_len(len, 12, err)) {
            return -1;
        }
        flags = sp_of_get16(msg + 8);
        /* Only OFPC_FRAG_NORMAL: fragments go through the rules. */
        if (flags & 3) {
            return sp_of_fail(err, SP_OFPET_SWITCH_CONFIG_FAILED,
                              SP_OFPSCFC_BAD_FLAGS,
                              "fragment handling %u: simdpath only passes "
                              "fragments to the rules (normal)",
                              flags & 3);
        }
        s->config_flags = flags;
        s->miss_send_len = sp_of_get16(msg + 10);
        return 0;
    }
    case SP_OFPT_BARRIER_REQUEST:
        /* Every earlier message has been applied already; the switch
         * makes sure the datapath is done with what they removed. */
        if (fixed_len(len, 8, err)) {
            return -1;
        }
        if (s->sw->barrier) {
            s->sw->barrier(s->sw->aux);
        }
        return reply_empty(s, SP_OFPT_BARRIER_REPLY, xid);
    case SP_OFPT_FLOW_MOD: {
        struct sp_of_flow_mod fm;

        if (refuse_slave(s, err) ||
            sp_of_decode_flow_mod(msg, len, s->sw->n_ports, &fm, err)) {
            return -1;
        }
        if (s->sw->flow_mod(s->sw->aux, &fm, err)) {
            /* An error the switch did not name is not a reason to
             * close. */
            if (err->type == 0xffff) {
                sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED, SP_OFPFMFC_UNKNOWN,
                           "the switch refused the rule");
            }
            return -1;
        }
        return 0;
    }
    case SP_OFPT_MULTIPART_REQUEST:
        return handle_multipart(s, msg, len, err);
    case SP_OFPT_PACKET_OUT:
        if (s->sw->packet_out) {
            return refuse_slave(s, err) ?: handle_packet_out(s, msg, len, err);
        }
        break;
    case SP_OFPT_PORT_MOD:
        return refuse_slave(s, err) ?: handle_port_mod(s, msg, len, err);
    case SP_OFPT_QUEUE_GET_CONFIG_REQUEST:
        return reply_queue_config(s, msg, len, xid, err);
    case SP_OFPT_ROLE_REQUEST:
        if (s->sw->election) {
            return handle_role_request(s, msg, len, xid, err);
        }
        break;
    case SP_OFPT_GET_ASYNC_REQUEST:
        return fixed_len(len, 8, err) ?: reply_async(s, xid);
    case SP_OFPT_SET_ASYNC:
        return handle_set_async(s, msg, len, err);
    case SP_OFPT_EXPERIMENTER:
        return sp_of_fail(err, SP_OFPET_BAD_REQUEST,
                          SP_OFPBRC_BAD_EXPERIMENTER,
                          "experimenter messages are not supported");
    default:
        break;
    }
    return sp_of_fail(err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_TYPE,
                      "message type %u is not one simdpath handles "
                      "(docs/openflow.md)",
                      type);
}

int
sp_of_session_input(struct sp_of_session *s, const uint8_t *data, size_t len)
{
    size_t ofs = 0;

    if (s->closing) {
        return -1;
    }
    if (len && sp_of_put_bytes(&s->in, data, len)) {
        s->closing = true;
        return -1;
    }
    if (s->pending && pump_flows(s)) {
        s->closing = true;
        return -1;
    }
    /* Replies can be far larger than requests: handling stops while the
     * output is full, and goes on once the caller drained it. */
    while (!s->pending && s->out.len < SP_OF_OUTPUT_HIGH &&
           s->in.len - ofs >= SP_OFP_HEADER_LEN) {
        const uint8_t *msg = s->in.data + ofs;
        uint16_t mlen = sp_of_get16(msg + 2);
        struct sp_of_error err = {0xffff, 0, ""};
        size_t out_before = s->out.len;

        if (mlen < SP_OFP_HEADER_LEN) {
            /* Nothing after this can be framed. */
            sp_of_fail(&err, SP_OFPET_BAD_REQUEST, SP_OFPBRC_BAD_LEN,
                       "message length %u is below the header's 8", mlen);
            put_error(s, sp_of_get32(msg + 4), &err, msg, SP_OFP_HEADER_LEN);
            s->closing = true;
            break;
        }
        if (s->in.len - ofs < mlen) {
            break;
        }
        if (handle(s, msg, mlen, &err)) {
            if (err.type == 0xffff) {
                s->out.len = out_before;
                s->closing = true;
                break;
            }
            s->out.len = out_before;
            if (put_error(s, sp_of_get32(msg + 4), &err, msg, mlen)) {
                s->closing = true;
                break;
            }
        }
        ofs += mlen;
        if (s->closing) {
            break;
        }
    }
    sp_of_buf_consume(&s->in, ofs);
    return s->closing ? -1 : 0;
}
