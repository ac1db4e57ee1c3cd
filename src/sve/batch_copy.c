/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batch copy with SVE: a batch whose pointers are all selected is a plain
 * copy, a vector at a time; otherwise, per vector of pointers (2 at 128
 * bits, 8 at 512), a vector whose pointers are all selected is copied
 * whole, and for the others the
 * selection bits become a predicate, compact (which NEON lacks) packs the
 * selected pointers to the front and a store predicated on their count
 * writes exactly them. Loads are predicated on n, so nothing outside
 * src[0..n) and the returned slots of dst is touched, at any vector length.
 * Sparse selections take the bit scan of src/generic/batch_copy.h, as on
 * the other ISAs.
 */
#include <arm_sve.h>

#include "dispatch/isa.h"
#include "generic/batch_copy.h"

/* The selection of 'total' pointers in 'pending', by vectors. Not inlined,
 * so that the bit scan's path sets none of it up. */
static __attribute__((noinline)) uint32_t
copy_vectors(void **dst, void *const *src, uint32_t n, uint32_t pending,
             uint32_t total)
{
    const svbool_t all = svptrue_b64();
    /* Lane l's bit of the selection, shifted down to the vector. */
    const svuint64_t bit = svlsl_u64_x(all, svdup_n_u64(1), svindex_u64(0, 1));
    uint32_t step = (uint32_t)svcntd(), count = 0;
    /* The selection bits of a whole vector (step <= 32). */
    uint32_t full = sp_batch_lanes(step);

    if (total == n) {
        /* All selected (a whole group to one port): a plain copy, two
         * vectors a round. */
        for (uint64_t i = 0; i < n; i += 2 * step) {
            svbool_t in0 = svwhilelt_b64_u64(i, n);
            svbool_t in1 = svwhilelt_b64_u64(i + step, n);
            svuint64_t v0 =
                svld1_vnum_u64(in0, (const uint64_t *)(src + i), 0);
            svuint64_t v1 =
                svld1_vnum_u64(in1, (const uint64_t *)(src + i), 1);

            svst1_vnum_u64(in0, (uint64_t *)(dst + i), 0, v0);
            svst1_vnum_u64(in1, (uint64_t *)(dst + i), 1, v1);
        }
        return n;
    }
    for (uint32_t i = 0; i < n; i += step) {
        svbool_t in = svwhilelt_b64_u32(i, n);
        uint32_t sel = pending >> i;
        svuint64_t v = svld1_u64(in, (const uint64_t *)(src + i));
        svbool_t picked;
        uint32_t got;

        if ((sel & full) == full && i + step <= n) {
            svst1_u64(all, (uint64_t *)(dst + count), v);
            count += step;
            continue;
        }
        picked = svcmpne_n_u64(in, svand_u64_x(in, svdup_n_u64(sel), bit), 0);
        got = (uint32_t)svcntp_b64(in, picked);
        svst1_u64(svwhilelt_b64_u32(0, got), (uint64_t *)(dst + count),
                  svcompact_u64(picked, v));
        count += got;
    }
    return count;
}

uint32_t
sp_sve_batch_copy(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    uint32_t pending = select & sp_batch_lanes(n);
    uint32_t total = (uint32_t)__builtin_popcount(pending);

    if (total * 4 < n * 3) {
        return sp_copy_selected(dst, src, pending);
    }
    return copy_vectors(dst, src, n, pending, total);
}
