/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes a flow key (and optionally its mask) in the flow rule syntax of
 * docs/flow-syntax.md, so a printed key can be pasted into a rule.
 */
#ifndef SP_FLOW_FORMAT_H
#define SP_FLOW_FORMAT_H

#include <stddef.h>

#include "simdpath/flow_key.h"

/*
 * Formats 'key' into buf as "SHORTHAND,field=value,...", fields in the
 * documented order. With mask NULL the key is exact: every field its
 * Ethernet type and protocol give it is written, zero or not (as
 * `ovs-ofctl parse-pcap` does). With a mask, exactly the fields the mask
 * touches are written, "value/mask" where the mask is partial. Returns the
 * length of the whole text, as snprintf (truncated if >= size).
 */
int sp_flow_format(const struct sp_flow_key *key,
                   const struct sp_flow_key *mask, char *buf, size_t size);

#endif /* SP_FLOW_FORMAT_H */
