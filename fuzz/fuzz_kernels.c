/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: every kernel but miniflow extract (fuzz_mfex has it),
 * every variant this CPU runs with code of its own against scalar, on
 * inputs decoded from the fuzz bytes. The first byte picks the kernel:
 *
 *  - hash: 0-39 keys and a mask (or none) from the bytes;
 *  - emc: an EMC of 1-8 buckets whose slots (signature, generation, key,
 *    rule) come from the bytes, looked up with keys that are copies of
 *    slots (maybe changed in one byte) or new, with their signature or
 *    their hash;
 *  - classifier: 0-63 rules from seeded keys and masks of the bytes'
 *    shapes in a classifier (both bucket layouts, overflow buckets
 *    however small), every subtable probed with keys of rules (maybe
 *    changed where the mask does not look) or other keys, any todo;
 *  - batch_copy: 0-32 pointers and any select, into exactly as many slots
 *    as are selected;
 *  - ipv4_rewrite: 1-32 frames (each in a buffer of exactly its length)
 *    with any l3_ofs, any set; besides the comparison, bytes outside the
 *    IPv4 header and the L4 checksum stay as they were, and a header
 *    checksum that verified before verifies after;
 *  - key_match: a mask and a value under it, 0-32 keys that are the value
 *    with bytes of the input outside the mask (maybe one byte inside it
 *    changed) or bytes of the input, any todo.
 *
 * Inputs are in buffers of exactly their size, so ASan sees any access
 * past them. Any difference aborts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzlib.h"
#include "datapath/cls_layout.h"
#include "simdpath/emc.h"
#include "simdpath/match.h"
#include "simdpath/random.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct sp_variant *scalar;

static void __attribute__((noreturn))
differs(const char *kernel, const struct sp_variant *v, const char *what,
        uint32_t i)
{
    fprintf(stderr,
            "fuzz_kernels: %s: variant %s differs from scalar: %s "
            "(item %u)\n",
            kernel, v->name, what, i);
    abort();
}

static struct sp_flow_key *
keys_alloc(uint32_t n)
{
    /* aligned_alloc wants a multiple of the alignment, so n >= 1. */
    return aligned_alloc(64, (n ? n : 1) * sizeof(struct sp_flow_key));
}

/* ---- hash ---- */

static void
fuzz_hash(struct sp_fuzz_input *in)
{
    const struct sp_variant *vs[SP_VARIANT_MAX];
    unsigned nv = sp_fuzz_variants(SP_KERNEL_hash, vs);
    uint32_t n = sp_fuzz_byte(in) % 40;
    bool masked = sp_fuzz_byte(in) & 1;
    struct sp_flow_key *mask = masked ? keys_alloc(1) : NULL;
    struct sp_flow_key *keys = keys_alloc(n);
    uint32_t *want = malloc((n ? n : 1) * sizeof *want);
    uint32_t *got = malloc((n ? n : 1) * sizeof *got);

    if (mask) {
        sp_fuzz_bytes(in, mask, sizeof *mask);
    }
    sp_fuzz_bytes(in, keys, n * sizeof *keys);
    scalar->kernels->hash(keys, mask, n, want);
    for (unsigned v = 0; v < nv; v++) {
        memset(got, 0x5a, (n ? n : 1) * sizeof *got);
        vs[v]->kernels->hash(keys, mask, n, got);
        for (uint32_t i = 0; i < n; i++) {
            if (got[i] != want[i]) {
                differs("hash", vs[v], "hash", i);
            }
        }
    }
    free(got);
    free(want);
    free(keys);
    free(mask);
}

/* ---- emc ---- */

