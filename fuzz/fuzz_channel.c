/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: simdpath run's OpenFlow channel (src/cli/openflow.c)
 * over TCP, with the switch behind it: the rules' OpenFlow state kept
 * beside the datapath (cookies, timeouts, flags), CHECK_OVERLAP, strict
 * and loose modify and delete, flow and table statistics. Each input is
 * what a controller sends after the HELLOs, on a connection of its own to
 * a channel listening on 127.0.0.1 (port 0: the kernel's choice), serving
 * a datapath of 4 simulated ports (tests/simio.c) that receive nothing,
 * with its PMD thread running the PACKET_OUTs; the controller then closes
 * its side and reads to the end. Must hold: no crash, leak or hang; the
 * switch sends only whole OpenFlow 1.3 messages; afterwards, on a new
 * connection that gets no PACKET_IN (none from before it was made), flow
 * statistics list every rule the datapath holds, and a DELETE of every
 * rule leaves none (which is also how every input starts from an empty
 * table without a new channel); once that BARRIER is
 * answered, every PACKET_OUT's frame has been sent, dropped or sent to
 * the controller (no packet buffer is held) and the counters conserve.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/openflow.h"
#include "fuzzlib.h"
#include "simdpath/openflow.h"
#include "simio.h"

#define N_PORTS   SP_SIM_MAX_PORTS
#define REPLY_MAX (1 << 26)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* main.c's, which the fuzzer's main replaces; only a --controller
 * connection's probe logs. */
void
sp_cli_log(enum sp_log_level level, const char *fmt, ...)
{
    (void)level, (void)fmt;
}

static struct sp_dp *dp;
static pthread_t pmd;
static unsigned port;

static void __attribute__((noreturn)) fail(const char *what)
{
    fprintf(stderr, "fuzz_channel: %s\n", what);
    abort();
}

/* libFuzzer's -timeout alarm interrupts blocking calls: those are
 * retried. */
static void
send_all(int fd, const uint8_t *data, size_t size)
{
    while (size) {
        ssize_t w = send(fd, data, size, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            perror("fuzz_channel: send");
            abort();
        }
        data += w;
        size -= (size_t)w;
    }
}

/* Some bytes, or 0 at the end of the stream or on an error. */
static size_t
recv_some(int fd, uint8_t *buf, size_t size)
{
    ssize_t n;

    do {
        n = recv(fd, buf, size, 0);
    } while (n < 0 && errno == EINTR);
    return n > 0 ? (size_t)n : 0;
}

/* Exactly 'size' bytes; false if the stream ends first. */
static bool
recv_all(int fd, uint8_t *buf, size_t size)
{
    for (size_t n; size; buf += n, size -= n) {
        n = recv_some(fd, buf, size);
        if (!n) {
            return false;
        }
    }
    return true;
}

/* A connection to the channel, its HELLO read and ours sent. */
static int
connect_switch(void)
{
    static const uint8_t hello[] = {
        SP_OFP_VERSION, SP_OFPT_HELLO, 0, 8, 0, 0, 0, 1};
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    uint8_t theirs[64];
    size_t len;
    int one = 1;

    /* As a controller does: a request sent in pieces waits for no ACK. */
    if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ||
        sp_fuzz_connect(fd, (struct sockaddr *)&addr, sizeof addr)) {
        perror("fuzz_channel: connect");
        abort();
    }
    /* Its HELLO, version bitmap included. */
    if (!recv_all(fd, theirs, SP_OFP_HEADER_LEN) ||
        theirs[1] != SP_OFPT_HELLO) {
        fail("the switch did not start with a HELLO");
    }
    len = (size_t)theirs[2] << 8 | theirs[3];
    if (len < SP_OFP_HEADER_LEN || len > sizeof theirs ||
        !recv_all(fd, theirs, len - SP_OFP_HEADER_LEN)) {
        fail("the switch's HELLO is cut short");
    }
    send_all(fd, hello, sizeof hello);
    return fd;
}

/* Sends the input while reading what comes back (the switch stops reading
 * while its output is full), then closes the sending side and reads to
 * the end; everything read must be whole OpenFlow 1.3 messages. */
