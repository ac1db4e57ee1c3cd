/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite: every variant byte-identical to scalar on random headers,
 * masks and values (IHL > 5, fragments, zero UDP checksums, short frames,
 * odd offsets); after each rewrite the header checksum verifies and the
 * TCP/UDP checksum equals a full recomputation written here, independent
 * of the incremental code. Frames end right before an inaccessible page.
 */
#include <stdlib.h>
#include <string.h>

#include "simdpath/random.h"
#include "testlib.h"

#define FRAME_MAX 192

/* One fenced buffer per batch slot; a frame sits at its very end. */
static struct sp_guarded slots[SP_BATCH_MAX];

static int
setup(void **state)
{
    sp_test_setup_variants(state);
    for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
        sp_guarded_alloc(&slots[i], FRAME_MAX, 1);
    }
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
        sp_guarded_free(&slots[i]);
    }
    return 0;
}

/* A test frame: its bytes, the parser's view of it, and what it is. */
struct frame {
    uint8_t bytes[FRAME_MAX];
    uint32_t len;      /* bytes in the frame, maybe fewer than built */
    uint32_t full_len; /* l3 + IPv4 total length */
    uint16_t l3_ofs, l4_ofs;
};

static uint32_t
l4_csum_ofs(uint8_t proto)
{
    return proto == 6 ? 16 : 6;
}

/* Builds a frame with valid checksums; 'cut' shortens it at random. */
static void
build_frame(struct sp_random *rng, struct frame *f, bool cut)
{
    static const uint8_t protos[] = {6, 17, 1, 132};
    uint32_t l3 = sp_random_below(rng, 2) ? 14 : sp_random_below(rng, 41);
    uint32_t ihl = sp_random_below(rng, 2) ? 5 : 5 + sp_random_below(rng, 11);
    uint8_t proto = protos[sp_random_below(rng, 4)];
    uint32_t l4_len = (proto == 6 ? 20 : 8) + sp_random_below(rng, 41);
    uint32_t tot = ihl * 4 + l4_len;
    uint8_t *ip = f->bytes + l3, *l4 = ip + ihl * 4;
    bool later = sp_random_below(rng, 8) == 0;

    sp_random_fill(rng, f->bytes, sizeof f->bytes);
    ip[0] = (uint8_t)(0x40 | ihl);
    sp_test_put_be16(ip + 2, (uint16_t)tot);
    /* Fragments: MF alone (first fragment) or a later offset. */
    ip[6] &= sp_random_below(rng, 4) ? 0x40 : 0x60;
    ip[7] = 0;
    if (later) {
        ip[6] |= (uint8_t)(1 + sp_random_below(rng, 0x1f));
        ip[7] = (uint8_t)sp_random_next(rng);
    }
    ip[9] = proto;
    sp_test_put_be16(ip + 10, 0);
    sp_test_put_be16(ip + 10,
                     (uint16_t)~sp_test_fold_be(sp_test_sum_be(ip, ihl * 4)));
    if ((proto == 6 || proto == 17) && !later) {
        uint32_t ofs = l4_csum_ofs(proto);
        uint16_t csum = sp_test_l4_checksum(ip, 0, l4, l4_len, ofs);

        if (proto == 17 && csum == 0) {
            csum = 0xffff;
        }
        sp_test_put_be16(l4 + ofs, csum);
        if (proto == 17 && sp_random_below(rng, 4) == 0) {
            sp_test_put_be16(l4 + ofs, 0); /* no checksum */
        }
    }
    f->l3_ofs = (uint16_t)l3;
    f->full_len = l3 + tot;
    f->len = cut ? sp_random_below(rng, f->full_len + 1) : f->full_len;
    f->l4_ofs = !later && l3 + ihl * 4 < f->len ? (uint16_t)(l3 + ihl * 4)
                                                : SP_OFS_NONE;
    if (l3 >= f->len) {
        f->l3_ofs = SP_OFS_NONE;
    }
}

