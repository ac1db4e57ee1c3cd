/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key match with NEON: a key in four 128-bit registers (one 64-byte
 * load), each ANDed with the mask and XORed with the value, ORed into one
 * and tested; from the last key of 'todo' down, as the specification
 * (src/scalar/key_match.c).
 */
#include <arm_neon.h>

#include "dispatch/isa.h"
#include "neon/compare.h"

uint32_t
sp_neon_key_match(const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                  const struct sp_flow_key *mask,
                  const struct sp_flow_key *value)
{
    uint64x2x4_t m = vld1q_u64_x4(mask->blocks);
    uint64x2x4_t v = vld1q_u64_x4(value->blocks);
    uint32_t hit = 0;

    todo &= sp_batch_lanes(n);
    for (unsigned i = sp_batch_end(todo); i-- > 0;) {
        uint64x2x4_t k = vld1q_u64_x4(keys[i].blocks);
        uint64x2_t differ = vorrq_u64(
            vorrq_u64(veorq_u64(vandq_u64(k.val[0], m.val[0]), v.val[0]),
                      veorq_u64(vandq_u64(k.val[1], m.val[1]), v.val[1])),
            vorrq_u64(veorq_u64(vandq_u64(k.val[2], m.val[2]), v.val[2]),
                      veorq_u64(vandq_u64(k.val[3], m.val[3]), v.val[3])));

        hit = hit * 2 + sp_neon_all_zero(differ);
    }
    return hit & todo;
}
