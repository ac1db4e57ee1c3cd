/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key hash with the Armv8 CRC32C instructions (the CRC32 hwcap), four keys
 * side by side to hide their latency; the mask is applied with NEON ANDs.
 */
#include <arm_acle.h>
#include <arm_neon.h>

#include "dispatch/isa.h"

#define LANES 4

/* The key's 8 blocks ANDed with the mask's, in 4 NEON registers. */
static inline void
masked_key(const struct sp_flow_key *key, const uint64x2_t m[4],
           uint64_t out[SP_FLOW_KEY_BLOCKS])
{
    for (unsigned q = 0; q < 4; q++) {
        uint64x2_t v = vld1q_u64(&key->blocks[2 * q]);

        vst1q_u64(&out[2 * q], vandq_u64(v, m[q]));
    }
}

void
sp_neon_hash(const struct sp_flow_key *keys, const struct sp_flow_key *mask,
             uint32_t n, uint32_t *hashes)
{
    uint64x2_t m[4];
    uint32_t i = 0;

    for (unsigned q = 0; q < 4; q++) {
        m[q] = mask ? vld1q_u64(&mask->blocks[2 * q]) : vdupq_n_u64(~0ull);
    }
    for (; i + LANES <= n; i += LANES) {
        uint64_t words[LANES][SP_FLOW_KEY_BLOCKS];
        uint32_t crc[LANES] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};

        for (unsigned l = 0; l < LANES; l++) {
            masked_key(&keys[i + l], m, words[l]);
        }
        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
            for (unsigned l = 0; l < LANES; l++) {
                crc[l] = __crc32cd(crc[l], words[l][b]);
            }
        }
        for (unsigned l = 0; l < LANES; l++) {
            hashes[i + l] = ~crc[l];
        }
    }
    for (; i < n; i++) {
        uint64_t words[SP_FLOW_KEY_BLOCKS];
        uint32_t crc = UINT32_MAX;

        masked_key(&keys[i], m, words);
        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
            crc = __crc32cd(crc, words[b]);
        }
        hashes[i] = ~crc;
    }
}
