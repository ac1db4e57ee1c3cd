/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bit-scan loops of the batch_copy kernel: the scalar specification
 * (src/scalar/batch_copy.c) is the first, and the x86 SIMD variants run
 * the second, two bits per turn, for sparse selections, where a bit scan
 * beats a pass over every vector group (Arm's is in src/neon/batch_copy.c).
 * Caller in the datapath: output() in src/datapath/actions_execute.c,
 * through SP_KERNEL(batch_copy), appends a group of packets to a port's
 * transmit batch (sp_actions_execute, from process_burst).
 */
#ifndef SP_GENERIC_BATCH_COPY_H
#define SP_GENERIC_BATCH_COPY_H

#include <stdint.h>

/* Appends src[i] for each bit i of 'pending' to dst; returns the count. */
static inline uint32_t
sp_copy_selected(void **dst, void *const *src, uint32_t pending)
{
    uint32_t count = 0;

    while (pending) {
        dst[count++] = src[__builtin_ctz(pending)];
        pending &= pending - 1;
    }
    return count;
}

/* The same for the x86 SIMD variants' sparse selections, with the count
 * 'total' (the popcount of 'pending') known: two pointers per iteration,
 * half the loop's branches. */
static inline uint32_t
sp_copy_selected_pairs(void **dst, void *const *src, uint32_t pending,
                       uint32_t total)
{
    uint32_t j = 0;

    /* Twice, not -funroll-loops' four times: its entry into the unrolled
     * body cost a 4-pointer call more than scalar's whole loop
     * (docs/perf/kernels.md, batch_copy). */
#pragma GCC unroll 2
    for (; j + 2 <= total; j += 2) {
        uint32_t a = (uint32_t)__builtin_ctz(pending);
        uint32_t b;

        pending &= pending - 1;
        b = (uint32_t)__builtin_ctz(pending);
        pending &= pending - 1;
        dst[j] = src[a];
        dst[j + 1] = src[b];
    }
    if (j < total) {
        dst[j] = src[__builtin_ctz(pending)];
    }
    return total;
}

#endif /* SP_GENERIC_BATCH_COPY_H */
