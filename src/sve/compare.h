/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SVE helpers of the EMC and subtable lookups, vector-length agnostic: a
 * run of 32-bit signatures compared under a whilelt predicate (exactly the
 * lanes there are, whatever the vector length) and the matches summed into
 * a bit mask, and a 64-byte key compare in as many vectors as the length
 * needs (one at 512 bits).
 */
#ifndef SP_SVE_COMPARE_H
#define SP_SVE_COMPARE_H

#include <arm_sve.h>
#include <stdbool.h>

#include "simdpath/flow_key.h"

/* Bit l set when sigs[l] equals want, for l < count (count <= 32). */
static inline __attribute__((always_inline)) uint32_t
sp_sve_sig_match(const uint32_t *sigs, uint32_t count, uint32_t want)
{
    /* Lane l weighs 1 << l: the sum over the equal lanes is the mask. */
    svuint32_t weights =
        svlsl_u32_x(svptrue_b32(), svdup_n_u32(1), svindex_u32(0, 1));
    uint32_t step = (uint32_t)svcntw(), mask = 0;

    for (uint32_t l = 0; l < count; l += step) {
        svbool_t pg = svwhilelt_b32_u32(l, count);
        svbool_t eq = svcmpeq_n_u32(pg, svld1_u32(pg, sigs + l), want);

        mask |= svaddv_u32(eq, weights) << l;
    }
    return mask;
}

/* Whether two keys are equal in all 64 bytes. */
static inline __attribute__((always_inline)) bool
sp_sve_keys_equal(const struct sp_flow_key *a, const struct sp_flow_key *b)
{
    uint32_t step = (uint32_t)svcntd();

    for (uint32_t q = 0; q < SP_FLOW_KEY_BLOCKS; q += step) {
        svbool_t pg = svwhilelt_b64_u32(q, SP_FLOW_KEY_BLOCKS);

        if (svptest_any(pg, svcmpne_u64(pg, svld1_u64(pg, &a->blocks[q]),
                                        svld1_u64(pg, &b->blocks[q])))) {
            return false;
        }
    }
    return true;
}

#endif /* SP_SVE_COMPARE_H */
