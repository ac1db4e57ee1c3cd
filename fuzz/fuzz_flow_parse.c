/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a flow rule, any bytes up to the first NUL. The rule
 * is added to a datapath of 4 ports as a flow file line or flow-add is:
 * it is taken, or refused with a message and a column inside the text (or
 * just past it). A taken rule is printed back (flow_format and
 * actions_format, as flow-dump does) and the print parsed again: it must
 * be taken and give the same match, priority and actions (the printers
 * promise text that parses back), printing that gives the same text, and
 * flow-del of it deletes the rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/actions_internal.h"
#include "fuzzlib.h"
#include "simdpath/flow_format.h"
#include "simdpath/flow_parse.h"

#define N_PORTS  4
#define TEXT_MAX 16384

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
port_exists(uint32_t port, void *aux)
{
    (void)aux;
    return port >= 1 && port <= N_PORTS;
}

static void __attribute__((noreturn))
fail(const char *what, const char *rule, const char *printed)
{
    fprintf(stderr, "fuzz_flow_parse: %s\n  rule:    %s\n  printed: %s\n",
            what, rule, printed ? printed : "");
    abort();
}

/* The rule as flow-dump writes it. */
static void
print_rule(const struct sp_flow_spec *spec, const struct sp_actions *actions,
           char *buf, size_t size)
{
    char match[TEXT_MAX / 2], acts[TEXT_MAX / 2];
    int m = sp_flow_format(&spec->match.key, &spec->match.mask, match,
                           sizeof match);
    int a = sp_actions_format(actions, acts, sizeof acts);

    if (m < 0 || (size_t)m >= sizeof match || a < 0 ||
        (size_t)a >= sizeof acts) {
        fail("printed rule does not fit", match, acts);
    }
    snprintf(buf, size, "priority=%u%s%s,actions=%s", spec->priority,
             match[0] ? "," : "", match, acts);
}

/* Parses a whole rule as sp_dp_flow_add does, without the table. */
static struct sp_actions *
parse_rule(const char *text, struct sp_flow_spec *spec)
{
    struct sp_actions *actions;
    struct sp_err err;

    if (sp_flow_parse_match(text, spec, &err) || !spec->actions_ofs ||
        sp_match_validate(&spec->match, &err) ||
        sp_actions_parse(text + spec->actions_ofs, &spec->match, port_exists,
                         NULL, &actions, &err)) {
        return NULL;
    }
    return actions;
}

static bool
same_actions(const struct sp_actions *a, const struct sp_actions *b)
{
    return a->n_actions == b->n_actions && a->n_steps == b->n_steps &&
           a->last_output == b->last_output && a->headroom == b->headroom &&
           a->drop == b->drop &&
           !memcmp(a->actions, b->actions,
                   a->n_actions * sizeof *a->actions) &&
           !memcmp(a->steps, b->steps, a->n_steps * sizeof *a->steps);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char text[TEXT_MAX], printed[TEXT_MAX], again[TEXT_MAX];
    struct sp_flow_spec spec, spec2;
    struct sp_actions *actions, *actions2;
    struct sp_dp *dp;
    struct sp_err err;
    size_t len;

    if (size >= TEXT_MAX) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    len = strlen(text);

    dp = sp_fuzz_dp_create(N_PORTS);
    memset(err.msg, 'x', sizeof err.msg);
    if (sp_dp_flow_add(dp, text, &err)) {
        if (!memchr(err.msg, '\0', sizeof err.msg) || !err.msg[0]) {
            fail("refused without a message", text, NULL);
        }
        if (err.column < 1 || err.column > len + 1) {
            fprintf(stderr, "column %u of %zu: %s\n", err.column, len,
                    err.msg);
            fail("refused with a column outside the text", text, NULL);
        }
        sp_dp_destroy(dp);
        /* Whatever the datapath refuses, the parsers refuse. */
        if ((actions = parse_rule(text, &spec))) {
            fail("datapath refused a rule the parsers take", text, NULL);
        }
        return 0;
    }
    if (sp_dp_flow_count(dp) != 1) {
        fail("taken, but not one rule in the table", text, NULL);
    }

    actions = parse_rule(text, &spec);
    if (!actions) {
        fail("datapath took a rule the parsers refuse", text, NULL);
    }
    print_rule(&spec, actions, printed, sizeof printed);
    actions2 = parse_rule(printed, &spec2);
    if (!actions2) {
        fail("printed rule does not parse", text, printed);
    }
    if (spec2.priority != spec.priority ||
        memcmp(&spec2.match, &spec.match, sizeof spec.match)) {
        fail("printed rule parses to another match", text, printed);
    }
    if (!same_actions(actions, actions2)) {
        fail("printed rule parses to other actions", text, printed);
    }
    print_rule(&spec2, actions2, again, sizeof again);
    if (strcmp(printed, again)) {
        fail("printing the reparsed rule gives another text", printed, again);
    }
    /* flow-del takes the printed rule, actions and all. */
    if (sp_dp_flow_del(dp, printed, &err) || sp_dp_flow_count(dp) != 0) {
        fail("flow-del of the printed rule does not delete it", text, printed);
    }
    sp_dp_destroy(dp);
    sp_actions_free(actions);
    sp_actions_free(actions2);
    return 0;
}
