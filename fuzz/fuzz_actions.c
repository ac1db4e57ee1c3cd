/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: a rule's actions executed on frames, every variant
 * this CPU runs against scalar. An input is a rule (flow syntax, up to the
 * first newline; ports 1-4 exist), a control byte and a frame. The batch
 * is 1-32 copies of the frame cut shorter and shorter (from ports 1-5 in
 * turn), each in a buffer of exactly its length after exactly the
 * headroom the context promises, so ASan sees any access outside. Each
 * variant's kernels (miniflow extract, IPv4 rewrite, batch copy) run the
 * whole batch, as the PMD loop does: parse, execute, flush every port.
 *
 * Checks:
 *  - every variant sends the same frames (bytes, length, offsets) to the
 *    same ports in the same order, and drops the same, as scalar;
 *  - every packet, original or copy, is sent or freed exactly once, and
 *    the drop counters count the freed ones plus the copies not made;
 *  - independent of the actions' code: a sent frame keeps its input
 *    frame's bytes wherever no action may touch them (the Ethernet
 *    addresses without mod_dl_*, everything past the VLAN tags and the
 *    IP and L4 headers' rewritten fields), moved by the 4 bytes of each
 *    VLAN tag pushed or stripped; and on frames the rule matches, an
 *    IPv4 header checksum and a TCP, UDP, SCTP or ICMPv6 checksum that
 *    were right (computed here) are right in every frame sent.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/actions_internal.h"
#include "fuzzlib.h"
#include "simdpath/flow_parse.h"
#include "simdpath/mfex.h"

#define N_PORTS  4
#define RULE_MAX 2048
#define MAX_BUFS (SP_BATCH_MAX * (SP_ACTIONS_MAX + 1))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A packet buffer and what became of it. */
struct buf {
    uint8_t *mem;
    struct sp_packet pkt;
    uint32_t origin; /* the input frame it is (a copy of) */
    int fate;        /* 0 live, 1 sent, 2 freed */
};

/* What a run sent, in order: grown as needed, as a batch may send
 * MAX_BUFS copies of the longest frame the fuzzer gives. Kept from input
 * to input. */
struct log {
    uint8_t *bytes;
    size_t len, cap;
};

struct run {
    struct sp_action_ctx ctx;
    struct sp_tx_batch tx[N_PORTS + 1];
    struct buf bufs[MAX_BUFS];
    uint32_t n_bufs, clone_budget, freed;
    struct log *log;
    const uint8_t *const *in_bytes; /* the input frames */
    const uint32_t *in_len;
    const struct sp_packet *parsed; /* their offsets, from scalar */
    const bool *matched;            /* the rule's match covers them */
    bool l4_exact; /* the match names TCP, UDP, ICMPv6 or SCTP */
    const struct sp_actions *actions;
};

static void __attribute__((noreturn))
fail(const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
fail(const char *rule, const char *fmt, ...)
{
    va_list args;

    fprintf(stderr, "fuzz_actions: ");
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\n  rule: %s\n", rule);
    abort();
}

static const char *current_rule;

static struct buf *
buf_new(struct run *r, uint32_t len, uint32_t origin)
{
    struct buf *b = &r->bufs[r->n_bufs++];
    uint32_t room = r->ctx.headroom;

    b->mem = malloc(room + len ? room + len : 1);
    b->pkt = (struct sp_packet){.data = b->mem + room, .len = len, .owner = b};
    b->origin = origin;
    b->fate = 0;
    return b;
}

static void
log_put(struct run *r, const void *p, size_t len)
{
    struct log *log = r->log;

    if (log->len + len > log->cap) {
        size_t cap = log->cap ? log->cap : 4096;

        while (cap < log->len + len) {
            cap *= 2;
        }
        uint8_t *bytes = realloc(log->bytes, cap);

        if (!bytes) {
            fail(current_rule, "no memory for %zu bytes of output", cap);
        }
        log->bytes = bytes;
        log->cap = cap;
    }
    memcpy(log->bytes + log->len, p, len);
    log->len += len;
}

/* Counts how many actions of a type the rule has. */
static uint32_t
count_actions(const struct sp_actions *a, enum sp_action_type type)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < a->n_actions; i++) {
        n += a->actions[i].type == type;
    }
    return n;
}

