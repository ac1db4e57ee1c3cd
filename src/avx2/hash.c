/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key hash with the SSE4.2 crc32 instruction, which every AVX2 CPU has.
 * crc32 has a latency of 3 cycles and a throughput of 1, so four keys are
 * hashed side by side to keep it busy.
 */
#include <immintrin.h>
#include <string.h>

#include "isa.h"

#define LANES 4

void
sp_avx2_hash(const struct sp_flow_key *keys, const struct sp_flow_key *mask,
             uint32_t n, uint32_t *hashes)
{
    uint64_t m[SP_FLOW_KEY_BLOCKS];
    uint32_t i = 0;

    if (mask) {
        memcpy(m, mask->blocks, sizeof m);
    } else {
        memset(m, 0xff, sizeof m);
    }
    for (; i + LANES <= n; i += LANES) {
        uint64_t crc[LANES] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};

        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
            for (unsigned l = 0; l < LANES; l++) {
                crc[l] = _mm_crc32_u64(crc[l], keys[i + l].blocks[b] & m[b]);
            }
        }
        for (unsigned l = 0; l < LANES; l++) {
            hashes[i + l] = ~(uint32_t)crc[l];
        }
    }
    for (; i < n; i++) {
        uint64_t crc = UINT32_MAX;

        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
            crc = _mm_crc32_u64(crc, keys[i].blocks[b] & m[b]);
        }
        hashes[i] = ~(uint32_t)crc;
    }
}
