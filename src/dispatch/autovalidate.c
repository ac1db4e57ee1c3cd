/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The autovalidate pseudo-variant. Each wrapper has its kernel's signature:
 * it runs scalar into the caller's buffers, runs every other allowed variant
 * with code of its own into scratch buffers, counts any difference (with a
 * hex dump of the first one per kernel and variant) and returns scalar's
 * result, so traffic is handled exactly as the specification says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/internal.h"

#define DUMP_MAX 256 /* bytes of each buffer in a report */

static uint64_t checks[SP_KERNEL_COUNT][SP_VARIANT_MAX];
static uint64_t mismatches[SP_KERNEL_COUNT][SP_VARIANT_MAX];
static bool reported[SP_KERNEL_COUNT][SP_VARIANT_MAX];

static void
log_to_stderr(const char *text, void *ctx)
{
    (void)ctx;
    fputs(text, stderr);
}

static sp_log_fn *log_fn = log_to_stderr;
static void *log_ctx;

void
sp_dispatch_set_log(sp_log_fn *fn, void *ctx)
{
    log_fn = fn ? fn : log_to_stderr;
    log_ctx = ctx;
}

uint64_t
sp_autovalidate_checks(enum sp_kernel_id k, unsigned variant)
{
    return variant < SP_VARIANT_MAX
               ? __atomic_load_n(&checks[k][variant], __ATOMIC_RELAXED)
               : 0;
}

uint64_t
sp_autovalidate_mismatches(enum sp_kernel_id k, unsigned variant)
{
    return variant < SP_VARIANT_MAX
               ? __atomic_load_n(&mismatches[k][variant], __ATOMIC_RELAXED)
               : 0;
}

void
sp_autovalidate_reset(void)
{
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        for (unsigned v = 0; v < SP_VARIANT_MAX; v++) {
            __atomic_store_n(&checks[k][v], 0, __ATOMIC_RELAXED);
            __atomic_store_n(&mismatches[k][v], 0, __ATOMIC_RELAXED);
            __atomic_store_n(&reported[k][v], false, __ATOMIC_RELAXED);
        }
    }
}

/* The variants compared with scalar for kernel k. */
struct candidates {
    unsigned count;
    unsigned index[SP_VARIANT_MAX];
    const struct sp_kernel_table *kernels[SP_VARIANT_MAX];
};

static void
find_candidates(enum sp_kernel_id k, struct candidates *c)
{
    unsigned n = sp_variant_count();

    c->count = 0;
    for (unsigned i = 1; i < n; i++) {
        const struct sp_variant *v = sp_variant_get(i);

        if (sp_variant_allowed(v) && sp_variant_provider(v, k) == v) {
            c->index[c->count] = i;
            c->kernels[c->count++] = v->kernels;
        }
    }
}

static const struct sp_kernel_table *
reference(void)
{
    return sp_variant_get(0)->kernels;
}

/* One labelled buffer of a mismatch report. */
struct blob {
    const char *label;
    const void *data;
    size_t len;
};

static size_t
append_hex(char *buf, size_t size, size_t used, const struct blob *b)
{
    const uint8_t *p = b->data;
    size_t len = b->len < DUMP_MAX ? b->len : DUMP_MAX;

    used += (size_t)snprintf(buf + used, size - used, "  %s (%zu bytes):\n",
                             b->label, b->len);
    for (size_t i = 0; i < len && used < size; i++) {
        used += (size_t)snprintf(buf + used, size - used, "%s%02x%s",
                                 i % 16 ? "" : "    ", p[i],
                                 i % 16 == 15 || i + 1 == len ? "\n" : " ");
    }
    return used < size ? used : size - 1;
}

/* Counts one comparison of variant 'vi' on kernel k. */
static void
count_check(enum sp_kernel_id k, unsigned vi)
{
    __atomic_add_fetch(&checks[k][vi], 1, __ATOMIC_RELAXED);
}

/* Counts a mismatch; the first one per kernel and variant is reported with
 * the input and both outputs. */
