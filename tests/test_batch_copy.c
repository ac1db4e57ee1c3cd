/* SPDX-License-Identifier: BSD-3-Clause */
/* Batch copy: every variant appends exactly the selected pointers, in
 * order, reads only src[0..n) and writes only the slots it returns. */
#include <string.h>

#include "simdpath/random.h"
#include "testlib.h"

/* The expected output, written without any kernel. */
static uint32_t
expected(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    uint32_t count = 0;

    for (uint32_t i = 0; i < n; i++) {
        if (select & (UINT32_C(1) << i)) {
            dst[count++] = src[i];
        }
    }
    return count;
}

/* src fenced right after src[n-1], dst right after the last slot the
 * kernel may write: a read or write beyond them faults. */
static void
check_one(uint32_t n, uint32_t select, uint64_t seed)
{
    struct sp_random rng = {seed};
    void *want[SP_BATCH_MAX];
    struct sp_guarded src_buf, dst_buf;
    void **src;
    uint32_t count;

    sp_guarded_alloc(&src_buf, n * sizeof(void *), sizeof(void *));
    src = (void **)src_buf.data;
    sp_random_fill(&rng, src, n * sizeof(void *));
    count = expected(want, src, n, select);
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        uint32_t got;

        sp_guarded_alloc(&dst_buf, count * sizeof(void *), sizeof(void *));
        got = sp_runnable[v]->kernels->batch_copy((void **)dst_buf.data, src,
                                                  n, select);
        if (got != count ||
            memcmp(dst_buf.data, want, count * sizeof(void *))) {
            fail_msg("variant %s: n=%u select=%#x: %u pointers, want %u",
                     sp_runnable[v]->name, n, select, got, count);
        }
        sp_guarded_check(&dst_buf);
        sp_guarded_free(&dst_buf);
    }
    sp_guarded_check(&src_buf);
    sp_guarded_free(&src_buf);
}

static void
test_patterns(void **state)
{
    (void)state;
    static const uint32_t patterns[] = {0,          UINT32_MAX, 0x55555555,
                                        0xaaaaaaaa, 0x0000ffff, 0xffff0000,
                                        0x0f0f0f0f, 0x80000001, 0x7ffffffe};

    for (uint32_t n = 0; n <= SP_BATCH_MAX; n++) {
        for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++) {
            check_one(n, patterns[p], n * 100 + p);
        }
        for (uint32_t bit = 0; bit < 32; bit++) {
            check_one(n, UINT32_C(1) << bit, n * 1000 + bit);
            check_one(n, ~(UINT32_C(1) << bit), n * 1000 + bit);
        }
    }
}

static void
test_random(void **state)
{
    (void)state;
    struct sp_random rng = {7};

    for (int round = 0; round < 5000; round++) {
        uint32_t n = sp_random_below(&rng, SP_BATCH_MAX + 1);

        check_one(n, (uint32_t)sp_random_next(&rng), sp_random_next(&rng));
    }
}

/* Every 4-bit and 8-bit lane pattern at every group position: the
 * permute and compress tables. */
static void
test_every_group_pattern(void **state)
{
    (void)state;
    for (uint32_t shift = 0; shift < 32; shift += 8) {
        for (uint32_t pattern = 0; pattern < 256; pattern++) {
            check_one(SP_BATCH_MAX, pattern << shift, pattern);
        }
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_every_group_pattern),
    };

    return cmocka_run_group_tests_name("batch_copy", tests,
                                       sp_test_setup_variants, NULL);
}
