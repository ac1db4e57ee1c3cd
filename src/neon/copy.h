/* SPDX-License-Identifier: BSD-3-Clause */
/* The bit scan of batch copy on Arm, for the NEON and SVE kernels. */
#ifndef SP_NEON_COPY_H
#define SP_NEON_COPY_H

#include <arm_acle.h>
#include <stdint.h>

/* Appends src[i] for each bit i of 'pending' to dst, in order; returns the
 * count. The selection is bit-reversed once, so that each pointer takes a
 * clz and clearing the top bit (lsr, bics), one instruction fewer than the
 * ctz (rbit, clz) and clearing the lowest (sub, ands) of
 * sp_copy_selected; the count is how far dst moved, not a popcount. */
static inline __attribute__((always_inline)) uint32_t
sp_arm_copy_selected(void **dst, void *const *src, uint32_t pending)
{
    void **out = dst;

    for (uint32_t rev = __rbit(pending); rev;) {
        uint32_t i = (uint32_t)__builtin_clz(rev);

        *out++ = src[i];
        rev &= ~(UINT32_C(0x80000000) >> i);
    }
    return (uint32_t)(out - dst);
}

#endif /* SP_NEON_COPY_H */