/* ---- checksums, computed here from the frame alone ---- */

static uint32_t
get16(const uint8_t *p)
{
    return (uint32_t)(p[0] << 8 | p[1]);
}

static uint32_t
sum_words(const uint8_t *p, uint32_t len)
{
    uint32_t sum = 0;

    for (uint32_t i = 0; i + 1 < len; i += 2) {
        sum += get16(p + i);
    }
    if (len & 1) {
        sum += (uint32_t)p[len - 1] << 8;
    }
    return sum;
}

static bool
folds_to_ones(uint32_t sum)
{
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum == 0xffff;
}

/* CRC-32C bit by bit, as SCTP stores it (least significant byte first),
 * with the checksum field taken as 0. */
static bool
sctp_valid(const uint8_t *p, uint32_t len)
{
    uint32_t crc = UINT32_MAX;

    for (uint32_t i = 0; i < len; i++) {
        crc ^= i >= 8 && i < 12 ? 0 : p[i];
        for (int b = 0; b < 8; b++) {
            crc = crc >> 1 ^ (0x82f63b78u & -(crc & 1));
        }
    }
    crc = ~crc;
    return p[8] == (uint8_t)crc && p[9] == (uint8_t)(crc >> 8) &&
           p[10] == (uint8_t)(crc >> 16) && p[11] == (uint8_t)(crc >> 24);
}

/* The IPv4 header checksum at l3: 1 valid, 0 not, -1 no header. */
static int
ipv4_header_valid(const uint8_t *f, uint32_t len, uint32_t l3)
{
    uint32_t hlen;

    if (l3 + 20 > len || f[l3] >> 4 != 4) {
        return -1;
    }
    hlen = (f[l3] & 15u) * 4;
    if (hlen < 20 || l3 + hlen > len) {
        return -1;
    }
    return folds_to_ones(sum_words(f + l3, hlen));
}

/*
 * The TCP, UDP, SCTP or ICMPv6 checksum of the datagram at l3: 1 valid,
 * 0 not, -1 when there is none to check (not IP, a fragment, cut short,
 * UDP without a checksum, another protocol). IPv6 extension headers are
 * walked when 'ext' allows (the actions see past them only with a match
 * that names the protocol).
 */
static int
l4_valid(const uint8_t *f, uint32_t len, uint32_t l3, bool ext)
{
    uint32_t l4, l4_len, pseudo;
    uint8_t proto;

    if (l3 >= len) {
        return -1;
    }
    if (f[l3] >> 4 == 4) {
        uint32_t hlen = (f[l3] & 15u) * 4, total;

        if (ipv4_header_valid(f, len, l3) < 0 || get16(f + l3 + 6) & 0x3fff) {
            return -1;
        }
        total = get16(f + l3 + 2);
        if (total < hlen || l3 + total > len) {
            return -1;
        }
        proto = f[l3 + 9];
        l4 = l3 + hlen;
        l4_len = total - hlen;
        pseudo = sum_words(f + l3 + 12, 8);
    } else if (f[l3] >> 4 == 6 && l3 + 40 <= len) {
        uint32_t end = l3 + 40 + get16(f + l3 + 4);

        if (end > len) {
            return -1;
        }
        proto = f[l3 + 6];
        l4 = l3 + 40;
        /* Hop-by-hop and destination options; not routing headers,
         * whose final destination the checksum would take. */
        while (ext && (proto == 0 || proto == 60)) {
            if (l4 + 8 > end) {
                return -1;
            }
            proto = f[l4];
            l4 += (f[l4 + 1] + 1u) * 8;
        }
        if (l4 > end) {
            return -1;
        }
        l4_len = end - l4;
        pseudo = sum_words(f + l3 + 8, 32);
    } else {
        return -1;
    }
    if (proto == 132) {
        return l4_len >= 12 ? sctp_valid(f + l4, l4_len) : -1;
    }
    if (!((proto == 6 && l4_len >= 20) ||
          (proto == 17 && l4_len >= 8 && get16(f + l4 + 6)) ||
          (proto == 58 && f[l3] >> 4 == 6 && l4_len >= 4))) {
        return -1;
    }
    return folds_to_ones(pseudo + (l4_len >> 16) + (l4_len & 0xffff) + proto +
                         sum_words(f + l4, l4_len));
}

