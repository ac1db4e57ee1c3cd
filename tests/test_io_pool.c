/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packet pool without hugepages (IO addresses virtual): its buffers
 * are packed, not one to a 4 KB page at the same offset of each, where a
 * burst's mbufs would share one L1 cache set (src/io/port.c, pool_create);
 * and every buffer taken goes back.
 */
#include <stdbool.h>
#include <stdint.h>

#include "simdpath/io.h"
#include "testlib.h"

#define BURST 32

static char *eal_argv[] = {"test_io_pool",
                           "--no-huge",
                           "-m",
                           "256",
                           "--no-shconf",
                           "--no-pci",
                           "--vdev=net_null0",
                           "-l",
                           "0",
                           "--file-prefix=test_io_pool",
                           NULL};

static void
test_packed(void **state)
{
    static const char *const ports[] = {"net_null0"};
    struct sp_packet pkts[BURST];
    uint8_t frame[60] = {0};
    bool offsets[4096 / 64] = {false};
    unsigned distinct = 0;
    struct sp_err err;

    (void)state;
    assert_int_equal(sp_io_init((int)(sizeof eal_argv / sizeof *eal_argv) - 1,
                                eal_argv, ports, 1, &err),
                     0);
    assert_int_equal(sp_io_start_ports(1, 1, 8191, SP_IO_DEFAULT_RXD,
                                       SP_IO_DEFAULT_TXD, &err),
                     0);
    /* A fresh pool hands out its buffers in the order it laid them. */
    for (unsigned i = 0; i < BURST; i++) {
        unsigned line;

        assert_int_equal(sp_io_alloc(frame, sizeof frame, &pkts[i]), 0);
        line = (unsigned)((uintptr_t)pkts[i].data % 4096 / 64);
        distinct += !offsets[line];
        offsets[line] = true;
    }
    print_message("%u buffers start at %u distinct lines of a page\n", BURST,
                  distinct);
    /* Packed 2.3 KB buffers: 32 distinct; one to a page: 1. */
    assert_true(distinct >= BURST / 2);
    for (unsigned i = 0; i < BURST; i++) {
        sp_io_free(&pkts[i]);
    }
    sp_io_stop_ports();
    assert_int_equal(sp_io_mbufs_in_use(), 0);
    sp_io_cleanup();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packed),
    };

    return cmocka_run_group_tests_name("io_pool", tests, NULL, NULL);
}
