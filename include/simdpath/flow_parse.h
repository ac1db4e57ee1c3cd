/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The match part of a flow rule in ovs-ofctl syntax (docs/flow-syntax.md):
 * "priority=100,in_port=1,tcp,nw_dst=10.0.0.0/8,tp_dst=80,actions=...".
 */
#ifndef SP_FLOW_PARSE_H
#define SP_FLOW_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "simdpath/dispatch.h"
#include "simdpath/match.h"

#define SP_FLOW_DEFAULT_PRIORITY 32768

struct sp_flow_spec {
    struct sp_match match;
    uint32_t priority;
    /* Offset in the text of what follows "actions=", or 0 if absent. */
    size_t actions_ofs;
};

/*
 * Parses the fields of one rule up to "actions=". Fields may be separated
 * by commas and white space. On error returns -1 with err saying what was
 * wrong and what is valid, and err->column the 1-based column of the bad
 * field. The match is checked as the classifier checks it
 * (sp_match_check(): prerequisites, tp_dst needs a protocol...), the
 * column then that of the field the message names.
 */
int sp_flow_parse_match(const char *text, struct sp_flow_spec *spec,
                        struct sp_err *err);

#endif /* SP_FLOW_PARSE_H */