static void
exchange(const uint8_t *data, size_t size)
{
    static uint8_t reply[REPLY_MAX];
    size_t len = 0, at = 0;
    int fd = connect_switch();
    bool sending = true;

    while (true) {
        struct pollfd p = {fd, POLLIN | (sending ? POLLOUT : 0), 0};
        ssize_t n;

        if (sending && !size) {
            shutdown(fd, SHUT_WR);
            sending = false;
            continue;
        }
        if (poll(&p, 1, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("fuzz_channel: poll");
            abort();
        }
        if (p.revents & POLLOUT) {
            n = send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                data += n;
                size -= (size_t)n;
            } else if (errno != EAGAIN && errno != EINTR) {
                sending = false; /* the switch closed: the rest is lost */
            }
        }
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) {
            continue;
        }
        n = recv(fd, reply + len, REPLY_MAX - len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        len += (size_t)n;
        if (len == REPLY_MAX) {
            fail("a reply of 64 MiB");
        }
    }
    close(fd);
    while (at < len) {
        size_t m = sp_fuzz_of_message_len(reply + at, len - at);

        if (!m) {
            fail("the switch sent what is not whole OpenFlow 1.3");
        }
        at += m;
    }
}

/* Reads messages until the BARRIER_REPLY of 'xid'; returns how many flow
 * statistics entries came before it. This connection sends no PACKET_OUT
 * and the ports receive nothing: a PACKET_IN would be one queued before
 * it connected. */