static void
fuzz_emc(struct sp_fuzz_input *in)
{
    const struct sp_variant *vs[SP_VARIANT_MAX];
    unsigned nv = sp_fuzz_variants(SP_KERNEL_emc, vs);
    struct sp_emc emc;
    struct sp_err err;
    uint32_t buckets = 1u << (sp_fuzz_byte(in) % 4);
    uint32_t entries = buckets * SP_EMC_WAYS;
    uint32_t n = sp_fuzz_byte(in) % (SP_BATCH_MAX + 1);
    uint64_t gen = 1 + sp_fuzz_byte(in) % 2;
    struct sp_flow_key *keys = keys_alloc(n);
    uint32_t hashes[SP_BATCH_MAX];
    const struct sp_rule *want_rules[SP_BATCH_MAX], *got_rules[SP_BATCH_MAX];
    uint32_t want, got;

    if (sp_emc_init(&emc, entries, 1, &err)) {
        fprintf(stderr, "fuzz_kernels: %s\n", err.msg);
        abort();
    }
    /* A slot's byte says whether it is filled, and with which generation
     * (0 is never current); its key and signature follow. */
    for (uint32_t e = 0; e < entries; e++) {
        uint8_t how = sp_fuzz_byte(in);

        emc.gens[e] = how & 1 ? 1 + (how >> 1 & 1) : 0;
        emc.rules[e] = (const struct sp_rule *)(uintptr_t)(64 * (e + 1));
        sp_fuzz_bytes(in, emc.keys[e].bytes, how >> 2 & 1 ? 64 : 8);
        if (how >> 3 & 1) {
            scalar->kernels->hash(&emc.keys[e], NULL, 1, &emc.sigs[e]);
            /* In its own bucket, as the EMC puts it. */
            emc.sigs[e] = (emc.sigs[e] & ~(buckets - 1)) | e / SP_EMC_WAYS;
        } else {
            sp_fuzz_bytes(in, &emc.sigs[e], 4);
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        uint8_t how = sp_fuzz_byte(in);
        uint32_t e = sp_fuzz_byte(in) % entries;

        if (how & 1) {
            keys[i] = emc.keys[e];
            hashes[i] = emc.sigs[e];
            if (how & 2) {
                keys[i].bytes[sp_fuzz_byte(in) % 64] ^= 1u << (how >> 5);
            }
        } else {
            sp_fuzz_bytes(in, keys[i].bytes, 64);
            scalar->kernels->hash(&keys[i], NULL, 1, &hashes[i]);
        }
    }
    want = scalar->kernels->emc(&emc, gen, keys, hashes, n, want_rules);
    if (want & ~sp_batch_lanes(n)) {
        fprintf(stderr, "fuzz_kernels: scalar EMC hits outside the batch\n");
        abort();
    }
    for (unsigned v = 0; v < nv; v++) {
        got = vs[v]->kernels->emc(&emc, gen, keys, hashes, n, got_rules);
        if (got != want) {
            differs("emc", vs[v], "hit mask", 0);
        }
        for (uint32_t i = 0; i < n; i++) {
            if (want >> i & 1 && got_rules[i] != want_rules[i]) {
                differs("emc", vs[v], "rule", i);
            }
        }
    }
    free(keys);
    sp_emc_destroy(&emc);
}

/* ---- classifier ---- */

#define CLS_RULES_MAX 64

static void
fuzz_classifier(struct sp_fuzz_input *in)
{
    const struct sp_variant *vs[SP_VARIANT_MAX];
    unsigned nv = sp_fuzz_variants(SP_KERNEL_classifier, vs);
    struct sp_cls *cls = sp_cls_create(NULL);
    struct sp_random rng = {0};
    struct sp_match matches[CLS_RULES_MAX];
    uint32_t n_rules = sp_fuzz_byte(in) % CLS_RULES_MAX;
    uint8_t opts = sp_fuzz_byte(in);
    uint32_t n = sp_fuzz_byte(in) % (SP_BATCH_MAX + 1), todo;
    struct sp_flow_key *keys = keys_alloc(n);
    uint32_t shapes[4];

    sp_fuzz_bytes(in, &rng.state, sizeof rng.state);
    sp_fuzz_bytes(in, shapes, sizeof shapes);
    sp_fuzz_bytes(in, &todo, sizeof todo);
    if (opts & 1) {
        sp_cls_set_overflow_min_buckets(cls, 0);
    }
    if (opts & 2) {
        sp_cls_set_copies_min_buckets(cls, 0);
    }
    for (uint32_t r = 0; r < n_rules; r++) {
        struct sp_flow_key like;
        struct sp_err err;

        sp_flow_key_random(&rng, &like);
        sp_match_from_shape(shapes[sp_random_below(&rng, 4)], &like,
                            &matches[r]);
        /* A refusal (the same match again) is fine: the table is what
         * the kernels are compared on. */
        sp_cls_insert(cls, &matches[r], sp_random_below(&rng, 4), NULL, &err);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint8_t how = sp_fuzz_byte(in);

        sp_flow_key_random(&rng, &keys[i]);
        if (n_rules && how & 1) {
            const struct sp_match *m = &matches[sp_fuzz_byte(in) % n_rules];

            /* The rule's values where it looks, the key's elsewhere. */
            sp_match_apply(m, &keys[i]);
            if (how & 2) {
                keys[i].bytes[sp_fuzz_byte(in) % 64] ^= 1u << (how >> 5);
            }
        }
    }
    if (opts & 4) {
        /* Hits, then a sort: key copies for the subtables that answer. */
        const struct sp_rule *rules[SP_BATCH_MAX];

        sp_cls_lookup(cls, keys, n, sp_batch_lanes(n), rules);
        sp_cls_sort(cls);
    }
    for (uint32_t s = 0; s < sp_cls_subtable_count(cls); s++) {
        const struct sp_cls_subtable *st = sp_cls_subtable_at(cls, s);
        const struct sp_rule *want_rules[SP_BATCH_MAX];
        const struct sp_rule *got_rules[SP_BATCH_MAX];
        uint32_t want = scalar->kernels->classifier(st, st->buckets, keys, n,
                                                    todo, want_rules);

        if (want & ~(todo & sp_batch_lanes(n))) {
            fprintf(stderr, "fuzz_kernels: scalar classifier found keys "
                            "outside todo or the batch\n");
            abort();
        }
        for (unsigned v = 0; v < nv; v++) {
            uint32_t got = vs[v]->kernels->classifier(st, st->buckets, keys, n,
                                                      todo, got_rules);

            if (got != want) {
                differs("classifier", vs[v], "found mask", s);
            }
            for (uint32_t i = 0; i < n; i++) {
                if (want >> i & 1 && got_rules[i] != want_rules[i]) {
                    differs("classifier", vs[v], "rule", i);
                }
            }
        }
    }
    free(keys);
    sp_cls_destroy(cls);
}

/* ---- batch_copy ---- */

static void
fuzz_batch_copy(struct sp_fuzz_input *in)
{
    const struct sp_variant *vs[SP_VARIANT_MAX];
    unsigned nv = sp_fuzz_variants(SP_KERNEL_batch_copy, vs);
    uint32_t n = sp_fuzz_byte(in) % (SP_BATCH_MAX + 1), select;
    uint32_t count, want, got;
    void **src = malloc((n ? n : 1) * sizeof *src);
    void **want_dst, **got_dst;

    sp_fuzz_bytes(in, &select, sizeof select);
    for (uint32_t i = 0; i < n; i++) {
        src[i] = (void *)(uintptr_t)(0x1000 * (i + 1) + sp_fuzz_byte(in));
    }
    count = (uint32_t)__builtin_popcount(select & sp_batch_lanes(n));
    want_dst = malloc((count ? count : 1) * sizeof *want_dst);
    got_dst = malloc((count ? count : 1) * sizeof *got_dst);
    want = scalar->kernels->batch_copy(want_dst, src, n, select);
    if (want != count) {
        fprintf(stderr,
                "fuzz_kernels: scalar batch_copy appended %u of "
                "%u\n",
                want, count);
        abort();
    }
    for (unsigned v = 0; v < nv; v++) {
        memset(got_dst, 0, (count ? count : 1) * sizeof *got_dst);
        got = vs[v]->kernels->batch_copy(got_dst, src, n, select);
        if (got != want) {
            differs("batch_copy", vs[v], "count", 0);
        }
        for (uint32_t i = 0; i < count; i++) {
            if (got_dst[i] != want_dst[i]) {
                differs("batch_copy", vs[v], "pointer", i);
            }
        }
    }
    free(got_dst);
    free(want_dst);
    free(src);
}

/* ---- ipv4_rewrite ---- */

#define FRAME_MAX 256

struct frames {
    uint32_t n;
    struct sp_packet pkts[SP_BATCH_MAX];
    struct sp_packet *ptrs[SP_BATCH_MAX];
};

static void
frames_make(struct frames *f, const struct frames *from)
{
    f->n = from->n;
    for (uint32_t i = 0; i < f->n; i++) {
        f->pkts[i] = from->pkts[i];
        f->pkts[i].data = malloc(from->pkts[i].len ? from->pkts[i].len : 1);
        memcpy(f->pkts[i].data, from->pkts[i].data, from->pkts[i].len);
        f->ptrs[i] = &f->pkts[i];
    }
}

static void
frames_free(struct frames *f)
{
    for (uint32_t i = 0; i < f->n; i++) {
        free(f->pkts[i].data);
    }
}

/* The one's complement sum of the IPv4 header at l3, or 0 if there is
 * none the kernel would take. */
static uint16_t
header_sum(const struct sp_packet *p)
{
    const uint8_t *ip;
    uint32_t sum = 0, hlen;

    if (p->l3_ofs == SP_OFS_NONE || p->len < p->l3_ofs + 20u) {
        return 0;
    }
    ip = p->data + p->l3_ofs;
    hlen = (ip[0] & 15u) * 4;
    if (ip[0] >> 4 != 4 || hlen < 20 || p->len < p->l3_ofs + hlen) {
        return 0;
    }
    for (uint32_t w = 0; w < hlen; w += 2) {
        sum += (uint32_t)(ip[w] << 8 | ip[w + 1]);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)sum;
}

/* Whether byte j of p may change: the IPv4 header (at most 60 bytes)
 * and the TCP or UDP checksum after it. */
static bool
may_change(const struct sp_packet *p, uint32_t j)
{
    uint32_t l3 = p->l3_ofs, hlen;

    if (l3 == SP_OFS_NONE || j < l3 || p->len < l3 + 20) {
        return false;
    }
    hlen = (p->data[l3] & 15u) * 4;
    return j < l3 + hlen || j == l3 + hlen + 16 || j == l3 + hlen + 17 ||
           j == l3 + hlen + 6 || j == l3 + hlen + 7;
}

static void
fuzz_ipv4_rewrite(struct sp_fuzz_input *in)
{
    const struct sp_variant *vs[SP_VARIANT_MAX];
    unsigned nv = sp_fuzz_variants(SP_KERNEL_ipv4_rewrite, vs);
    static uint8_t bytes[SP_BATCH_MAX][FRAME_MAX];
    struct frames proto, want, got;
    struct sp_ipv4_set set;
    uint32_t want_drop, got_drop;
    uint8_t flags = sp_fuzz_byte(in);

    proto.n = 1 + sp_fuzz_byte(in) % SP_BATCH_MAX;
    sp_fuzz_bytes(in, &set, sizeof set);
    set.dec_ttl = flags & 1;
    if (flags & 2) {
        /* Whole fields, as the actions set them. */
        set.src_mask = set.src_mask ? UINT32_MAX : 0;
        set.dst_mask = set.dst_mask ? UINT32_MAX : 0;
        set.ttl_mask = set.ttl_mask ? 0xff : 0;
    }
    /* Frames: a length and an l3_ofs each, then the bytes of the first
     * one; the others are it with a few bytes changed, so that most
     * are headers the kernel takes. */
    sp_fuzz_bytes(in, bytes[0], FRAME_MAX);
    for (uint32_t i = 0; i < proto.n; i++) {
        uint8_t len = sp_fuzz_byte(in), l3 = sp_fuzz_byte(in);

        if (i) {
            memcpy(bytes[i], bytes[0], FRAME_MAX);
            bytes[i][sp_fuzz_byte(in)] = sp_fuzz_byte(in);
        }
        proto.pkts[i] = (struct sp_packet){
            .data = bytes[i],
            .len = len,
            .l3_ofs = l3 == 0xff ? SP_OFS_NONE : l3 % 64,
            .l4_ofs = SP_OFS_NONE,
        };
    }
    frames_make(&want, &proto);
    want_drop = scalar->kernels->ipv4_rewrite(want.ptrs, want.n, &set);
    for (uint32_t i = 0; i < want.n; i++) {
        const struct sp_packet *p = &want.pkts[i], *o = &proto.pkts[i];
        uint16_t before = header_sum(o);

        for (uint32_t j = 0; j < p->len; j++) {
            if (p->data[j] != o->data[j] && !may_change(o, j)) {
                fprintf(stderr,
                        "fuzz_kernels: scalar ipv4_rewrite changed "
                        "byte %u of frame %u (l3 %u)\n",
                        j, i, o->l3_ofs);
                abort();
            }
        }
        if (before == 0xffff && header_sum(p) != 0xffff) {
            fprintf(stderr,
                    "fuzz_kernels: scalar ipv4_rewrite broke the "
                    "header checksum of frame %u\n",
                    i);
            abort();
        }
        if (want_drop >> i & 1 && memcmp(p->data, o->data, p->len)) {
            fprintf(stderr,
                    "fuzz_kernels: scalar ipv4_rewrite changed "
                    "frame %u it says to drop\n",
                    i);
            abort();
        }
    }
    for (unsigned v = 0; v < nv; v++) {
        frames_make(&got, &proto);
        got_drop = vs[v]->kernels->ipv4_rewrite(got.ptrs, got.n, &set);
        if (got_drop != want_drop) {
            differs("ipv4_rewrite", vs[v], "drop mask", 0);
        }
        for (uint32_t i = 0; i < got.n; i++) {
            if (memcmp(got.pkts[i].data, want.pkts[i].data,
                       want.pkts[i].len)) {
                differs("ipv4_rewrite", vs[v], "frame bytes", i);
            }
        }
        frames_free(&got);
    }
    frames_free(&want);
}

/* ---- key_match ---- */

static void
fuzz_key_match(struct sp_fuzz_input *in)
{
    const struct sp_variant *vs[SP_VARIANT_MAX];
    unsigned nv = sp_fuzz_variants(SP_KERNEL_key_match, vs);
    uint32_t n = sp_fuzz_byte(in) % (SP_BATCH_MAX + 1), todo, want;
    struct sp_match m; /* its key: the value under the mask */
    struct sp_flow_key *keys = keys_alloc(n);

    sp_fuzz_bytes(in, &todo, sizeof todo);
    todo &= sp_batch_lanes(n);
    sp_fuzz_bytes(in, &m.mask, sizeof m.mask);
    sp_fuzz_bytes(in, &m.key, sizeof m.key);
    sp_match_mask_key(&m);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t how = sp_fuzz_byte(in);

        sp_fuzz_bytes(in, &keys[i], sizeof keys[i]);
        if (how % 4) {
            sp_match_apply(&m, &keys[i]);
        }
        if (how % 4 == 2) {
            keys[i].bytes[how % 64] ^= sp_fuzz_byte(in);
        }
    }
    want = scalar->kernels->key_match(keys, n, todo, &m.mask, &m.key);
    if (want & ~todo) {
        fprintf(stderr,
                "fuzz_kernels: scalar key_match matched %#x outside "
                "todo %#x\n",
                want, todo);
        abort();
    }
    for (unsigned v = 0; v < nv; v++) {
        uint32_t got =
            vs[v]->kernels->key_match(keys, n, todo, &m.mask, &m.key);

        if (got != want) {
            differs("key_match", vs[v], "matches",
                    (uint32_t)__builtin_ctz(got ^ want));
        }
    }
    free(keys);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sp_fuzz_input in = {data, size};

    if (!scalar) {
        sp_dispatch_init();
        scalar = sp_variant_get(0);
    }
    switch (sp_fuzz_byte(&in) % 6) {
    case 0:
        fuzz_hash(&in);
        break;
    case 1:
        fuzz_emc(&in);
        break;
    case 2:
        fuzz_classifier(&in);
        break;
    case 3:
        fuzz_batch_copy(&in);
        break;
    case 5:
        fuzz_key_match(&in);
        break;
    default:
        fuzz_ipv4_rewrite(&in);
        break;
    }
    return 0;
}
