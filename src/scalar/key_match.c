/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key match, the specification: every key up to the last of 'todo' masked
 * and compared as four pairs of blocks, without a branch, the others left
 * out after. GCC and clang keep a pair in one vector register of the
 * baseline (SSE2 on x86, NEON on Arm) and AND, XOR and OR it as one; the
 * results go from the last key down, each shifted in at bit 0 (a shift by
 * a variable count costs x86 three micro-ops).
 */
#include <string.h>

#include "dispatch/isa.h"

typedef uint64_t key_pair __attribute__((vector_size(16)));

static inline key_pair
load_pair(const struct sp_flow_key *key, unsigned pair)
{
    key_pair v;

    memcpy(&v, &key->blocks[2 * pair], sizeof v);
    return v;
}

uint32_t
sp_scalar_key_match(const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                    const struct sp_flow_key *mask,
                    const struct sp_flow_key *value)
{
    /* Named pairs, not arrays: GCC would copy those through the stack. */
    key_pair m0 = load_pair(mask, 0), m1 = load_pair(mask, 1);
    key_pair m2 = load_pair(mask, 2), m3 = load_pair(mask, 3);
    key_pair v0 = load_pair(value, 0), v1 = load_pair(value, 1);
    key_pair v2 = load_pair(value, 2), v3 = load_pair(value, 3);
    uint32_t hit = 0;

    todo &= sp_batch_lanes(n);
    for (unsigned i = sp_batch_end(todo); i-- > 0;) {
        const struct sp_flow_key *k = &keys[i];
        key_pair differ =
            ((load_pair(k, 0) & m0) ^ v0) | ((load_pair(k, 1) & m1) ^ v1) |
            ((load_pair(k, 2) & m2) ^ v2) | ((load_pair(k, 3) & m3) ^ v3);

        hit = hit * 2 + !(differ[0] | differ[1]);
    }
    return hit & todo;
}
