/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The datapath on ports simulated in memory: forwarding by rules, counters
 * that conserve, the same output from every kernel variant, kernel and rule
 * changes while traffic flows, flow file errors, and the controller's
 * packets both ways (PACKET_IN and PACKET_OUT), on tests/simio.c's ports
 * with faults injected. DPDK is not needed,
 * so this runs on every leg (arm64 too).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simdpath/datapath.h"
#include "simdpath/dispatch.h"
#include "simdpath/pktgen.h"
#include "simdpath/random.h"
#include "simio.h"
#include "testlib.h"

/* What the ports receive: sp_sim.in. */
static struct sp_sim_frame inputs[SP_SIM_MAX_FRAMES];

/* pktgen leaves checksums 0; give IPv4 headers a valid one, so that a
 * rewrite that keeps it valid can be checked. */
static void
set_ipv4_checksum(uint8_t *f, uint32_t len)
{
    uint32_t l3 = 12, ihl;

    while (l3 + 4 <= len && (f[l3] << 8 | f[l3 + 1]) != 0x0800 &&
           ((f[l3] << 8 | f[l3 + 1]) == 0x8100 ||
            (f[l3] << 8 | f[l3 + 1]) == 0x88a8)) {
        l3 += 4;
    }
    if (l3 + 2 + 20 > len || (f[l3] << 8 | f[l3 + 1]) != 0x0800) {
        return;
    }
    l3 += 2;
    ihl = (f[l3] & 15) * 4u;
    if (f[l3] >> 4 != 4 || ihl < 20 || l3 + ihl > len) {
        return;
    }
    f[l3 + 10] = f[l3 + 11] = 0;
    sp_test_put_be16(f + l3 + 10,
                     (uint16_t)~sp_test_fold_be(sp_test_sum_be(f + l3, ihl)));
}

/* The input: every pktgen shape, mixed, deterministic. */
static void
make_traffic(unsigned count)
{
    static uint8_t storage[SP_SIM_MAX_FRAMES][SP_PKTGEN_MAX];
    struct sp_random rng = {2024};

    for (unsigned i = 0; i < count; i++) {
        enum sp_pktgen_shape shape = i % SP_PKTGEN_SHAPE_COUNT;

        inputs[i].bytes = storage[i];
        inputs[i].len = (uint32_t)sp_pktgen(shape, &rng, storage[i]);
        inputs[i].port = 1;
        set_ipv4_checksum(storage[i], inputs[i].len);
    }
    sp_sim.n_in = count;
}

/* ---- running the datapath ---- */

/* The PMD thread a test runs beside it, one at a time. A test that fails
 * while it runs leaves it to the teardown (stop_left_pmd), so that the
 * tests after it do not run beside a PMD of a datapath they never made. */
static struct {
    struct sp_dp *dp;
    pthread_t thread;
} bg_pmd;

static void *
pmd_main(void *arg)
{
    sp_dp_pmd_run(arg, 0);
    return NULL;
}

static void
start_pmd(struct sp_dp *dp)
{
    assert_null(bg_pmd.dp);
    bg_pmd.dp = dp;
    assert_int_equal(pthread_create(&bg_pmd.thread, NULL, pmd_main, dp), 0);
}

static void
stop_pmd(void)
{
    sp_dp_stop(bg_pmd.dp);
    pthread_join(bg_pmd.thread, NULL);
    bg_pmd.dp = NULL;
}

static int
stop_left_pmd(void **state)
{
    (void)state;
    if (bg_pmd.dp) {
        stop_pmd();
    }
    return 0;
}

/* A wait on the PMD thread fails, naming what it awaited, instead of
 * hanging when that stops coming: once the PMD polled WAIT_POLLS times
 * while the awaited count did not move, where a healthy one moves it in
 * a few polls (a loop polls each port once), however slowly it runs; or,
 * a safety net for a PMD that stopped polling, once WAIT_STALLS checks in
 * a row, each sleeping WAIT_SLEEP_US (seconds in all), saw no poll. */
#define WAIT_POLLS    1000000u
#define WAIT_STALLS   20000u
#define WAIT_SLEEP_US 100

struct wait {
    const char *what;
    const char *file; /* and line: where the WAIT_UNTIL is */
    int line;
    uint64_t seen;   /* the count at the last check */
    uint64_t polls;  /* sp_sim_polls() before this check's count */
    uint64_t moved;  /* polls before the count last moved */
    uint64_t start;  /* polls as the wait began */
    unsigned stalls; /* checks in a row with no poll between them */
};

static struct wait
wait_begin(const char *what, const char *file, int line)
{
    uint64_t polls = sp_sim_polls();

    return (struct wait){.what = what,
                         .file = file,
                         .line = line,
                         .polls = polls,
                         .moved = polls,
                         .start = polls};
}

/* Whether 'seen', the count a wait awaits, reached 'want'; if not, fails
 * the test (see WAIT_POLLS) or sleeps. The polls are read before the
 * count, so that all those polls did was seen in it. */
static bool
waited(struct wait *w, uint64_t seen, uint64_t want)
{
    uint64_t polls;

    if (seen >= want) {
        return true;
    }
    if (seen != w->seen) {
        w->seen = seen;
        w->moved = w->polls;
    }
    if (w->polls - w->moved >= WAIT_POLLS) {
        print_error("ERROR: waited for %s: %llu of %llu; the PMD polled %llu "
                    "times since it last moved (%llu since the wait "
                    "began)\n",
                    w->what, (unsigned long long)seen,
                    (unsigned long long)want,
                    (unsigned long long)(w->polls - w->moved),
                    (unsigned long long)(w->polls - w->start));
        _fail(w->file, w->line);
    }
    if (w->stalls >= WAIT_STALLS) {
        print_error("ERROR: waited for %s: %llu of %llu; the PMD did not "
                    "poll in %u checks in a row (%llu polls since the wait "
                    "began)\n",
                    w->what, (unsigned long long)seen,
                    (unsigned long long)want, w->stalls,
                    (unsigned long long)(w->polls - w->start));
        _fail(w->file, w->line);
    }
    usleep(WAIT_SLEEP_US);
    polls = sp_sim_polls();
    w->stalls = polls == w->polls ? w->stalls + 1 : 0;
    w->polls = polls;
    return false;
}

/* Waits until 'count', evaluated again at each check, reaches 'want' while
 * a PMD runs (start_pmd): a macro, for that evaluation. */
#define WAIT_UNTIL(what, count, want)                             \
    do {                                                          \
        struct wait wait_ = wait_begin(what, __FILE__, __LINE__); \
                                                                  \
        while (!waited(&wait_, (count), (want))) {                \
        }                                                         \
    } while (0)

static struct sp_dp *
make_dp_ports(const char *const *rules, unsigned n_pmds, unsigned n_ports)
{
    struct sp_dp_config config = {
        .n_ports = n_ports,
        .n_pmds = n_pmds,
        .n_rxq = 1,
        .emc_entries = 1024,
        .emc_insert_inv_prob = 1,
    };
    struct sp_err err;
    struct sp_dp *dp = sp_dp_create(&config, &sp_sim_io, &err);

    if (!dp) {
        fail_msg("sp_dp_create: %s", err.msg);
    }
    for (; *rules; rules++) {
        if (sp_dp_flow_add(dp, *rules, &err)) {
            fail_msg("rule '%s' refused at column %u: %s", *rules, err.column,
                     err.msg);
        }
    }
    return dp;
}

static struct sp_dp *
make_dp(const char *const *rules, unsigned n_pmds)
{
    return make_dp_ports(rules, n_pmds, 3);
}

/* Received on every port. */
static uint64_t
total_rx(struct sp_dp *dp)
{
    uint64_t rx = 0;

    for (unsigned p = 1; p <= SP_SIM_MAX_PORTS; p++) {
        struct sp_dp_port_stats s;

        sp_dp_port_stats(dp, p, &s);
        rx += s.rx;
    }
    return rx;
}

/* A port's counters. */
static struct sp_dp_port_stats
port_stats(struct sp_dp *dp, unsigned port)
{
    struct sp_dp_port_stats s;

    sp_dp_port_stats(dp, port, &s);
    return s;
}

/* Runs one PMD until every input frame went through, then stops it. The
 * last burst is counted as received before it is sent: the PMD ends it
 * before it sees the stop, and the join orders all it did before what
 * follows. */
static void
run_to_end(struct sp_dp *dp)
{
    start_pmd(dp);
    WAIT_UNTIL("every input frame received", total_rx(dp), sp_sim.n_in);
    stop_pmd();
}

/* rx + copies + packet_out = tx + packet_in + drops, over all ports and
 * the controller's (0); returns the drops. */
static uint64_t
assert_conserved(struct sp_dp *dp)
{
    struct sp_sim_balance b = sp_sim_balance(dp);

    if (b.in != b.out + b.drops) {
        fail_msg("counters: rx + copies + packet_out %llu != tx + "
                 "packet_in %llu + drops %llu",
                 (unsigned long long)b.in, (unsigned long long)b.out,
                 (unsigned long long)b.drops);
    }
    return b.drops;
}

static const char *const forwarding_rules[] = {
    "priority=10,in_port=1,ip,actions=dec_ttl,output:2",
    "priority=20,in_port=1,udp,actions=mod_nw_src:192.0.2.1,output:2",
    "priority=30,in_port=1,arp,actions=output:2,output:3",
    "priority=30,in_port=1,ipv6,actions=dec_ttl,output:3",
    NULL,
};

static void
test_forwarding(void **state)
{
    (void)state;
    struct sp_dp *dp;
    struct sp_dp_port_stats p1, p2, p3;
    unsigned arp_in = 0, ipv4_out = 0;

    sp_sim_reset();
    make_traffic(2000);
    dp = make_dp(forwarding_rules, 1);
    run_to_end(dp);
    assert_conserved(dp);
    sp_dp_port_stats(dp, 1, &p1);
    sp_dp_port_stats(dp, 2, &p2);
    sp_dp_port_stats(dp, 3, &p3);
    assert_int_equal(p1.rx, 2000);
    assert_int_equal(p2.tx, sp_sim.n_out[2]);
    assert_int_equal(p3.tx, sp_sim.n_out[3]);
    /* MPLS and "other" frames match nothing. */
    assert_true(p1.drops[SP_DP_DROP_NO_MATCH] > 0);
    for (unsigned i = 0; i < sp_sim.n_in; i++) {
        arp_in += i % SP_PKTGEN_SHAPE_COUNT == SP_PKTGEN_ARP;
    }
    /* Every ARP frame went to port 2 and, copied, to port 3. */
    assert_int_equal(p1.copies, arp_in);
    /* What reached port 2 as plain IPv4 has a valid header checksum, and
     * UDP ones carry the new source. */
    for (unsigned i = 0; i < sp_sim.n_out[2]; i++) {
        const uint8_t *f = sp_sim.out[2][i].bytes;

        if (sp_sim.out[2][i].len >= 34 && f[12] == 0x08 && f[13] == 0 &&
            (f[14] >> 4) == 4 && (f[14] & 15) >= 5 &&
            sp_sim.out[2][i].len >= 14u + (f[14] & 15) * 4u) {
            assert_int_equal(
                sp_test_fold_be(sp_test_sum_be(f + 14, (f[14] & 15) * 4u)),
                0xffff);
            if (f[23] == 17 && !(f[20] & 0x1f) && !f[21]) {
                assert_memory_equal(f + 26, "\xc0\x00\x02\x01", 4);
            }
            ipv4_out++;
        }
    }
    assert_true(ipv4_out > 100);
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_dp_destroy(dp);
    sp_sim_reset();
}

