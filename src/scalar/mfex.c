/* SPDX-License-Identifier: BSD-3-Clause */
/* Miniflow extract, the specification: the parser of
 * src/generic/mfex_scalar.h on each packet. */
#include "dispatch/isa.h"
#include "generic/mfex_scalar.h"

uint32_t
sp_scalar_mfex(struct sp_packet *const *pkts, uint32_t n,
               struct sp_flow_key *keys)
{
    return parse_packets(pkts, n, keys);
}