/* Copies frames into the fenced slots and points packets at them. */
static void
load_frames(const struct frame *frames, uint32_t n, struct sp_packet *pkts,
            struct sp_packet **ptrs)
{
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *start = slots[i].data + FRAME_MAX - frames[i].len;

        memset(slots[i].data, SP_GUARD_FILL, FRAME_MAX - frames[i].len);
        memcpy(start, frames[i].bytes, frames[i].len);
        pkts[i] = (struct sp_packet){
            .data = start,
            .len = frames[i].len,
            .in_port = (uint16_t)i,
            .l3_ofs = frames[i].l3_ofs,
            .l4_ofs = frames[i].l4_ofs,
        };
        ptrs[i] = &pkts[i];
    }
}

static void
check_fences(uint32_t n, const struct frame *frames)
{
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t b = 0; b < FRAME_MAX - frames[i].len; b++) {
            assert_int_equal(slots[i].data[b], SP_GUARD_FILL);
        }
        sp_guarded_check(&slots[i]);
    }
}

/* Checks scalar's result against the contract, by other means: fields,
 * header checksum, full L4 recomputation, untouched packets. */
static void
check_semantics(const struct frame *in, const struct sp_packet *out,
                const struct sp_ipv4_set *set, bool expired)
{
    bool has_l3 = in->l3_ofs != SP_OFS_NONE;
    const uint8_t *old = in->bytes + (has_l3 ? in->l3_ofs : 0);
    const uint8_t *ip = out->data + (has_l3 ? in->l3_ofs : 0);
    uint32_t hlen = (old[0] & 0xfu) * 4;
    bool complete = has_l3 && in->len >= in->l3_ofs + 20u &&
                    in->len >= in->l3_ofs + hlen && hlen >= 20 &&
                    old[0] >> 4 == 4;
    uint32_t src, dst, want;
    uint8_t ttl;

    if (!complete || expired) {
        assert_memory_equal(out->data, in->bytes, in->len);
        assert_false(expired && (!complete || !set->dec_ttl || old[8] > 1));
        return;
    }
    assert_int_equal(sp_test_fold_be(sp_test_sum_be(ip, hlen)), 0xffff);
    memcpy(&src, ip + 12, 4);
    memcpy(&want, old + 12, 4);
    assert_int_equal(src,
                     (want & ~set->src_mask) | (set->src & set->src_mask));
    memcpy(&dst, ip + 16, 4);
    memcpy(&want, old + 16, 4);
    assert_int_equal(dst,
                     (want & ~set->dst_mask) | (set->dst & set->dst_mask));
    assert_int_equal(ip[1],
                     (old[1] & ~set->tos_mask) | (set->tos & set->tos_mask));
    ttl = (uint8_t)(old[8] - set->dec_ttl);
    assert_int_equal(ip[8],
                     (ttl & ~set->ttl_mask) | (set->ttl & set->ttl_mask));
    if (in->len == in->full_len && in->l4_ofs != SP_OFS_NONE &&
        (old[9] == 6 || old[9] == 17)) {
        uint32_t ofs = l4_csum_ofs(old[9]);
        const uint8_t *l4 = ip + hlen;
        uint16_t got = sp_test_get_be16(l4 + ofs);
        uint16_t full =
            sp_test_l4_checksum(ip, 0, l4, in->full_len - in->l4_ofs, ofs);

        if (old[9] == 17 && sp_test_get_be16(old + hlen + ofs) == 0) {
            assert_int_equal(got, 0);
        } else if (old[9] == 17 && full == 0) {
            assert_int_equal(got, 0xffff);
        } else {
            assert_int_equal(got, full);
        }
    }
}

/* Runs every variant on the frames; all must equal scalar, which must
 * meet the contract. */
