/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with AVX2 (the loop of src/x86/ipv4_rewrite.h): the 20-byte
 * header comes in as a 16-byte and a 4-byte load and goes back the same way.
 * No vpmaskmov: qemu and valgrind do not emulate its fault suppression.
 */
#include "dispatch/isa.h"
#include "x86/ipv4_rewrite.h"

static __m256i
load_header(const uint8_t *ip)
{
    return _mm256_set_m128i(_mm_cvtsi32_si128((int)sp_load32(ip + 16)),
                            _mm_loadu_si128((const __m128i *)ip));
}

static void
store_header(uint8_t *ip, __m256i hdr)
{
    _mm_storeu_si128((__m128i *)ip, _mm256_castsi256_si128(hdr));
    sp_store32(ip + 16, (uint32_t)_mm256_extract_epi32(hdr, 4));
}

uint32_t
sp_avx2_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                     const struct sp_ipv4_set *set)
{
    return sp_ipv4_rewrite_x86(pkts, n, set, load_header, store_header);
}
