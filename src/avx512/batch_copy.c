/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batch copy, eight pointers per 512-bit register: a masked load of the
 * selected lanes, a compress into the low lanes and a masked store of
 * exactly those. Compressing in a register and storing with a mask avoids
 * the memory form of vpcompressq, which is microcoded on AMD Zen 4.
 */
#include <immintrin.h>

#include "dispatch/isa.h"
#include "generic/batch_copy.h"

uint32_t
sp_avx512_batch_copy(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    uint32_t pending = select & sp_batch_lanes(n);
    uint32_t total = (uint32_t)__builtin_popcount(pending);
    uint32_t count = 0;

    /* The bit scan is faster below 1 in 4 selected (docs/perf/kernels.md). */
    if (total * 4 < n) {
        return sp_copy_selected_pairs(dst, src, pending, total);
    }
    for (uint32_t i = 0; i < n; i += 8) {
        __mmask8 sel8 = (__mmask8)(pending >> i);
        uint32_t packed;
        __m512i ptrs;

        if (!sel8) {
            continue;
        }
        ptrs = _mm512_maskz_loadu_epi64(sel8, src + i);
        ptrs = _mm512_maskz_compress_epi64(sel8, ptrs);
        packed = (uint32_t)__builtin_popcount(sel8);
        _mm512_mask_storeu_epi64(dst + count, (__mmask8)((1u << packed) - 1),
                                 ptrs);
        count += packed;
    }
    return count;
}
