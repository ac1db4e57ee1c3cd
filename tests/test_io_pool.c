/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The packet pool without hugepages (IO addresses virtual): its buffers
 * are packed, not one to a 4 KB page at the same offset of each, where a
 * burst's mbufs would share one L1 cache set (src/io/port.c, pool_create);
 * with virtual devices alone it is the process's own memory advised to
 * transparent huge pages; and every buffer taken goes back.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* The mapping of /proc/self/smaps that holds addr: whether its VmFlags
 * say MADV_HUGEPAGE ("hg"), and its AnonHugePages in kB. */
static bool
advised_huge(const void *addr, unsigned long *huge_kb)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    bool inside = false, advised = false;

    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        unsigned long start, end;

        if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
            inside = (uintptr_t)addr >= start && (uintptr_t)addr < end;
        } else if (inside) {
            sscanf(line, "AnonHugePages: %lu kB", huge_kb);
            if (!strncmp(line, "VmFlags:", 8)) {
                advised = strstr(line, " hg") != NULL;
                break;
            }
        }
    }
    fclose(f);
    return advised;
}

static void
test_packed(void **state)
{
    static const char *const ports[] = {"net_null0"};
    struct sp_packet pkts[BURST];
    uint8_t frame[60] = {0};
    bool offsets[4096 / 64] = {false};
    unsigned distinct = 0;
    unsigned long huge_kb = 0;
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
    /* Whether the kernel found 2 MB pages is its business; the advice is
     * the pool's. */
    assert_true(advised_huge(pkts[0].data, &huge_kb));
    print_message("the pool's mapping is advised to huge pages; %lu kB of "
                  "it are\n",
                  huge_kb);
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
