/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The EMC lookup loop of the NEON and SVE kernels, in the order of the
 * scalar specification (src/scalar/emc.c): per key, the bucket's 8
 * signatures in two 128-bit compares narrowed to one byte per way, then
 * the candidate ways in order: generation, and the 64-byte key by the
 * compare the caller passes (NEON's, or SVE's at 256 bits and more).
 *
 * The way bytes are reversed (0xff at byte 7 - w for way w), so that the
 * leading zeros of the mask, 8w for the first candidate, are way w's
 * offset in bytes in the generation and rule arrays (8-byte entries) and
 * an eighth of it in the key array: no index is computed, and a count of
 * leading zeros finds it. The arrays' pointers are loaded once per call,
 * not per key as in the loop of src/generic/emc.h.
 *
 * Keys go in blocks of SP_NEON_EMC_BLOCK: when every key of a block has
 * a candidate and every first candidate is current and equal, the block
 * is answered with one test of the generations and one of the keys; any
 * other block takes the ways of each key in order, from the signatures
 * already compared (docs/perf/arm.md).
 */
#ifndef SP_NEON_EMC_H
#define SP_NEON_EMC_H

#include <arm_neon.h>
#include <string.h>

#include "generic/classifier.h"
#include "neon/compare.h"
#include "simdpath/emc.h"

static_assert(SP_EMC_WAYS == 8 && sizeof(struct sp_flow_key) == 64,
              "ways of 8-byte generations and rules and 64-byte keys");

#define SP_NEON_EMC_BLOCK 4

/* Whether keys[k] equals *stored[k] for every k of a block and gen_diff
 * (the generations' differences from the current one) is zero. */
typedef bool sp_neon_emc_block_equal_fn(
    const struct sp_flow_key *const stored[SP_NEON_EMC_BLOCK],
    const struct sp_flow_key *keys, uint64x2_t gen_diff);

/* The 8 signatures at sigs against want, each 16 bits (0xffff where
 * equal), way 0 first. */
static inline uint16x8_t
sp_neon_way_halves(const uint32_t *sigs, uint32_t want)
{
    uint32x4x2_t s = vld1q_u32_x2(sigs);
    uint32x4_t w = vdupq_n_u32(want);

    return vuzp1q_u16(vreinterpretq_u16_u32(vceqq_u32(s.val[0], w)),
                      vreinterpretq_u16_u32(vceqq_u32(s.val[1], w)));
}

/* The reversed way bytes of one key (see above). */
static inline uint64_t
sp_neon_way_bytes(const uint32_t *sigs, uint32_t want)
{
    uint8x8_t eq = vshrn_n_u16(sp_neon_way_halves(sigs, want), 8);

    return vget_lane_u64(vreinterpret_u64_u8(vrev64_u8(eq)), 0);
}

/* Those of two keys, narrowed and reversed together: lane 0 a's, lane 1
 * b's. */
static inline uint64x2_t
sp_neon_way_bytes2(const uint32_t *sigs_a, uint32_t want_a,
                   const uint32_t *sigs_b, uint32_t want_b)
{
    return vreinterpretq_u64_u8(vrev64q_u8(
        vuzp1q_u8(vreinterpretq_u8_u16(sp_neon_way_halves(sigs_a, want_a)),
                  vreinterpretq_u8_u16(sp_neon_way_halves(sigs_b, want_b)))));
}

/* Leading zeros, 64 for zero as Armv8's clz gives (C leaves it
 * undefined, so a zero would need a test or a sentinel bit). */
static inline uint64_t
sp_neon_clz64(uint64_t x)
{
    uint64_t n;

    __asm__("clz %0, %1" : "=r"(n) : "r"(x));
    return n;
}

/* The first of the candidate ways of one key that is current and holds
 * it: its rule in *rule and true, or false. first is the bucket's offset
 * in bytes in the 8-byte arrays. */
static inline __attribute__((always_inline)) bool
sp_neon_emc_ways(const char *gens, const char *found, const char *stored,
                 uint64_t gen, size_t first, uint64_t ways,
                 const struct sp_flow_key *key, const struct sp_rule **rule,
                 sp_cls_keys_equal_fn *keys_equal)
{
    while (ways) {
        unsigned bit = (unsigned)__builtin_clzll(ways);
        size_t e = first + bit;
        uint64_t g;

        memcpy(&g, gens + e, sizeof g);
        if (g == gen &&
            keys_equal((const struct sp_flow_key *)(stored + 8 * e), key)) {
            memcpy(rule, found + e, sizeof *rule);
            return true;
        }
        ways &= ~(UINT64_C(0xff) << 56 >> bit);
    }
    return false;
}

