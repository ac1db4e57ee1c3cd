/* SPDX-License-Identifier: BSD-3-Clause */
/* A small seeded generator (splitmix64) for self-checks, tests and
 * benchmarks: the same seed gives the same inputs on every ISA. */
#ifndef SP_RANDOM_H
#define SP_RANDOM_H

#include <stddef.h>
#include <stdint.h>

struct sp_random {
    uint64_t state;
};

static inline uint64_t
sp_random_next(struct sp_random *r)
{
    uint64_t z = (r->state += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A value in [0, bound), bound > 0. */
static inline uint32_t
sp_random_below(struct sp_random *r, uint32_t bound)
{
    return (uint32_t)((sp_random_next(r) >> 32) * bound >> 32);
}

static inline void
sp_random_fill(struct sp_random *r, void *buf, size_t len)
{
    uint8_t *p = buf;

    for (size_t i = 0; i < len; i++) {
        p[i] = (uint8_t)(sp_random_next(r) >> 56);
    }
}

#endif /* SP_RANDOM_H */
