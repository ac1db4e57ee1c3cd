/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A match: which bits of the flow key a rule looks at (mask) and the values
 * they must have (key, always already ANDed with the mask). Shared by the
 * flow tables, the actions (which check what a match guarantees) and the
 * flow-rule text syntax (docs/flow-syntax.md).
 */
#ifndef SP_MATCH_H
#define SP_MATCH_H

#include <stdint.h>

#include "simdpath/flow_key.h"

struct sp_match {
    struct sp_flow_key key;
    struct sp_flow_key mask;
};

/* Whether key has the values m requires wherever m's mask has bits. */
static inline int
sp_match_covers(const struct sp_match *m, const struct sp_flow_key *key)
{
    uint64_t differ = 0;

    for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
        differ |= (key->blocks[b] & m->mask.blocks[b]) ^ m->key.blocks[b];
    }
    return differ == 0;
}

/* Clears m's key bits outside its mask, as a match's key always is. */
static inline void
sp_match_mask_key(struct sp_match *m)
{
    for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
        m->key.blocks[b] &= m->mask.blocks[b];
    }
}

/* Makes key one that m covers: m's values wherever its mask has bits,
 * the key's own elsewhere. */
static inline void
sp_match_apply(const struct sp_match *m, struct sp_flow_key *key)
{
    for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
        key->blocks[b] =
            (key->blocks[b] & ~m->mask.blocks[b]) | m->key.blocks[b];
    }
}

struct sp_err;

/*
 * Checks that a match can be a rule: no key bit outside the mask, no mask
 * bit outside a field's valid bits (for the dl_type matched), and the
 * OpenFlow prerequisites (L3 fields need an exact dl_type of their
 * protocol, L4 fields an exact nw_proto of theirs). Returns 0, or -1 with
 * a message naming the field (docs/flow-syntax.md names) in err.
 */
int sp_match_validate(const struct sp_match *m, struct sp_err *err);
/* The same, and on error *at is the key byte of the field named. */
int sp_match_check(const struct sp_match *m, unsigned *at, struct sp_err *err);

/*
 * Seeded generators for self-checks, tests and benchmarks (random.h).
 * sp_flow_key_random: a packet-like key (Ethernet, IPv4, IPv6 or ARP, TCP,
 * UDP or ICMP) whose fields take few values, so rules built from such keys
 * overlap. sp_match_from_shape: a valid match whose mask is a function of
 * 'shape' alone (equal shapes, equal masks: one subtable), its values those
 * of 'like' (dl_type and nw_proto set as the shape requires).
 */
struct sp_random;
void sp_flow_key_random(struct sp_random *rng, struct sp_flow_key *key);
void sp_match_from_shape(uint32_t shape, const struct sp_flow_key *like,
                         struct sp_match *out);

#endif /* SP_MATCH_H */
