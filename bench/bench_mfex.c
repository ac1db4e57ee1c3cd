/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cycles per packet of miniflow extract for every variant this CPU runs,
 * per packet shape and for mixed traffic, each as a ratio to scalar from
 * the same run. Each case cycles through BATCHES (default 16, at most
 * BATCHES_MAX) batches of 32 different packets, so the branch predictors
 * cannot learn one batch by heart; BATCHES 1 measures one batch in L1.
 * The variants take turns, one sample each (sp_bench_turns).
 * Usage: bench_mfex [SAMPLES [BATCHES]]
 *
 * Or, for instruction counts: bench_mfex --count VARIANT ITERATIONS
 * [CASE] runs VARIANT's mfex on ITERATIONS batches of 32 packets of each
 * case ("mixed", or a shape name as printed) or of CASE alone, cycling
 * through 16 batches, and nothing else; the difference of two runs'
 * instructions over that of their ITERATIONS x 32 is instructions per
 * packet (docs/perf/arm.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "simdpath/dispatch.h"
#include "simdpath/pktgen.h"

#define BATCHES_MAX 16
#define PACKETS     (BATCHES_MAX * SP_BATCH_MAX)

struct mfex_case {
    sp_mfex_fn *fns[SP_VARIANT_MAX]; /* the variants with their own mfex */
    const char *names[SP_VARIANT_MAX];
    unsigned n_fns;
    unsigned batches;
    unsigned next; /* batch of the next call */
    uint8_t bytes[PACKETS][SP_PKTGEN_MAX];
    struct sp_packet pkts[PACKETS];
    struct sp_packet *ptrs[PACKETS];
    struct sp_flow_key keys[SP_BATCH_MAX];
};

/* One batch per call under variant k, cycling through the case's
 * batches. */
static void
run_mfex(void *ctx, unsigned k)
{
    struct mfex_case *c = ctx;

    c->fns[k](c->ptrs + c->next * SP_BATCH_MAX, SP_BATCH_MAX, c->keys);
    c->next = (c->next + 1) % c->batches;
    __asm__ volatile("" ::"r"(c->keys) : "memory");
}

/* Mixed traffic: mostly the profile shapes, one packet in four of any
 * other shape. */
static enum sp_pktgen_shape
mixed_shape(struct sp_random *rng)
{
    return sp_random_below(rng, 4)
               ? sp_random_below(rng, SP_PKTGEN_PROFILE_SHAPES)
               : sp_random_below(rng, SP_PKTGEN_SHAPE_COUNT);
}

static void
fill(struct mfex_case *c, int shape, struct sp_random *rng)
{
    for (unsigned i = 0; i < PACKETS; i++) {
        enum sp_pktgen_shape s =
            shape < 0 ? mixed_shape(rng) : (enum sp_pktgen_shape)shape;

        c->pkts[i] = (struct sp_packet){
            .data = c->bytes[i],
            .len = (uint32_t)sp_pktgen(s, rng, c->bytes[i]),
            .in_port = (uint16_t)i,
        };
        c->ptrs[i] = &c->pkts[i];
    }
}

/* bench_mfex --count VARIANT ITERATIONS [CASE]. */
static int
count_mode(int argc, char **argv)
{
    static struct mfex_case mc;
    struct sp_random rng = {1};
    const struct sp_variant *v;
    unsigned long iterations;
    unsigned ran = 0;

    if (sp_bench_count_args("bench_mfex", argc, argv, &v, &iterations)) {
        return 2;
    }
    mc.batches = BATCHES_MAX;
    mc.fns[0] = v->kernels->mfex;
    mc.n_fns = 1;
    for (int shape = -1; shape < SP_PKTGEN_SHAPE_COUNT; shape++) {
        const char *name = shape < 0 ? "mixed" : sp_pktgen_shape_name(shape);

        /* Every case's packets are drawn, so that one case alone sees the
         * same packets as in a run of all. */
        fill(&mc, shape, &rng);
        if (argc == 5 && strcmp(argv[4], name)) {
            continue;
        }
        mc.next = 0;
        for (unsigned long i = 0; i < iterations; i++) {
            run_mfex(&mc, 0);
        }
        printf("%s %s %u items/iteration\n", name, v->name, SP_BATCH_MAX);
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "bench_mfex: unknown CASE '%s'\n", argv[4]);
        return 2;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    unsigned samples = argc > 1 ? (unsigned)atoi(argv[1]) : 31;
    unsigned batches = argc > 2 ? (unsigned)atoi(argv[2]) : BATCHES_MAX;
    static struct mfex_case mc;
    struct sp_random rng = {1};

    if (argc > 1 && !strcmp(argv[1], "--count")) {
        return count_mode(argc, argv);
    }
    if (samples < 3) {
        samples = 3;
    }
    if (batches < 1 || batches > BATCHES_MAX) {
        batches = BATCHES_MAX;
    }
    mc.batches = batches;
    sp_bench_print_picks();
    printf("TSC %.3f ticks/ns; median of %u samples; %u batches of 32 "
           "packets per case; ratio = scalar ticks / variant ticks (same "
           "run)\n",
           sp_ticks_per_ns(), samples, batches);
    printf("%-36s %-10s %11s %9s %9s\n", "shape", "variant", "ticks/pkt",
           "ns/pkt", "vs scalar");
    for (unsigned i = 0; i < sp_variant_count(); i++) {
        const struct sp_variant *v = sp_variant_get(i);

        if (sp_variant_allowed(v) &&
            sp_variant_provider(v, SP_KERNEL_mfex) == v) {
            mc.names[mc.n_fns] = v->name;
            mc.fns[mc.n_fns++] = v->kernels->mfex;
        }
    }
    for (int shape = -1; shape < SP_PKTGEN_SHAPE_COUNT; shape++) {
        double t[SP_VARIANT_MAX];

        fill(&mc, shape, &rng);
        sp_bench_turns(&(struct sp_bench_turns){.run = run_mfex,
                                                .ctx = &mc,
                                                .n = mc.n_fns,
                                                .reps = 800,
                                                .samples = samples},
                       t, NULL);
        for (unsigned k = 0; k < mc.n_fns; k++) {
            double per = t[k] / SP_BATCH_MAX;

            printf("%-36s %-10s %11.2f %9.2f %8.2fx\n",
                   shape < 0 ? "mixed (3/4 profile shapes)"
                             : sp_pktgen_shape_name(shape),
                   mc.names[k], per, per / sp_ticks_per_ns(), t[0] / t[k]);
        }
    }
    return 0;
}
