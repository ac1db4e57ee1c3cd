/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What random memory reads cost on this machine, in the pattern of the
 * table lookups: batches of SP_BATCH_MAX (32) keys, every key's line
 * prefetched before any is read, then (for the layouts that have one) a second
 * line per key. Per span of memory (a power of two, on 4 KiB pages as the
 * tables), ticks per key for:
 * - one line: a bucket that answers alone;
 * - two lines: two independent random lines per key;
 * - then elsewhere: a line, then a line whose address it holds, anywhere
 *   in the span (a bucket, then its rule);
 * - then same 4 KiB: a line, then a line of the same 4 KiB whose address
 *   it holds (a bucket, then data beside it).
 * The layouts take turns sample by sample (benchlib), so their ratios are
 * comparable on a noisy machine. Usage: bench_memory [samples] [max MiB]
 * (defaults 7 and 1024).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "simdpath/packet.h"
#include "simdpath/random.h"

/* Distinct batches, cycled through: 512 Ki keys, so that a span larger
 * than the caches is read from memory, not from lines read before. */
#define BATCHES 16384
#define LINE    64
#define PAGE    4096

enum layout { ONE_LINE, TWO_LINES, THEN_ELSEWHERE, THEN_SAME_PAGE, N_LAYOUTS };

static const char *const layout_names[N_LAYOUTS] = {
    "one line", "two lines", "then elsewhere", "then same 4 KiB"};

struct arena {
    uint64_t *lines; /* words 0 and 1 random: where a second line is */
    size_t span_lines;
    uint32_t (*index)[SP_BATCH_MAX]; /* [batch][key]: a line of the span */
    uint32_t (*other)[SP_BATCH_MAX]; /* [batch][key]: another one */
    unsigned next;
};

static const uint64_t *
line_at(const struct arena *a, uint64_t index)
{
    return a->lines + index * (LINE / sizeof(uint64_t));
}

/* The line a line's word w points to: anywhere in the span (w = 0) or in
 * its own 4 KiB (w = 1). */
static const uint64_t *
target(const struct arena *a, const uint64_t *line, unsigned w)
{
    uint64_t v = line[w];

    if (w == 0) {
        return line_at(a, v & (a->span_lines - 1));
    }
    return (const uint64_t *)((uintptr_t)line & ~(uintptr_t)(PAGE - 1)) +
           (v % (PAGE / LINE)) * (LINE / sizeof(uint64_t));
}

static void
run(void *ctx, unsigned k)
{
    struct arena *a = ctx;
    const uint32_t *index = a->index[a->next], *other = a->other[a->next];
    const uint64_t *first[SP_BATCH_MAX], *second[SP_BATCH_MAX];

    for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
        first[i] = line_at(a, index[i]);
        __builtin_prefetch(first[i]);
        if (k == TWO_LINES) {
            second[i] = line_at(a, other[i]);
            __builtin_prefetch(second[i]);
        }
    }
    for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
        (void)*(const volatile uint64_t *)first[i];
        if (k == THEN_ELSEWHERE || k == THEN_SAME_PAGE) {
            second[i] = target(a, first[i], k == THEN_SAME_PAGE);
            __builtin_prefetch(second[i]);
        }
    }
    if (k != ONE_LINE) {
        for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
            (void)*(const volatile uint64_t *)second[i];
        }
    }
    a->next = (a->next + 1) % BATCHES;
}

static void
usage(void)
{
    fprintf(stderr, "usage: bench_memory [samples] [max MiB, a power of "
                    "two, at least 1]\n");
    exit(2);
}

static unsigned long
parse_arg(const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);

    if (*end || !v) {
        fprintf(stderr, "bench_memory: not a positive number: %s\n", s);
        usage();
    }
    return v;
}

int
main(int argc, char **argv)
{
    unsigned samples = argc > 1 ? (unsigned)parse_arg(argv[1]) : 7;
    size_t max_mib = argc > 2 ? parse_arg(argv[2]) : 1024;
    size_t size = max_mib << 20;
    struct sp_random rng = {1};
    struct arena a = {0};

    if (argc > 3) {
        usage();
    }
    if (max_mib & (max_mib - 1)) {
        fprintf(stderr, "bench_memory: max MiB is not a power of two: %zu\n",
                max_mib);
        usage();
    }
    a.lines = aligned_alloc(LINE, size);
    a.index = malloc(BATCHES * sizeof *a.index);
    a.other = malloc(BATCHES * sizeof *a.other);
    if (!a.lines || !a.index || !a.other) {
        fprintf(stderr, "bench_memory: no memory for %zu MiB\n", max_mib);
        return 1;
    }
    for (size_t i = 0; i < size / LINE; i++) {
        uint64_t *line = a.lines + i * (LINE / sizeof(uint64_t));

        line[0] = sp_random_next(&rng);
        line[1] = sp_random_next(&rng);
    }
    printf("TSC %.3f ticks/ns; batches of %u keys, each key's lines "
           "prefetched, then read; median of %u samples\n",
           sp_ticks_per_ns(), SP_BATCH_MAX, samples);
    printf("%9s %-16s %10s %10s\n", "span", "layout", "ticks/key",
           "vs 1 line");
    for (size_t mib = 1; mib <= max_mib; mib *= 2) {
        double median[N_LAYOUTS];
        struct sp_bench_turns turns = {.run = run,
                                       .ctx = &a,
                                       .n = N_LAYOUTS,
                                       .reps = BATCHES / 8,
                                       .samples = samples};

        a.span_lines = (mib << 20) / LINE;
        for (unsigned b = 0; b < BATCHES; b++) {
            for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
                a.index[b][i] =
                    (uint32_t)(sp_random_next(&rng) & (a.span_lines - 1));
                a.other[b][i] =
                    (uint32_t)(sp_random_next(&rng) & (a.span_lines - 1));
            }
        }
        sp_bench_turns(&turns, median, NULL);
        for (unsigned k = 0; k < N_LAYOUTS; k++) {
            printf("%5zu MiB %-16s %10.1f %9.2fx\n", mib, layout_names[k],
                   median[k] / SP_BATCH_MAX, median[k] / median[ONE_LINE]);
        }
    }
    free(a.lines);
    free(a.index);
    free(a.other);
    return 0;
}
