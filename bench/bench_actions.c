/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The seed table of the IPv4 rewrite: cycles per packet of a 32-packet
 * group through sp_actions_execute (output; output + dec_ttl; + one field;
 * combinations) for every variant this CPU runs, each as a ratio to the
 * per-field scalar form in the same run. The scalar variant is that form:
 * each set field applied on its own, with its own incremental checksum
 * updates, as Open vSwitch did. A second table times the ipv4_rewrite
 * kernel alone on the same sets. The variants take turns, one sample each
 * (sp_bench_turns), so that the load of a shared machine hits them alike.
 * Usage: bench_actions [SAMPLES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "simdpath/actions.h"
#include "simdpath/random.h"

#define GROUP   SP_BATCH_MAX
#define FRAME   64
#define L3_OFS  14
#define L4_OFS  34
#define RESTORE 128 /* calls between TTL refills, so dec_ttl never drops */

struct bench {
    uint8_t frames[GROUP][FRAME];
    struct sp_packet pkts[GROUP];
    struct sp_packet *ptrs[GROUP];
    struct sp_tx_batch tx[2];
    struct sp_action_ctx ctx;
    struct sp_actions *actions;
    struct sp_ipv4_set set;
    sp_ipv4_rewrite_fn *kernel;
    unsigned calls;
};

static bool
any_port(uint32_t port, void *aux)
{
    (void)aux;
    return port < 2;
}

/* Never called: every group fits and the benchmark empties the batch. */
static void
no_flush(struct sp_action_ctx *ctx, uint32_t port)
{
    ctx->tx[port].count = 0;
}

static void
no_free(struct sp_action_ctx *ctx, struct sp_packet *pkt)
{
    (void)ctx;
    (void)pkt;
}

static void
refill_ttl(struct bench *b)
{
    if (++b->calls % RESTORE == 0) {
        for (unsigned i = 0; i < GROUP; i++) {
            b->frames[i][L3_OFS + 8] = 255;
        }
    }
}

static void
run_actions(void *ctx)
{
    struct bench *b = ctx;

    refill_ttl(b);
    sp_actions_execute(b->actions, b->ptrs, GROUP, &b->ctx);
    b->tx[1].count = 0;
}

static void
run_kernel(void *ctx)
{
    struct bench *b = ctx;

    refill_ttl(b);
    b->kernel(b->ptrs, GROUP, &b->set);
    __asm__ volatile("" ::"r"(b->frames) : "memory");
}

/* TCP/IPv4 frames with random addresses and ports. */
static void
bench_init(struct bench *b)
{
    struct sp_random rng = {3};

    memset(b, 0, sizeof *b);
    for (unsigned i = 0; i < GROUP; i++) {
        uint8_t *f = b->frames[i], *ip = f + L3_OFS;

        sp_random_fill(&rng, f, FRAME);
        f[12] = 0x08;
        f[13] = 0x00;
        ip[0] = 0x45;
        ip[2] = 0;
        ip[3] = FRAME - L3_OFS;
        ip[6] = 0x40;
        ip[7] = 0;
        ip[8] = 255;
        ip[9] = 6;
        b->pkts[i] = (struct sp_packet){.data = f,
                                        .len = FRAME,
                                        .in_port = 2,
                                        .l3_ofs = L3_OFS,
                                        .l4_ofs = L4_OFS};
        b->ptrs[i] = &b->pkts[i];
    }
    /* As the PMD loop runs them: a burst received on port 2. */
    b->ctx = (struct sp_action_ctx){.tx = b->tx,
                                    .n_ports = 2,
                                    .in_port = 2,
                                    .flush = no_flush,
                                    .free = no_free};
}

static const struct {
    const char *name;
    const char *actions;
    struct sp_ipv4_set set;
} cases[] = {
    {"output", "output:1", {0}},
    {"output+dec_ttl", "dec_ttl,output:1", {.dec_ttl = true}},
    {"+mod_nw_tos", "mod_nw_tos:184,output:1", {.tos = 184, .tos_mask = 0xfc}},
    {"+mod_nw_src",
     "mod_nw_src:192.0.2.1,output:1",
     {.src = 0x010200c0, .src_mask = UINT32_MAX}},
    {"+mod_nw_dst",
     "mod_nw_dst:198.51.100.2,output:1",
     {.dst = 0x026433c6, .dst_mask = UINT32_MAX}},
    {"src+dst",
     "mod_nw_src:192.0.2.1,mod_nw_dst:198.51.100.2,output:1",
     {.src = 0x010200c0,
      .src_mask = UINT32_MAX,
      .dst = 0x026433c6,
      .dst_mask = UINT32_MAX}},
    {"ttl+src+dst",
     "dec_ttl,mod_nw_src:192.0.2.1,mod_nw_dst:198.51.100.2,output:1",
     {.dec_ttl = true,
      .src = 0x010200c0,
      .src_mask = UINT32_MAX,
      .dst = 0x026433c6,
      .dst_mask = UINT32_MAX}},
    {"ttl+tos+src+dst",
     "dec_ttl,mod_nw_tos:184,mod_nw_src:192.0.2.1,"
     "mod_nw_dst:198.51.100.2,output:1",
     {.dec_ttl = true,
      .tos = 184,
      .tos_mask = 0xfc,
      .src = 0x010200c0,
      .src_mask = UINT32_MAX,
      .dst = 0x026433c6,
      .dst_mask = UINT32_MAX}},
};

#define N_CASES (sizeof cases / sizeof cases[0])

/* The contestants of one case: the variants with code of their own for
 * the rewrite or the copy, scalar first, taking turns (sp_bench_turns). */
struct turns {
    struct bench *b;
    void (*fn)(void *ctx);
    const struct sp_variant *variants[SP_VARIANT_MAX];
    unsigned n;
};

static void
begin_turn(void *ctx, unsigned i)
{
    struct turns *t = ctx;

    /* Cannot fail: the variant is allowed. */
    sp_dispatch_set_impl(t->variants[i]->name, NULL);
    t->b->kernel = t->variants[i]->kernels->ipv4_rewrite;
}

static void
run_turn(void *ctx, unsigned i)
{
    struct turns *t = ctx;

    (void)i;
    t->fn(t->b);
}

int
main(int argc, char **argv)
{
    unsigned samples = argc > 1 ? (unsigned)atoi(argv[1]) : 31;
    static struct bench b;
    struct turns t = {.b = &b};
    struct sp_match match;
    struct sp_err err;

    if (samples < 3) {
        samples = 3;
    }
    bench_init(&b);
    memset(&match, 0, sizeof match);
    memcpy(&match.key.dl_type, "\x08\x00", 2); /* IPv4, wire order */
    match.mask.dl_type = 0xffff;
    sp_bench_print_picks();
    printf("TSC %.3f ticks/ns; median of %u samples; %u-packet groups; "
           "ratio = per-field scalar ticks / variant ticks (same run)\n",
           sp_ticks_per_ns(), samples, GROUP);
    for (int table = 0; table < 2; table++) {
        printf("\n%s\n%-16s %-8s %11s %9s %9s\n",
               table ? "ipv4_rewrite kernel alone"
                     : "sp_actions_execute (rewrite + output)",
               "case", "variant", "ticks/pkt", "ns/pkt", "vs scalar");
        for (size_t c = 0; c < N_CASES; c++) {
            double median[SP_VARIANT_MAX];

            if (table && c == 0) {
                continue; /* no rewrite in plain output */
            }
            if (sp_actions_parse(cases[c].actions, &match, any_port, NULL,
                                 &b.actions, &err)) {
                fprintf(stderr, "bench_actions: %s\n", err.msg);
                return 1;
            }
            b.set = cases[c].set;
            t.n = 0;
            for (unsigned i = 0; i < sp_variant_count(); i++) {
                const struct sp_variant *v = sp_variant_get(i);

                /* A variant running others' code for both kernels would
                 * only measure noise. */
                if (sp_variant_allowed(v) &&
                    (sp_variant_provider(v, SP_KERNEL_ipv4_rewrite) == v ||
                     sp_variant_provider(v, SP_KERNEL_batch_copy) == v)) {
                    t.variants[t.n++] = v;
                }
            }
            t.fn = table ? run_kernel : run_actions;
            sp_bench_turns(&(struct sp_bench_turns){.begin = begin_turn,
                                                    .run = run_turn,
                                                    .ctx = &t,
                                                    .n = t.n,
                                                    .reps = 2000,
                                                    .samples = samples,
                                                    .warmup = 250},
                           median, NULL);
            for (unsigned i = 0; i < t.n; i++) {
                double per = median[i] / GROUP;

                printf("%-16s %-8s %11.2f %9.2f %8.2fx\n", cases[c].name,
                       t.variants[i]->name, per, per / sp_ticks_per_ns(),
                       median[0] / median[i]);
            }
            sp_actions_free(b.actions);
        }
    }
    sp_dispatch_reset();
    return 0;
}