static void
check_batch(const struct frame *frames, uint32_t n,
            const struct sp_ipv4_set *set)
{
    struct sp_packet pkts[SP_BATCH_MAX], *ptrs[SP_BATCH_MAX];
    static uint8_t want[SP_BATCH_MAX][FRAME_MAX];
    uint32_t want_expired = 0;

    for (unsigned v = 0; v < sp_n_runnable; v++) {
        uint32_t expired;

        load_frames(frames, n, pkts, ptrs);
        expired = sp_runnable[v]->kernels->ipv4_rewrite(ptrs, n, set);
        check_fences(n, frames);
        for (uint32_t i = 0; i < n; i++) {
            assert_ptr_equal(pkts[i].data,
                             slots[i].data + FRAME_MAX - frames[i].len);
            assert_int_equal(pkts[i].len, frames[i].len);
            assert_int_equal(pkts[i].l3_ofs, frames[i].l3_ofs);
            assert_int_equal(pkts[i].l4_ofs, frames[i].l4_ofs);
        }
        if (v == 0) {
            want_expired = expired;
            for (uint32_t i = 0; i < n; i++) {
                check_semantics(&frames[i], &pkts[i], set, expired >> i & 1);
                memcpy(want[i], pkts[i].data, frames[i].len);
            }
            continue;
        }
        if (expired != want_expired) {
            fail_msg("variant %s: expired %#x, scalar %#x",
                     sp_runnable[v]->name, expired, want_expired);
        }
        for (uint32_t i = 0; i < n; i++) {
            if (memcmp(pkts[i].data, want[i], frames[i].len)) {
                fail_msg("variant %s differs from scalar on packet %u of %u",
                         sp_runnable[v]->name, i, n);
            }
        }
    }
}

static void
random_set(struct sp_random *rng, struct sp_ipv4_set *set)
{
    uint32_t present = sp_random_below(rng, 32);
    bool full = sp_random_below(rng, 2);

    *set = (struct sp_ipv4_set){
        .src = (uint32_t)sp_random_next(rng),
        .dst = (uint32_t)sp_random_next(rng),
        .tos = (uint8_t)sp_random_next(rng),
        .ttl = (uint8_t)sp_random_next(rng),
        .dec_ttl = present & 16,
    };
    set->src_mask =
        present & 1 ? full ? UINT32_MAX : (uint32_t)sp_random_next(rng) : 0;
    set->dst_mask =
        present & 2 ? full ? UINT32_MAX : (uint32_t)sp_random_next(rng) : 0;
    set->tos_mask =
        present & 4 ? full ? 0xfc : (uint8_t)sp_random_next(rng) : 0;
    set->ttl_mask =
        present & 8 ? full ? 0xff : (uint8_t)sp_random_next(rng) : 0;
}

static void
test_random(void **state)
{
    (void)state;
    static struct frame frames[SP_BATCH_MAX];
    struct sp_random rng = {11};
    struct sp_ipv4_set set;

    for (int round = 0; round < 10000; round++) {
        uint32_t n = sp_test_batch_sizes[round % sp_test_batch_size_count];

        for (uint32_t i = 0; i < n; i++) {
            build_frame(&rng, &frames[i], sp_random_below(&rng, 4) == 0);
        }
        random_set(&rng, &set);
        check_batch(frames, n, &set);
    }
}

/* Every length from 0 to the whole frame, for every field. */
static void
test_every_length(void **state)
{
    (void)state;
    static struct frame frames[SP_BATCH_MAX];
    struct sp_random rng = {12};
    struct sp_ipv4_set set;

    for (int round = 0; round < 200; round++) {
        struct frame base;
        uint32_t n = 0;

        build_frame(&rng, &base, false);
        random_set(&rng, &set);
        for (uint32_t len = 0; len <= base.full_len; len++) {
            frames[n] = base;
            frames[n].len = len;
            if (base.l3_ofs >= len) {
                frames[n].l3_ofs = SP_OFS_NONE;
            }
            if (base.l4_ofs >= len) {
                frames[n].l4_ofs = SP_OFS_NONE;
            }
            if (++n == SP_BATCH_MAX || len == base.full_len) {
                check_batch(frames, n, &set);
                n = 0;
            }
        }
    }
}