/* The independent check of one sent frame against its input frame. */
static void
check_untouched(const struct run *r, const struct buf *b)
{
    const struct sp_packet *in = &r->parsed[b->origin];
    const uint8_t *src = r->in_bytes[b->origin];
    uint32_t in_len = r->in_len[b->origin];
    const struct sp_packet *out = &b->pkt;
    int64_t delta = (int64_t)out->len - in_len;
    uint32_t pushes = count_actions(r->actions, SP_ACT_PUSH_VLAN);
    uint32_t strips = count_actions(r->actions, SP_ACT_STRIP_VLAN);
    uint32_t from = 18 + 4 * strips;

    if (delta % 4 || delta > 4 * (int64_t)pushes ||
        delta < -4 * (int64_t)strips) {
        fail(current_rule, "frame %u of %u bytes sent with %u", b->origin,
             in_len, out->len);
    }
    if (!count_actions(r->actions, SP_ACT_DL_SRC) &&
        !count_actions(r->actions, SP_ACT_DL_DST) && in_len >= 12 &&
        out->len >= 12 && memcmp(out->data, src, 12)) {
        fail(current_rule, "frame %u sent with other Ethernet addresses",
             b->origin);
    }
    if (in->l3_ofs != SP_OFS_NONE && in->l3_ofs + 80u > from) {
        from = in->l3_ofs + 80u;
    }
    if (in->l4_ofs != SP_OFS_NONE && in->l4_ofs + 20u > from) {
        from = in->l4_ofs + 20u;
    }
    for (uint32_t j = from; j < in_len; j++) {
        if (out->data[j + delta] != src[j]) {
            fail(current_rule,
                 "frame %u (%u bytes, l3 %u l4 %u) sent with byte %u "
                 "changed (at %lld in the %u sent)",
                 b->origin, in_len, in->l3_ofs, in->l4_ofs, j,
                 (long long)(j + delta), out->len);
        }
    }
    /* Checksums that were right stay right, on frames the rule matches
     * (what the datapath gives the actions). */
    if (r->matched[b->origin] && in->l3_ofs != SP_OFS_NONE) {
        uint32_t l3 = in->l3_ofs, out_l3 = (uint32_t)(l3 + delta);
        bool ext = r->l4_exact;

        if (ipv4_header_valid(src, in_len, l3) == 1 &&
            ipv4_header_valid(out->data, out->len, out_l3) != 1) {
            fail(current_rule,
                 "frame %u sent with a bad IPv4 header "
                 "checksum",
                 b->origin);
        }
        if (l4_valid(src, in_len, l3, ext) == 1 &&
            l4_valid(out->data, out->len, out_l3, ext) != 1) {
            fail(current_rule, "frame %u sent with a bad L4 checksum",
                 b->origin);
        }
    }
}

static void
ctx_flush(struct sp_action_ctx *ctx, uint32_t port)
{
    struct run *r = ctx->aux;
    struct sp_tx_batch *tx = &r->tx[port];

    if (tx->count > SP_BATCH_MAX) {
        fail(current_rule, "port %u batch of %u", port, tx->count);
    }
    for (uint32_t i = 0; i < tx->count; i++) {
        struct sp_packet *p = tx->pkts[i];
        struct buf *b = p->owner;

        if (!b || b->fate) {
            fail(current_rule, "a packet sent %s",
                 b ? "after it was sent or freed" : "that is no packet");
        }
        b->fate = 1;
        check_untouched(r, b);
        log_put(r, &port, sizeof port);
        log_put(r, &p->len, sizeof p->len);
        log_put(r, &p->l3_ofs, sizeof p->l3_ofs);
        log_put(r, &p->l4_ofs, sizeof p->l4_ofs);
        log_put(r, p->data, p->len);
    }
    tx->count = 0;
}

