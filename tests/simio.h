/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports simulated in memory for the datapath (sp_sim_io, a struct
 * sp_io_ops), shared by tests/test_datapath.c and bench/bench_datapath.c:
 * packet buffers, receive from a list of frames, transmit that records
 * what each port sent, clone, alloc (PACKET_OUT), a clock that counts its
 * calls, and faults to inject. One simulation per process (sp_sim), as
 * the callbacks take no context; thread-safe unless made for one thread.
 */
#ifndef SP_SIMIO_H
#define SP_SIMIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "simdpath/datapath.h"

#define SP_SIM_HEADROOM   128
#define SP_SIM_BUF_LEN    2048 /* a pool's buffers, headroom included */
#define SP_SIM_MAX_PORTS  4
#define SP_SIM_MAX_FRAMES 20480

struct sp_sim_frame {
    const uint8_t *bytes;
    uint32_t len;
    uint16_t port; /* that receives it (0: port 1) */
};

struct sp_sim {
    pthread_mutex_t lock; /* rx, tx and the pool's */
    bool one_thread;      /* only one thread calls: no locking */
    /* The input: the ports receive in[0..n_in) in order (a port takes the
     * frames from the next one while they are its own), 'passes' times,
     * or forever when 'endless'; once done, 'stop' (if set) is stopped. */
    const struct sp_sim_frame *in;
    unsigned n_in, next_in;
    unsigned long passes;
    bool endless;
    struct sp_dp *stop;
    /* What port P sent, out[P][0..n_out[P]), while 'record' and not
     * 'endless', up to SP_SIM_MAX_FRAMES; the bytes are malloc'd. */
    bool record;
    struct sp_sim_frame out[SP_SIM_MAX_PORTS + 1][SP_SIM_MAX_FRAMES];
    unsigned n_out[SP_SIM_MAX_PORTS + 1];
    /* Faults: port 2 refuses every Nth packet, clone finds no buffer
     * every Nth time, rx cannot deliver every Nth frame (alternately as
     * too long and for want of a buffer); 0: never. */
    unsigned refuse_every, fail_every, lose_every;
    unsigned clone_calls, rx_calls, tx_calls;
    /* rx's calls, the PMDs' receive polls, never reset: stored under the
     * lock, read without it (sp_sim_polls), as a reader that takes it
     * waits for the PMD twice under valgrind, which runs one thread at
     * a time. */
    uint64_t polls;
    uint64_t ticks;
    /* Buffers: a fixed pool of 'pool' (no others: deterministic, no
     * allocator in the counts) or, with 0, one malloc per packet, so a
     * sanitizer sees a use after free; allocated minus freed in
     * live_buffers, where leaks show. */
    unsigned pool, n_free;
    uint8_t *pool_mem, **free_bufs;
    long live_buffers;
};

extern struct sp_sim sp_sim;
extern const struct sp_io_ops sp_sim_io;

/* Starts afresh with a pool of 'pool' buffers (0: malloc), recording or
 * not, for one thread or several; exits on no memory. */
void sp_sim_init(unsigned pool, bool record, bool one_thread);
/* Frees what was recorded and starts the input and faults over (one
 * pass, not endless, none); the input, pool and 'record' stay. */
void sp_sim_reset(void);
/* Frees what sp_sim_init and recording took. */
void sp_sim_fini(void);
/* The receive polls so far (sp_sim.polls), safe beside the PMD threads:
 * what each did before its last poll is seen after. */
uint64_t sp_sim_polls(void);

/* The datapath's counters over its ports and the controller's (0): what
 * came in (rx + copies + packet_out), what left (tx + packet_in) and the
 * drops; in = out + drops when they conserve. */
struct sp_sim_balance {
    uint64_t in, out, drops;
};
struct sp_sim_balance sp_sim_balance(struct sp_dp *dp);

#endif /* SP_SIMIO_H */
