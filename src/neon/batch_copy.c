/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batch copy with NEON: a batch whose pointers are all selected (a whole
 * group to one port) is a plain copy, eight pointers per 64-byte
 * load/store pair; any other selection is the bit scan of copy.h, which
 * takes fewer instructions per pointer than scalar's and than moving
 * pairs of pointers, as NEON has no compress (docs/perf/arm.md).
 */
#include <arm_neon.h>

#include "dispatch/isa.h"
#include "neon/copy.h"

uint32_t
sp_neon_batch_copy(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    uint32_t lanes = sp_batch_lanes(n);
    uint32_t pending = select & lanes, i = 0;

    if (pending != lanes || !n) {
        return sp_arm_copy_selected(dst, src, pending);
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
