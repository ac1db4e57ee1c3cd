/* SPDX-License-Identifier: BSD-3-Clause */
/* NEON helpers of the EMC and subtable lookups: the EMC's signature compare
 * results as a bit mask, and a 64-byte key compare. */
#ifndef SP_NEON_COMPARE_H
#define SP_NEON_COMPARE_H

#include <arm_neon.h>
#include <stdbool.h>

#include "simdpath/flow_key.h"

/* Bit l set when 32-bit lane l of the 8 signatures at sigs equals want:
 * both compares narrowed into one vector of 16-bit lanes, weighed and
 * summed once. */
static inline uint32_t
sp_neon_sig_match(const uint32_t *sigs, uint32_t want)
{
    static const uint16_t weights[8] = {1, 2, 4, 8, 16, 32, 64, 128};
    uint32x4_t w = vdupq_n_u32(want);
    uint16x8_t eq =
        vuzp1q_u16(vreinterpretq_u16_u32(vceqq_u32(vld1q_u32(sigs), w)),
                   vreinterpretq_u16_u32(vceqq_u32(vld1q_u32(sigs + 4), w)));

    return vaddvq_u16(vandq_u16(eq, vld1q_u16(weights)));
}

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