/* TTL 0, 1, 2 and 255 under dec_ttl: the first two are refused. */
static void
test_dec_ttl(void **state)
{
    (void)state;
    static const uint8_t ttls[] = {0, 1, 2, 255};
    static struct frame frames[4];
    struct sp_random rng = {13};
    struct sp_ipv4_set set = {.dec_ttl = true};

    for (unsigned i = 0; i < 4; i++) {
        uint8_t *ip;

        do {
            build_frame(&rng, &frames[i], false);
        } while (frames[i].l3_ofs == SP_OFS_NONE);
        ip = frames[i].bytes + frames[i].l3_ofs;
        ip[8] = ttls[i];
        sp_test_put_be16(ip + 10, 0);
        sp_test_put_be16(ip + 10, (uint16_t)~sp_test_fold_be(
                                      sp_test_sum_be(ip, (ip[0] & 0xfu) * 4)));
    }
    for (unsigned v = 0; v < sp_n_runnable; v++) {
        struct sp_packet pkts[4], *ptrs[4];

        load_frames(frames, 4, pkts, ptrs);
        assert_int_equal(sp_runnable[v]->kernels->ipv4_rewrite(ptrs, 4, &set),
                         0x3);
        assert_int_equal(pkts[0].data[frames[0].l3_ofs + 8], 0);
        assert_int_equal(pkts[1].data[frames[1].l3_ofs + 8], 1);
        assert_int_equal(pkts[2].data[frames[2].l3_ofs + 8], 1);
        assert_int_equal(pkts[3].data[frames[3].l3_ofs + 8], 254);
    }
    check_batch(frames, 4, &set);
}

/* Gives the header at ip (hlen bytes) the checksum 'csum' and keeps it
 * valid, by its identification field. */
static void
set_header_csum(uint8_t *ip, uint32_t hlen, uint16_t csum)
{
    sp_test_put_be16(ip + 4, 0);
    sp_test_put_be16(ip + 10, csum);
    sp_test_put_be16(ip + 4,
                     (uint16_t)~sp_test_fold_be(sp_test_sum_be(ip, hlen)));
}

/* The sets of the TTL alone: dec_ttl, a whole TTL, and parts of one. */
static const struct sp_ipv4_set ttl_sets[] = {
    {.dec_ttl = true},
    {.ttl = 64, .ttl_mask = 0xff},
    {.ttl = 0x80, .ttl_mask = 0xc0, .dec_ttl = true},
    {.ttl = 0x5a, .ttl_mask = 0x0f},
    {.ttl = 7, .ttl_mask = 0xff, .dec_ttl = true},
};

/* Batches of whole IPv4 headers of 20 bytes, with TTLs and header
 * checksums at their edges, some spoiled so that a group of four holds
 * one packet the rewrite must leave or take apart: one byte short or just
 * the header, no L3, IHL 6 (whole or cut after 20 bytes) or 4, version 6,
 * a TTL that expires. */
