/* SPDX-License-Identifier: BSD-3-Clause */
/* NEON helpers of the EMC and subtable lookups: the EMC's signature compare
 * results as a bit mask, and a 64-byte key compare. */
#ifndef SP_NEON_COMPARE_H
#define SP_NEON_COMPARE_H

#include <arm_neon.h>
#include <stdbool.h>

#include "simdpath/flow_key.h"

/* Bit l set when 32-bit lane l of the 8 signatures at sigs equals want. */
static inline uint32_t
sp_neon_sig_match(const uint32_t *sigs, uint32_t want)
{
    static const uint32_t weights[8] = {1, 2, 4, 8, 16, 32, 64, 128};
    uint32x4_t w = vdupq_n_u32(want);

    return vaddvq_u32(
               vandq_u32(vceqq_u32(vld1q_u32(sigs), w), vld1q_u32(weights))) +
           vaddvq_u32(vandq_u32(vceqq_u32(vld1q_u32(sigs + 4), w),
                                vld1q_u32(weights + 4)));
}

/* Whether two keys are equal in all 64 bytes. */
static inline bool
sp_neon_keys_equal(const struct sp_flow_key *a, const struct sp_flow_key *b)
{
    uint64x2_t diff = vdupq_n_u64(0);

    for (unsigned q = 0; q < 4; q++) {
        diff = vorrq_u64(diff, veorq_u64(vld1q_u64(&a->blocks[2 * q]),
                                         vld1q_u64(&b->blocks[2 * q])));
    }
    return vmaxvq_u32(vreinterpretq_u32_u64(diff)) == 0;
}

#endif /* SP_NEON_COMPARE_H */
