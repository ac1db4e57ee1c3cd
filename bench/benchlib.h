/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timing for the benchmarks: TSC ticks (x86 rdtsc, Arm cntvct_el0), the
 * median of several runs after a warm-up, and the tick rate measured
 * against CLOCK_MONOTONIC so ticks convert to nanoseconds.
 */
#ifndef SP_BENCHLIB_H
#define SP_BENCHLIB_H

#include <stdint.h>

static inline uint64_t
sp_ticks(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi;

    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;

    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
#else
#error "no cycle counter for this architecture"
#endif
}

/* Ticks per nanosecond, measured once (about 20 ms). */
double sp_ticks_per_ns(void);

/* The median of n values (n > 0); sorts them. */
double sp_median(double *values, unsigned n);

/* Runs fn(ctx) 'reps' times per sample, 'samples' times after a warm-up,
 * and returns the median ticks of one call. */
double sp_bench_median(void (*fn)(void *ctx), void *ctx, unsigned reps,
                       unsigned samples);

/* Times n contestants that take turns, one sample each, so that noise
 * from other jobs on a shared machine (and clock changes) hits them alike
 * and their ratios stay comparable: run(ctx, k) runs contestant k once,
 * 'reps' times per sample, 'samples' samples after a warm-up round;
 * begin(ctx, k), if not NULL, prepares contestant k before each of its
 * samples, outside the timing, and then contestant k runs 'warmup' times
 * untimed, so that its sample starts from the caches its own runs leave
 * rather than those of the contestant before it. median[k] is the median
 * ticks of one run of contestant k; if 'all' is not NULL, all[k * samples
 * + s] is its sample s (taken in round s, with every other contestant's
 * sample s). */
struct sp_bench_turns {
    void (*begin)(void *ctx, unsigned k);
    void (*run)(void *ctx, unsigned k);
    void *ctx;
    unsigned n, reps, samples, warmup;
};

void sp_bench_turns(const struct sp_bench_turns *b, double *median,
                    double *all);

/* Prints, on one line, the variant each kernel runs now (what auto picks
 * unless SIMDPATH_IMPL says otherwise) and, as "all", the one auto takes
 * for the kernels as a whole: scripts/picked-vs-scalar reads it. */
void sp_bench_print_picks(void);

/* The --count modes (instruction counts: one variant, a given number of
 * iterations, nothing else). ITERATIONS must be digits; an error names
 * 'prog' and returns 2, the exit status. */
int sp_bench_count_iterations(const char *prog, const char *text,
                              unsigned long *iterations);

struct sp_variant;

/* argv: PROG --count VARIANT ITERATIONS [CASE], VARIANT compiled and
 * supported by this CPU. */
int sp_bench_count_args(const char *prog, int argc, char **argv,
                        const struct sp_variant **variant,
                        unsigned long *iterations);

#endif /* SP_BENCHLIB_H */
