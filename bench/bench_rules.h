/* SPDX-License-Identifier: BSD-3-Clause */
/* The rules and keys the flow table benchmarks look up. */
#ifndef SP_BENCH_RULES_H
#define SP_BENCH_RULES_H

#include <stdint.h>

#include "simdpath/match.h"
#include "simdpath/random.h"

/* Rule i of subtable s (0 to 131, each a mask of its own): IPv4 source
 * unique to i (so a key built from rule i matches it alone), and per
 * subtable a different destination prefix, with or without tp_dst and
 * in_port. */
void sp_bench_match(uint32_t s, uint32_t i, struct sp_random *rng,
                    struct sp_match *m);

/* A key that matches m: its key plus random bits where the mask has
 * none. */
void sp_bench_key_for(const struct sp_match *m, struct sp_random *rng,
                      struct sp_flow_key *key);

#endif /* SP_BENCH_RULES_H */
