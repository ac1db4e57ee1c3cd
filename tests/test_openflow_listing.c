/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The OpenFlow channel's switch (src/cli/openflow.c, without its sockets)
 * over a real datapath: a flow stats request, an aggregate one, a loose
 * MODIFY and a loose DELETE of many rules take heap in proportion to
 * what they answer, not a listing of every rule; and what it keeps of a
 * rule beside the datapath is not taken for a rule ctl added again. The heap
 * is counted by wrapping the allocator (-Wl,--wrap), so the bound holds under
 * ASan and valgrind too.
 */
#include "cli/openflow.c"

#include <errno.h>
#include <malloc.h>

#include "openflow/internal.h"
#include "simio.h"
#include "testlib.h"

/* The ports' side of the channel, not used by these requests. */
const char *
sp_io_port_name(unsigned port)
{
    (void)port;
    return "sim";
}

void
sp_io_port_mac(unsigned port, uint8_t mac[6])
{
    memset(mac, 0, 6);
    mac[5] = (uint8_t)port;
}

bool
sp_io_port_link_up(unsigned port)
{
    (void)port;
    return true;
}

int
sp_io_port_set_link(unsigned port, bool up)
{
    (void)port, (void)up;
    return -ENOTSUP;
}

/* main.c's: nothing here connects to a controller, whose probe logs. */
void
sp_cli_log(enum sp_log_level level, const char *fmt, ...)
{
    (void)level, (void)fmt;
}

/* ---- the heap, counted ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

/* The blocks allocated while counting (open addressing; a freed slot is
 * TOMB), so that freeing a block from before does not hide growth. */
#define SLOTS (1u << 20)
#define TOMB  ((void *)1)
static void *blocks[SLOTS];
static size_t slots_used;
static bool counting;
static long long live, peak;

static size_t
slot_of(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;

    return (size_t)(h >> 44) & (SLOTS - 1);
}

static void
counted(void *p)
{
    size_t i = slot_of(p);

    if (!p || !counting) {
        return;
    }
    if (++slots_used > SLOTS / 2) {
        fprintf(stderr, "test_openflow_listing: too many blocks\n");
        abort();
    }
    while (blocks[i] && blocks[i] != TOMB) {
        i = (i + 1) & (SLOTS - 1);
    }
    blocks[i] = p;
    live += (long long)malloc_usable_size(p);
    peak = live > peak ? live : peak;
}

/* Whether p was counted: it is not any more. */
static bool
uncounted(void *p)
{
    if (!p) {
        return false;
    }
    for (size_t i = slot_of(p); blocks[i]; i = (i + 1) & (SLOTS - 1)) {
        if (blocks[i] == p) {
            blocks[i] = TOMB;
            live -= (long long)malloc_usable_size(p);
            return true;
        }
    }
    return false;
}

void *
__wrap_malloc(size_t n)
{
    void *p = __real_malloc(n);

    counted(p);
    return p;
}

void *
__wrap_calloc(size_t n, size_t size)
{
    void *p = __real_calloc(n, size);

    counted(p);
    return p;
}

void *
__wrap_realloc(void *p, size_t n)
{
    long long before = live;
    bool was_counted = uncounted(p);
    void *q = __real_realloc(p, n);

    if (!q) {
        if (was_counted) {
            counted(p);
        }
        return NULL;
    }
    counted(q);
    /* A copy has the old block and the new at once. */
    if (counting && before + (long long)malloc_usable_size(q) > peak) {
        peak = before + (long long)malloc_usable_size(q);
    }
    return q;
}

void
__wrap_free(void *p)
{
    (void)uncounted(p);
    __real_free(p);
}

static void
count_start(void)
{
    memset(blocks, 0, sizeof blocks);
    slots_used = 0;
    live = peak = 0;
    counting = true;
}

static long long
count_stop(void)
{
    counting = false;
    return peak;
}

/* ---- the channel's switch over a datapath ---- */

enum { N = 20000 };

static struct sp_dp_config config = {
    .n_ports = 2,
    .n_pmds = 1,
    .n_rxq = 1,
    .emc_entries = SP_DP_DEFAULT_EMC_ENTRIES,
    .emc_insert_inv_prob = SP_DP_DEFAULT_EMC_INV_PROB,
};

/* A session over the channel's own switch, as sp_of_channel_start makes
 * it (no thread, no sockets), HELLOs exchanged. */
static void
open_channel(struct sp_of_session *s)
{
    static const uint8_t hello[] = {4, 0, 0, 8, 0, 0, 0, 1};
    struct sp_err err;

    ch.dp = sp_dp_create(&config, &sp_sim_io, &err);
    if (!ch.dp) {
        fail_msg("sp_dp_create: %s", err.msg);
    }
    ch.config = &config;
    ch.sw = (struct sp_of_switch){
        .aux = &ch,
        .n_ports = config.n_ports,
        .flow_mod = sw_flow_mod,
        .flows = sw_flows,
        .port = sw_port,
        .table = sw_table,
    };
    clock_gettime(CLOCK_MONOTONIC, &ch.started);
    sp_of_session_init(s, &ch.sw);
    s->out.len = 0;
    assert_int_equal(sp_of_session_input(s, hello, sizeof hello), 0);
    assert_int_equal(s->out.len, 0);
}

