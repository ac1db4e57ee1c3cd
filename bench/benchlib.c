/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchlib.h"
#include "simdpath/dispatch.h"

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double
sp_ticks_per_ns(void)
{
    static double rate;

    if (!rate) {
        uint64_t t0 = now_ns(), c0 = sp_ticks(), t1, c1;

        do {
            t1 = now_ns();
        } while (t1 - t0 < 20000000);
        c1 = sp_ticks();
        rate = (double)(c1 - c0) / (double)(t1 - t0);
    }
    return rate;
}

static int
compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double
sp_median(double *values, unsigned n)
{
    qsort(values, n, sizeof *values, compare_doubles);
    return values[n / 2];
}

double
sp_bench_median(void (*fn)(void *ctx), void *ctx, unsigned reps,
                unsigned samples)
{
    double *t = calloc(samples, sizeof *t);
    double median;

    for (unsigned i = 0; i < reps; i++) {
        fn(ctx); /* warm-up: caches, branch predictors, clocks */
    }
    for (unsigned s = 0; s < samples; s++) {
        uint64_t start = sp_ticks();

        for (unsigned i = 0; i < reps; i++) {
            fn(ctx);
        }
        t[s] = (double)(sp_ticks() - start) / reps;
    }
    median = sp_median(t, samples);
    free(t);
    return median;
}

void
sp_bench_turns(const struct sp_bench_turns *b, double *median, double *all)
{
    double *t = calloc((size_t)b->n * b->samples, sizeof *t);

    for (unsigned s = 0; s <= b->samples; s++) {
        for (unsigned k = 0; k < b->n; k++) {
            uint64_t start;

            if (b->begin) {
                b->begin(b->ctx, k);
            }
            for (unsigned i = 0; i < b->warmup; i++) {
                b->run(b->ctx, k);
            }
            start = sp_ticks();
            for (unsigned i = 0; i < b->reps; i++) {
                b->run(b->ctx, k);
            }
            /* Round 0 warms caches, predictors and clocks up. */
            if (s) {
                t[k * b->samples + s - 1] =
                    (double)(sp_ticks() - start) / b->reps;
            }
        }
    }
    if (all) {
        memcpy(all, t, (size_t)b->n * b->samples * sizeof *t);
    }
    for (unsigned k = 0; k < b->n; k++) {
        median[k] = sp_median(t + k * b->samples, b->samples);
    }
    free(t);
}

void
sp_bench_print_picks(void)
{
    const struct sp_variant *all = sp_variant_get(0);

    printf("picks:");
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        const struct sp_variant *v;
        enum sp_choice_mode mode = sp_dispatch_choice(k, &v);

        printf(" %s=%s", sp_kernel_name(k),
               mode == SP_CHOICE_AUTOVALIDATE ? "autovalidate" : v->name);
    }
    for (unsigned i = 1; i < sp_variant_count(); i++) {
        const struct sp_variant *v = sp_variant_get(i);

        if (sp_variant_allowed(v) && v->priority > all->priority) {
            all = v;
        }
    }
    printf(" all=%s\n", all->name);
}

int
sp_bench_count_iterations(const char *prog, const char *text,
                          unsigned long *iterations)
{
    char *end;

    *iterations = strtoul(text, &end, 10);
    if (!*text || *end || text[0] == '-') {
        fprintf(stderr, "%s: bad ITERATIONS '%s'\n", prog, text);
        return 2;
    }
    return 0;
}

int
sp_bench_count_args(const char *prog, int argc, char **argv,
                    const struct sp_variant **variant,
                    unsigned long *iterations)
{
    const struct sp_variant *v;

    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: %s --count VARIANT ITERATIONS [CASE]\n", prog);
        return 2;
    }
    v = sp_variant_find(argv[2]);
    if (!v || !sp_variant_supported(v)) {
        fprintf(stderr, "%s: variant '%s' is %s\n", prog, argv[2],
                v ? "not supported by this CPU" : "not compiled");
        return 2;
    }
    *variant = v;
    return sp_bench_count_iterations(prog, argv[3], iterations);
}
