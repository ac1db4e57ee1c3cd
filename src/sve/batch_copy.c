/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batch copy with SVE: per vector of pointers (2 at 128 bits, 8 at 512),
 * the selection bits as a predicate, compact (which NEON lacks) packs the
 * selected pointers to the front, and a store predicated on their count
 * writes exactly them. The load is predicated on n, so nothing outside
 * src[0..n) and the returned slots of dst is touched, at any vector length.
 */
#include <arm_sve.h>

#include "dispatch/isa.h"

uint32_t
sp_sve_batch_copy(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    const svbool_t all = svptrue_b64();
    /* Lane l's bit of the selection, shifted down to the vector. */
    const svuint64_t bit = svlsl_u64_x(all, svdup_n_u64(1), svindex_u64(0, 1));
    uint32_t pending = select & sp_batch_lanes(n);
    uint32_t step = (uint32_t)svcntd(), count = 0;

    for (uint32_t i = 0; i < n && pending >> i; i += step) {
        svbool_t in = svwhilelt_b64_u32(i, n);
        svbool_t sel = svcmpne_n_u64(
            in, svand_u64_x(in, svdup_n_u64(pending >> i), bit), 0);
        uint32_t got = (uint32_t)svcntp_b64(in, sel);
        svuint64_t v = svld1_u64(in, (const uint64_t *)(src + i));

        svst1_u64(svwhilelt_b64_u32(0, got), (uint64_t *)(dst + count),
                  svcompact_u64(sel, v));
        count += got;
    }
    return count;
}
