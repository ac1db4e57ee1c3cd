/* SPDX-License-Identifier: BSD-3-Clause */
/* NEON helpers of the EMC and subtable lookups: 64-byte key compares. */
#ifndef SP_NEON_COMPARE_H
#define SP_NEON_COMPARE_H

#include <arm_neon.h>
#include <stdbool.h>

#include "simdpath/flow_key.h"

/* Whether all 128 bits are zero. */
static inline bool
sp_neon_all_zero(uint64x2_t v)
{
    return vmaxvq_u32(vreinterpretq_u32_u64(v)) == 0;
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

    return sp_neon_all_zero(diff);
}

/* Whether b[k] equals *a[k] for k < 4 and diff (the EMC's generations)
 * is zero: the keys' differences ORed into diff, one test. In asm because the
 * query keys are consecutive: one load with post-increment each, where GCC 12
 * computes each one's address with an add; and a four-register load
 * takes consecutive registers, which asm names (v24-v31) without the
 * moves GCC adds to get them. */
#define SP_NEON_KEY_DIFF(a)                \
    "ld1 {v24.2d-v27.2d}, [%[b]], #64\n\t" \
    "ld1 {v28.2d-v31.2d}, [%[" a "]]\n\t"  \
    "eor v24.16b, v24.16b, v28.16b\n\t"    \
    "eor v25.16b, v25.16b, v29.16b\n\t"    \
    "eor v26.16b, v26.16b, v30.16b\n\t"    \
    "eor v27.16b, v27.16b, v31.16b\n\t"    \
    "orr v24.16b, v24.16b, v25.16b\n\t"    \
    "orr v26.16b, v26.16b, v27.16b\n\t"    \
    "orr %[d].16b, %[d].16b, v24.16b\n\t"  \
    "orr %[d].16b, %[d].16b, v26.16b\n\t"

static inline bool
sp_neon_keys_equal4(const struct sp_flow_key *const a[4],
                    const struct sp_flow_key *b, uint64x2_t diff)
{
    __asm__(SP_NEON_KEY_DIFF("a0") SP_NEON_KEY_DIFF("a1")
                SP_NEON_KEY_DIFF("a2") SP_NEON_KEY_DIFF("a3")
            : [d] "+w"(diff), [b] "+r"(b)
            : [a0] "r"(a[0]), [a1] "r"(a[1]), [a2] "r"(a[2]), [a3] "r"(a[3]),
              "m"(*(const struct sp_flow_key(*)[4])b), "m"(*a[0]), "m"(*a[1]),
              "m"(*a[2]), "m"(*a[3])
            : "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31");
    return sp_neon_all_zero(diff);
}

#endif /* SP_NEON_COMPARE_H */
