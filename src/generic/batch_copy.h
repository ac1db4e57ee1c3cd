/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bit-scan loop of the batch_copy kernel: the scalar specification
 * (src/scalar/batch_copy.c) is this loop, and the x86 SIMD variants run it
 * for sparse selections, where a bit scan beats a pass over every vector
 * group (Arm's is src/neon/copy.h).
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

#endif /* SP_GENERIC_BATCH_COPY_H */
