/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SVE helpers of the EMC and subtable lookups: a run of 32-bit signatures
 * (a subtable bucket's) compared in one vector under a whilelt predicate
 * that covers exactly them, the matches summed into a bit mask (lane l
 * weighs 1 << l), and the 64-byte key compare in one vector (512 bits and
 * more) or two (256).
 * The kernels test the vector length once per call and instantiate their
 * loop with the compares that fit it; at 128 bits they take NEON's, which
 * need fewer instructions than a loop over short vectors
 * (docs/perf/arm.md).
 */
#ifndef SP_SVE_COMPARE_H
#define SP_SVE_COMPARE_H

#include <arm_sve.h>
#include <stdbool.h>

#include "neon/compare.h"
#include "simdpath/flow_key.h"

/* Bit l set when sigs[l] equals want, for l < count; the vector has at
 * least 'count' 32-bit lanes. */
static inline __attribute__((always_inline)) uint32_t
sp_sve_sig_match(const uint32_t *sigs, uint32_t count, uint32_t want)
{
    svbool_t pg = svwhilelt_b32_u32(0, count);
    svuint32_t weights = svlsl_u32_x(pg, svdup_n_u32(1), svindex_u32(0, 1));

    return (uint32_t)svaddv_u32(svcmpeq_n_u32(pg, svld1_u32(pg, sigs), want),
                                weights);
}

/* Whether two keys are equal in all 64 bytes, with vectors of at least
 * 512 bits. */
static inline __attribute__((always_inline)) bool
sp_sve_keys_equal_512(const struct sp_flow_key *a, const struct sp_flow_key *b)
{
    svbool_t pg = svwhilelt_b8_u32(0, 64);

    return !svptest_any(
        pg, svcmpne_u8(pg, svld1_u8(pg, a->bytes), svld1_u8(pg, b->bytes)));
}

/* The same with vectors of at least 256 bits. */
static inline __attribute__((always_inline)) bool
sp_sve_keys_equal_256(const struct sp_flow_key *a, const struct sp_flow_key *b)
{
    svbool_t pg = svwhilelt_b8_u32(0, 32);
    svbool_t ne = svorr_b_z(
        pg, svcmpne_u8(pg, svld1_u8(pg, a->bytes), svld1_u8(pg, b->bytes)),
        svcmpne_u8(pg, svld1_u8(pg, a->bytes + 32),
                   svld1_u8(pg, b->bytes + 32)));

    return !svptest_any(pg, ne);
}

/* Whether b[k] equals *a[k] for k < 4 and diff (NEON's, the EMC's
 * generations) is zero, with vectors of at least 512 bits: the keys'
 * differences in one predicate, one test. */
static inline __attribute__((always_inline)) bool
sp_sve_keys_equal4_512(const struct sp_flow_key *const a[4],
                       const struct sp_flow_key *b, uint64x2_t diff)
{
    svbool_t pg = svwhilelt_b8_u32(0, 64), ne = svpfalse_b();

#pragma GCC unroll 4
    for (unsigned k = 0; k < 4; k++) {
        ne = svorr_b_z(pg, ne,
                       svcmpne_u8(pg, svld1_u8(pg, a[k]->bytes),
                                  svld1_u8(pg, b[k].bytes)));
    }
    return sp_neon_all_zero(diff) && !svptest_any(pg, ne);
}

#endif /* SP_SVE_COMPARE_H */
