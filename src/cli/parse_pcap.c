/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simdpath parse-pcap: every packet of a capture through miniflow extract,
 * one line each: "N: STATUS: FLOW", N counting from 1 as Wireshark's frame
 * numbers, FLOW in flow rule syntax. Under autovalidate, a variant that
 * disagrees with scalar is reported and the exit status is 1.
 */
#include <errno.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "simdpath/dispatch.h"
#include "simdpath/flow_format.h"
#include "simdpath/mfex.h"

#define FLOW_TEXT_MAX 1024
#define SNAPLEN_MAX   262144 /* libpcap's largest; for files that say 0 */

struct pcap_batch {
    struct sp_packet pkts[SP_BATCH_MAX];
    struct sp_packet *ptrs[SP_BATCH_MAX];
    struct sp_flow_key keys[SP_BATCH_MAX];
    uint8_t *bytes[SP_BATCH_MAX]; /* snapshot length each */
    uint32_t count;
    unsigned long first; /* number of the first packet */
};

static void
flush(struct pcap_batch *b)
{
    char text[FLOW_TEXT_MAX];

    SP_KERNEL(mfex)(b->ptrs, b->count, b->keys);
    for (uint32_t i = 0; i < b->count; i++) {
        sp_flow_format(&b->keys[i], NULL, text, sizeof text);
        printf("%lu: %s: %s\n", b->first + i,
               sp_mfex_status_name(b->pkts[i].status), text);
    }
    b->first += b->count;
    b->count = 0;
}

/* Prints the variants that disagreed with scalar; returns how many. */
static unsigned
report_mismatches(void)
{
    unsigned bad = 0;

    for (unsigned v = 1; v < sp_variant_count(); v++) {
        uint64_t n = sp_autovalidate_mismatches(SP_KERNEL_mfex, v);

        if (n) {
            fprintf(
                stderr,
                "simdpath: parse-pcap: variant %s disagrees with "
                "scalar on %llu of %llu batches\n",
                sp_variant_get(v)->name, (unsigned long long)n,
                (unsigned long long)sp_autovalidate_checks(SP_KERNEL_mfex, v));
            bad++;
        }
    }
    return bad;
}

/* Opens an Ethernet capture, or says in err why not, naming the file:
 * libpcap's own messages do not. */
static pcap_t *
open_ethernet(const char *path, struct sp_err *err)
{
    char errbuf[PCAP_ERRBUF_SIZE];
    FILE *f = fopen(path, "rb");
    pcap_t *pcap = f ? pcap_fopen_offline(f, errbuf) : NULL;
    const char *link;

    if (!pcap) {
        sp_err_set(err, "%s: %s", path, f ? errbuf : strerror(errno));
        if (f) {
            fclose(f);
        }
        return NULL;
    }
    if (pcap_datalink(pcap) != DLT_EN10MB) {
        link = pcap_datalink_val_to_name(pcap_datalink(pcap));
        sp_err_set(err, "%s: link type %s (%d), not Ethernet", path,
                   link ? link : "unknown", pcap_datalink(pcap));
        pcap_close(pcap);
        return NULL;
    }
    return pcap;
}

int
sp_cli_pcap_check(const char *path, uint64_t *packets, struct sp_err *err)
{
    pcap_t *pcap = open_ethernet(path, err);
    struct pcap_pkthdr *hdr;
    const u_char *data;

    if (!pcap) {
        return -1;
    }
    if (packets) {
        *packets = 0;
        while (pcap_next_ex(pcap, &hdr, &data) == 1) {
            (*packets)++;
        }
    }
    pcap_close(pcap);
    return 0;
}

static int
parse_file(const char *path)
{
    static struct pcap_batch b;
    struct pcap_pkthdr *hdr;
    const u_char *data;
    struct sp_err err;
    pcap_t *pcap = open_ethernet(path, &err);
    int snaplen, rc;

    if (!pcap) {
        sp_cli_error("parse-pcap", "%s", err.msg);
        return SP_EXIT_USAGE;
    }
    snaplen = pcap_snapshot(pcap);
    if (snaplen <= 0 || snaplen > SNAPLEN_MAX) {
        snaplen = SNAPLEN_MAX;
    }
    for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
        b.bytes[i] = calloc(1, (size_t)snaplen);
        b.ptrs[i] = &b.pkts[i];
    }
    b.count = 0;
    b.first = 1;
    while ((rc = pcap_next_ex(pcap, &hdr, &data)) == 1) {
        uint32_t len =
            hdr->caplen < (uint32_t)snaplen ? hdr->caplen : (uint32_t)snaplen;

        memcpy(b.bytes[b.count], data, len);
        b.pkts[b.count] =
            (struct sp_packet){.data = b.bytes[b.count], .len = len};
        if (++b.count == SP_BATCH_MAX) {
            flush(&b);
        }
    }
    flush(&b);
    if (rc == PCAP_ERROR) {
        sp_cli_error("parse-pcap", "%s: %s", path, pcap_geterr(pcap));
    }
    for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
        free(b.bytes[i]);
    }
    pcap_close(pcap);
    return rc == PCAP_ERROR ? SP_EXIT_FAILURE : SP_EXIT_OK;
}

int
sp_cmd_parse_pcap(int argc, char **argv)
{
    static const struct option options[] = {
        SP_CLI_COMMON_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    int opt, rc;

    sp_dispatch_init();
    optind = 0;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt == '?' || sp_cli_common_option(opt, optarg) < 0) {
            return SP_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        sp_cli_error("parse-pcap", "expected one pcap file, got %d",
                     argc - optind);
        return SP_EXIT_USAGE;
    }
    sp_autovalidate_reset();
    rc = parse_file(argv[optind]);
    fflush(stdout);
    if (rc == SP_EXIT_OK && report_mismatches()) {
        rc = SP_EXIT_FAILURE;
    }
    return rc;
}