static void
mismatch(enum sp_kernel_id k, unsigned vi, uint32_t item,
         const struct blob *blobs, unsigned n_blobs)
{
    char text[4096];
    size_t used;

    __atomic_add_fetch(&mismatches[k][vi], 1, __ATOMIC_RELAXED);
    if (__atomic_exchange_n(&reported[k][vi], true, __ATOMIC_RELAXED)) {
        return;
    }
    used = (size_t)snprintf(text, sizeof text,
                            "autovalidate: kernel %s: variant %s differs "
                            "from scalar at item %u\n",
                            sp_kernel_name(k), sp_variant_get(vi)->name, item);
    for (unsigned i = 0; i < n_blobs && used < sizeof text - 1; i++) {
        used = append_hex(text, sizeof text, used, &blobs[i]);
    }
    log_fn(text, log_ctx);
}

/* The metadata mfex writes, for comparing and reporting. */
struct mfex_meta {
    uint16_t l3_ofs, l4_ofs, status;
};

static struct mfex_meta
mfex_meta(const struct sp_packet *pkt)
{
    return (struct mfex_meta){pkt->l3_ofs, pkt->l4_ofs, pkt->status};
}

/* Each variant parses private copies of the packet structs (same bytes:
 * mfex never writes them) into private keys, starting from the metadata
 * the caller passed in, so it sees exactly what scalar saw. */
static uint32_t
autovalidate_mfex(struct sp_packet *const *pkts, uint32_t n,
                  struct sp_flow_key *keys)
{
    struct sp_packet before[SP_BATCH_MAX];
    struct candidates c;
    uint32_t errors;

    if (!n) {
        return reference()->mfex(pkts, n, keys);
    }
    for (uint32_t i = 0; i < n; i++) {
        before[i] = *pkts[i];
    }
    errors = reference()->mfex(pkts, n, keys);
    find_candidates(SP_KERNEL_mfex, &c);
    for (unsigned v = 0; v < c.count; v++) {
        struct sp_packet copies[SP_BATCH_MAX];
        struct sp_packet *ptrs[SP_BATCH_MAX];
        struct sp_flow_key got[SP_BATCH_MAX];
        uint32_t i = 0, got_errors;

        count_check(SP_KERNEL_mfex, c.index[v]);
        for (uint32_t j = 0; j < n; j++) {
            copies[j] = before[j];
            ptrs[j] = &copies[j];
        }
        got_errors = c.kernels[v]->mfex(ptrs, n, got);
        while (i < n && !memcmp(&got[i], &keys[i], sizeof got[i]) &&
               copies[i].l3_ofs == pkts[i]->l3_ofs &&
               copies[i].l4_ofs == pkts[i]->l4_ofs &&
               copies[i].status == pkts[i]->status) {
            i++;
        }
        if (i < n || got_errors != errors) {
            uint32_t item = i < n ? i : 0;
            struct mfex_meta want = mfex_meta(pkts[item]);
            struct mfex_meta have = mfex_meta(&copies[item]);
            const struct blob blobs[] = {
                {"packet", pkts[item]->data, pkts[item]->len},
                {"scalar key", &keys[item], sizeof keys[item]},
                {"variant key", &got[item], sizeof got[item]},
                {"scalar l3_ofs, l4_ofs, status", &want, sizeof want},
                {"variant l3_ofs, l4_ofs, status", &have, sizeof have},
                {"scalar count not ok", &errors, sizeof errors},
                {"variant count not ok", &got_errors, sizeof got_errors},
            };

            mismatch(SP_KERNEL_mfex, c.index[v], item, blobs, 7);
        }
    }
    return errors;
}

static void
autovalidate_hash(const struct sp_flow_key *keys,
                  const struct sp_flow_key *mask, uint32_t n, uint32_t *hashes)
{
    struct candidates c;

    reference()->hash(keys, mask, n, hashes);
    find_candidates(SP_KERNEL_hash, &c);
    for (unsigned v = 0; v < c.count; v++) {
        count_check(SP_KERNEL_hash, c.index[v]);
        for (uint32_t base = 0; base < n; base += SP_BATCH_MAX) {
            uint32_t got[SP_BATCH_MAX];
            uint32_t chunk = n - base < SP_BATCH_MAX ? n - base : SP_BATCH_MAX;
            uint32_t i = 0;

            c.kernels[v]->hash(keys + base, mask, chunk, got);
            while (i < chunk && got[i] == hashes[base + i]) {
                i++;
            }
            if (i < chunk) {
                const struct blob blobs[] = {
                    {"key", &keys[base + i], sizeof keys[0]},
                    {"mask", mask ? (const void *)mask : "", mask ? 64 : 0},
                    {"scalar hash", &hashes[base + i], sizeof got[0]},
                    {"variant hash", &got[i], sizeof got[0]},
                };

                mismatch(SP_KERNEL_hash, c.index[v], base + i, blobs, 4);
                break;
            }
        }
    }
}

