/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key match with AVX-512: a key in one 512-bit register, (key & mask) ^
 * value in one vpternlog, its 64-bit lanes tested into a mask register;
 * from the last key of 'todo' down, as the specification
 * (src/scalar/key_match.c).
 */
#include <immintrin.h>

#include "dispatch/isa.h"

/* vpternlog's table for (a & b) ^ c, a, b and c being 0xf0, 0xcc and
 * 0xaa. */
#define AND_XOR ((0xf0 & 0xcc) ^ 0xaa)

uint32_t
sp_avx512_key_match(const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                    const struct sp_flow_key *mask,
                    const struct sp_flow_key *value)
{
    __m512i m = _mm512_loadu_si512(mask), v = _mm512_loadu_si512(value);
    uint32_t hit = 0;

    todo &= sp_batch_lanes(n);
    for (unsigned i = sp_batch_end(todo); i-- > 0;) {
        __m512i differ = _mm512_ternarylogic_epi64(
            _mm512_loadu_si512(&keys[i]), m, v, AND_XOR);

        hit = hit * 2 + !_mm512_test_epi64_mask(differ, differ);
    }
    return hit & todo;
}