static inline __attribute__((always_inline)) uint32_t
sp_neon_emc_probe(const struct sp_emc *emc, uint64_t gen,
                  const struct sp_flow_key *keys, const uint32_t *hashes,
                  uint32_t n, const struct sp_rule **rules,
                  sp_cls_keys_equal_fn *keys_equal,
                  sp_neon_emc_block_equal_fn *block_equal)
{
    enum { K = SP_NEON_EMC_BLOCK };
    const uint32_t *sigs = emc->sigs;
    const char *gens = (const char *)emc->gens;
    const char *found = (const char *)emc->rules;
    const char *stored = (const char *)emc->keys;
    size_t mask = emc->n_buckets - 1;
    const uint32_t *h = hashes;
    const struct sp_flow_key *key = keys;
    const struct sp_rule **out = rules;
    uint32_t hits = 0, block = 0xf;

    static_assert(K == 4, "blocks of 4 keys");
    if (!emc->n_buckets) {
        return 0;
    }
    for (uint32_t b = n / K; b; b--, h += K, key += K, out += K, block <<= K) {
        const struct sp_flow_key *at[K];
        size_t bucket[K], e[K], lead[K];
        uint64x2_t ways[2];

#pragma GCC unroll 4
        for (unsigned k = 0; k < K; k++) {
            bucket[k] = h[k] & mask;
            /* Opaque, so that GCC keeps it rather than computing it
             * again for each use. */
            __asm__("" : "+r"(bucket[k]));
        }
        ways[0] = sp_neon_way_bytes2(&sigs[bucket[0] * SP_EMC_WAYS], h[0],
                                     &sigs[bucket[1] * SP_EMC_WAYS], h[1]);
        ways[1] = sp_neon_way_bytes2(&sigs[bucket[2] * SP_EMC_WAYS], h[2],
                                     &sigs[bucket[3] * SP_EMC_WAYS], h[3]);
#pragma GCC unroll 4
        for (unsigned k = 0; k < K; k++) {
            /* 8w for a first candidate in way w, 64 for none. */
            lead[k] = sp_neon_clz64(vgetq_lane_u64(ways[k / 2], k % 2));
            e[k] = bucket[k] * SP_EMC_WAYS * 8 + lead[k];
            at[k] = (const struct sp_flow_key *)(stored + 8 * e[k]);
        }
        if (!((lead[0] | lead[1] | lead[2] | lead[3]) & 64)) {
            uint64x2_t g[2];

#pragma GCC unroll 2
            for (unsigned k = 0; k < K; k += 2) {
                g[k / 2] = veorq_u64(
                    vcombine_u64(
                        vld1_u64((const uint64_t *)(gens + e[k])),
                        vld1_u64((const uint64_t *)(gens + e[k + 1]))),
                    vdupq_n_u64(gen));
            }
            if (block_equal(at, key, vorrq_u64(g[0], g[1]))) {
#pragma GCC unroll 2
                for (unsigned k = 0; k < K; k += 2) {
                    const struct sp_rule *r[2];

                    memcpy(&r[0], found + e[k], sizeof r[0]);
                    memcpy(&r[1], found + e[k + 1], sizeof r[1]);
                    memcpy(&out[k], r, sizeof r);
                }
                hits |= block;
                continue;
            }
        }
        /* No key of the block has a candidate: all misses. */
        if (sp_neon_all_zero(vorrq_u64(ways[0], ways[1]))) {
            continue;
        }
        {
            uint64_t w[K];

            vst1q_u64(w, ways[0]);
            vst1q_u64(w + 2, ways[1]);
#pragma GCC unroll 1
            for (unsigned k = 0; k < K; k++) {
                if (sp_neon_emc_ways(gens, found, stored, gen,
                                     (h[k] & mask) * SP_EMC_WAYS * 8, w[k],
                                     &key[k], &out[k], keys_equal)) {
                    hits |= (block & -block) << k;
                }
            }
        }
    }
    for (uint32_t i = n / K * K; i < n; i++) {
        size_t bucket = hashes[i] & mask;

        hits |= (uint32_t)sp_neon_emc_ways(
                    gens, found, stored, gen, bucket * SP_EMC_WAYS * 8,
                    sp_neon_way_bytes(&sigs[bucket * SP_EMC_WAYS], hashes[i]),
                    &keys[i], &rules[i], keys_equal)
                << i;
    }
    return hits;
}

#endif /* SP_NEON_EMC_H */