static uint32_t
autovalidate_batch_copy(void **dst, void *const *src, uint32_t n,
                        uint32_t select)
{
    struct candidates c;
    uint32_t count = reference()->batch_copy(dst, src, n, select);

    find_candidates(SP_KERNEL_batch_copy, &c);
    for (unsigned v = 0; v < c.count; v++) {
        void *got[SP_BATCH_MAX];
        uint32_t got_count;

        count_check(SP_KERNEL_batch_copy, c.index[v]);
        got_count = c.kernels[v]->batch_copy(got, src, n, select);
        if (got_count != count ||
            memcmp(got, dst, count * sizeof got[0]) != 0) {
            const struct blob blobs[] = {
                {"select", &select, sizeof select},
                {"scalar pointers", dst, count * sizeof got[0]},
                {"variant pointers", got,
                 (got_count < SP_BATCH_MAX ? got_count : SP_BATCH_MAX) *
                     sizeof got[0]},
            };

            mismatch(SP_KERNEL_batch_copy, c.index[v], 0, blobs, 3);
        }
    }
    return count;
}

/* Whether two packets differ in metadata or bytes. */
static bool
packets_differ(const struct sp_packet *a, const struct sp_packet *b)
{
    return a->len != b->len || a->in_port != b->in_port ||
           a->l3_ofs != b->l3_ofs || a->l4_ofs != b->l4_ofs ||
           a->status != b->status || a->owner != b->owner ||
           memcmp(a->data, b->data, a->len) != 0;
}

/* The rewrite works in place: the packets' original bytes are kept, scalar
 * rewrites the caller's packets, and each candidate rewrites private
 * packets that point at a private copy of the original bytes. */
static uint32_t
autovalidate_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                          const struct sp_ipv4_set *set)
{
    struct sp_packet copies[SP_BATCH_MAX];
    struct sp_packet *copy_ptrs[SP_BATCH_MAX];
    struct candidates c;
    size_t total = 0, ofs = 0;
    uint8_t *orig, *scratch;
    uint32_t expired;

    for (uint32_t i = 0; i < n; i++) {
        total += pkts[i]->len;
    }
    orig = n && n <= SP_BATCH_MAX ? malloc(2 * total + 1) : NULL;
    if (!orig) {
        /* Nothing to rewrite, or no memory to compare with: scalar. */
        return reference()->ipv4_rewrite(pkts, n, set);
    }
    scratch = orig + total;
    for (uint32_t i = 0; i < n; i++) {
        memcpy(orig + ofs, pkts[i]->data, pkts[i]->len);
        ofs += pkts[i]->len;
    }
    expired = reference()->ipv4_rewrite(pkts, n, set);
    find_candidates(SP_KERNEL_ipv4_rewrite, &c);
    for (unsigned v = 0; v < c.count; v++) {
        uint32_t got, i;

        memcpy(scratch, orig, total);
        ofs = 0;
        for (i = 0; i < n; i++) {
            copies[i] = *pkts[i];
            copies[i].data = scratch + ofs;
            copy_ptrs[i] = &copies[i];
            ofs += pkts[i]->len;
        }
        count_check(SP_KERNEL_ipv4_rewrite, c.index[v]);
        got = c.kernels[v]->ipv4_rewrite(copy_ptrs, n, set);
        for (i = 0; i < n && !packets_differ(pkts[i], &copies[i]); i++) {
        }
        if (i < n || got != expired) {
            uint32_t item = i < n ? i : 0;
            const struct blob blobs[] = {
                {"set", set, sizeof *set},
                {"scalar expired mask", &expired, sizeof expired},
                {"variant expired mask", &got, sizeof got},
                {"original packet", orig + (copies[item].data - scratch),
                 pkts[item]->len},
                {"scalar packet", pkts[item]->data, pkts[item]->len},
                {"variant packet", copies[item].data, pkts[item]->len},
            };

            mismatch(SP_KERNEL_ipv4_rewrite, c.index[v], item, blobs, 6);
        }
    }
    free(orig);
    return expired;
}

