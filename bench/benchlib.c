/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdlib.h>
#include <time.h>

#include "benchlib.h"

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
sp_bench_turns(unsigned n, void (*run)(void *ctx, unsigned k), void *ctx,
               unsigned reps, unsigned samples, double *median)
{
    double *t = calloc((size_t)n * samples, sizeof *t);

    for (unsigned s = 0; s <= samples; s++) {
        for (unsigned k = 0; k < n; k++) {
            uint64_t start = sp_ticks();

            for (unsigned i = 0; i < reps; i++) {
                run(ctx, k);
            }
            /* Round 0 warms caches, predictors and clocks up. */
            if (s) {
                t[k * samples + s - 1] = (double)(sp_ticks() - start) / reps;
            }
        }
    }
    for (unsigned k = 0; k < n; k++) {
        median[k] = sp_median(t + k * samples, samples);
    }
    free(t);
}
