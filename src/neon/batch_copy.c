/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batch copy with NEON: a 128-bit register holds two pointers, and NEON has
 * no compress, so each pair is either moved whole (both selected), reduced
 * to the one selected pointer, or skipped; runs of four selected pointers
 * move as one 32-byte load/store pair. Sparse selections take the bit scan
 * of src/generic/batch_copy.h: there the pairs cost more instructions than
 * the pointers they move (docs/perf/arm.md).
 */
#include <arm_neon.h>

#include "dispatch/isa.h"
#include "generic/batch_copy.h"

uint32_t
sp_neon_batch_copy(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    uint32_t pending = select & sp_batch_lanes(n);
    uint32_t count = 0;

    if ((uint32_t)__builtin_popcount(pending) * 4 < n * 3) {
        return sp_copy_selected(dst, src, pending);
    }
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t sel4 = (pending >> i) & 0xf;

        if (sel4 == 0xf) {
            vst1q_u64_x2((uint64_t *)(dst + count),
                         vld1q_u64_x2((const uint64_t *)(src + i)));
            count += 4;
            continue;
        }
        for (uint32_t pair = 0; pair < 4; pair += 2) {
            uint32_t sel2 = (sel4 >> pair) & 3;

            if (sel2 == 3) {
                vst1q_u64((uint64_t *)(dst + count),
                          vld1q_u64((const uint64_t *)(src + i + pair)));
                count += 2;
            } else if (sel2) {
                dst[count++] = src[i + pair + (sel2 >> 1)];
            }
        }
    }
    return count;
}