/* Compares a variant's (found mask, rules) with scalar's; reports the first
 * key that differs. */
static void
compare_lookup(enum sp_kernel_id k, unsigned vi,
               const struct sp_flow_key *keys, uint32_t want,
               const struct sp_rule **want_rules, uint32_t got,
               const struct sp_rule **got_rules)
{
    uint32_t differ = want ^ got;

    for (uint32_t p = want & got; p; p &= p - 1) {
        unsigned i = (unsigned)__builtin_ctz(p);

        if (want_rules[i] != got_rules[i]) {
            differ |= UINT32_C(1) << i;
        }
    }
    if (differ) {
        unsigned i = (unsigned)__builtin_ctz(differ);
        const struct sp_rule *none = NULL;
        const struct blob blobs[] = {
            {"key", &keys[i], sizeof keys[i]},
            {"scalar mask", &want, sizeof want},
            {"variant mask", &got, sizeof got},
            {"scalar rule", want >> i & 1 ? want_rules + i : &none,
             sizeof none},
            {"variant rule", got >> i & 1 ? got_rules + i : &none,
             sizeof none},
        };

        mismatch(k, vi, i, blobs, 5);
    }
}

static uint32_t
autovalidate_emc(const struct sp_emc *emc, uint64_t gen,
                 const struct sp_flow_key *keys, const uint32_t *hashes,
                 uint32_t n, const struct sp_rule **rules)
{
    struct candidates c;
    uint32_t hits = reference()->emc(emc, gen, keys, hashes, n, rules);

    find_candidates(SP_KERNEL_emc, &c);
    for (unsigned v = 0; v < c.count; v++) {
        const struct sp_rule *got[SP_BATCH_MAX];
        uint32_t got_hits;

        count_check(SP_KERNEL_emc, c.index[v]);
        got_hits = c.kernels[v]->emc(emc, gen, keys, hashes, n, got);
        compare_lookup(SP_KERNEL_emc, c.index[v], keys, hits, rules, got_hits,
                       got);
    }
    return hits;
}

static uint32_t
autovalidate_classifier(const struct sp_cls_subtable *st,
                        const struct sp_cls_buckets *buckets,
                        const struct sp_flow_key *keys, uint32_t n,
                        uint32_t todo, const struct sp_rule **rules)
{
    struct candidates c;
    uint32_t found =
        reference()->classifier(st, buckets, keys, n, todo, rules);

    find_candidates(SP_KERNEL_classifier, &c);
    for (unsigned v = 0; v < c.count; v++) {
        const struct sp_rule *got[SP_BATCH_MAX];
        uint32_t got_found;

        count_check(SP_KERNEL_classifier, c.index[v]);
        got_found = c.kernels[v]->classifier(st, buckets, keys, n, todo, got);
        compare_lookup(SP_KERNEL_classifier, c.index[v], keys, found, rules,
                       got_found, got);
    }
    return found;
}

static uint32_t
autovalidate_key_match(const struct sp_flow_key *keys, uint32_t n,
                       uint32_t todo, const struct sp_flow_key *mask,
                       const struct sp_flow_key *value)
{
    struct candidates c;
    uint32_t hits = reference()->key_match(keys, n, todo, mask, value);

    find_candidates(SP_KERNEL_key_match, &c);
    for (unsigned v = 0; v < c.count; v++) {
        uint32_t got;

        count_check(SP_KERNEL_key_match, c.index[v]);
        got = c.kernels[v]->key_match(keys, n, todo, mask, value);
        if (got != hits) {
            unsigned i = (unsigned)__builtin_ctz(got ^ hits);
            const struct blob blobs[] = {
                {"key", &keys[i], sizeof keys[i]},
                {"mask", mask, sizeof *mask},
                {"value", value, sizeof *value},
                {"scalar matches", &hits, sizeof hits},
                {"variant matches", &got, sizeof got},
            };

            mismatch(SP_KERNEL_key_match, c.index[v], i, blobs, 5);
        }
    }
    return hits;
}

const struct sp_kernel_table sp_autovalidate_kernels =
    SP_KERNEL_TABLE(autovalidate);
