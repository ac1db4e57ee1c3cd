/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv4 rewrite with AVX-512 (the loop of src/x86/ipv4_rewrite.h): the 20-byte
 * header comes in by one masked load and goes back by one masked store;
 * neither touches a byte past the header. Bit-selects are one vpternlogd (the
 * compiler merges the AND-NOT and OR).
 */
#include "dispatch/isa.h"
#include "x86/ipv4_rewrite.h"

#define HDR_BYTES ((__mmask32)0xfffff)

static __m256i
load_header(const uint8_t *ip)
{
    return _mm256_maskz_loadu_epi8(HDR_BYTES, ip);
}

static void
store_header(uint8_t *ip, __m256i hdr)
{
    _mm256_mask_storeu_epi8(ip, HDR_BYTES, hdr);
}

uint32_t
sp_avx512_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                       const struct sp_ipv4_set *set)
{
    return sp_ipv4_rewrite_x86(pkts, n, set, load_header, store_header);
}
