/* SPDX-License-Identifier: BSD-3-Clause */
/* Key hash: known CRC-32C answers, and every variant equal to scalar. */
#include <string.h>

#include "simdpath/random.h"
#include "testlib.h"

static void
test_bitwise_reference(void **state)
{
    (void)state;
    /* RFC 3720 B.4 and the customary check value. */
    uint8_t buf[32];

    assert_int_equal(sp_test_crc32c((const uint8_t *)"123456789", 9),
                     0xe3069283);
    memset(buf, 0, sizeof buf);
    assert_int_equal(sp_test_crc32c(buf, 32), 0x8a9136aa);
    memset(buf, 0xff, sizeof buf);
    assert_int_equal(sp_test_crc32c(buf, 32), 0x62a8ab43);
    for (int i = 0; i < 32; i++) {
        buf[i] = (uint8_t)i;
    }
    assert_int_equal(sp_test_crc32c(buf, 32), 0x46dd794e);
}

static void
test_known_answers(void **state)
{
    (void)state;
    struct sp_flow_key keys[3], mask;
    const uint32_t want[3] = {0x03c8eb67, 0x2fcd4e66, 0xfb6d36eb};
    const uint32_t want_masked = 0x74d37a05; /* even bytes of 0..63 */

    memset(&keys[0], 0, 64);
    memset(&keys[1], 0xff, 64);
    for (int i = 0; i < 64; i++) {
        keys[2].bytes[i] = (uint8_t)i;
        mask.bytes[i] = i % 2 ? 0 : 0xff;
    }
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        uint32_t got[3];

        sp_runnable[v]->kernels->hash(keys, NULL, 3, got);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(got[i], want[i]);
        }
        sp_runnable[v]->kernels->hash(&keys[2], &mask, 1, got);
        assert_int_equal(got[0], want_masked);
    }
}

/* Random keys at the end of a fenced buffer, hashes into a guarded,
 * misaligned buffer: every variant equals scalar and the bitwise CRC. */
static void
test_random_against_scalar(void **state)
{
    (void)state;
    struct sp_random rng = {42};
    struct sp_flow_key mask;

    for (unsigned round = 0; round < 3000; round++) {
        uint32_t n = round < sp_test_batch_size_count
                         ? sp_test_batch_sizes[round]
                         : sp_random_below(&rng, 100);
        struct sp_guarded keys_buf, out_buf;
        struct sp_flow_key *keys;
        uint32_t want[100];
        const struct sp_flow_key *m;

        sp_guarded_alloc(&keys_buf, n * 64, 64);
        keys = (struct sp_flow_key *)keys_buf.data;
        sp_random_fill(&rng, keys, n * 64);
        sp_random_fill(&rng, &mask, sizeof mask);
        /* Sparse masks too: whole blocks off, as classifier masks are. */
        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
            if (sp_random_below(&rng, 2)) {
                mask.blocks[b] = 0;
            }
        }
        m = round % 3 ? &mask : NULL;
        sp_runnable[0]->kernels->hash(keys, m, n, want);
        for (uint32_t i = 0; i < n; i++) {
            struct sp_flow_key masked = keys[i];

            for (unsigned b = 0; m && b < SP_FLOW_KEY_BLOCKS; b++) {
                masked.blocks[b] &= m->blocks[b];
            }
            assert_int_equal(want[i], sp_test_crc32c(masked.bytes, 64));
        }
        for (unsigned v = 1; v < sp_n_runnable; v++) {
            /* Ends at the fence: for odd n only 4-byte aligned. */
            sp_guarded_alloc(&out_buf, n * 4, 4);
            sp_runnable[v]->kernels->hash(keys, m, n,
                                          (uint32_t *)out_buf.data);
            sp_guarded_check(&out_buf);
            if (memcmp(out_buf.data, want, n * 4)) {
                fail_msg("variant %s differs from scalar, n=%u round %u",
                         sp_runnable[v]->name, n, round);
            }
            sp_guarded_free(&out_buf);
        }
        sp_guarded_check(&keys_buf);
        sp_guarded_free(&keys_buf);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitwise_reference),
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_random_against_scalar),
    };

    return cmocka_run_group_tests_name("hash", tests, sp_test_setup_variants,
                                       NULL);
}
