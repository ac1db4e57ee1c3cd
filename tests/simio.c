/* SPDX-License-Identifier: BSD-3-Clause */
/* Ports simulated in memory (simio.h). */
#include "simio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sp_sim sp_sim = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *
no_null(void *p)
{
    if (!p) {
        fprintf(stderr, "simio: out of memory\n");
        exit(1);
    }
    return p;
}

static void
lock(void)
{
    if (!sp_sim.one_thread) {
        pthread_mutex_lock(&sp_sim.lock);
    }
}

static void
unlock(void)
{
    if (!sp_sim.one_thread) {
        pthread_mutex_unlock(&sp_sim.lock);
    }
}

/* The pool is sp_sim.lock's: 'locked' says the caller holds it. */
static void
pool_lock(bool locked)
{
    if (sp_sim.pool && !locked) {
        lock();
    }
}

static void
pool_unlock(bool locked)
{
    if (sp_sim.pool && !locked) {
        unlock();
    }
}

/* A packet of its own holding len bytes of data, or -1 when the pool is
 * empty. Inlined, as release(): bench_datapath counts these instructions
 * with the datapath's. */
static inline __attribute__((always_inline)) int
fill(struct sp_packet *pkt, const uint8_t *data, uint32_t len, bool locked)
{
    uint8_t *buf = NULL;

    if (!sp_sim.pool) {
        buf = no_null(malloc(SP_SIM_HEADROOM + len));
    } else if (len <= SP_SIM_BUF_LEN - SP_SIM_HEADROOM) {
        pool_lock(locked);
        if (sp_sim.n_free) {
            buf = sp_sim.free_bufs[--sp_sim.n_free];
        }
        pool_unlock(locked);
    }
    if (!buf) {
        return -1;
    }
    __atomic_add_fetch(&sp_sim.live_buffers, 1, __ATOMIC_RELAXED);
    memcpy(buf + SP_SIM_HEADROOM, data, len);
    *pkt = (struct sp_packet){
        .data = buf + SP_SIM_HEADROOM, .len = len, .owner = buf};
    return 0;
}

static inline __attribute__((always_inline)) void
release(void *buf, bool locked)
{
    __atomic_sub_fetch(&sp_sim.live_buffers, 1, __ATOMIC_RELAXED);
    if (!sp_sim.pool) {
        free(buf);
        return;
    }
    pool_lock(locked);
    sp_sim.free_bufs[sp_sim.n_free++] = buf;
    pool_unlock(locked);
}

/* The input moves on one frame. */
static void
advance(void)
{
    if (++sp_sim.next_in == sp_sim.n_in) {
        sp_sim.next_in = 0;
        if (!sp_sim.endless) {
            sp_sim.passes--;
        }
    }
}

static uint32_t
sim_rx(unsigned port, unsigned queue, struct sp_packet *pkts, uint32_t max,
       struct sp_rx_drops *drops)
{
    uint32_t n = 0;
    bool done;

    (void)queue;
    lock();
    __atomic_store_n(&sp_sim.polls, sp_sim.polls + 1, __ATOMIC_RELEASE);
    while (n < max && sp_sim.n_in && (sp_sim.passes || sp_sim.endless)) {
        const struct sp_sim_frame *f = &sp_sim.in[sp_sim.next_in];

        if ((f->port ? f->port : 1u) != port) {
            break;
        }
        /* As a frame in segments that cannot be gathered. */
        if (sp_sim.lose_every && ++sp_sim.rx_calls % sp_sim.lose_every == 0) {
            if (sp_sim.rx_calls / sp_sim.lose_every % 2) {
                drops->too_long++;
            } else {
                drops->no_buffer++;
            }
            advance();
            continue;
        }
        if (fill(&pkts[n], f->bytes, f->len, true)) {
            break;
        }
        pkts[n++].in_port = (uint16_t)port;
        advance();
    }
    done = !n && !sp_sim.passes && !sp_sim.endless;
    unlock();
    if (done && sp_sim.stop) {
        sp_dp_stop(sp_sim.stop);
    }
    return n;
}