struct rule_counts {
    uint64_t packets, bytes;
    unsigned rules;
    uint64_t arp_packets, arp_bytes;
};

static bool
add_counts(void *aux, const struct sp_match *match, uint32_t priority,
           const struct sp_actions *actions, const struct sp_dp_flow_stats *s)
{
    struct rule_counts *c = aux;

    (void)actions;
    c->packets += s->packets;
    c->bytes += s->bytes;
    c->rules++;
    if (priority == 30 && match->key.dl_type == htons(0x0806)) {
        c->arp_packets = s->packets;
        c->arp_bytes = s->bytes;
    }
    return false;
}

/* Rules two by two with equal actions, which share one action list. */
static const char *const sharing_rules[] = {
    "priority=30,in_port=1,arp,actions=output:2",
    "priority=10,in_port=1,ip,actions=output:2",
    "priority=20,in_port=1,udp,actions=output:3",
    "priority=30,in_port=1,ipv6,actions=output:3",
    NULL,
};

/* sp_dp_flows_stats_exact reads a rule by its match and priority as the
 * listing does, and finds no rule for another priority. */
static void
check_stats_exact(struct sp_dp *dp, const struct rule_counts *c)
{
    struct sp_match m[2];
    uint32_t prio[2];
    struct sp_dp_flow_stats st[2];
    bool found[2];

    m[0] = sp_test_match("priority=30,in_port=1,arp", &prio[0]);
    m[1] = sp_test_match("priority=31,in_port=1,arp", &prio[1]);
    sp_dp_flows_stats_exact(dp, m, prio, 2, st, found);
    assert_true(found[0] && !found[1]);
    assert_int_equal(st[0].packets, c->arp_packets);
    assert_int_equal(st[0].bytes, c->arp_bytes);
    assert_true(st[0].idle_age <= st[0].duration);
}

/* sp_dp_flows_foreach gives each rule the packets and bytes (as received)
 * it took, with one PMD thread and several, also when rules share their
 * action list. */
static void
test_foreach_counters(void **state)
{
    static const unsigned pmds[] = {1, 2, 5};

    (void)state;
    for (unsigned t = 0; t < sizeof pmds / sizeof *pmds; t++) {
        struct rule_counts c = {0};
        struct sp_dp_port_stats p1;
        uint64_t arp_packets = 0, arp_bytes = 0, bytes = 0;
        struct sp_dp *dp;

        sp_sim_reset();
        make_traffic(2000);
        dp = make_dp(sharing_rules, pmds[t]);
        run_to_end(dp);
        sp_dp_port_stats(dp, 1, &p1);
        assert_int_equal(sp_dp_flows_foreach(dp, add_counts, &c), 0);
        for (unsigned i = 0; i < sp_sim.n_in; i++) {
            if (i % SP_PKTGEN_SHAPE_COUNT == SP_PKTGEN_ARP) {
                arp_packets++;
                arp_bytes += sp_sim.in[i].len;
            }
            bytes += sp_sim.in[i].len;
        }
        assert_int_equal(c.rules, 4);
        assert_int_equal(c.packets, p1.rx - p1.drops[SP_DP_DROP_NO_MATCH]);
        assert_true(c.bytes > 0 && c.bytes < bytes);
        assert_int_equal(c.arp_packets, arp_packets);
        assert_int_equal(c.arp_bytes, arp_bytes);
        check_stats_exact(dp, &c);
        sp_dp_destroy(dp);
    }
    sp_sim_reset();
}

/* Takes the rules of priority 30 out of a listing (sp_dp_flows_foreach
 * deletes them). */
static bool
delete_prio_30(void *aux, const struct sp_match *match, uint32_t priority,
               const struct sp_actions *actions,
               const struct sp_dp_flow_stats *s)
{
    (void)match, (void)actions, (void)s;
    ++*(unsigned *)aux;
    return priority == 30;
}

/* A rule the listing's callback selects is deleted at once, the others
 * are listed on and stay, in one walk: a loose delete needs no list of
 * its own. */
static void
test_foreach_deletes(void **state)
{
    unsigned seen = 0;
    struct rule_counts c = {0};
    struct sp_dp *dp;
    struct sp_match m[2];
    uint32_t prio[2];
    struct sp_dp_flow_stats st[2];
    bool found[2];

    (void)state;
    sp_sim_reset();
    dp = make_dp(sharing_rules, 1);
    assert_int_equal(sp_dp_flows_foreach(dp, delete_prio_30, &seen), 0);
    assert_int_equal(seen, 4);
    assert_int_equal(sp_dp_flow_count(dp), 2);
    assert_int_equal(sp_dp_flows_foreach(dp, add_counts, &c), 0);
    assert_int_equal(c.rules, 2);
    m[0] = sp_test_match("priority=30,in_port=1,arp", &prio[0]);
    m[1] = sp_test_match("priority=20,in_port=1,udp", &prio[1]);
    sp_dp_flows_stats_exact(dp, m, prio, 2, st, found);
    assert_true(!found[0] && found[1]);
    sp_dp_destroy(dp);
    sp_sim_reset();
}

/* A copy of what port p sent, to compare later runs with (sp_sim_reset
 * frees the recording). */
static struct sp_sim_frame *
keep_sent(unsigned p)
{
    struct sp_sim_frame *kept = malloc(sizeof *kept * (sp_sim.n_out[p] + 1));

    assert_non_null(kept);
    for (unsigned i = 0; i < sp_sim.n_out[p]; i++) {
        uint8_t *bytes = malloc(sp_sim.out[p][i].len);

        memcpy(bytes, sp_sim.out[p][i].bytes, sp_sim.out[p][i].len);
        kept[i] = sp_sim.out[p][i];
        kept[i].bytes = bytes;
    }
    return kept;
}

static void
free_kept(struct sp_sim_frame *kept, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        free((void *)kept[i].bytes);
    }
    free(kept);
}

/* Port p sent the n frames of 'want', byte for byte; 'run' names this
 * run and 'first' the one 'want' is from. */
static void
check_sent_as(unsigned p, const struct sp_sim_frame *want, unsigned n,
              const char *run, const char *first)
{
    if (sp_sim.n_out[p] != n) {
        fail_msg("%s: port %u sent %u frames, %s %u", run, p, sp_sim.n_out[p],
                 first, n);
    }
    for (unsigned i = 0; i < n; i++) {
        if (sp_sim.out[p][i].len != want[i].len ||
            memcmp(sp_sim.out[p][i].bytes, want[i].bytes, want[i].len)) {
            fail_msg("%s: port %u frame %u differs from %s's", run, p, i,
                     first);
        }
    }
}

/* The output of every variant, forced for every kernel, and of
 * autovalidate is byte for byte the same. */
static void
test_identical_across_variants(void **state)
{
    (void)state;
    const struct sp_variant *variants[SP_VARIANT_MAX];
    unsigned n = sp_test_variants(variants, SP_VARIANT_MAX);
    struct sp_sim_frame *first[SP_SIM_MAX_PORTS + 1];
    unsigned first_n[SP_SIM_MAX_PORTS + 1];
    struct sp_err err;

    make_traffic(1500);
    for (unsigned v = 0; v <= n; v++) {
        const char *name = v < n ? variants[v]->name : "autovalidate";
        struct sp_dp *dp;

        sp_sim_reset();
        assert_int_equal(sp_dispatch_set_impl(name, &err), 0);
        sp_autovalidate_reset();
        dp = make_dp(forwarding_rules, 1);
        run_to_end(dp);
        assert_conserved(dp);
        for (unsigned p = 2; p <= 3; p++) {
            if (v == 0) {
                first_n[p] = sp_sim.n_out[p];
                first[p] = keep_sent(p);
            } else {
                check_sent_as(p, first[p], first_n[p], name, "scalar");
            }
        }
        for (unsigned k = 0; v == n && k < SP_KERNEL_COUNT; k++) {
            for (unsigned i = 1; i < sp_variant_count(); i++) {
                assert_int_equal(sp_autovalidate_mismatches(k, i), 0);
            }
        }
        sp_dp_destroy(dp);
    }
    for (unsigned p = 2; p <= 3; p++) {
        free_kept(first[p], first_n[p]);
    }
    sp_dispatch_reset();
    sp_sim_reset();
}

static void
test_tx_refused_is_counted(void **state)
{
    (void)state;
    struct sp_dp *dp;
    struct sp_dp_port_stats p2;

    sp_sim_reset();
    make_traffic(1000);
    sp_sim.refuse_every = 3;
    dp = make_dp(forwarding_rules, 1);
    run_to_end(dp);
    assert_conserved(dp);
    sp_dp_port_stats(dp, 2, &p2);
    assert_true(p2.drops[SP_DP_DROP_TX_REFUSED] > 0);
    assert_int_equal(p2.tx, sp_sim.n_out[2]);
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_dp_destroy(dp);
    sp_sim_reset();
}

/* Frames rx could not deliver count as received and dropped, by reason;
 * a copy no buffer was left for counts once, as a copy and a no_buffer
 * drop; the counters balance. */
static void
test_lost_and_uncopied_are_counted(void **state)
{
    (void)state;
    static const char *const copy_all[] = {
        "in_port=1,actions=output:2,output:3",
        NULL,
    };
    struct sp_dp *dp;
    struct sp_dp_port_stats p1;

    sp_sim_reset();
    make_traffic(1000);
    sp_sim.lose_every = 5;
    sp_sim.fail_every = 4;
    dp = make_dp(copy_all, 1);
    run_to_end(dp);
    assert_conserved(dp);
    sp_dp_port_stats(dp, 1, &p1);
    assert_int_equal(p1.rx, 1000);
    assert_int_equal(p1.drops[SP_DP_DROP_TOO_LONG], 100);
    /* 800 delivered: each asks for one copy, every fourth finds none. */
    assert_int_equal(p1.copies, 800);
    assert_int_equal(p1.drops[SP_DROP_NO_BUFFER], 100 + 200);
    assert_int_equal(sp_sim.n_out[2], 600);
    assert_int_equal(sp_sim.n_out[3], 800);
    assert_string_equal(sp_dp_drop_name(SP_DP_DROP_TOO_LONG), "too_long");
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_dp_destroy(dp);
    sp_sim_reset();
}

