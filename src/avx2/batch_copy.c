/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Batch copy, four pointers per 256-bit register: a load, a permute that
 * packs the selected ones (AVX2 has no compress) and a full-width store
 * whose extra lanes later groups overwrite. Near the ends the vector goes
 * through a small local array instead, so nothing outside src[0..n) and
 * the returned slots of dst is touched. No vpmaskmov: its fault
 * suppression is not emulated by qemu or valgrind.
 */
#include <immintrin.h>

#include "dispatch/isa.h"
#include "generic/batch_copy.h"

/* For each 4-bit selection, the 32-bit lanes that pack the selected
 * 64-bit pointers to the front. */
static const int32_t pack_lanes[16][8] __attribute__((aligned(32))) = {
    {0, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0},
    {2, 3, 0, 0, 0, 0, 0, 0}, {0, 1, 2, 3, 0, 0, 0, 0},
    {4, 5, 0, 0, 0, 0, 0, 0}, {0, 1, 4, 5, 0, 0, 0, 0},
    {2, 3, 4, 5, 0, 0, 0, 0}, {0, 1, 2, 3, 4, 5, 0, 0},
    {6, 7, 0, 0, 0, 0, 0, 0}, {0, 1, 6, 7, 0, 0, 0, 0},
    {2, 3, 6, 7, 0, 0, 0, 0}, {0, 1, 2, 3, 6, 7, 0, 0},
    {4, 5, 6, 7, 0, 0, 0, 0}, {0, 1, 4, 5, 6, 7, 0, 0},
    {2, 3, 4, 5, 6, 7, 0, 0}, {0, 1, 2, 3, 4, 5, 6, 7},
};

/* The vector pass over the groups of four, apart from sp_avx2_batch_copy so
 * that the bit scan's calls save no registers and align no stack frame for
 * 'tail' (docs/perf/kernels.md). */
static __attribute__((noinline)) uint32_t
copy_groups(void **dst, void *const *src, uint32_t n, uint32_t pending,
            uint32_t total)
{
    uint32_t count = 0;

    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t sel4 = (pending >> i) & 0xf;
        uint32_t packed = (uint32_t)__builtin_popcount(sel4);
        void *tail[4] = {NULL, NULL, NULL, NULL};
        __m256i ptrs;

        if (!sel4) {
            continue;
        }
        if (i + 4 <= n) {
            ptrs = _mm256_loadu_si256((const __m256i *)(src + i));
        } else {
            for (uint32_t j = 0; i + j < n; j++) {
                tail[j] = src[i + j];
            }
            ptrs = _mm256_loadu_si256((const __m256i *)tail);
        }
        ptrs = _mm256_permutevar8x32_epi32(
            ptrs, _mm256_load_si256((const __m256i *)pack_lanes[sel4]));
        if (count + 4 <= total) {
            /* Lanes past 'packed' land in slots later groups fill. */
            _mm256_storeu_si256((__m256i *)(dst + count), ptrs);
        } else {
            _mm256_storeu_si256((__m256i *)tail, ptrs);
            for (uint32_t j = 0; j < packed; j++) {
                dst[count + j] = tail[j];
            }
        }
        count += packed;
    }
    return count;
}

uint32_t
sp_avx2_batch_copy(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    uint32_t pending = select & sp_batch_lanes(n);
    uint32_t total = (uint32_t)__builtin_popcount(pending);

    /* The bit scan is faster below 3 in 4 selected (docs/perf/kernels.md). */
    if (total * 4 < n * 3) {
        return sp_copy_selected_pairs(dst, src, pending, total);
    }
    return copy_groups(dst, src, n, pending, total);
}