static struct sp_packet *
ctx_clone(struct sp_action_ctx *ctx, const struct sp_packet *pkt)
{
    struct run *r = ctx->aux;
    const struct buf *from = pkt->owner;
    struct buf *b;

    if (!from || from->fate) {
        fail(current_rule, "a copy of a packet already sent or freed");
    }
    if (!r->clone_budget || r->n_bufs == MAX_BUFS) {
        return NULL;
    }
    r->clone_budget--;
    b = buf_new(r, pkt->len, from->origin);
    memcpy(b->pkt.data, pkt->data, pkt->len);
    b->pkt.in_port = pkt->in_port;
    b->pkt.l3_ofs = pkt->l3_ofs;
    b->pkt.l4_ofs = pkt->l4_ofs;
    b->pkt.status = pkt->status;
    return &b->pkt;
}

static void
ctx_free(struct sp_action_ctx *ctx, struct sp_packet *pkt)
{
    struct run *r = ctx->aux;
    struct buf *b = pkt->owner;

    if (!b || b->fate) {
        fail(current_rule, "a packet freed %s",
             b ? "after it was sent or freed" : "that is no packet");
    }
    b->fate = 2;
    r->freed++;
}

/* One variant (all kernels) on the batch; fills r. */
static void
run_variant(const struct sp_variant *v, struct run *r,
            const struct sp_actions *actions, uint32_t n, uint32_t headroom,
            uint32_t clone_budget, const struct sp_match *match,
            struct sp_packet *parsed_out, bool *matched_out)
{
    struct sp_packet *ptrs[SP_BATCH_MAX];
    struct sp_flow_key keys[SP_BATCH_MAX];
    struct sp_err err;
    uint64_t dropped = 0;

    if (sp_dispatch_set_impl(v->name, &err)) {
        fail(current_rule, "impl %s: %s", v->name, err.msg);
    }
    memset(&r->ctx, 0, sizeof r->ctx);
    memset(r->tx, 0, sizeof r->tx);
    r->ctx = (struct sp_action_ctx){.tx = r->tx,
                                    .n_ports = N_PORTS + 1,
                                    .headroom = headroom,
                                    .flush = ctx_flush,
                                    .clone = ctx_clone,
                                    .free = ctx_free,
                                    .aux = r};
    r->n_bufs = 0;
    r->freed = 0;
    r->log->len = 0;
    r->clone_budget = clone_budget;
    r->actions = actions;
    for (uint32_t i = 0; i < n; i++) {
        struct buf *b = buf_new(r, r->in_len[i], i);

        memcpy(b->pkt.data, r->in_bytes[i], r->in_len[i]);
        /* From every port in turn, and from one that is none: FLOOD,
         * IN_PORT and output:N see packets of several in_ports. */
        b->pkt.in_port = (uint16_t)(1 + i % (N_PORTS + 1));
        ptrs[i] = &b->pkt;
    }
    SP_KERNEL(mfex)(ptrs, n, keys);
    if (parsed_out) {
        for (uint32_t i = 0; i < n; i++) {
            parsed_out[i] = *ptrs[i];
            matched_out[i] = sp_match_covers(match, &keys[i]);
        }
    }
    sp_actions_execute(actions, ptrs, n, &r->ctx);
    for (uint32_t port = 0; port <= N_PORTS; port++) {
        ctx_flush(&r->ctx, port);
    }
    for (uint32_t i = 0; i < r->n_bufs; i++) {
        if (!r->bufs[i].fate) {
            fail(current_rule, "a packet neither sent nor freed (%s)",
                 v->name);
        }
        free(r->bufs[i].mem);
    }
    for (unsigned d = 0; d < SP_DROP_COUNT; d++) {
        dropped += r->ctx.drops[d];
    }
    if (dropped != r->freed + r->ctx.drops[SP_DROP_NO_BUFFER]) {
        fail(current_rule,
             "%llu drops counted, %u packets freed and %llu "
             "copies not made (%s)",
             (unsigned long long)dropped, r->freed,
             (unsigned long long)r->ctx.drops[SP_DROP_NO_BUFFER], v->name);
    }
}

