/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The EMC lookup loop of the NEON and SVE kernels, in the order of the
 * scalar specification (src/scalar/emc.c): per key, the bucket's 8
 * signatures in two 128-bit compares narrowed to one byte per way (0xff at
 * byte w for way w), then the candidate ways in order: generation, and the
 * 64-byte key by the compare the caller passes (NEON's, or SVE's at 256
 * bits and more). The lowest set bit, 8w, is way w's offset in bytes in
 * the generation and rule arrays (8-byte entries) and an eighth of it in
 * the key array, so no index is computed; the arrays' pointers are loaded
 * once per call, not per key as in the loop of src/generic/emc.h
 * (docs/perf/arm.md).
 */
#ifndef SP_NEON_EMC_H
#define SP_NEON_EMC_H

#include <arm_neon.h>
#include <string.h>

#include "generic/classifier.h"
#include "simdpath/emc.h"

static_assert(SP_EMC_WAYS == 8 && sizeof(struct sp_flow_key) == 64,
              "ways of 8-byte generations and rules and 64-byte keys");

/* Byte w 0xff when signature w of the 8 at sigs equals want. */
static inline uint64_t
sp_neon_way_bytes(const uint32_t *sigs, uint32_t want)
{
    uint32x4x2_t s = vld1q_u32_x2(sigs);
    uint32x4_t w = vdupq_n_u32(want);
    uint16x8_t eq = vuzp1q_u16(vreinterpretq_u16_u32(vceqq_u32(s.val[0], w)),
                               vreinterpretq_u16_u32(vceqq_u32(s.val[1], w)));

    return vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(eq, 8)), 0);
}

static inline __attribute__((always_inline)) uint32_t
sp_neon_emc_probe(const struct sp_emc *emc, uint64_t gen,
                  const struct sp_flow_key *keys, const uint32_t *hashes,
                  uint32_t n, const struct sp_rule **rules,
                  sp_cls_keys_equal_fn *keys_equal)
{
    const uint32_t *sigs = emc->sigs;
    const char *gens = (const char *)emc->gens;
    const char *found = (const char *)emc->rules;
    const char *stored = (const char *)emc->keys;
    size_t mask = emc->n_buckets - 1;
    uint32_t hits = 0;

    if (!emc->n_buckets) {
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        size_t bucket = hashes[i] & mask;
        /* Byte offset of the bucket's first way in the 8-byte arrays. */
        size_t first = bucket * SP_EMC_WAYS * 8;

        for (uint64_t ways =
                 sp_neon_way_bytes(&sigs[bucket * SP_EMC_WAYS], hashes[i]);
             ways;) {
            unsigned bit = (unsigned)__builtin_ctzll(ways);
            size_t e = first + bit;
            uint64_t g;

            memcpy(&g, gens + e, sizeof g);
            if (g == gen &&
                keys_equal((const struct sp_flow_key *)(stored + 8 * e),
                           &keys[i])) {
                memcpy(&rules[i], found + e, sizeof rules[i]);
                hits |= UINT32_C(1) << i;
                break;
            }
            ways &= ~(UINT64_C(0xff) << bit);
        }
    }
    return hits;
}

#endif /* SP_NEON_EMC_H */
