/* SPDX-License-Identifier: BSD-3-Clause */
/* Key match: every variant finds exactly the keys of 'todo' that equal the
 * value under the mask, and reads no key from n on. */
#include <string.h>

#include "simdpath/match.h"
#include "simdpath/random.h"
#include "testlib.h"

/* The expected matches, written without any kernel: byte by byte. */
static uint32_t
expected(const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
         const struct sp_flow_key *mask, const struct sp_flow_key *value)
{
    uint32_t hit = 0;

    for (uint32_t i = 0; i < n; i++) {
        bool equal = true;

        for (unsigned b = 0; b < sizeof keys[i].bytes; b++) {
            equal &= (keys[i].bytes[b] & mask->bytes[b]) == value->bytes[b];
        }
        hit |= (uint32_t)(equal && (todo >> i & 1)) << i;
    }
    return hit;
}

/* Keys fenced right after keys[n-1]: a read beyond them faults. Each key
 * is the value under the mask, with random bits outside it, or one bit
 * inside it flipped ('spoil' keys of 4). */
static void
check_one(uint32_t n, uint32_t todo, unsigned spoil, uint64_t seed)
{
    struct sp_random rng = {seed};
    struct sp_match m; /* its key: the value under the mask */
    struct sp_guarded buf;
    struct sp_flow_key *keys;
    uint32_t want;

    sp_random_fill(&rng, &m.mask, sizeof m.mask);
    /* Some masks of whole blocks, zero bytes and single bits too. */
    for (unsigned b = 0; b < sizeof m.mask.bytes; b++) {
        switch (sp_random_below(&rng, 4)) {
        case 0:
            m.mask.bytes[b] = 0;
            break;
        case 1:
            m.mask.bytes[b] = 0xff;
            break;
        default:
            break;
        }
    }
    sp_random_fill(&rng, &m.key, sizeof m.key);
    for (unsigned b = 0; b < sizeof m.key.bytes; b++) {
        m.key.bytes[b] &= m.mask.bytes[b];
    }
    sp_guarded_alloc(&buf, n * sizeof *keys, 64);
    keys = (struct sp_flow_key *)buf.data;
    for (uint32_t i = 0; i < n; i++) {
        sp_random_fill(&rng, &keys[i], sizeof keys[i]);
        sp_match_apply(&m, &keys[i]);
        if (sp_random_below(&rng, 4) < spoil) {
            unsigned bit = sp_random_below(&rng, 512);

            /* Inside the mask, or nothing changes. */
            keys[i].bytes[bit / 8] ^=
                (uint8_t)(m.mask.bytes[bit / 8] & (1u << bit % 8));
        }
    }
    want = expected(keys, n, todo & sp_batch_lanes(n), &m.mask, &m.key);
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        uint32_t got = sp_runnable[v]->kernels->key_match(
            keys, n, todo & sp_batch_lanes(n), &m.mask, &m.key);

        if (got != want) {
            fail_msg("variant %s: n=%u todo=%#x: matches %#x, want %#x",
                     sp_runnable[v]->name, n, todo, got, want);
        }
    }
    sp_guarded_check(&buf);
    sp_guarded_free(&buf);
}

static void
test_patterns(void **state)
{
    (void)state;
    static const uint32_t patterns[] = {0,          UINT32_MAX, 0x55555555,
                                        0xaaaaaaaa, 0x0000ffff, 0xffff0000,
                                        0x80000001, 0x7ffffffe};

    for (uint32_t n = 0; n <= SP_BATCH_MAX; n++) {
        for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++) {
            for (unsigned spoil = 0; spoil <= 4; spoil++) {
                check_one(n, patterns[p], spoil, n * 100 + p * 10 + spoil);
            }
        }
        for (uint32_t bit = 0; bit < 32; bit++) {
            check_one(n, UINT32_C(1) << bit, 2, n * 1000 + bit);
        }
    }
}

/* Every bit of the key alone under the mask, flipped in one key: a lane
 * or half a variant leaves out shows. */
static void
test_every_bit(void **state)
{
    (void)state;
    struct sp_flow_key mask, value = {0}, keys[SP_BATCH_MAX];

    memset(&mask, 0xff, sizeof mask);
    for (unsigned bit = 0; bit < 512; bit++) {
        memset(keys, 0, sizeof keys);
        keys[bit % SP_BATCH_MAX].bytes[bit / 8] = (uint8_t)(1u << bit % 8);
        for (unsigned v = 0; v < sp_n_runnable; v++) {
            uint32_t got = sp_runnable[v]->kernels->key_match(
                keys, SP_BATCH_MAX, UINT32_MAX, &mask, &value);

            if (got != ~(UINT32_C(1) << bit % SP_BATCH_MAX)) {
                fail_msg("variant %s: bit %u: matches %#x",
                         sp_runnable[v]->name, bit, got);
            }
        }
    }
}

static void
test_random(void **state)
{
    (void)state;
    struct sp_random rng = {9};

    for (int round = 0; round < 5000; round++) {
        uint32_t n = sp_random_below(&rng, SP_BATCH_MAX + 1);

        check_one(n, (uint32_t)sp_random_next(&rng), sp_random_below(&rng, 5),
                  sp_random_next(&rng));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_every_bit),
        cmocka_unit_test(test_random),
    };

    return cmocka_run_group_tests_name("key_match", tests,
                                       sp_test_setup_variants, NULL);
}
