/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The whole datapath for instruction counts: the demo traffic
 * (examples/traffic.pcap) through the demo rules (examples/flows.txt) on
 * one PMD loop (sp_dp_pmd_run, as `simdpath run` runs it) over ports
 * simulated in memory, ITERATIONS times, with VARIANT's kernels, then it
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

#define HEADROOM 128
#define BUF_LEN  2048
#define POOL     256 /* buffers: a burst, its copies and the tx batches */

static struct {
    struct sp_dp *dp;
    uint8_t (*frames)[BUF_LEN];
    uint32_t *lens;
    uint32_t n_frames, next;
    unsigned long passes_left;
    uint8_t *free_bufs[POOL];
    unsigned n_free;
    uint64_t ticks;
} sim;

static uint8_t *
get_buffer(void)
{
    return sim.n_free ? sim.free_bufs[--sim.n_free] : NULL;
}

static void
put_buffer(void *buf)
{
    sim.free_bufs[sim.n_free++] = buf;
}

/* Port 1 receives the capture, pass after pass; at the end the loop
 * stops. */
static uint32_t
sim_rx(unsigned port, unsigned queue, struct sp_packet *pkts, uint32_t max,
       struct sp_rx_drops *drops)
{
    uint32_t n = 0;

    (void)queue;
    (void)drops;
    if (port != 1) {
        return 0;
    }
    while (n < max && sim.passes_left) {
        uint8_t *buf = get_buffer();

        if (!buf) {
            break;
        }
        memcpy(buf + HEADROOM, sim.frames[sim.next], sim.lens[sim.next]);
        pkts[n++] = (struct sp_packet){.data = buf + HEADROOM,
                                       .len = sim.lens[sim.next],
                                       .in_port = (uint16_t)port,
                                       .owner = buf};
        if (++sim.next == sim.n_frames) {
            sim.next = 0;
            sim.passes_left--;
        }
    }
    if (!n && !sim.passes_left) {
        sp_dp_stop(sim.dp);
    }
    return n;
}

static uint32_t
sim_tx(unsigned port, unsigned queue, struct sp_packet *const *pkts,
       uint32_t n)
{
    (void)port;
    (void)queue;
    for (uint32_t i = 0; i < n; i++) {
        put_buffer(pkts[i]->owner);
    }
    return n;
}

static void
sim_free(struct sp_packet *pkt)
{
    put_buffer(pkt->owner);
}

static int
sim_clone(const struct sp_packet *pkt, struct sp_packet *copy)
{
    uint8_t *buf = get_buffer();

    if (!buf) {
        return -1;
    }
    memcpy(buf + HEADROOM, pkt->data, pkt->len);
    *copy = *pkt;
    copy->data = buf + HEADROOM;
    copy->owner = buf;
    return 0;
}

/* A clock that counts calls: the loop's cycle counters, deterministic. */
static uint64_t
sim_tsc(void)
{
    return sim.ticks += 7;
}

static const struct sp_io_ops sim_io = {
    .rx = sim_rx,
    .tx = sim_tx,
    .free = sim_free,
    .clone = sim_clone,
    .tsc = sim_tsc,
    .headroom = HEADROOM,
};

/* The capture's frames (up to BUF_LEN - HEADROOM bytes each). */
static int
load_capture(const char *path)
{
    char errbuf[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline(path, errbuf);
    struct pcap_pkthdr *h;
    const u_char *bytes;
    uint32_t cap = 0;

    if (!p) {
        fprintf(stderr, "bench_datapath: %s\n", errbuf);
        return -1;
    }
    while (pcap_next_ex(p, &h, &bytes) == 1) {
        if (h->caplen > BUF_LEN - HEADROOM) {
            fprintf(stderr, "bench_datapath: %s: a frame of %u bytes\n", path,
                    h->caplen);
            pcap_close(p);
            return -1;
        }
        if (sim.n_frames == cap) {
            cap = cap ? 2 * cap : 1024;
            sim.frames = realloc(sim.frames, cap * sizeof *sim.frames);
            sim.lens = realloc(sim.lens, cap * sizeof *sim.lens);
            if (!sim.frames || !sim.lens) {
                fprintf(stderr, "bench_datapath: no memory\n");
                exit(1);
            }
        }
        memcpy(sim.frames[sim.n_frames], bytes, h->caplen);
        sim.lens[sim.n_frames++] = h->caplen;
    }
    pcap_close(p);
    return sim.n_frames ? 0 : -1;
}

int
main(int argc, char **argv)
{
    static uint8_t pool[POOL][BUF_LEN];
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

    if (argc < 4 || argc > 5 || strcmp(argv[1], "--count") ||
        (argc == 5 && strcmp(argv[4], "demo"))) {
        fprintf(stderr,
                "usage: bench_datapath --count VARIANT ITERATIONS [demo]\n");
        return 2;
    }
    if (sp_bench_count_iterations("bench_datapath", argv[3],
                                  &sim.passes_left)) {
        return 2;
    }
    if (sp_dispatch_set_impl(argv[2], &err)) {
        fprintf(stderr, "bench_datapath: %s\n", err.msg);
        return 2;
    }
    if (load_capture(SP_EXAMPLES_DIR "/traffic.pcap")) {
        return 1;
    }
    for (unsigned i = 0; i < POOL; i++) {
        put_buffer(pool[i]);
    }
    sim.dp = sp_dp_create(&config, &sim_io, &err);
    if (!sim.dp ||
        sp_dp_flows_load(sim.dp, SP_EXAMPLES_DIR "/flows.txt", &err)) {
        fprintf(stderr, "bench_datapath: %s\n", err.msg);
        return 1;
    }
    iterations = sim.passes_left;
    if (iterations) {
        sp_dp_pmd_run(sim.dp, 0);
    }
    sp_dp_port_stats(sim.dp, 1, &stats);
    sp_dp_destroy(sim.dp);
    if (stats.rx != (uint64_t)iterations * sim.n_frames) {
        fprintf(stderr,
                "bench_datapath: port 1 received %llu frames of %llu\n",
                (unsigned long long)stats.rx,
                (unsigned long long)iterations * sim.n_frames);
        return 1;
    }
    printf("demo %s %u items/iteration\n", argv[2], sim.n_frames);
    return sim.n_free == POOL ? 0 : 1;
}