static bool
port_exists(uint32_t port, void *aux)
{
    (void)aux;
    return port >= 1 && port <= N_PORTS;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct run want, got;
    static struct log log_want, log_got;
    static char rule[RULE_MAX];
    const uint8_t *nl = memchr(data, '\n', size < RULE_MAX ? size : RULE_MAX);
    const uint8_t *frame, *in_bytes[SP_BATCH_MAX];
    uint32_t in_len[SP_BATCH_MAX], n, step, len, headroom, budget;
    struct sp_packet parsed[SP_BATCH_MAX];
    bool matched[SP_BATCH_MAX];
    struct sp_flow_spec spec;
    struct sp_actions *actions;
    struct sp_err err;
    uint8_t control;

    if (!nl || (size_t)(data + size - nl) < 2) {
        return 0;
    }
    memcpy(rule, data, (size_t)(nl - data));
    rule[nl - data] = '\0';
    if (sp_flow_parse_match(rule, &spec, &err) || !spec.actions_ofs ||
        sp_match_validate(&spec.match, &err) ||
        sp_actions_parse(rule + spec.actions_ofs, &spec.match, port_exists,
                         NULL, &actions, &err)) {
        return 0;
    }
    current_rule = rule;
    control = nl[1];
    frame = nl + 2;
    len = (uint32_t)(data + size - frame);
    n = 1 + control % SP_BATCH_MAX;
    step = 1 + (control >> 5);
    for (uint32_t i = 0; i < n; i++) {
        in_bytes[i] = frame;
        in_len[i] = i * step < len ? len - i * step : 0;
    }
    /* Mostly the headroom the actions need; now and then less (every
     * packet dropped) or more. Copies run out now and then. */
    headroom = sp_actions_headroom(actions);
    if ((control & 0x18) == 0x08) {
        headroom += 4;
    } else if ((control & 0x18) == 0x10 && headroom) {
        headroom -= 4;
    }
    budget = control & 0x04 ? n / 2 : MAX_BUFS;

    want.log = &log_want;
    want.in_bytes = in_bytes;
    want.in_len = in_len;
    want.parsed = parsed;
    want.matched = matched;
    want.l4_exact =
        spec.match.mask.nw_proto == 0xff &&
        (spec.match.key.nw_proto == 6 || spec.match.key.nw_proto == 17 ||
         spec.match.key.nw_proto == 58 || spec.match.key.nw_proto == 132);
    got = want;
    got.log = &log_got;
    run_variant(sp_variant_get(0), &want, actions, n, headroom, budget,
                &spec.match, parsed, matched);
    for (unsigned v = 1; v < sp_variant_count(); v++) {
        const struct sp_variant *var = sp_variant_get(v);

        if (!sp_variant_supported(var)) {
            continue;
        }
        run_variant(var, &got, actions, n, headroom, budget, &spec.match, NULL,
                    NULL);
        if (log_got.len != log_want.len ||
            memcmp(got.ctx.drops, want.ctx.drops, sizeof want.ctx.drops) ||
            (log_want.len &&
             memcmp(log_got.bytes, log_want.bytes, log_want.len))) {
            fail(rule,
                 "variant %s sends or drops other packets than "
                 "scalar",
                 var->name);
        }
    }
    sp_dispatch_reset();
    sp_actions_free(actions);
    return 0;
}
