/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: OpenFlow 1.3 from a controller. Each input is what a
 * controller sends once the HELLOs are exchanged, handed to a session
 * (sp_of_session_input) in pieces whose sizes the input's first byte
 * picks, the output drained as a channel would. The switch behind it keeps
 * its rules in a datapath of 4 ports as simdpath run's channel does: a
 * rule's match and actions as text, through sp_dp_flow_add. Must hold:
 * no crash, leak or hang; the session answers with whole OpenFlow 1.3
 * messages; every FLOW_MOD the session decodes and every PACKET_OUT's
 * actions are taken by the datapath's parsers (what the decoder accepts
 * is a rule simdpath can run); the datapath holds exactly the rules the
 * switch was given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzlib.h"
#include "simdpath/actions.h"
#include "simdpath/openflow.h"

#define N_PORTS   4
#define MAX_RULES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct sp_dp *dp;
static struct sp_of_flow rules[MAX_RULES];
static size_t n_rules;
static uint32_t port_config[N_PORTS + 1];

static void __attribute__((noreturn))
fail(const char *what, const char *text, const char *why)
{
    fprintf(stderr, "fuzz_openflow: %s: '%s': %s\n", what, text, why);
    abort();
}

/* Adds rule f to the datapath, or deletes it from it, as its text: the
 * datapath must do it, else 'what' went wrong. */
static void
dp_change(int (*change)(struct sp_dp *, const char *, struct sp_err *),
          const struct sp_of_flow *f, const char *what)
{
    char text[SP_OF_RULE_TEXT_MAX];
    struct sp_err err;

    sp_of_rule_text(text, sizeof text, &f->match, f->priority, f->actions);
    if (change(dp, text, &err)) {
        fail(what, text, err.msg);
    }
}

static void
dp_add(const struct sp_of_flow *f)
{
    dp_change(sp_dp_flow_add, f, "a decoded rule the datapath refuses");
}

static void
dp_del(const struct sp_of_flow *f)
{
    dp_change(sp_dp_flow_del, f, "a rule the datapath had lost");
}

static int
sw_flow_mod(void *aux, const struct sp_of_flow_mod *fm,
            struct sp_of_error *err)
{
    bool strict = fm->command == SP_OFPFC_MODIFY_STRICT ||
                  fm->command == SP_OFPFC_DELETE_STRICT;

    (void)aux;
    if (fm->command == SP_OFPFC_ADD) {
        struct sp_of_flow *f = NULL;

        for (size_t i = 0; i < n_rules && !f; i++) {
            if (rules[i].priority == fm->priority &&
                !memcmp(&rules[i].match, &fm->match, sizeof fm->match)) {
                f = &rules[i];
                dp_del(f);
            }
        }
        if (!f) {
            if (n_rules == MAX_RULES) {
                return sp_of_fail(err, SP_OFPET_FLOW_MOD_FAILED,
                                  SP_OFPFMFC_TABLE_FULL, "full");
            }
            f = &rules[n_rules++];
        }
        memset(f, 0, sizeof *f);
        f->match = fm->match;
        f->priority = fm->priority;
        f->cookie = fm->cookie;
        f->packets = f->bytes = SP_OF_NO_COUNT;
        snprintf(f->actions, sizeof f->actions, "%s", fm->actions);
        dp_add(f);
        return 0;
    }
    for (size_t i = 0; i < n_rules;) {
        if (!sp_of_flow_selected(fm, &rules[i], strict)) {
            i++;
            continue;
        }
        dp_del(&rules[i]);
        if (fm->command >= SP_OFPFC_DELETE) {
            rules[i] = rules[--n_rules];
        } else {
            snprintf(rules[i].actions, sizeof rules[i].actions, "%s",
                     fm->actions);
            dp_add(&rules[i++]);
        }
    }
    return 0;
}

static int
sw_flows(void *aux, sp_of_flow_fn *fn, void *ctx)
{
    (void)aux;
    for (size_t i = 0; i < n_rules; i++) {
        fn(ctx, &rules[i]);
    }
    return 0;
}

static void
sw_port(void *aux, unsigned port, struct sp_of_port *out)
{
    (void)aux;
    snprintf(out->name, sizeof out->name, "net_null%u", port - 1);
    out->hw_addr[5] = (uint8_t)port;
    out->rx_packets = out->tx_packets = port;
    out->rx_bytes = out->tx_bytes = SP_OF_NO_COUNT;
    out->rx_dropped = out->tx_dropped = 0;
    out->rx_errors = out->tx_errors = SP_OF_NO_COUNT;
    out->link_down = port == 2;
    out->config = port_config[port];
}

static void
sw_table(void *aux, struct sp_of_table *out)
{
    (void)aux;
    out->active_count = (uint32_t)n_rules;
    out->lookup_count = out->matched_count = 0;
}

