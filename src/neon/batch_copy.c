/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batch copy with NEON: a batch whose pointers are all selected (a whole
 * group to one port) is a plain copy, eight pointers per 64-byte
 * load/store pair; any other selection is the bit scan below, which
 * takes fewer instructions per pointer than scalar's and than moving
 * pairs of pointers, as NEON has no compress (docs/perf/arm.md).
 */
#include <arm_acle.h>
#include <arm_neon.h>

#include "dispatch/isa.h"

/* Appends src[i] for each bit i of 'pending' to dst, in order; returns the
 * count. The selection is bit-reversed once, so that each pointer takes a
 * clz and clearing the top bit (lsr, bics), one instruction fewer than the
 * ctz (rbit, clz) and clearing the lowest (sub, ands) of scalar's
 * sp_copy_selected; the count is how far dst moved, not a popcount. */
static inline __attribute__((always_inline)) uint32_t
copy_selected(void **dst, void *const *src, uint32_t pending)
{
    void **out = dst;

    for (uint32_t rev = __rbit(pending); rev;) {
        uint32_t i = (uint32_t)__builtin_clz(rev);

        *out++ = src[i];
        rev &= ~(UINT32_C(0x80000000) >> i);
    }
    return (uint32_t)(out - dst);
}

uint32_t
sp_neon_batch_copy(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    uint32_t lanes = sp_batch_lanes(n);
    uint32_t pending = select & lanes, i = 0;

    if (pending != lanes || !n) {
        return copy_selected(dst, src, pending);
    }
    for (; i + 8 <= n; i += 8) {
        vst1q_u64_x4((uint64_t *)(dst + i),
                     vld1q_u64_x4((const uint64_t *)(src + i)));
    }
    if (i + 4 <= n) {
        vst1q_u64_x2((uint64_t *)(dst + i),
                     vld1q_u64_x2((const uint64_t *)(src + i)));
        i += 4;
    }
    if (i + 2 <= n) {
        vst1q_u64((uint64_t *)(dst + i),
                  vld1q_u64((const uint64_t *)(src + i)));
        i += 2;
    }
    if (i < n) {
        dst[i] = src[i];
    }
    return n;
}
