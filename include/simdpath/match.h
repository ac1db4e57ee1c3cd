/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A match: which bits of the flow key a rule looks at (mask) and the values
 * they must have (key, always already ANDed with the mask). Shared by the
 * flow tables, the actions (which check what a match guarantees) and the
 * flow-rule text syntax (docs/flow-syntax.md).
 */
#ifndef SP_MATCH_H
#define SP_MATCH_H

#include "simdpath/flow_key.h"

struct sp_match {
    struct sp_flow_key key;
    struct sp_flow_key mask;
};

#endif /* SP_MATCH_H */
