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
#include <sys/mman.h>

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

/* Whether this process sees its own advice in smaps: not under
 * qemu-user, whose madvise drops it and whose smaps is the host's. */
static bool
advice_visible(void)
{
    const size_t len = (size_t)4 << 20;
    unsigned long huge_kb = 0;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    bool seen;

    assert_true(p != MAP_FAILED);
    seen = !madvise(p, len, MADV_HUGEPAGE) && advised_huge(p, &huge_kb);
    munmap(p, len);
    return seen;
}

static int
start_pool(void **state)
{
    static const char *const ports[] = {"net_null0"};
    struct sp_err err;

    (void)state;
    if (sp_io_init((int)(sizeof eal_argv / sizeof *eal_argv) - 1, eal_argv,
                   ports, 1, &err) ||
        sp_io_start_ports(1, 1, 8191, SP_IO_DEFAULT_RXD, SP_IO_DEFAULT_TXD,
                          &err)) {
        print_error("%s\n", err.msg);
        return -1;
    }
    return 0;
}

/* Every buffer taken went back. */
static int
stop_pool(void **state)
{
    unsigned in_use;

    (void)state;
    sp_io_stop_ports();
    in_use = sp_io_mbufs_in_use();
    sp_io_cleanup();
    return in_use ? -1 : 0;
}

static void
test_packed(void **state)
{
    struct sp_packet pkts[BURST];
    uint8_t frame[60] = {0};
    bool offsets[4096 / 64] = {false};
    unsigned distinct = 0;

    (void)state;
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
    for (unsigned i = 0; i < BURST; i++) {
        sp_io_free(&pkts[i]);
    }
    /* Packed 2.3 KB buffers: 32 distinct; one to a page: 1. */
    assert_true(distinct >= BURST / 2);
}

/* The mapping of /proc/self/maps that holds addr: whether it is private
 * anonymous memory starting at a 2 MB boundary. */
static bool
anonymous_2mb_aligned(const void *addr)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    bool found = false;

    assert_non_null(f);
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long start, end;
        char perms[8];
        int path = 0;

        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms,
                   &path) >= 3 &&
            (uintptr_t)addr >= start && (uintptr_t)addr < end) {
            print_message("the pool's mapping: %s", line);
            found = start % (2ul << 20) == 0 && !strcmp(perms, "rw-p") &&
                    (!path || line[path] == '\n' || !line[path]);
            break;
        }
    }
    fclose(f);
    return found;
}

/* With a virtual device alone the pool is the process's own memory, at a
 * 2 MB boundary and advised to huge pages. Whether the kernel found 2 MB
 * pages is its business, so that is printed, not asserted. Under
 * qemu-user the advice is dropped and smaps is the host's: there the
 * mapping alone is checked, and the output says so. */
static void
test_huge_page_pool(void **state)
{
    struct sp_packet pkt;
    uint8_t frame[60] = {0};
    unsigned long huge_kb = 0;
    bool mapped, advised;

    (void)state;
    assert_int_equal(sp_io_alloc(frame, sizeof frame, &pkt), 0);
    mapped = anonymous_2mb_aligned(pkt.data);
    advised = advised_huge(pkt.data, &huge_kb);
    sp_io_free(&pkt);
    assert_true(mapped);
    if (!advice_visible()) {
        print_message("not checked here: the advice (madvise's does not "
                      "show in smaps, as under qemu-user)\n");
        return;
    }
    assert_true(advised);
    print_message("the pool's mapping is advised to huge pages; %lu kB of "
                  "it are\n",
                  huge_kb);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packed),
        cmocka_unit_test(test_huge_page_pool),
    };

    return cmocka_run_group_tests_name("io_pool", tests, start_pool,
                                       stop_pool);
}