/* FLOOD, ALL and IN_PORT on 2, 3 and 4 ports, traffic coming in on every
 * port, and output:N not back to where a packet came in: each port sends
 * what the rules say (counted here from each frame's own headers), every
 * variant the same bytes in the same order, copies for all but the last
 * output, and the counters conserve. A PACKET_OUT's FLOOD runs the same
 * code. */
static const char *const flood_rules[] = {
    "priority=10,arp,actions=FLOOD",
    "priority=10,ip,actions=mod_nw_ttl:9,ALL",
    "priority=10,ipv6,actions=IN_PORT",
    "priority=5,actions=output:1,output:2",
    NULL,
};

static void
test_flood_ports(void **state)
{
    const struct sp_variant *variants[SP_VARIANT_MAX];
    unsigned n_variants = sp_test_variants(variants, SP_VARIANT_MAX);
    static const unsigned n_frames = 1200;

    (void)state;
    make_traffic(n_frames);
    for (unsigned n_ports = 2; n_ports <= SP_SIM_MAX_PORTS; n_ports++) {
        uint64_t want_tx[SP_SIM_MAX_PORTS + 1] = {0}, want_copies = 0;
        uint64_t want_in_port = 0;
        struct sp_sim_frame *first[SP_SIM_MAX_PORTS + 1] = {0};

        /* Runs of 40 frames a port, so bursts are full and mixed. */
        for (unsigned i = 0; i < n_frames; i++) {
            unsigned q = 1 + i / 40 % n_ports;
            struct sp_match m;
            uint16_t type;

            inputs[i].port = (uint16_t)q;
            sp_dp_frame_match(inputs[i].bytes, inputs[i].len, (uint16_t)q, &m);
            type = ntohs(m.key.dl_type);
            if (type == 0x0806 || type == 0x0800) {
                for (unsigned p = 1; p <= n_ports; p++) {
                    want_tx[p] += p != q;
                }
                want_copies += n_ports - 2;
            } else if (type == 0x86dd) {
                want_tx[q]++;
            } else {
                want_tx[1] += q != 1;
                want_tx[2] += q != 2;
                want_copies += q != 1;
                want_in_port += q == 2;
            }
        }
        /* The PACKET_OUT, from port 2: every other port. */
        for (unsigned p = 1; p <= n_ports; p++) {
            want_tx[p] += p != 2;
        }
        want_copies += n_ports - 2;
        for (unsigned v = 0; v < n_variants; v++) {
            struct sp_dp_port_stats s;
            uint64_t copies = 0, in_port = 0;
            struct sp_err err;
            struct sp_dp *dp;
            char run[64];

            sp_sim_reset();
            snprintf(run, sizeof run, "%s, %u ports", variants[v]->name,
                     n_ports);
            assert_int_equal(sp_dispatch_set_impl(variants[v]->name, &err), 0);
            dp = make_dp_ports(flood_rules, 1, n_ports);
            assert_int_equal(sp_dp_packet_out(dp, inputs[0].bytes,
                                              inputs[0].len, 2, "FLOOD", &err),
                             0);
            run_to_end(dp);
            assert_conserved(dp);
            for (unsigned p = 0; p <= n_ports; p++) {
                sp_dp_port_stats(dp, p, &s);
                copies += s.copies;
                in_port += s.drops[SP_DP_DROP_IN_PORT];
                assert_int_equal(s.drops[SP_DP_DROP_NO_BUFFER], 0);
                assert_int_equal(s.tx, sp_sim.n_out[p]);
                if (p && s.tx != want_tx[p]) {
                    fail_msg("%s: port %u sent %llu, want %llu", run, p,
                             (unsigned long long)s.tx,
                             (unsigned long long)want_tx[p]);
                }
                if (!p) {
                    continue;
                }
                if (v == 0) {
                    first[p] = keep_sent(p);
                } else {
                    check_sent_as(p, first[p], (unsigned)want_tx[p], run,
                                  variants[0]->name);
                }
            }
            sp_dp_port_stats(dp, 2, &s);
            assert_int_equal(s.packet_out, 1);
            assert_int_equal(copies, want_copies);
            assert_int_equal(in_port, want_in_port);
            sp_dp_destroy(dp);
            assert_int_equal(sp_sim.live_buffers, 0);
        }
        for (unsigned p = 1; p <= n_ports; p++) {
            free_kept(first[p], (unsigned)want_tx[p]);
        }
    }
    sp_dispatch_reset();
    make_traffic(n_frames); /* every frame back on port 1 */
    sp_sim_reset();
}

/* The counters' names of the drop reasons, in order: what counters-show
 * and telemetry print. */
static void
test_drop_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "action",          "no_output", "ttl",          "no_port",
        "tx_full",         "no_buffer", "no_headroom",  "no_controller",
        "controller_full", "in_port",   "no_packet_in", "no_match",
        "tx_refused",      "too_long",  "no_recv",      "no_fwd",
        "port_down",
    };

    assert_int_equal(SP_DP_DROP_COUNT, sizeof names / sizeof names[0]);
    for (unsigned r = 0; r < SP_DP_DROP_COUNT; r++) {
        assert_string_equal(sp_dp_drop_name(r), names[r]);
    }
    assert_string_equal(sp_dp_drop_name(SP_DP_DROP_COUNT), "?");
    assert_int_equal(SP_DP_DROP_NO_BUFFER, SP_DROP_NO_BUFFER);
}

/* Rules and kernels change while a PMD forwards endless traffic. */
static void
test_changes_under_traffic(void **state)
{
    (void)state;
    const struct sp_variant *variants[SP_VARIANT_MAX];
    unsigned n = sp_test_variants(variants, SP_VARIANT_MAX);
    struct sp_dp *dp;
    struct sp_err err;
    uint64_t before;

    sp_sim_reset();
    make_traffic(500);
    sp_sim.endless = true;
    dp = make_dp(forwarding_rules, 1);
    start_pmd(dp);
    for (unsigned round = 0; round < 60; round++) {
        char rule[128];

        snprintf(rule, sizeof rule,
                 "priority=%u,in_port=1,tcp,tp_dst=%u,actions=output:3",
                 100 + round % 7, round % 5);
        assert_int_equal(sp_dp_flow_add(dp, rule, &err), 0);
        assert_int_equal(sp_dispatch_set_impl(round % 4 == 3
                                                  ? "autovalidate"
                                                  : variants[round % n]->name,
                                              &err),
                         0);
        before = total_rx(dp);
        WAIT_UNTIL("a frame received after the change", total_rx(dp),
                   before + 1);
        sp_dp_maintain(dp);
        assert_int_equal(sp_dp_flow_del(dp, rule, &err), 0);
    }
    stop_pmd();
    assert_true(total_rx(dp) > 0);
    assert_conserved(dp);
    assert_int_equal(sp_dp_flow_count(dp), 4);
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        for (unsigned i = 1; i < sp_variant_count(); i++) {
            assert_int_equal(sp_autovalidate_mismatches(k, i), 0);
        }
    }
    sp_dp_destroy(dp);
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_dispatch_reset();
    sp_sim_reset();
}

/* Loads len bytes of content as a flow file into a new datapath; an error
 * as the program shows it goes to shown[SP_ERR_TEXT_LEN]. */
static struct sp_dp *
load_text(const char *content, size_t len, int *rc, struct sp_err *err,
          char *shown)
{
    char path[] = "/tmp/sp-flows-XXXXXX";
    int fd = mkstemp(path);
    static const char *const none[] = {NULL};
    struct sp_dp *dp;

    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, len), (ssize_t)len);
    close(fd);
    dp = make_dp(none, 1);
    *rc = sp_dp_flows_load(dp, path, err);
    /* err is set only when the load fails. */
    if (*rc) {
        sp_err_text(err, path, shown, SP_ERR_TEXT_LEN);
    } else {
        shown[0] = '\0';
    }
    unlink(path);
    return dp;
}

static void
assert_load_error_len(const char *content, size_t len, const char *needle)
{
    struct sp_err err;
    char shown[SP_ERR_TEXT_LEN];
    int rc;
    struct sp_dp *dp = load_text(content, len, &rc, &err, shown);

    assert_int_equal(rc, -1);
    if (!strstr(shown, needle)) {
        fail_msg("error \"%s\" lacks \"%s\"", shown, needle);
    }
    /* The place is in the fields, the message only says what. */
    assert_null(strstr(err.msg, "/tmp/sp-flows-"));
    sp_dp_destroy(dp);
}

static void
assert_load_error(const char *content, const char *needle)
{
    assert_load_error_len(content, strlen(content), needle);
}

static void
test_flow_file_errors(void **state)
{
    (void)state;
    struct sp_err err;
    struct sp_dp *dp;
    static const char *const none[] = {NULL};
    char long_line[4200], shown[SP_ERR_TEXT_LEN];
    static const char located[] = "ip,actions=drop\n\nip,actions=output:9\n";
    int rc;

    assert_load_error("# ok\n\nip,actions=output:2\nip,nw_dst=1.2.3.400,"
                      "actions=output:2\n",
                      ":4:4: invalid address '1.2.3.400'");
    assert_load_error("ip,actions=output:9\n", ":1:19: ");
    assert_load_error("ip,actions=output:9\n", "does not exist");
    dp = load_text(located, strlen(located), &rc, &err, shown);
    assert_int_equal(rc, -1);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 19);
    assert_string_equal(err.msg, "output to port 9, which does not exist");
    sp_dp_destroy(dp);
    assert_load_error("tcp,tp_dst=80\n", ":1:14: missing actions=");
    assert_load_error("tp_dst=80,actions=drop\n", ":1:1: ");
    /* A prerequisite is blamed on the field that lacks it. */
    assert_load_error("priority=1,ip,tp_dst=80,actions=drop\n",
                      ":1:15: tp_dst: needs an exact nw_proto");
    assert_load_error("ip,actions=drop\nip,actions=drop\n", ":2:1: ");
    /* A NUL is named as such, where it is, in a comment too. */
    assert_load_error_len("ip,actions=drop\nip,act\0ions=drop\n", 33,
                          ":2:7: NUL byte");
    assert_load_error_len("# a\0b\nip,actions=drop\n", 22, ":1:4: NUL byte");
    assert_load_error("ip,actions=drop\ntcp,\x1b[31m,actions=drop\n",
                      ":2:5: byte 0x1b");
    assert_load_error("ip,nw_dst=10.0.0.1\xc2\xa0,actions=drop\n",
                      ":1:19: byte 0xc2");
    memset(long_line, 'a', sizeof long_line - 1);
    long_line[sizeof long_line - 1] = '\0';
    assert_load_error(long_line, ":1: line longer than 4095 bytes");
    dp = make_dp(none, 1);
    assert_int_equal(sp_dp_flows_load(dp, "/tmp", &err), -1);
    assert_non_null(strstr(err.msg, "/tmp: cannot read flow rules: a "
                                    "directory"));
    assert_int_equal(sp_dp_flows_load(dp, "/dev/null", &err), -1);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_int_equal(sp_dp_flows_load(dp, "/nonexistent/flows", &err), -1);
    assert_non_null(strstr(err.msg, "/nonexistent/flows: cannot read"));
    assert_int_equal(sp_dp_flow_count(dp), 0);
    sp_dp_destroy(dp);
}