static void
close_channel(struct sp_of_session *s)
{
    sp_of_session_free(s);
    meta_free_all();
    sp_dp_destroy(ch.dp);
    ch.dp = NULL;
}

/* A FLOW_MOD (xid and cookie i) with these actions and hard timeout, of
 * rule i (priority 100, nw_dst 10.0.0.0 + i) or, without with_match, of
 * every rule. */
static void
flow_mod(struct sp_of_session *s, uint8_t command, unsigned i,
         const char *actions, bool with_match, uint16_t hard_timeout)
{
    struct sp_of_flow_mod fm = {
        .command = command,
        .priority = 100,
        .hard_timeout = hard_timeout,
        .buffer_id = SP_OFP_NO_BUFFER,
        .out_port = SP_OFPP_ANY,
        .out_group = SP_OFPG_ANY,
        .cookie = i,
    };
    struct sp_of_buf b = {0};
    char match[64];

    snprintf(match, sizeof match, "ip,nw_dst=10.%u.%u.%u", i >> 16 & 255,
             i >> 8 & 255, i & 255);
    if (with_match) {
        fm.match = sp_test_match(match, NULL);
    }
    snprintf(fm.actions, sizeof fm.actions, "%s", actions);
    assert_int_equal(sp_of_encode_flow_mod(&b, i, &fm), 0);
    assert_int_equal(sp_of_session_input(s, b.data, b.len), 0);
    sp_of_buf_free(&b);
}

/* A FLOW or AGGREGATE request for every rule. */
static void
stats_request(struct sp_of_session *s, uint16_t type)
{
    static const struct sp_match all;
    struct sp_of_buf b = {0};

    assert_int_equal(sp_of_header(&b, SP_OFPT_MULTIPART_REQUEST, 5), 0);
    assert_int_equal(
        sp_of_put16(&b, type) || sp_of_put16(&b, 0) || !sp_of_buf_put(&b, 4) ||
            sp_of_put_bytes(&b, (uint8_t[]){SP_OFPTT_ALL}, 1) ||
            !sp_of_buf_put(&b, 3) || sp_of_put32(&b, SP_OFPP_ANY) ||
            sp_of_put32(&b, SP_OFPG_ANY) || !sp_of_buf_put(&b, 4 + 16) ||
            sp_of_encode_match(&b, &all),
        0);
    sp_of_finish(&b, 0);
    assert_int_equal(sp_of_session_input(s, b.data, b.len), 0);
    sp_of_buf_free(&b);
}

/* Reads the output as a peer would, until nothing is left: the number of
 * flow stats entries in the MULTIPART replies, and their bytes. */
static size_t
drain(struct sp_of_session *s, size_t *bytes, unsigned *errors)
{
    size_t entries = 0;

    *bytes = 0;
    /* Nothing to read while a reply is pending: it wants no input. */
    while (s->out.len || !sp_of_session_wants_input(s)) {
        const uint8_t *m = s->out.data;
        size_t len;

        assert_false(s->closing);
        if (!s->out.len) {
            assert_int_equal(sp_of_session_input(s, NULL, 0), 0);
            continue;
        }
        len = sp_of_get16(m + 2);
        *errors += m[1] == SP_OFPT_ERROR;
        if (m[1] == SP_OFPT_MULTIPART_REPLY &&
            sp_of_get16(m + 8) == SP_OFPMP_FLOW) {
            for (size_t at = 16; at < len; at += sp_of_get16(m + at)) {
                entries++;
            }
        }
        *bytes += len;
        sp_of_buf_consume(&s->out, len);
    }
    return entries;
}

static bool
count_output_2(void *aux, const struct sp_match *match, uint32_t priority,
               const struct sp_actions *actions,
               const struct sp_dp_flow_stats *stats)
{
    char text[64];

    (void)match, (void)priority, (void)stats;
    sp_actions_format(actions, text, sizeof text);
    *(unsigned *)aux += !strcmp(text, "output:2");
    return false;
}

/* N rules from a controller; a dump of them all, the sums, a modify of
 * them all and a delete of them all, each counted for the heap it takes
 * while it is handled and answered. Before the listing was a walk, each
 * took an array of every rule, over 1 KiB a rule. */