static void
sw_frame_match(void *aux, const uint8_t *data, size_t len, uint32_t in_port,
               struct sp_match *m)
{
    (void)aux;
    sp_dp_frame_match(data, (uint32_t)len,
                      in_port == SP_OFPP_CONTROLLER ? SP_DP_PORT_CONTROLLER
                                                    : (uint16_t)in_port,
                      m);
}

static bool
port_exists(uint32_t port, void *aux)
{
    (void)aux;
    return port >= 1 && port <= N_PORTS;
}

/* The actions must parse against the frame's own match; nothing is sent
 * (the datapath's PMD never runs here). */
static int
sw_packet_out(void *aux, const struct sp_of_packet_out *po,
              struct sp_of_error *err)
{
    struct sp_actions *actions;
    struct sp_match m;
    struct sp_err e;

    (void)err;
    if (po->table) {
        return 0;
    }
    sw_frame_match(aux, po->data, po->len, po->in_port, &m);
    if (sp_actions_parse(po->actions, &m, port_exists, NULL, &actions, &e)) {
        fail("PACKET_OUT actions the datapath refuses", po->actions, e.msg);
    }
    sp_actions_free(actions);
    return 0;
}

/* PORT_MOD reaches the switch only for a port it has, with OpenFlow
 * 1.3's config bits alone, the config within the mask; it keeps them
 * (port_config), so that PORT_DESC shows them. */
static int
sw_port_mod(void *aux, const struct sp_of_session *from, uint32_t port,
            uint32_t config, uint32_t mask, struct sp_of_error *err)
{
    (void)aux, (void)from, (void)err;
    if (port < 1 || port > N_PORTS || !mask || (mask & ~SP_OFPPC_ALL) ||
        (config & ~mask)) {
        fail("port_mod", "", "a port or bits the session should refuse");
    }
    port_config[port] = (port_config[port] & ~mask) | config;
    return 0;
}

/* One session: a new master has no other to demote. */
static void
sw_master(void *aux, const struct sp_of_session *s)
{
    (void)aux;
    (void)s;
}

static struct sp_of_election election;

static const struct sp_of_switch sw = {
    .datapath_id = 0x5350,
    .n_ports = N_PORTS,
    .flow_mod = sw_flow_mod,
    .flows = sw_flows,
    .port = sw_port,
    .table = sw_table,
    .frame_match = sw_frame_match,
    .packet_out = sw_packet_out,
    .port_mod = sw_port_mod,
    .election = &election,
    .master = sw_master,
};

/* Takes the whole messages at the front of s->out: each must be an
 * OpenFlow 1.3 message no shorter than its header. */
static void
drain(struct sp_of_session *s)
{
    while (s->out.len) {
        size_t len = sp_fuzz_of_message_len(s->out.data, s->out.len);

        if (!len) {
            fail("output", "", "a message that is not whole OpenFlow 1.3");
        }
        sp_of_buf_consume(&s->out, len);
    }
}

/* The datapath must hold the switch's rules and no others. */
static void
check_rules(void)
{
    if (sp_dp_flow_count(dp) != n_rules) {
        char count[64];

        snprintf(count, sizeof count, "%u in the datapath, %zu given",
                 sp_dp_flow_count(dp), n_rules);
        fail("rules", "", count);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t hello[] = {
        SP_OFP_VERSION, SP_OFPT_HELLO, 0, 8, 0, 0, 0, 1};
    struct sp_of_session s;
    size_t piece;

    if (!dp) {
        dp = sp_fuzz_dp_create(N_PORTS);
    }
    /* 1 to 256 bytes a read, as a socket may deliver them. */
    piece = size ? (size_t)data[0] + 1 : 1;
    data += size != 0;
    size -= size != 0;

    election = (struct sp_of_election){0};
    memset(port_config, 0, sizeof port_config);
    sp_of_session_init(&s, &sw);
    if (sp_of_session_input(&s, hello, sizeof hello)) {
        fail("session", "", "the HELLO was refused");
    }
    drain(&s);
    while (size) {
        size_t n = size < piece ? size : piece;
        int closing = sp_of_session_input(&s, data, n);

        /* Resumed while it makes progress: a reply that waited for room
         * in the output, messages behind it. */
        drain(&s);
        while (!closing) {
            size_t before = s.in.len;

            closing = sp_of_session_input(&s, NULL, 0);
            if (!s.out.len && s.in.len == before) {
                break;
            }
            drain(&s);
        }
        if (closing) {
            break;
        }
        data += n;
        size -= n;
    }
    sp_of_session_free(&s);
    check_rules();
    while (n_rules) {
        dp_del(&rules[--n_rules]);
    }
    check_rules();
    return 0;
}