/* LF, CRLF and lone CR line ends (and none on the last line) each end a
 * rule: every rule loads, and errors count lines alike. */
static void
test_flow_file_line_ends(void **state)
{
    (void)state;
    static const char *const files[] = {
        "priority=1,ip,actions=drop\npriority=2,ip,actions=drop\n"
        "priority=3,ip,actions=drop\n",
        "priority=1,ip,actions=drop\r\npriority=2,ip,actions=drop\r\n"
        "priority=3,ip,actions=drop\r\n",
        "priority=1,ip,actions=drop\rpriority=2,ip,actions=drop\r"
        "priority=3,ip,actions=drop\r",
        "# mixed\rpriority=1,ip,actions=drop\r\n\r\rpriority=2,ip,"
        "actions=drop\npriority=3,ip,actions=drop",
    };
    struct sp_err err;
    char shown[SP_ERR_TEXT_LEN];
    int rc;

    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        struct sp_dp *dp =
            load_text(files[i], strlen(files[i]), &rc, &err, shown);

        if (rc) {
            fail_msg("file %zu: %s", i, shown);
        }
        assert_int_equal(sp_dp_flow_count(dp), 3);
        sp_dp_destroy(dp);
    }
    assert_load_error("ip,actions=drop\rarp,actions=drop\rudp,tp_dst=x,"
                      "actions=drop\r",
                      ":3:5: invalid value 'x'");
    assert_load_error("ip,actions=drop\r\n\r\nudp,tp_dst=x,actions=drop\r\n",
                      ":3:5: invalid value 'x'");
}

/* The dump lists rules by priority, then in the order they were added,
 * across subtables, without the deleted ones. */
