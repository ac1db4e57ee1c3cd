/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The whole datapath for instruction counts: the demo traffic
 * (examples/traffic.pcap) through the demo rules (examples/flows.txt) on
 * one PMD loop (sp_dp_pmd_run, as `simdpath run` runs it) over ports
 * simulated in memory (tests/simio.c, with a fixed pool of buffers),
 * ITERATIONS times, with VARIANT's kernels, then it
 * stops. Unlike `simdpath run` under a counter, nothing waits or polls
 * for a time, so the count depends on the packets alone: the difference
 * of two runs' instructions over that of their ITERATIONS times the
 * packets of the capture (printed) is instructions per packet, receive
 * (a copy of each frame into a buffer) and transmit (freeing it)
 * included (docs/perf/arm.md).
 * Usage: bench_datapath --count VARIANT ITERATIONS [demo]
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "simdpath/datapath.h"
#include "simio.h"

#define POOL 256 /* buffers: a burst, its copies and the tx batches */

/* The capture, and it as port 1 receives it (sp_sim.in). */
static struct {
    uint8_t (*frames)[SP_SIM_BUF_LEN];
    struct sp_sim_frame *in;
    uint32_t n_frames;
} cap;

/* The capture's frames (up to SP_SIM_BUF_LEN - SP_SIM_HEADROOM bytes
 * each). */
static int
load_capture(const char *path)
{
    char errbuf[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline(path, errbuf);
    struct pcap_pkthdr *h;
    const u_char *bytes;
    uint32_t room = 0;

    if (!p) {
        fprintf(stderr, "bench_datapath: %s\n", errbuf);
        return -1;
    }
    while (pcap_next_ex(p, &h, &bytes) == 1) {
        if (h->caplen > SP_SIM_BUF_LEN - SP_SIM_HEADROOM) {
            fprintf(stderr, "bench_datapath: %s: a frame of %u bytes\n", path,
                    h->caplen);
            pcap_close(p);
            return -1;
        }
        if (cap.n_frames == room) {
            room = room ? 2 * room : 1024;
            cap.frames = realloc(cap.frames, room * sizeof *cap.frames);
            cap.in = realloc(cap.in, room * sizeof *cap.in);
            if (!cap.frames || !cap.in) {
                fprintf(stderr, "bench_datapath: no memory\n");
                exit(1);
            }
        }
        memcpy(cap.frames[cap.n_frames], bytes, h->caplen);
        cap.in[cap.n_frames++].len = h->caplen;
    }
    pcap_close(p);
    /* The frames have stopped moving. */
    for (uint32_t i = 0; i < cap.n_frames; i++) {
        cap.in[i].bytes = cap.frames[i];
        cap.in[i].port = 1;
    }
    return cap.n_frames ? 0 : -1;
}

int
main(int argc, char **argv)
{
    struct sp_dp_config config = {
        .n_ports = 2,
        .n_pmds = 1,
        .n_rxq = 1,
        .emc_entries = SP_DP_DEFAULT_EMC_ENTRIES,
        .emc_insert_inv_prob = SP_DP_DEFAULT_EMC_INV_PROB,
    };
    struct sp_dp_port_stats stats;
    struct sp_err err;
    unsigned long iterations;
    struct sp_dp *dp;

    if (argc < 4 || argc > 5 || strcmp(argv[1], "--count") ||
        (argc == 5 && strcmp(argv[4], "demo"))) {
        fprintf(stderr,
                "usage: bench_datapath --count VARIANT ITERATIONS [demo]\n");
        return 2;
    }
    if (sp_bench_count_iterations("bench_datapath", argv[3], &iterations)) {
        return 2;
    }
    if (sp_dispatch_set_impl(argv[2], &err)) {
        fprintf(stderr, "bench_datapath: %s\n", err.msg);
        return 2;
    }
    if (load_capture(SP_EXAMPLES_DIR "/traffic.pcap")) {
        return 1;
    }
    sp_sim_init(POOL, false, true);
    sp_sim.in = cap.in;
    sp_sim.n_in = cap.n_frames;
    sp_sim.passes = iterations;
    dp = sp_dp_create(&config, &sp_sim_io, &err);
    if (!dp || sp_dp_flows_load(dp, SP_EXAMPLES_DIR "/flows.txt", &err)) {
        fprintf(stderr, "bench_datapath: %s\n", err.msg);
        return 1;
    }
    /* At the end of the input the loop stops. */
    sp_sim.stop = dp;
    if (iterations) {
        sp_dp_pmd_run(dp, 0);
    }
    sp_dp_port_stats(dp, 1, &stats);
    sp_dp_destroy(dp);
    if (stats.rx != (uint64_t)iterations * cap.n_frames) {
        fprintf(stderr,
                "bench_datapath: port 1 received %llu frames of %llu\n",
                (unsigned long long)stats.rx,
                (unsigned long long)iterations * cap.n_frames);
        return 1;
    }
    printf("demo %s %u items/iteration\n", argv[2], cap.n_frames);
    return sp_sim.live_buffers == 0 ? 0 : 1;
}