static void
test_ttl_edges(void **state)
{
    (void)state;
    static const uint8_t ttls[] = {0, 1, 2, 3, 127, 128, 254, 255};
    static const uint16_t csums[] = {0x0000, 0x0001, 0x00ff, 0x0100,
                                     0x7fff, 0xfeff, 0xfffe, 0xffff};
    static struct frame frames[SP_BATCH_MAX];
    struct sp_random rng = {14};

    for (int round = 0; round < 3000; round++) {
        const struct sp_ipv4_set *set = &ttl_sets[round % 5];
        uint32_t n = round % 3 ? SP_BATCH_MAX : 1 + round / 3 % SP_BATCH_MAX;

        for (uint32_t i = 0; i < n; i++) {
            struct frame *f = &frames[i];
            uint8_t *ip;
            uint32_t hlen = 20;

            do {
                build_frame(&rng, f, false);
            } while (f->l3_ofs == SP_OFS_NONE || f->bytes[f->l3_ofs] != 0x45);
            ip = f->bytes + f->l3_ofs;
            ip[8] = sp_random_below(&rng, 2)
                        ? ttls[sp_random_below(&rng, 8)]
                        : (uint8_t)(2 + sp_random_below(&rng, 254));
            switch (sp_random_below(&rng, 32)) {
            case 0:
                f->len = f->l3_ofs + 19u;
                break;
            case 1:
                f->len = f->l3_ofs + 20u;
                break;
            case 2:
                f->l3_ofs = SP_OFS_NONE;
                break;
            case 3:
                ip[0] = 0x46;
                hlen = 24;
                f->l4_ofs = SP_OFS_NONE; /* not where the header says */
                break;
            case 4:
                ip[0] = 0x44;
                break;
            case 5:
                ip[0] = 0x65;
                break;
            case 6:
                ip[0] = 0x46;
                hlen = 24;
                f->len = f->l3_ofs + 20 + sp_random_below(&rng, 4);
                break;
            default:
                break;
            }
            set_header_csum(ip, hlen,
                            sp_random_below(&rng, 2)
                                ? csums[sp_random_below(&rng, 8)]
                                : (uint16_t)sp_random_next(&rng));
        }
        check_batch(frames, n, set);
    }
}

/* dec_ttl alone on every header checksum, IHL 5 and more, every TTL from
 * 0: the SIMD variants update the checksum with no sum of terms. */
static void
test_dec_ttl_every_checksum(void **state)
{
    (void)state;
    static struct frame frames[SP_BATCH_MAX];
    const struct sp_ipv4_set set = {.dec_ttl = true};
    struct sp_random rng = {15};

    for (uint32_t csum = 0; csum <= UINT16_MAX;) {
        uint32_t n = 0;

        for (; n < SP_BATCH_MAX && csum <= UINT16_MAX; n++, csum++) {
            struct frame *f = &frames[n];
            uint8_t *ip;

            do {
                build_frame(&rng, f, false);
            } while (f->l3_ofs == SP_OFS_NONE);
            ip = f->bytes + f->l3_ofs;
            ip[8] = (uint8_t)csum;
            set_header_csum(ip, (ip[0] & 0xfu) * 4, (uint16_t)csum);
        }
        check_batch(frames, n, &set);
    }
}

/* Offsets at the top of l3_ofs's range, in frames longer than 64 KiB:
 * l3_ofs 0xfffe with its header ending the frame, and SP_OFS_NONE (no L3)
 * before bytes that would be a header there, in groups of four with three
 * plain headers. */