static void
test_flow_dump_order(void **state)
{
    (void)state;
    static const char *const rules[] = {
        "priority=5,ip,nw_dst=10.0.0.1,actions=drop",
        "priority=9,ip,nw_dst=10.0.0.2,actions=drop",
        "priority=5,ip,nw_src=10.0.0.5,actions=drop",
        "priority=5,ip,nw_dst=10.0.0.3,actions=drop",
        "priority=1,actions=drop",
        "priority=9,ip,nw_src=10.0.0.4,actions=drop",
        NULL,
    };
    struct sp_dp *dp = make_dp(rules, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct sp_err err;

    assert_int_equal(sp_dp_flow_del(dp, "priority=9,ip,nw_dst=10.0.0.2", &err),
                     0);
    assert_int_equal(sp_dp_flows_dump(dp, out), 0);
    fclose(out);
    /* Each line's counters (new rules: no packets) before the rule. */
    for (char *line = text, *rule; *line; line = strchr(line, '\n') + 1) {
        rule = strstr(line, "priority=");
        assert_non_null(rule);
        assert_non_null(strstr(line, ", n_packets=0, n_bytes=0, "));
        memmove(line, rule, strlen(rule) + 1);
    }
    assert_string_equal(text, "priority=9,ip,nw_src=10.0.0.4,actions=drop\n"
                              "priority=5,ip,nw_dst=10.0.0.1,actions=drop\n"
                              "priority=5,ip,nw_src=10.0.0.5,actions=drop\n"
                              "priority=5,ip,nw_dst=10.0.0.3,actions=drop\n"
                              "priority=1,actions=drop\n");
    assert_int_equal(sp_dp_flow_count(dp), 5);
    free(text);
    sp_dp_destroy(dp);
}

static void
test_flow_dump_round_trip(void **state)
{
    (void)state;
    struct sp_dp *dp = make_dp(forwarding_rules, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct sp_dp *again;
    static const char *const none[] = {NULL};
    char *line, *save = NULL;
    struct sp_err err;

    assert_int_equal(sp_dp_flows_dump(dp, out), 0);
    fclose(out);
    assert_non_null(strstr(text, "priority=30,"));
    again = make_dp(none, 1);
    for (line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (sp_dp_flow_add(again, line, &err)) {
            fail_msg("dumped rule '%s' does not parse: %s", line, err.msg);
        }
    }
    assert_int_equal(sp_dp_flow_count(again), 4);
    free(text);
    sp_dp_destroy(dp);
    sp_dp_destroy(again);
}

/* Unprofiled, a PMD reads the clock once per 16 rounds of polls that
 * received a full burst, or after a round that did not: the simulated
 * clock moves 7 ticks a read and only the PMD reads it while it runs, so
 * its busy cycles are 7 per reading that ended busy rounds. 2,000 frames
 * on port 1 are 62 full bursts and one of 16: readings after rounds 16,
 * 32, 48 and after the partial one, where one read a round made 63. */
static void
test_clock_reads(void **state)
{
    (void)state;
    struct sp_dp_pmd_stats stats;
    struct sp_dp *dp;

    sp_sim_reset();
    make_traffic(2000);
    dp = make_dp(forwarding_rules, 1);
    run_to_end(dp);
    sp_dp_pmd_stats(dp, 0, &stats);
    assert_int_equal(stats.packets, 2000);
    assert_int_equal(stats.batches, 63);
    assert_int_equal(stats.busy_cycles, 4 * 7);
    sp_dp_destroy(dp);
    assert_int_equal(sp_sim.live_buffers, 0);
}

/* The profile of a PMD: its stages add up to its busy cycles exactly,
 * it counts what that PMD processed and nothing while off, and a clear of
 * the profile leaves the other counters alone. */
static void
test_profile(void **state)
{
    (void)state;
    struct sp_dp_pmd_perf perf, other;
    struct sp_dp_pmd_stats stats;
    uint64_t stages = 0;
    struct sp_dp *dp;

    for (int on = 0; on < 2; on++) {
        sp_sim_reset();
        make_traffic(2000);
        dp = make_dp(forwarding_rules, 2);
        sp_dp_perf_enable(dp, on);
        assert_int_equal(sp_dp_perf_enabled(dp), on);
        run_to_end(dp);
        sp_dp_pmd_perf(dp, 0, &perf);
        sp_dp_pmd_stats(dp, 0, &stats);
        assert_int_equal(stats.packets, 2000);
        if (!on) {
            assert_int_equal(perf.packets + perf.busy_cycles, 0);
            sp_dp_destroy(dp);
            continue;
        }
        assert_int_equal(perf.packets, stats.packets);
        assert_int_equal(perf.batches, stats.batches);
        assert_int_equal(perf.busy_cycles, stats.busy_cycles);
        for (unsigned s = 0; s < SP_DP_STAGE_COUNT; s++) {
            /* Every stage of every burst reads the clock once. */
            assert_true(perf.stage_cycles[s] >= perf.batches);
            stages += perf.stage_cycles[s];
        }
        assert_int_equal(stages, perf.busy_cycles);
        sp_dp_pmd_perf(dp, 1, &other);
        assert_int_equal(other.packets + other.busy_cycles + other.batches, 0);
        sp_dp_perf_clear(dp);
        sp_dp_pmd_perf(dp, 0, &perf);
        sp_dp_pmd_stats(dp, 0, &stats);
        assert_int_equal(perf.packets + perf.busy_cycles + perf.idle_cycles,
                         0);
        for (unsigned s = 0; s < SP_DP_STAGE_COUNT; s++) {
            assert_int_equal(perf.stage_cycles[s], 0);
        }
        assert_int_equal(stats.packets, 2000);
        sp_dp_destroy(dp);
    }
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_sim_reset();
}

/* count UDP frames, frame i from source port 1000 + i % flows. */
static void
make_udp_flows(unsigned count, unsigned flows)
{
    static uint8_t storage[SP_SIM_MAX_FRAMES][64];

    for (unsigned i = 0; i < count; i++) {
        uint8_t *f = storage[i];

        memset(f, 0, 64);
        memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00", 14);
        f[14] = 0x45;
        sp_test_put_be16(f + 16, 46);
        f[22] = 64;
        f[23] = 17;
        memcpy(f + 26, "\x0a\0\0\x01\x0a\0\0\x02", 8);
        sp_test_put_be16(f + 34, (uint16_t)(1000 + i % flows));
        sp_test_put_be16(f + 36, 80);
        sp_test_put_be16(f + 38, 26);
        set_ipv4_checksum(f, 64);
        inputs[i] = (struct sp_sim_frame){f, 64, 1};
    }
    sp_sim.n_in = count;
}

/* The PMD's parse errors are the packets the scalar parser leaves not ok:
 * bursts that start with a cut-short frame (the whole burst to the scalar
 * parser) and bursts that start with a whole one (the SIMD profiles, the
 * others after them) alike. */
static void
test_parse_errors_counted(void **state)
{
    static const char *const rules[] = {"in_port=1,actions=output:2", NULL};
    const struct sp_variant *scalar = sp_variant_get(0);
    struct sp_dp_pmd_stats stats;
    uint64_t want = 0;
    struct sp_dp *dp;

    (void)state;
    sp_sim_reset();
    make_udp_flows(3200, 7);
    for (unsigned i = 0; i < sp_sim.n_in; i++) {
        struct sp_packet pkt, *ptr = &pkt;
        struct sp_flow_key key;

        /* Every fifth cut inside the IP header (frame 0, so the first
         * burst, among them), some others inside the UDP one. */
        inputs[i].len = i % 5 == 0 ? 30 : i % 7 == 3 ? 40 : inputs[i].len;
        pkt = (struct sp_packet){.data = (uint8_t *)inputs[i].bytes,
                                 .len = inputs[i].len,
                                 .in_port = 1};
        want += scalar->kernels->mfex(&ptr, 1, &key);
    }
    assert_true(want > sp_sim.n_in / 5);
    dp = make_dp(rules, 1);
    run_to_end(dp);
    assert_conserved(dp);
    sp_dp_pmd_stats(dp, 0, &stats);
    assert_int_equal(stats.packets, sp_sim.n_in);
    assert_int_equal(stats.parse_errors, want);
    sp_dp_destroy(dp);
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_sim_reset();
}

/* N exact rules with the same actions run as one group per burst, as one
 * rule does; rules with two different lists as two. */
static void
test_equal_actions_one_group(void **state)
{
    (void)state;
    static const char *const none[] = {NULL};
    struct sp_dp_pmd_stats stats;
    struct sp_dp_port_stats p2, p3;
    struct sp_err err;

    for (unsigned lists = 1; lists <= 2; lists++) {
        struct sp_dp *dp = make_dp(none, 1);

        sp_sim_reset();
        make_udp_flows(3200, 100);
        for (unsigned r = 0; r < 100; r++) {
            char rule[128];

            snprintf(rule, sizeof rule,
                     "udp,tp_src=%u,actions=dec_ttl,output:%u", 1000 + r,
                     lists == 2 && r % 2 ? 3 : 2);
            assert_int_equal(sp_dp_flow_add(dp, rule, &err), 0);
        }
        run_to_end(dp);
        assert_conserved(dp);
        sp_dp_pmd_stats(dp, 0, &stats);
        sp_dp_port_stats(dp, 2, &p2);
        sp_dp_port_stats(dp, 3, &p3);
        assert_int_equal(p2.tx + p3.tx, 3200);
        assert_int_equal(p3.tx, lists == 2 ? 1600 : 0);
        /* Every burst holds both lists' packets (frames alternate). */
        assert_int_equal(stats.groups, lists * stats.batches);
        sp_dp_destroy(dp);
    }
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_sim_reset();
}

/* A PMD bypasses an EMC that hits too rarely (every flow new, more than
 * it holds) and keeps one that hits; either way each packet goes by its
 * rule. (Two rules: with one, no burst would look the EMC up.) */
static void
test_emc_bypass(void **state)
{
    (void)state;
    static const char *const rules[] = {
        "udp,actions=output:2", "priority=1,tcp,actions=output:3", NULL};
    struct sp_dp_pmd_stats stats;
    struct sp_dp_port_stats p2;

    for (unsigned flows = 1; flows <= SP_SIM_MAX_FRAMES;
         flows *= SP_SIM_MAX_FRAMES) {
        struct sp_dp *dp = make_dp(rules, 1);

        sp_sim_reset();
        make_udp_flows(SP_SIM_MAX_FRAMES, flows);
        run_to_end(dp);
        assert_conserved(dp);
        sp_dp_pmd_stats(dp, 0, &stats);
        sp_dp_port_stats(dp, 2, &p2);
        assert_int_equal(p2.tx, SP_SIM_MAX_FRAMES);
        assert_int_equal(stats.emc_hits + stats.classifier_hits,
                         SP_SIM_MAX_FRAMES);
        if (flows == 1) {
            assert_int_equal(stats.emc_bypassed, 0);
            /* All but the first burst, looked up before any insertion. */
            assert_int_equal(stats.emc_hits, SP_SIM_MAX_FRAMES - SP_BATCH_MAX);
        } else {
            /* Looked up until the first window showed no hit, then one
             * burst in 16. */
            assert_int_equal(stats.emc_hits, 0);
            assert_true(stats.emc_bypassed >= (SP_SIM_MAX_FRAMES - 8192) / 2);
            assert_true(stats.emc_bypassed <= SP_SIM_MAX_FRAMES - 8192);
        }
        sp_dp_destroy(dp);
    }
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_sim_reset();
}

/* Frame i of count: even ones of one flow (source port 1000), odd ones
 * each of a flow of its own: an EMC hits about half of them. */
static void
make_half_new_flows(unsigned count)
{
    make_udp_flows(count, 1);
    for (unsigned i = 1; i < count; i += 2) {
        uint8_t *f = (uint8_t *)inputs[i].bytes;

        sp_test_put_be16(f + 34, (uint16_t)(1001 + i / 2));
    }
}

/* With one subtable the classifier's lookup costs about what the EMC's
 * does, so an EMC answering about half the packets is bypassed; with two
 * it is kept. */
static void
test_emc_bypass_one_subtable(void **state)
{
    (void)state;
    static const char *const one[] = {"udp,actions=output:2",
                                      "priority=1,tcp,actions=output:3", NULL};
    static const char *const two[] = {
        "udp,actions=output:2", "priority=1,tcp,actions=output:3",
        "priority=5,ip,nw_dst=10.9.9.9,actions=drop", NULL};

    for (unsigned subtables = 1; subtables <= 2; subtables++) {
        struct sp_dp *dp = make_dp(subtables == 1 ? one : two, 1);
        struct sp_dp_pmd_stats stats;
        struct sp_dp_port_stats p2;

        sp_sim_reset();
        make_half_new_flows(SP_SIM_MAX_FRAMES);
        run_to_end(dp);
        assert_conserved(dp);
        sp_dp_pmd_stats(dp, 0, &stats);
        sp_dp_port_stats(dp, 2, &p2);
        assert_int_equal(p2.tx, SP_SIM_MAX_FRAMES);
        assert_true(stats.emc_hits > 0);
        if (subtables == 1) {
            /* Looked up for the first window, then one burst in 16. */
            assert_true(stats.emc_bypassed >= (SP_SIM_MAX_FRAMES - 8192) / 2);
        } else {
            assert_int_equal(stats.emc_bypassed, 0);
        }
        sp_dp_destroy(dp);
    }
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_sim_reset();
}

/* Waits until the PMD has taken at least n packets; returns its stats. */
static struct sp_dp_pmd_stats
stats_after(struct sp_dp *dp, uint64_t n)
{
    struct sp_dp_pmd_stats stats;

    WAIT_UNTIL("packets through PMD 0",
               (sp_dp_pmd_stats(dp, 0, &stats), stats.packets), n);
    return stats;
}

/* Stops the PMD of an endless run and checks that the EMC answered 9
 * packets in 10 from 'early' to 'late' and that nothing was lost. */
static void
stop_emc_answering(struct sp_dp *dp, const struct sp_dp_pmd_stats *early,
                   const struct sp_dp_pmd_stats *late)
{
    stop_pmd();
    assert_true((late->emc_hits - early->emc_hits) * 10 >=
                (late->packets - early->packets) * 9);
    assert_conserved(dp);
    sp_dp_destroy(dp);
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_sim_reset();
}

/* An EMC bypassed while cold (1,000 flows that fit, each inserted 1 miss
 * in 100) fills from the bursts that still look up, which insert every
 * miss: by its second decision (about 139,000 packets in) it is on and
 * answers nearly every packet. */
static void
test_emc_bypass_recovers(void **state)
{
    (void)state;
    struct sp_dp_config config = {
        .n_ports = 3,
        .n_pmds = 1,
        .n_rxq = 1,
        .emc_entries = SP_DP_DEFAULT_EMC_ENTRIES,
        .emc_insert_inv_prob = 100,
    };
    struct sp_dp_pmd_stats early, late;
    struct sp_err err;
    struct sp_dp *dp = sp_dp_create(&config, &sp_sim_io, &err);

    assert_non_null(dp);
    assert_int_equal(sp_dp_flow_add(dp, "udp,actions=output:2", &err), 0);
    /* A second rule, so that the EMC is looked up at all. */
    assert_int_equal(
        sp_dp_flow_add(dp, "priority=1,tcp,actions=output:3", &err), 0);
    sp_sim_reset();
    make_udp_flows(1000, 1000);
    sp_sim.endless = true;
    start_pmd(dp);
    early = stats_after(dp, 160000);
    late = stats_after(dp, 200000);
    assert_true(early.emc_bypassed > 0);
    stop_emc_answering(dp, &early, &late);
}

/* A classifier of one rule, compared directly, answers for less than a
 * hash and an EMC probe: no burst looks the EMC up, even for one flow,
 * until a second rule (a new generation) makes the cache worth it. */
static void
test_emc_skipped_for_one_rule(void **state)
{
    (void)state;
    static const char *const rules[] = {"udp,actions=output:2", NULL};
    struct sp_dp *dp = make_dp(rules, 1);
    struct sp_dp_pmd_stats one, two, late;
    struct sp_err err;

    sp_sim_reset();
    make_udp_flows(1000, 1);
    sp_sim.endless = true;
    start_pmd(dp);
    one = stats_after(dp, 20000);
    assert_int_equal(one.emc_hits, 0);
    assert_true(one.emc_bypassed > 0);
    assert_int_equal(
        sp_dp_flow_add(dp, "priority=1,tcp,actions=output:3", &err), 0);
    two = stats_after(dp, one.packets + 1000);
    late = stats_after(dp, two.packets + 20000);
    stop_emc_answering(dp, &two, &late);
}

/* flow-dump's text, to be freed. Not inlined: inlined, GCC 12 (aarch64)
 * takes the text open_memstream wrote through the local for a dangling
 * pointer (-Wdangling-pointer). */
static __attribute__((noinline)) char *
dump_text(struct sp_dp *dp)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    sp_dp_flows_dump(dp, out);
    fclose(out);
    return text;
}

/* The counters of the dumped rule whose text ends the line with 'rule'
 * (priority=...,MATCH,actions=...); fails when there is none. */
static void
rule_counters(const char *dump, const char *rule, unsigned long long *packets,
              unsigned long long *bytes)
{
    for (const char *line = dump; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        size_t rlen = strlen(rule);
        double duration;
        unsigned long long idle;
        int used = 0;

        if (len > rlen && !strncmp(line + len - rlen, rule, rlen)) {
            assert_int_equal(sscanf(line,
                                    " duration=%lfs, n_packets=%llu, "
                                    "n_bytes=%llu, idle_age=%llu, %n",
                                    &duration, packets, bytes, &idle, &used),
                             4);
            assert_int_equal(used, (int)(len - rlen));
            assert_true(duration >= 0 && (double)idle <= duration + 1);
            return;
        }
        line += len + (end != NULL);
    }
    fail_msg("no rule '%s' in the dump:\n%s", rule, dump);
}

/* Rule counters are exact after a known traffic, per rule, whatever the
 * grouping; a dump reads back as the same rules. */
static void
test_rule_counters(void **state)
{
    (void)state;
    static const char *const none[] = {NULL};
    struct sp_dp *dp = make_dp(none, 1), *again;
    struct sp_err err;
    unsigned long long packets, bytes;
    char *text, *line, *save = NULL;

    sp_sim_reset();
    make_udp_flows(3000, 100);
    for (unsigned r = 0; r < 101; r++) {
        char rule[128];

        snprintf(rule, sizeof rule,
                 "priority=10,udp,tp_src=%u,actions=dec_ttl,output:2",
                 1000 + r);
        assert_int_equal(sp_dp_flow_add(dp, rule, &err), 0);
    }
    run_to_end(dp);
    text = dump_text(dp);
    for (unsigned r = 0; r < 101; r++) {
        char rule[128];

        snprintf(rule, sizeof rule,
                 "priority=10,udp,tp_src=%u,actions=dec_ttl,output:2",
                 1000 + r);
        rule_counters(text, rule, &packets, &bytes);
        /* Frame i is of flow i % 100: 30 each, rule 100 none. */
        assert_int_equal(packets, r < 100 ? 30 : 0);
        assert_int_equal(bytes, packets * 64);
    }
    again = make_dp(none, 1);
    for (line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (sp_dp_flow_add(again, line, &err)) {
            fail_msg("dumped rule '%s' does not parse: %s", line, err.msg);
        }
    }
    assert_int_equal(sp_dp_flow_count(again), 101);
    free(text);
    sp_dp_destroy(again);
    sp_dp_destroy(dp);
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_sim_reset();
}

/* flow-del as ovs-ofctl del-flows: --strict takes the rule with exactly
 * this match and priority, the loose form every rule within the match,
 * whatever its priority. */
static void
test_flow_del_strict_and_loose(void **state)
{
    (void)state;
    static const char *const rules[] = {
        "priority=10,udp,tp_src=1000,actions=output:2",
        "priority=20,udp,tp_src=1000,actions=output:2",
        "priority=10,udp,tp_src=1001,actions=output:2",
        "priority=10,tcp,tp_src=1000,actions=output:2",
        "priority=30,ip,actions=output:3",
        "priority=5,arp,actions=output:3",
        NULL,
    };
    struct sp_dp *dp = make_dp(rules, 1);
    struct sp_err err;
    unsigned n;
    char *text;

    /* Strict: the priority must be the rule's. */
    assert_int_equal(sp_dp_flow_del_matching(dp, "udp,tp_src=1000,priority=15",
                                             true, &n, &err),
                     0);
    assert_int_equal(n, 0);
    assert_int_equal(sp_dp_flow_del(dp, "udp,tp_src=1000,priority=15", &err),
                     -1);
    assert_non_null(strstr(err.msg, "no rule with this match"));
    /* Strict: the match must be the rule's, not one within it. */
    assert_int_equal(
        sp_dp_flow_del_matching(dp, "priority=30,udp", true, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(sp_dp_flow_del_matching(dp, "udp,tp_src=1000,priority=20",
                                             true, &n, &err),
                     0);
    assert_int_equal(n, 1);
    text = dump_text(dp);
    assert_null(strstr(text, "priority=20,"));
    assert_non_null(strstr(text, "priority=10,udp,tp_src=1000,"));
    free(text);
    /* Loose: every priority, every rule within it. */
    assert_int_equal(sp_dp_flow_del_matching(dp, "udp,tp_src=1000,priority=99",
                                             false, &n, &err),
                     0);
    assert_int_equal(n, 1);
    assert_int_equal(sp_dp_flow_count(dp), 4);
    assert_int_equal(sp_dp_flow_del_matching(dp, "ip", false, &n, &err), 0);
    assert_int_equal(n, 3); /* udp, tcp and ip itself */
    text = dump_text(dp);
    assert_non_null(strstr(text, "priority=5,arp,actions=output:3"));
    free(text);
    assert_int_equal(sp_dp_flow_del_matching(dp, "tcp", false, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(sp_dp_flow_del_matching(dp, "", false, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(sp_dp_flow_count(dp), 0);
    sp_dp_destroy(dp);
}

/* The batch delete takes each rule by its exact match and priority, says
 * which were there (one named twice is deleted once), and leaves the
 * others. */
static void
test_flows_del_exact(void **state)
{
    static const char *const rules[] = {
        "priority=10,udp,tp_src=1000,actions=output:2",
        "priority=20,udp,tp_src=1000,actions=output:2",
        "priority=30,ip,actions=output:3",
        "priority=5,arp,actions=output:3",
        NULL,
    };
    static const char *const names[] = {
        "priority=20,udp,tp_src=1000",
        "priority=15,udp,tp_src=1000",
        "priority=30,udp",
        "priority=5,arp",
        "priority=20,udp,tp_src=1000",
    };
    static const bool want[] = {true, false, false, true, false};
    struct sp_match matches[5];
    uint32_t priorities[5];
    bool deleted[5];
    struct sp_dp *dp;
    char *text;

    (void)state;
    for (unsigned i = 0; i < 5; i++) {
        matches[i] = sp_test_match(names[i], &priorities[i]);
    }
    dp = make_dp(rules, 2);
    sp_dp_flows_del_exact(dp, matches, priorities, 5, deleted);
    assert_memory_equal(deleted, want, sizeof want);
    assert_int_equal(sp_dp_flow_count(dp), 2);
    text = dump_text(dp);
    assert_non_null(strstr(text, "priority=10,udp,tp_src=1000,"));
    assert_non_null(strstr(text, "priority=30,ip,"));
    free(text);
    sp_dp_flows_del_exact(dp, matches, priorities, 0, deleted);
    sp_dp_destroy(dp);
}

/* flow-mod swaps a rule's actions under traffic: no packet goes without a
 * rule or is lost, both lists forwarded, and the rule's counters went on
 * counting across the changes. Refused changes change nothing. */
static void
test_flow_mod_under_traffic(void **state)
{
    (void)state;
    static const char *const rules[] = {
        "priority=10,udp,actions=output:2",
        NULL,
    };
    struct sp_dp *dp;
    struct sp_err err;
    struct sp_dp_port_stats p1, p2, p3;
    unsigned long long packets, bytes;
    unsigned n;
    char *text;

    sp_sim_reset();
    make_udp_flows(500, 7);
    sp_sim.endless = true;
    dp = make_dp(rules, 1);
    assert_int_equal(
        sp_dp_flow_mod(dp, "udp,actions=output:9", false, false, &n, &err),
        -1);
    assert_int_equal(sp_dp_flow_mod(dp, "priority=11,udp,actions=output:3",
                                    true, false, &n, &err),
                     -1);
    assert_non_null(strstr(err.msg, "no rule matches"));
    start_pmd(dp);
    for (unsigned round = 0; round < 100; round++) {
        char rule[64];
        uint64_t before = total_rx(dp);

        snprintf(rule, sizeof rule, "%sudp,actions=dec_ttl,output:%u",
                 round % 3 ? "priority=10," : "", 2 + round % 2);
        assert_int_equal(sp_dp_flow_mod(dp, rule, round % 3, false, &n, &err),
                         0);
        assert_int_equal(n, 1);
        WAIT_UNTIL("a frame received after the change", total_rx(dp),
                   before + 1);
    }
    stop_pmd();
    assert_int_equal(assert_conserved(dp), 0);
    sp_dp_port_stats(dp, 1, &p1);
    sp_dp_port_stats(dp, 2, &p2);
    sp_dp_port_stats(dp, 3, &p3);
    assert_true(p2.tx > 0 && p3.tx > 0);
    assert_int_equal(p1.rx, p2.tx + p3.tx);
    text = dump_text(dp);
    rule_counters(text, "priority=10,udp,actions=dec_ttl,output:3", &packets,
                  &bytes);
    assert_int_equal(packets, p1.rx);
    free(text);
    sp_dp_destroy(dp);
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_sim_reset();
}

/* The packets a rule (dump form) counted so far. */
static unsigned long long
rule_packets(struct sp_dp *dp, const char *rule)
{
    unsigned long long packets, bytes;
    char *text = dump_text(dp);

    rule_counters(text, rule, &packets, &bytes);
    free(text);
    return packets;
}

/* Waits until a rule counted at least 'want' packets. */
static void
wait_rule_packets(struct sp_dp *dp, const char *rule, unsigned long long want)
{
    char what[160];

    snprintf(what, sizeof what, "packets counted by %s", rule);
    WAIT_UNTIL(what, rule_packets(dp, rule), want);
}

/* A modify with reset_counts (OpenFlow's RESET_COUNTS) starts the rule's
 * counts again from 0, and they go on from there exactly; one without
 * keeps them. The rule is shadowed by a higher one while it is reset, so
 * that its count then is known. */
static void
test_flow_mod_reset_counts(void **state)
{
    (void)state;
    static const char *const rules[] = {
        "priority=10,udp,actions=output:2",
        NULL,
    };
    static const char *const low = "priority=10,udp,actions=output:2";
    struct sp_dp *dp;
    struct sp_err err;
    struct sp_dp_port_stats p2;
    unsigned long long before_reset;
    unsigned n;

    sp_sim_reset();
    make_udp_flows(500, 7);
    sp_sim.endless = true;
    dp = make_dp(rules, 1);
    start_pmd(dp);
    wait_rule_packets(dp, low, 1000);
    assert_int_equal(
        sp_dp_flow_add(dp, "priority=20,udp,actions=output:3", &err), 0);
    wait_rule_packets(dp, "priority=20,udp,actions=output:3", 1000);
    before_reset = rule_packets(dp, low);
    assert_true(before_reset >= 1000);

    /* Refused, it resets nothing; without reset_counts, nothing either. */
    assert_int_equal(sp_dp_flow_mod(dp, "priority=10,udp,actions=output:9",
                                    true, true, &n, &err),
                     -1);
    assert_int_equal(sp_dp_flow_mod(dp, low, true, false, &n, &err), 0);
    assert_int_equal(rule_packets(dp, low), before_reset);
    assert_int_equal(sp_dp_flow_mod(dp, low, true, true, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(rule_packets(dp, low), 0);

    /* Unshadowed, it counts from 0: all it sent since. */
    assert_int_equal(sp_dp_flow_del(dp, "priority=20,udp", &err), 0);
    wait_rule_packets(dp, low, 1000);
    stop_pmd();
    assert_int_equal(assert_conserved(dp), 0);
    sp_dp_port_stats(dp, 2, &p2);
    assert_int_equal(rule_packets(dp, low), p2.tx - before_reset);
    sp_dp_destroy(dp);
    assert_int_equal(sp_sim.live_buffers, 0);
    sp_sim_reset();
}

/* ---- the controller's packets ---- */

static void
count_notify(void *aux)
{
    __atomic_add_fetch((unsigned *)aux, 1, __ATOMIC_RELAXED);
}

/* ---- which queues a PMD polls ---- */

/* What polled_rx saw of one poll loop: polls[port][queue], and polls in
 * all; the loop is stopped once its first pair comes round again. */
static struct {
    struct sp_dp *dp;
    unsigned polls[SP_DP_MAX_PORTS + 1][8];
    unsigned first_port, first_queue, n, out_of_range;
    bool stopped; /* the rest of that loop's polls do not count */
} polled;

static uint32_t
polled_rx(unsigned port, unsigned queue, struct sp_packet *pkts, uint32_t max,
          struct sp_rx_drops *drops)
{
    (void)pkts, (void)max, (void)drops;
    if (polled.stopped) {
        return 0;
    }
    if (!polled.n++) {
        polled.first_port = port;
        polled.first_queue = queue;
    } else if (port == polled.first_port && queue == polled.first_queue) {
        sp_dp_stop(polled.dp);
        polled.stopped = true;
        return 0;
    }
    /* No assert here: a failure would leave the loop, RCU registered. */
    if (port >= 1 && port <= SP_DP_MAX_PORTS && queue < 8) {
        polled.polls[port][queue]++;
    } else {
        polled.out_of_range++;
    }
    return 0;
}

/* Each PMD polls, in one loop, each of its (port, queue) pairs once, and
 * those are the pairs sp_dp_queue_pmd gives it, for several numbers of
 * ports, queues and PMD threads. */
static void
test_queues_of_each_pmd(void **state)
{
    static const unsigned shapes[][3] = {
        {1, 1, 1}, {3, 1, 2}, {3, 2, 4}, {2, 5, 3},
        {4, 3, 7}, {1, 4, 4}, {2, 3, 1}, {5, 2, 12},
    };
    struct sp_io_ops io = sp_sim_io;

    (void)state;
    io.rx = polled_rx;
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        struct sp_dp_config config = {
            .n_ports = shapes[c][0],
            .n_rxq = shapes[c][1],
            .n_pmds = shapes[c][2],
            .emc_insert_inv_prob = 1,
        };
        struct sp_err err;

        for (unsigned pmd = 0; pmd < config.n_pmds; pmd++) {
            unsigned mine = 0;

            memset(&polled, 0, sizeof polled);
            polled.dp = sp_dp_create(&config, &io, &err);
            if (!polled.dp) {
                fail_msg("sp_dp_create: %s", err.msg);
            }
            /* A PMD with no queue never polls: stopped from here. */
            if (pmd >= config.n_ports * config.n_rxq) {
                sp_dp_stop(polled.dp);
            }
            sp_dp_pmd_run(polled.dp, pmd);
            assert_int_equal(polled.out_of_range, 0);
            for (unsigned p = 1; p <= config.n_ports; p++) {
                for (unsigned q = 0; q < config.n_rxq; q++) {
                    bool ours = sp_dp_queue_pmd(&config, p, q) == pmd;

                    assert_int_equal(polled.polls[p][q], ours);
                    mine += ours;
                }
            }
            assert_int_equal(polled.n, mine ? mine + 1 : 0);
            sp_dp_destroy(polled.dp);
        }
    }
}

/* Whether an input frame is IPv4 as the parser sees it. */
static bool
is_ipv4(const struct sp_sim_frame *f)
{
    struct sp_match m;

    sp_dp_frame_match(f->bytes, f->len, f->port, &m);
    return m.key.dl_type == htons(0x0800);
}

/* A classifier of one rule runs each burst by that rule alone (one run,
 * one list, an output-only list straight to its port): port 2 sends what
 * matched, in order and whole, the rule counts it exactly, the rest is
 * dropped as it should be. Rules: all frames, some (ip), to the port
 * they came in on (in_port drops), and to the controller as well, which
 * learns the rule of each. */
static void
test_one_rule_bursts(void **state)
{
    static const char *const rules[] = {
        "priority=3,in_port=1,actions=output:2",
        "priority=3,ip,actions=output:2",
        "priority=3,in_port=1,actions=output:1",
        "priority=3,ip,actions=controller:30,output:2",
    };
    (void)state;
    for (unsigned c = 0; c < sizeof rules / sizeof *rules; c++) {
        const char *const one[] = {rules[c], NULL};
        struct sp_dp_packet_in pins[SP_DP_PACKET_IN_QUEUE];
        struct rule_counts counts = {0};
        struct sp_dp_port_stats p1, p2;
        uint64_t want = 0, want_bytes = 0;
        unsigned sent = 0, n_pins, notified = 0;
        struct sp_dp *dp;

        sp_sim_reset();
        make_traffic(c == 3 ? 200 : 2000); /* within the controller queue */
        dp = make_dp(one, 1);
        sp_dp_controller_set(dp, c == 3, count_notify, &notified);
        run_to_end(dp);
        assert_conserved(dp);
        for (unsigned i = 0; i < sp_sim.n_in; i++) {
            bool match = c % 2 == 0 || is_ipv4(&sp_sim.in[i]);

            want += match;
            want_bytes += match ? sp_sim.in[i].len : 0;
            if (match && c != 2) {
                assert_true(sent < sp_sim.n_out[2]);
                assert_int_equal(sp_sim.out[2][sent].len, sp_sim.in[i].len);
                assert_memory_equal(sp_sim.out[2][sent].bytes,
                                    sp_sim.in[i].bytes, sp_sim.in[i].len);
                sent++;
            }
        }
        assert_true(want > 50 && (c % 2 == 0 || want < sp_sim.n_in));
        assert_int_equal(sp_sim.n_out[2], sent);
        assert_int_equal(sp_dp_flows_foreach(dp, add_counts, &counts), 0);
        assert_int_equal(counts.packets, want);
        assert_int_equal(counts.bytes, want_bytes);
        sp_dp_port_stats(dp, 1, &p1);
        sp_dp_port_stats(dp, 2, &p2);
        assert_int_equal(p1.drops[SP_DP_DROP_NO_MATCH], sp_sim.n_in - want);
        assert_int_equal(p1.drops[SP_DP_DROP_IN_PORT], c == 2 ? want : 0);
        assert_int_equal(p1.tx + sp_sim.n_out[1], 0);
        assert_int_equal(p2.tx, sent);
        n_pins = sp_dp_packet_in_take(dp, pins, SP_DP_PACKET_IN_QUEUE);
        assert_int_equal(n_pins, c == 3 ? want : 0);
        assert_int_equal(p1.packet_in, n_pins);
        for (unsigned i = 0; i < n_pins; i++) {
            assert_true(pins[i].rule);
            assert_int_equal(pins[i].priority, 3);
            assert_int_equal(pins[i].max_len, 30);
            sp_dp_packet_in_done(dp, &pins[i].pkt);
        }
        sp_dp_destroy(dp);
        assert_int_equal(sp_sim.live_buffers, 0);
    }
    sp_sim_reset();
}

/* The first input frame of a shape. */
static const struct sp_sim_frame *
frame_of(enum sp_pktgen_shape shape)
{
    return &sp_sim.in[shape];
}

/* The packet-ins a test took: how many, and from each rule. */
struct taken {
    unsigned n, misses, arps, from_port2;
};

/* Takes the queued packet-ins, checks what each says of its rule, frees
 * them, counting them in t; returns t->n. */
static unsigned
take_packet_ins(struct sp_dp *dp, struct taken *t)
{
    struct sp_dp_packet_in pins[64];
    unsigned n = sp_dp_packet_in_take(dp, pins, 64);

    for (unsigned i = 0; i < n; i++) {
        const struct sp_dp_packet_in *p = &pins[i];
        struct sp_dp_flow_stats rule;
        uint32_t priority = p->priority;
        bool found;

        assert_true(p->rule);
        /* The rule, which stays while packets are taken, by its id. */
        sp_dp_flows_stats_exact(dp, &p->match, &priority, 1, &rule, &found);
        assert_true(found);
        assert_int_equal(p->rule_id, rule.id);
        if (p->priority == 10) {
            assert_int_equal(p->max_len, 20);
            assert_int_equal(p->match.mask.in_port, 0xffff);
            assert_int_equal(p->pkt.in_port, 1);
            t->arps++;
        } else {
            assert_int_equal(p->priority, 0);
            assert_int_equal(p->max_len, UINT16_MAX);
            {
                static const struct sp_flow_key none;

                assert_memory_equal(&p->match.mask, &none, sizeof none);
            }
            t->from_port2 += p->pkt.in_port == 2;
            t->misses++;
        }
        sp_dp_packet_in_done(dp, &pins[i].pkt);
    }
    t->n += n;
    return t->n;
}

/* Takes the queued packet-ins into t; returns port 1's, queued or dropped
 * as the queue was full. */
static uint64_t
queued_or_full(struct sp_dp *dp, struct taken *t)
{
    struct sp_dp_port_stats p1;

    take_packet_ins(dp, t);
    p1 = port_stats(dp, 1);
    return p1.packet_in + p1.drops[SP_DP_DROP_CONTROLLER_FULL];
}

static void
test_controller_path(void **state)
{
    static const char *const rules[] = {
        "priority=0,actions=controller",
        "priority=10,in_port=1,arp,actions=controller:20,output:2",
        NULL,
    };
    unsigned notified = 0, arp_in = 0;
    struct taken taken = {0};
    struct sp_dp_port_stats p0, p1, p2, p3;
    const struct sp_sim_frame *udp, *arp;
    struct sp_err err;
    struct sp_dp *dp;

    (void)state;
    sp_sim_reset();
    make_traffic(600);
    for (unsigned i = 0; i < sp_sim.n_in; i++) {
        arp_in += i % SP_PKTGEN_SHAPE_COUNT == SP_PKTGEN_ARP;
    }
    udp = frame_of(SP_PKTGEN_IPV4_UDP);
    arp = frame_of(SP_PKTGEN_ARP);
    dp = make_dp(rules, 1);
    sp_dp_controller_set(dp, true, count_notify, &notified);
    start_pmd(dp);
    /* Every frame goes to the controller once: queued, or dropped as the
     * queue was full; taken as they come, so that not all are dropped. */
    WAIT_UNTIL("every frame at the controller, queued or dropped as the "
               "queue was full",
               queued_or_full(dp, &taken), sp_sim.n_in);
    sp_dp_port_stats(dp, 1, &p1);
    WAIT_UNTIL("the queued packet-ins taken", take_packet_ins(dp, &taken),
               p1.packet_in);
    assert_int_equal(p1.rx, sp_sim.n_in);
    assert_int_equal(p1.packet_in, taken.n);
    assert_true(taken.arps > 0 && taken.arps <= arp_in);
    assert_true(taken.misses > 0);
    assert_true(__atomic_load_n(&notified, __ATOMIC_RELAXED) > 0);
    /* The ARP frames went on to port 2 as well, whole. */
    sp_dp_port_stats(dp, 2, &p2);
    assert_int_equal(p2.tx, arp_in);

    /* PACKET_OUTs: actions checked against the frame's own headers. */
    assert_int_equal(
        sp_dp_packet_out(dp, arp->bytes, arp->len, 1, "output:9", &err), -1);
    assert_int_equal(sp_dp_packet_out(dp, arp->bytes, arp->len, 1,
                                      "mod_nw_src:192.0.2.9,output:2", &err),
                     -1);
    assert_non_null(strstr(err.msg, "needs a match on IPv4"));
    assert_int_equal(
        sp_dp_packet_out(dp, arp->bytes, arp->len, 1, "output:3", &err), 0);
    assert_int_equal(sp_dp_packet_out(dp, udp->bytes, udp->len,
                                      SP_DP_PORT_CONTROLLER,
                                      "mod_nw_src:192.0.2.9,output:2", &err),
                     0);
    /* Through the rules: the table-miss rule sends it back. */
    assert_int_equal(sp_dp_packet_out(dp, udp->bytes, udp->len, 2, NULL, &err),
                     0);
    WAIT_UNTIL("the PACKET_OUT to port 3 sent", port_stats(dp, 3).tx, 1);
    WAIT_UNTIL("the rewritten PACKET_OUT sent on port 2", port_stats(dp, 2).tx,
               arp_in + 1);
    WAIT_UNTIL("the PACKET_OUT from port 2 taken at the controller",
               (take_packet_ins(dp, &taken), taken.from_port2), 1);
    sp_dp_port_stats(dp, 0, &p0);
    sp_dp_port_stats(dp, 2, &p2);
    sp_dp_port_stats(dp, 3, &p3);
    assert_int_equal(p0.packet_out, 1);
    assert_int_equal(p0.tx + p0.packet_in, 0);
    assert_int_equal(p2.packet_out, 1);
    assert_int_equal(p2.packet_in, 1);
    sp_dp_port_stats(dp, 1, &p1);
    assert_int_equal(p1.packet_out, 1);
    pthread_mutex_lock(&sp_sim.lock);
    assert_int_equal(sp_sim.out[3][0].len, arp->len);
    assert_memory_equal(sp_sim.out[3][0].bytes, arp->bytes, arp->len);
    /* The rewritten source address, IPv4 header at 14. */
    {
        static const uint8_t rewritten[] = {192, 0, 2, 9};

        assert_memory_equal(sp_sim.out[2][arp_in].bytes + 14 + 12, rewritten,
                            4);
    }
    pthread_mutex_unlock(&sp_sim.lock);

    /* No controller: dropped, not queued. */
    sp_dp_controller_set(dp, false, NULL, NULL);
    assert_int_equal(sp_dp_packet_out(dp, udp->bytes, udp->len, 3, NULL, &err),
                     0);
    WAIT_UNTIL("the PACKET_OUT to port 3 dropped with no controller",
               port_stats(dp, 3).drops[SP_DP_DROP_NO_CONTROLLER], 1);
    stop_pmd();
    {
        struct sp_dp_packet_in left;

        assert_int_equal(sp_dp_packet_in_take(dp, &left, 1), 0);
    }
    assert_conserved(dp);

    /* With no PMD to run them, the queue fills and refuses; what it
     * holds is given back with the datapath. */
    for (unsigned i = 0; i < SP_DP_PACKET_OUT_QUEUE; i++) {
        assert_int_equal(
            sp_dp_packet_out(dp, udp->bytes, udp->len, 1, "output:2", &err),
            0);
    }
    assert_int_equal(
        sp_dp_packet_out(dp, udp->bytes, udp->len, 1, "output:2", &err), -1);
    assert_non_null(strstr(err.msg, "is full"));
    sp_dp_destroy(dp);
    assert_int_equal(sp_sim.live_buffers, 0);
}

/* One run of the input with port 'port' set to 'config' from the start;
 * returns the datapath (stopped) for its counters. */
static struct sp_dp *
run_with_port_config(const char *const *rules, unsigned port, uint32_t config)
{
    static unsigned notified;
    struct sp_dp *dp;

    sp_sim_reset();
    dp = make_dp(rules, 1);
    sp_dp_port_config_set(dp, port, config);
    assert_int_equal(sp_dp_port_config(dp, port), config);
    sp_dp_controller_set(dp, true, count_notify, &notified);
    run_to_end(dp);
    assert_conserved(dp);
    return dp;
}

/* PORT_MOD's config bits, as ovs-vswitchd applies them: NO_FWD drops
 * what goes to the port, NO_RECV what comes in, PORT_DOWN both (the port
 * not even polled), NO_PACKET_IN what would go from the port to the
 * controller; each counted on the in_port by its reason, and the
 * forwarding back once cleared, under traffic. */
static void
test_port_config(void **state)
{
    static const char *const to_port2[] = {"priority=1,actions=output:2",
                                           NULL};
    static const char *const to_both[] = {
        "priority=1,actions=controller,output:2", NULL};
    struct sp_dp_port_stats p1, p2;
    struct sp_dp *dp;
    uint64_t polls;

    static const struct {
        const char *const *rules;
        unsigned port;
        uint32_t config;
        unsigned reason, port2_tx;
    } cases[] = {
        {to_port2, 2, SP_DP_PORT_NO_FWD, SP_DP_DROP_NO_FWD, 0},
        {to_port2, 1, SP_DP_PORT_NO_RECV, SP_DP_DROP_NO_RECV, 0},
        {to_port2, 2, SP_DP_PORT_DOWN, SP_DP_DROP_PORT_DOWN, 0},
        /* The controller's copy dropped, the output kept. */
        {to_both, 1, SP_DP_PORT_NO_PACKET_IN, SP_DROP_NO_PACKET_IN, 500},
    };

    (void)state;
    make_traffic(500);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dp = run_with_port_config(cases[i].rules, cases[i].port,
                                  cases[i].config);
        p1 = port_stats(dp, 1), p2 = port_stats(dp, 2);
        assert_int_equal(p1.rx, 500);
        assert_int_equal(p1.drops[cases[i].reason], 500);
        assert_int_equal(p1.packet_in, 0);
        assert_int_equal(p2.tx, cases[i].port2_tx);
        sp_dp_destroy(dp);
    }

    /* A port down is not polled: a thousand polls of the others find the
     * input untouched; up again, all of it is received and forwarded. */
    sp_sim_reset();
    dp = make_dp(to_port2, 1);
    sp_dp_port_config_set(dp, 1, SP_DP_PORT_DOWN | SP_DP_PORT_NO_FWD);
    assert_int_equal(sp_dp_port_config(dp, 1),
                     SP_DP_PORT_DOWN | SP_DP_PORT_NO_FWD);
    sp_dp_port_config_set(dp, 9, SP_DP_PORT_DOWN); /* no port 9: ignored */
    assert_int_equal(sp_dp_port_config(dp, 9), 0);
    polls = sp_sim_polls();
    start_pmd(dp);
    WAIT_UNTIL("a thousand polls with port 1 down", sp_sim_polls() - polls,
               1000);
    assert_int_equal(port_stats(dp, 1).rx, 0);
    sp_dp_port_config_set(dp, 1, 0);
    WAIT_UNTIL("port 2 sent all once port 1 is up", port_stats(dp, 2).tx, 500);
    stop_pmd();
    assert_conserved(dp);
    sp_dp_destroy(dp);
    sp_sim_reset();
    assert_int_equal(sp_sim.live_buffers, 0);
}

/* A sync orders every PACKET_OUT queued before it: sent on, or at the
 * controller, by the time it returns (a BARRIER's promise); and while PMD
 * 0 runs, a full queue waits for it instead of refusing. Bursts of
 * PACKET_OUT_BURST fill the queue whenever the PMD falls behind. */
#define PACKET_OUT_BURST (SP_DP_PACKET_OUT_QUEUE + 44)
static void
test_packet_outs_before_sync(void **state)
{
    static const char *const rules[] = {
        "priority=10,in_port=1,actions=output:3",
        "priority=0,actions=controller",
        NULL,
    };
    const struct sp_sim_frame *udp;
    uint64_t to_port2 = 0, to_port3 = 0, to_controller = 0, polls;
    unsigned notified = 0;
    struct taken taken = {0};
    struct sp_err err;
    struct sp_dp *dp;

    (void)state;
    sp_sim_reset();
    make_traffic(SP_PKTGEN_SHAPE_COUNT);
    sp_sim.passes = 0; /* the ports receive nothing */
    udp = frame_of(SP_PKTGEN_IPV4_UDP);
    dp = make_dp(rules, 1);
    sp_dp_controller_set(dp, true, count_notify, &notified);
    polls = sp_sim_polls();
    start_pmd(dp);
    /* A sync with no PMD running yet has nothing to wait for. */
    WAIT_UNTIL("the PMD polling", sp_sim_polls(), polls + 1);
    for (unsigned round = 0; round < 24; round++) {
        for (unsigned i = 0; i < PACKET_OUT_BURST; i++) {
            /* Kinds in turn: actions, then the rules from port 1 (to
             * port 3) and from port 2 (to the controller). */
            unsigned kind = (round + i) % 3;
            const char *actions = kind ? NULL : "output:2";

            if (sp_dp_packet_out(dp, udp->bytes, udp->len, kind == 2 ? 2 : 1,
                                 actions, &err)) {
                fail_msg("PACKET_OUT %u of round %u refused: %s", i, round,
                         err.msg);
            }
            to_port2 += kind == 0;
            to_port3 += kind == 1;
            to_controller += kind == 2;
            if (i % 37 == 36 || i + 1 == PACKET_OUT_BURST) {
                sp_dp_sync(dp);
                assert_int_equal(port_stats(dp, 2).tx, to_port2);
                assert_int_equal(port_stats(dp, 3).tx, to_port3);
                take_packet_ins(dp, &taken); /* fewer than it takes */
                assert_int_equal(taken.from_port2, to_controller);
            }
        }
    }
    stop_pmd();
    assert_int_equal(port_stats(dp, 2).packet_in, to_controller);
    assert_conserved(dp);
    sp_dp_destroy(dp);
    assert_int_equal(sp_sim.live_buffers, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_forwarding, stop_left_pmd),
        cmocka_unit_test_teardown(test_foreach_counters, stop_left_pmd),
        cmocka_unit_test_teardown(test_foreach_deletes, stop_left_pmd),
        cmocka_unit_test_teardown(test_identical_across_variants,
                                  stop_left_pmd),
        cmocka_unit_test_teardown(test_tx_refused_is_counted, stop_left_pmd),
        cmocka_unit_test_teardown(test_lost_and_uncopied_are_counted,
                                  stop_left_pmd),
        cmocka_unit_test_teardown(test_changes_under_traffic, stop_left_pmd),
        cmocka_unit_test_teardown(test_flow_file_errors, stop_left_pmd),
        cmocka_unit_test_teardown(test_flow_file_line_ends, stop_left_pmd),
        cmocka_unit_test_teardown(test_drop_names, stop_left_pmd),
        cmocka_unit_test_teardown(test_flood_ports, stop_left_pmd),
        cmocka_unit_test_teardown(test_flow_dump_order, stop_left_pmd),
        cmocka_unit_test_teardown(test_flow_dump_round_trip, stop_left_pmd),
        cmocka_unit_test_teardown(test_profile, stop_left_pmd),
        cmocka_unit_test_teardown(test_clock_reads, stop_left_pmd),
        cmocka_unit_test_teardown(test_parse_errors_counted, stop_left_pmd),
        cmocka_unit_test_teardown(test_equal_actions_one_group, stop_left_pmd),
        cmocka_unit_test_teardown(test_emc_bypass, stop_left_pmd),
        cmocka_unit_test_teardown(test_emc_bypass_one_subtable, stop_left_pmd),
        cmocka_unit_test_teardown(test_emc_bypass_recovers, stop_left_pmd),
        cmocka_unit_test_teardown(test_emc_skipped_for_one_rule,
                                  stop_left_pmd),
        cmocka_unit_test_teardown(test_rule_counters, stop_left_pmd),
        cmocka_unit_test_teardown(test_flow_del_strict_and_loose,
                                  stop_left_pmd),
        cmocka_unit_test_teardown(test_flows_del_exact, stop_left_pmd),
        cmocka_unit_test_teardown(test_flow_mod_under_traffic, stop_left_pmd),
        cmocka_unit_test_teardown(test_flow_mod_reset_counts, stop_left_pmd),
        cmocka_unit_test_teardown(test_one_rule_bursts, stop_left_pmd),
        cmocka_unit_test_teardown(test_queues_of_each_pmd, stop_left_pmd),
        cmocka_unit_test_teardown(test_controller_path, stop_left_pmd),
        cmocka_unit_test_teardown(test_packet_outs_before_sync, stop_left_pmd),
        cmocka_unit_test_teardown(test_port_config, stop_left_pmd),
    };

    int failed;

    sp_sim_init(0, true, false);
    sp_sim.in = inputs;
    failed = cmocka_run_group_tests_name("datapath", tests, NULL, NULL);
    sp_sim_fini();
    return failed;
}
