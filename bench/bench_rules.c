/* SPDX-License-Identifier: BSD-3-Clause */
#include "bench_rules.h"

#include <arpa/inet.h>
#include <string.h>

/* A one-to-one scramble of 32-bit values (MurmurHash3's finalizer): rule
 * addresses spread as real ones do, where consecutive ones would fill the
 * buckets perfectly (CRC-32C is linear, so consecutive keys take
 * consecutive-looking distinct buckets). */
static uint32_t
spread(uint32_t x)
{
    x = (x ^ (x >> 16)) * 0x85ebca6bu;
    x = (x ^ (x >> 13)) * 0xc2b2ae35u;
    return x ^ (x >> 16);
}

void
sp_bench_match(uint32_t s, uint32_t i, struct sp_random *rng,
               struct sp_match *m)
{
    uint32_t src = spread(i);
    uint32_t prefix = s % 33;
    uint32_t dst_mask = prefix ? htonl(~UINT32_C(0) << (32 - prefix)) : 0;
    uint32_t dst = (uint32_t)sp_random_next(rng) & dst_mask;

    memset(m, 0, sizeof *m);
    m->mask.dl_type = 0xffff;
    m->key.dl_type = htons(0x0800);
    m->mask.nw_proto = 0xff;
    m->key.nw_proto = 17;
    memset(m->mask.nw_src, 0xff, 4);
    memcpy(m->key.nw_src, &src, 4);
    memcpy(m->mask.nw_dst, &dst_mask, 4);
    memcpy(m->key.nw_dst, &dst, 4);
    if (s / 33 % 2) {
        m->mask.tp_dst = 0xffff;
        m->key.tp_dst = htons((uint16_t)(i % 1000));
    }
    if (s / 66 % 2) {
        m->mask.in_port = 0xffff;
        m->key.in_port = (uint16_t)(i % 8);
    }
}

void
sp_bench_key_for(const struct sp_match *m, struct sp_random *rng,
                 struct sp_flow_key *key)
{
    sp_random_fill(rng, key, sizeof *key);
    sp_match_apply(m, key);
}