static void
test_listing_heap(void **state)
{
    struct sp_of_session s;
    size_t bytes;
    unsigned errors = 0, outputs = 0;
    long long heap;

    (void)state;
    open_channel(&s);
    for (unsigned i = 0; i < N; i++) {
        flow_mod(&s, SP_OFPFC_ADD, i, "output:1", true, 0);
    }
    drain(&s, &bytes, &errors);
    assert_int_equal(errors, 0);
    assert_int_equal(sp_dp_flow_count(ch.dp), N);

    count_start();
    stats_request(&s, SP_OFPMP_FLOW);
    assert_int_equal(drain(&s, &bytes, &errors), N);
    heap = count_stop();
    print_message("flow stats: %lld bytes of heap, %zu of reply\n", heap,
                  bytes);
    /* The reply, whole, the datapath's listing (a pointer a rule) and the
     * output buffer (256 KiB and a message, doubled as it grew). */
    assert_true(heap < (long long)bytes + 16LL * N + 1024 * 1024);
    assert_true(heap < 400LL * N);

    count_start();
    stats_request(&s, SP_OFPMP_AGGREGATE);
    assert_int_equal(drain(&s, &bytes, &errors), 0);
    heap = count_stop();
    print_message("aggregate: %lld bytes of heap\n", heap);
    assert_int_equal(bytes, 40);
    /* The datapath's own listing (a pointer a rule) and a constant. */
    assert_true(heap < 16LL * N + 64 * 1024);

    count_start();
    flow_mod(&s, SP_OFPFC_MODIFY, 0, "output:2", false, 0);
    drain(&s, &bytes, &errors);
    heap = count_stop();
    print_message("modify: %lld bytes of heap\n", heap);
    /* Each selected rule's match and priority (136 bytes), noted for
     * after the walk, and what the datapath's modifies keep until their
     * grace period. */
    assert_true(heap < 256LL * N);
    assert_int_equal(errors, 0);
    assert_int_equal(sp_dp_flows_foreach(ch.dp, count_output_2, &outputs), 0);
    assert_int_equal(outputs, N);

    count_start();
    flow_mod(&s, SP_OFPFC_DELETE, 0, "", false, 0);
    drain(&s, &bytes, &errors);
    heap = count_stop();
    print_message("delete: %lld bytes of heap\n", heap);
    assert_true(heap < 64LL * N);
    assert_int_equal(errors, 0);
    assert_int_equal(sp_dp_flow_count(ch.dp), 0);
    assert_int_equal(ch.n_meta, 0);
    close_channel(&s);
}

/* As if the hard timeout of the meta of rule i (10.0.0.0 + i, priority
 * 100) had passed twice over. */
static void
age(unsigned i)
{
    char match[64];
    struct sp_match m;
    struct meta *e;

    snprintf(match, sizeof match, "ip,nw_dst=10.0.0.%u", i);
    m = sp_test_match(match, NULL);
    e = meta_find(&m, 100);
    assert_non_null(e);
    e->modified_ms -= 10 * 1000;
}

/* A rule from OpenFlow, deleted through ctl and added again through ctl
 * with the same match and priority, is ctl's: the OpenFlow rule's cookie
 * and hard timeout left in the meta table must not expire it (they did:
 * the rule the operator added went 5 s later) nor show in a listing;
 * another OpenFlow rule still expires. */
static void
test_rule_added_again_by_ctl(void **state)
{
    static const char *const again = "priority=100,ip,nw_dst=10.0.0.1,"
                                     "actions=output:2";
    struct sp_of_session s;
    struct sp_err err;
    const uint8_t *entry;
    size_t bytes;
    unsigned errors = 0;

    (void)state;
    open_channel(&s);
    flow_mod(&s, SP_OFPFC_ADD, 1, "output:1", true, 5);
    flow_mod(&s, SP_OFPFC_ADD, 2, "output:1", true, 5);
    drain(&s, &bytes, &errors);
    assert_int_equal(errors, 0);
    assert_int_equal(sp_dp_flow_del(ch.dp, again, &err), 0);
    assert_int_equal(sp_dp_flow_add(ch.dp, again, &err), 0);
    age(1);
    age(2);
    expire_rules();
    /* 10.0.0.2's rule expired; ctl's 10.0.0.1 stays, without OpenFlow's
     * cookie and timeout. */
    assert_int_equal(sp_dp_flow_count(ch.dp), 1);
    stats_request(&s, SP_OFPMP_FLOW);
    assert_non_null(s.out.data);
    assert_int_equal(s.out.data[1], SP_OFPT_MULTIPART_REPLY);
    entry = s.out.data + 16;
    assert_int_equal(sp_of_get16(entry + 12), 100); /* priority */
    assert_int_equal(sp_of_get16(entry + 16), 0);   /* hard_timeout */
    assert_int_equal(sp_of_get64(entry + 24), 0);   /* cookie */
    assert_int_equal(drain(&s, &bytes, &errors), 1);
    assert_int_equal(errors, 0);
    close_channel(&s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listing_heap),
        cmocka_unit_test(test_rule_added_again_by_ctl),
    };

    sp_sim_init(0, false, true);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