static size_t
until_barrier(int fd, uint32_t xid)
{
    static uint8_t buf[2 * SP_OFP_MAX_MSG_LEN];
    size_t len = 0, entries = 0;

    while (true) {
        size_t m = sp_fuzz_of_message_len(buf, len);
        size_t n;

        if (!m && len >= SP_OFP_HEADER_LEN &&
            (buf[0] != SP_OFP_VERSION ||
             ((size_t)buf[2] << 8 | buf[3]) < SP_OFP_HEADER_LEN)) {
            fail("the switch sent what is not OpenFlow 1.3");
        }

        if (m) {
            const uint8_t *b = buf + SP_OFP_HEADER_LEN + 8;
            uint32_t id = (uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 |
                          (uint32_t)buf[6] << 8 | buf[7];

            if (buf[1] == SP_OFPT_BARRIER_REPLY && id == xid) {
                return entries;
            }
            if (buf[1] == SP_OFPT_PACKET_IN) {
                fail("a PACKET_IN from before the connection");
            }
            /* OFPMP_FLOW's entries: each starts with its length. */
            while (buf[1] == SP_OFPT_MULTIPART_REPLY && !buf[8] &&
                   buf[9] == SP_OFPMP_FLOW && b + 2 <= buf + m) {
                size_t entry = (size_t)b[0] << 8 | b[1];

                if (entry < 56 || b + entry > buf + m) {
                    fail("a flow statistics entry cut short");
                }
                b += entry;
                entries++;
            }
            memmove(buf, buf + m, len - m);
            len -= m;
            continue;
        }
        n = recv_some(fd, buf + len, sizeof buf - len);
        if (!n) {
            fail("the switch closed before its BARRIER_REPLY");
        }
        len += n;
    }
}

/* Flow statistics of every rule (every table, any out_port, out_group
 * and cookie, a match of no field), xid 1, and a BARRIER_REQUEST, xid 2. */
static const uint8_t flow_stats_then_barrier[] = {
    SP_OFP_VERSION, SP_OFPT_MULTIPART_REQUEST, 0, 56, 0, 0, 0, 1,
    /* OFPMP_FLOW, no flag, pad; every table, pad */
    0, SP_OFPMP_FLOW, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0,
    /* any out_port and out_group, pad */
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0,
    /* any cookie: value and mask */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* OFPMT_OXM of no field, pad */
    0, 1, 0, 4, 0, 0, 0, 0,
    /* then a BARRIER_REQUEST */
    SP_OFP_VERSION, SP_OFPT_BARRIER_REQUEST, 0, 8, 0, 0, 0, 2};
_Static_assert(sizeof flow_stats_then_barrier == 56 + SP_OFP_HEADER_LEN,
               "a flow statistics request is 56 bytes");

/* What the PACKET_OUTs before the last BARRIER did is done: their frames
 * sent, dropped or taken to the controller, each counted once. */
static void
check_packet_outs_done(void)
{
    struct sp_sim_balance b = sp_sim_balance(dp);

    if (__atomic_load_n(&sp_sim.live_buffers, __ATOMIC_ACQUIRE)) {
        fprintf(stderr, "fuzz_channel: %ld packet buffers held\n",
                sp_sim.live_buffers);
        fail("a packet buffer is held after a BARRIER_REPLY");
    }
    if (b.in != b.out + b.drops) {
        fprintf(stderr,
                "fuzz_channel: rx + copies + packet_out %llu != tx + "
                "packet_in %llu + drops %llu\n",
                (unsigned long long)b.in, (unsigned long long)b.out,
                (unsigned long long)b.drops);
        fail("the counters do not conserve");
    }
}

/* Flow statistics must list the datapath's rules, then a DELETE of every
 * rule must leave none. */
static void
check_and_empty(void)
{
    static const uint8_t barrier[] = {
        SP_OFP_VERSION, SP_OFPT_BARRIER_REQUEST, 0, 8, 0, 0, 0, 4};
    const struct sp_of_flow_mod delete_all = {.command = SP_OFPFC_DELETE,
                                              .table_id = 0xff,
                                              .buffer_id = 0xffffffff,
                                              .out_port = SP_OFPP_ANY,
                                              .out_group = 0xffffffff};
    struct sp_of_buf del = {0};
    int fd = connect_switch();
    unsigned before, after;
    size_t listed;

    /* Only a timeout removes a rule meanwhile: a count that did not change
     * around the request is the one the reply must show. */
    before = sp_dp_flow_count(dp);
    send_all(fd, flow_stats_then_barrier, sizeof flow_stats_then_barrier);
    listed = until_barrier(fd, 2);
    after = sp_dp_flow_count(dp);
    if (before == after && listed != before) {
        fprintf(stderr, "fuzz_channel: %zu rules listed, %u held\n", listed,
                before);
        fail("flow statistics do not list the datapath's rules");
    }

    if (sp_of_encode_flow_mod(&del, 3, &delete_all)) {
        fail("cannot encode a DELETE of every rule");
    }
    send_all(fd, del.data, del.len);
    send_all(fd, barrier, sizeof barrier);
    sp_of_buf_free(&del);
    until_barrier(fd, 4);
    close(fd);
    if (sp_dp_flow_count(dp)) {
        fprintf(stderr, "fuzz_channel: %u rules left\n", sp_dp_flow_count(dp));
        fail("a DELETE of every rule left some");
    }
    check_packet_outs_done();
}

static void *
pmd_thread(void *arg)
{
    (void)arg;
    sp_dp_pmd_run(dp, 0);
    return NULL;
}

static void
pmd_stop(void)
{
    sp_dp_stop(dp);
    pthread_join(pmd, NULL);
}

/* A datapath, its PMD thread and its OpenFlow channel, started in that
 * order as simdpath run starts them, and stopped the other way round. */
static void
serve(void)
{
    static const struct sp_dp_config config = {
        .n_ports = N_PORTS, .n_pmds = 1, .n_rxq = 1, .emc_insert_inv_prob = 1};
    struct sp_of_channel_config c = {0};
    struct sp_err err;

    /* malloc'd buffers, so that ASan sees a use after free. */
    sp_sim_init(0, false, false);
    dp = sp_dp_create(&config, &sp_sim_io, &err);
    if (!dp) {
        fprintf(stderr, "fuzz_channel: %s\n", err.msg);
        abort();
    }
    if (pthread_create(&pmd, NULL, pmd_thread, NULL)) {
        fail("cannot start a PMD thread");
    }
    sp_dp_wait_running(dp);
    if (sp_of_channel_parse_listen("ptcp:0", &c, &err) ||
        sp_of_channel_open(&c, &err) ||
        sp_of_channel_start(dp, &config, &err)) {
        fprintf(stderr, "fuzz_channel: %s\n", err.msg);
        abort();
    }
    port = sp_of_channel_listen_port();
    atexit(sp_of_channel_stop);
    atexit(pmd_stop); /* runs first */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* One channel for the whole run: starting one per input costs more
     * than most inputs. */
    if (!dp) {
        serve();
    }
    exchange(data, size);
    check_and_empty();
    return 0;
}