static uint32_t
sim_tx(unsigned port, unsigned queue, struct sp_packet *const *pkts,
       uint32_t n)
{
    uint32_t sent = 0;

    (void)queue;
    lock();
    for (uint32_t i = 0; i < n; i++) {
        bool refuse = port == 2 && sp_sim.refuse_every &&
                      ++sp_sim.tx_calls % sp_sim.refuse_every == 0;

        if (!refuse && sp_sim.record && !sp_sim.endless &&
            port <= SP_SIM_MAX_PORTS &&
            sp_sim.n_out[port] < SP_SIM_MAX_FRAMES) {
            struct sp_sim_frame *f = &sp_sim.out[port][sp_sim.n_out[port]++];
            uint8_t *bytes = no_null(malloc(pkts[i]->len));

            memcpy(bytes, pkts[i]->data, pkts[i]->len);
            *f = (struct sp_sim_frame){
                .bytes = bytes, .len = pkts[i]->len, .port = (uint16_t)port};
        }
        sent += !refuse;
        release(pkts[i]->owner, true);
    }
    unlock();
    return sent;
}

static void
sim_free(struct sp_packet *pkt)
{
    release(pkt->owner, false);
}

static int
sim_clone(const struct sp_packet *pkt, struct sp_packet *copy)
{
    struct sp_packet c;

    if (sp_sim.fail_every &&
        __atomic_add_fetch(&sp_sim.clone_calls, 1, __ATOMIC_RELAXED) %
                sp_sim.fail_every ==
            0) {
        return -1;
    }
    if (fill(&c, pkt->data, pkt->len, false)) {
        return -1;
    }
    *copy = *pkt;
    copy->data = c.data;
    copy->owner = c.owner;
    return 0;
}

static int
sim_alloc(const uint8_t *data, uint32_t len, struct sp_packet *pkt)
{
    return fill(pkt, data, len, false);
}

static uint64_t
sim_tsc(void)
{
    return __atomic_add_fetch(&sp_sim.ticks, 7, __ATOMIC_RELAXED);
}

const struct sp_io_ops sp_sim_io = {
    .rx = sim_rx,
    .tx = sim_tx,
    .free = sim_free,
    .clone = sim_clone,
    .tsc = sim_tsc,
    .alloc = sim_alloc,
    .headroom = SP_SIM_HEADROOM,
};

void
sp_sim_init(unsigned pool, bool record, bool one_thread)
{
    sp_sim_fini();
    sp_sim.one_thread = one_thread;
    sp_sim.pool = pool;
    sp_sim.record = record;
    if (pool) {
        sp_sim.pool_mem = no_null(malloc((size_t)pool * SP_SIM_BUF_LEN));
        sp_sim.free_bufs = no_null(malloc(pool * sizeof *sp_sim.free_bufs));
        for (unsigned i = 0; i < pool; i++) {
            sp_sim.free_bufs[i] = sp_sim.pool_mem + (size_t)i * SP_SIM_BUF_LEN;
        }
        sp_sim.n_free = pool;
    }
    sp_sim_reset();
}

void
sp_sim_reset(void)
{
    for (unsigned p = 0; p <= SP_SIM_MAX_PORTS; p++) {
        for (unsigned i = 0; i < sp_sim.n_out[p]; i++) {
            free((void *)sp_sim.out[p][i].bytes);
        }
        sp_sim.n_out[p] = 0;
    }
    sp_sim.next_in = 0;
    sp_sim.passes = 1;
    sp_sim.endless = false;
    sp_sim.refuse_every = 0;
    sp_sim.fail_every = sp_sim.lose_every = 0;
    sp_sim.tx_calls = sp_sim.clone_calls = sp_sim.rx_calls = 0;
}

void
sp_sim_fini(void)
{
    sp_sim_reset();
    free(sp_sim.pool_mem);
    free(sp_sim.free_bufs);
    sp_sim.pool_mem = NULL;
    sp_sim.free_bufs = NULL;
    sp_sim.pool = sp_sim.n_free = 0;
}

uint64_t
sp_sim_polls(void)
{
    return __atomic_load_n(&sp_sim.polls, __ATOMIC_ACQUIRE);
}

struct sp_sim_balance
sp_sim_balance(struct sp_dp *dp)
{
    struct sp_sim_balance b = {0};

    for (unsigned p = 0; p <= SP_SIM_MAX_PORTS; p++) {
        struct sp_dp_port_stats s;

        sp_dp_port_stats(dp, p, &s);
        b.in += s.rx + s.copies + s.packet_out;
        b.out += s.tx + s.packet_in;
        for (unsigned r = 0; r < SP_DP_DROP_COUNT; r++) {
            b.drops += s.drops[r];
        }
    }
    return b;
}