static void
test_ttl_large_offsets(void **state)
{
    (void)state;
    enum { LEN = SP_OFS_NONE + 64 };
    static const struct {
        uint32_t len;
        uint16_t l3_ofs;
        bool rewritten;
    } cases[] = {
        {0xfffeu + 20, 0xfffe, true}, {0xfffeu + 19, 0xfffe, false},
        {LEN, SP_OFS_NONE, false},    {0xffffu + 20, SP_OFS_NONE, false},
        {0xfffdu + 20, 0xfffd, true},
    };
    struct sp_guarded bufs[4];
    uint8_t *want = malloc(4 * LEN);

    assert_non_null(want);
    for (unsigned i = 0; i < 4; i++) {
        sp_guarded_alloc(&bufs[i], LEN, 1);
    }
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (unsigned at = 0; at < 4; at++) {
            const struct sp_ipv4_set *set = &ttl_sets[(c + at) % 5];
            uint32_t want_expired = 0;

            for (unsigned v = 0; v < sp_n_runnable; v++) {
                struct sp_packet pkts[4], *ptrs[4];
                uint32_t expired;

                for (unsigned i = 0; i < 4; i++) {
                    uint16_t l3 = i == at ? cases[c].l3_ofs : 14;
                    /* Where the header is, or would be with no L3. */
                    uint8_t *ip =
                        bufs[i].data + (l3 == SP_OFS_NONE ? SP_OFS_NONE : l3);

                    memset(bufs[i].data, 0x5a, LEN);
                    memset(ip, 0, 20);
                    ip[0] = 0x45;
                    ip[8] = 100;
                    set_header_csum(ip, 20, 0xfffe);
                    pkts[i] = (struct sp_packet){
                        .data = bufs[i].data,
                        .len = i == at ? cases[c].len : 34,
                        .l3_ofs = l3,
                        .l4_ofs = SP_OFS_NONE,
                    };
                    ptrs[i] = &pkts[i];
                }
                expired = sp_runnable[v]->kernels->ipv4_rewrite(ptrs, 4, set);
                for (unsigned i = 0; i < 4; i++) {
                    sp_guarded_check(&bufs[i]);
                }
                if (v == 0) {
                    const uint8_t *ip =
                        bufs[at].data + (cases[c].l3_ofs == SP_OFS_NONE
                                             ? SP_OFS_NONE
                                             : cases[c].l3_ofs);

                    assert_int_equal(expired, 0);
                    assert_int_equal(ip[8] != 100, cases[c].rewritten);
                    for (unsigned i = 0; i < 4; i++) {
                        memcpy(want + i * LEN, bufs[i].data, LEN);
                    }
                    want_expired = expired;
                    continue;
                }
                assert_int_equal(expired, want_expired);
                for (unsigned i = 0; i < 4; i++) {
                    if (memcmp(bufs[i].data, want + i * LEN, LEN)) {
                        fail_msg("variant %s differs from scalar on packet "
                                 "%u, case %u",
                                 sp_runnable[v]->name, i, c);
                    }
                }
            }
        }
    }
    for (unsigned i = 0; i < 4; i++) {
        sp_guarded_free(&bufs[i]);
    }
    free(want);
}

/* A known answer: 192.0.2.1 -> 198.51.100.2 TCP, every field set. */
static void
test_known_answer(void **state)
{
    (void)state;
    static const uint8_t in[] = {
        0x45, 0x00, 0x00, 0x28, 0x00, 0x01, 0x40, 0x00, 0x40, 0x06,
        0xb1, 0x1f, 0xc0, 0x00, 0x02, 0x01, 0xc6, 0x33, 0x64, 0x02,
        0x30, 0x39, 0x00, 0x50, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
        0x00, 0x00, 0x50, 0x02, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    struct frame f = {.len = sizeof in, .full_len = sizeof in};
    const struct sp_ipv4_set set = {
        .src = 0x0100000a, /* 10.0.0.1 in network order, little host */
        .src_mask = UINT32_MAX,
        .dst = 0x0201a8c0,
        .dst_mask = UINT32_MAX,
        .tos = 0xb8,
        .tos_mask = 0xfc,
        .ttl = 9,
        .ttl_mask = 0xff,
    };
    uint8_t *ip = f.bytes;

    memcpy(f.bytes, in, sizeof in);
    sp_test_put_be16(ip + 10, 0);
    sp_test_put_be16(ip + 10,
                     (uint16_t)~sp_test_fold_be(sp_test_sum_be(ip, 20)));
    sp_test_put_be16(ip + 36, sp_test_l4_checksum(ip, 0, ip + 20, 20, 16));
    f.l3_ofs = 0;
    f.l4_ofs = 20;
    check_batch(&f, 1, &set);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answer),
        cmocka_unit_test(test_dec_ttl),
        cmocka_unit_test(test_ttl_edges),
        cmocka_unit_test(test_dec_ttl_every_checksum),
        cmocka_unit_test(test_ttl_large_offsets),
        cmocka_unit_test(test_every_length),
        cmocka_unit_test(test_random),
    };

    return cmocka_run_group_tests_name("ipv4_rewrite", tests, setup, teardown);
}
