/* SPDX-License-Identifier: BSD-3-Clause */
/* NEON helper of the EMC and subtable lookups: a 64-byte key compare. */
#ifndef SP_NEON_COMPARE_H
#define SP_NEON_COMPARE_H

#include <arm_neon.h>
#include <stdbool.h>

#include "simdpath/flow_key.h"

/* Whether two keys are equal in all 64 bytes: each in one 64-byte load,
 * the differences ORed into one test. */
static inline bool
sp_neon_keys_equal(const struct sp_flow_key *a, const struct sp_flow_key *b)
{
    uint64x2x4_t va = vld1q_u64_x4(a->blocks), vb = vld1q_u64_x4(b->blocks);
    uint64x2_t diff = vorrq_u64(vorrq_u64(veorq_u64(va.val[0], vb.val[0]),
                                          veorq_u64(va.val[1], vb.val[1])),
                                vorrq_u64(veorq_u64(va.val[2], vb.val[2]),
                                          veorq_u64(va.val[3], vb.val[3])));

    return vmaxvq_u32(vreinterpretq_u32_u64(diff)) == 0;
}

#endif /* SP_NEON_COMPARE_H */
