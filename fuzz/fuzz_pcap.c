/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: `simdpath parse-pcap FILE` on any file bytes, under
 * autovalidate (every variant's miniflow extract against scalar on every
 * batch of the capture). It must end with status 0 (read to the end), 1
 * (a read error after some packets) or 2 (not a capture it takes), never
 * crash, leak or disagree with scalar. The file is a memfd, so no disk is
 * touched; the per-packet lines go to /dev/null.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/cli.h"
#include "simdpath/dispatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* main.c's, which the fuzzer's main replaces: quiet, and the common
 * options are not used. */
void
sp_cli_error(const char *context, const char *fmt, ...)
{
    (void)context, (void)fmt;
}

int
sp_cli_common_option(int opt, const char *arg)
{
    (void)opt, (void)arg;
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    char *argv[] = {"parse-pcap", path, NULL};
    struct sp_err err;
    int rc;

    if (fd < 0) {
        fd = memfd_create("fuzz_pcap", 0);
        if (fd < 0 || !freopen("/dev/null", "w", stdout) ||
            sp_dispatch_set_impl("autovalidate", &err)) {
            perror("fuzz_pcap: set-up");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size) {
        perror("fuzz_pcap: memfd");
        abort();
    }
    rc = sp_cmd_parse_pcap(2, argv);
    for (unsigned v = 1; v < sp_variant_count(); v++) {
        if (sp_autovalidate_mismatches(SP_KERNEL_mfex, v)) {
            fprintf(stderr, "fuzz_pcap: variant %s disagrees with scalar\n",
                    sp_variant_get(v)->name);
            abort();
        }
    }
    if (rc < 0 || rc > 2) {
        fprintf(stderr, "fuzz_pcap: exit status %d\n", rc);
        abort();
    }
    return 0;
}
