/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unaligned and big-endian byte access, and Internet checksum arithmetic
 * (RFC 1071, RFC 1624), shared by the parsers, the rewrite kernels of
 * every ISA, the scalar actions and the packet generator.
 *
 * Words may be taken in either byte order as long as all of one sum use the
 * same: the one's complement sum commutes with swapping the bytes of every
 * word, so callers load words in host order with sp_load16() and store the
 * result the same way.
 */
#ifndef SP_CSUM_H
#define SP_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t
sp_load16(const void *p)
{
    uint16_t v;

    memcpy(&v, p, sizeof v);
    return v;
}

static inline void
sp_store16(void *p, uint16_t v)
{
    memcpy(p, &v, sizeof v);
}

/* The 16-bit number at p in network (big-endian) byte order. */
static inline uint16_t
sp_load_be16(const void *p)
{
    const uint8_t *b = p;

    return (uint16_t)(b[0] << 8 | b[1]);
}

/* Writes v at p in network byte order. */
static inline void
sp_store_be16(void *p, uint16_t v)
{
    uint8_t *b = p;

    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static inline uint32_t
sp_load32(const void *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof v);
    return v;
}

static inline void
sp_store32(void *p, uint32_t v)
{
    memcpy(p, &v, sizeof v);
}

/* Whether any of the len bytes at p is not zero (a mask that masks). */
static inline bool
sp_any_set(const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i]) {
            return true;
        }
    }
    return false;
}

/* Whether all the len bytes at p are 0xff (a mask that keeps all). */
static inline bool
sp_all_ones(const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != 0xff) {
            return false;
        }
    }
    return true;
}

/* A sum of 16-bit words reduced to 16 bits by end-around carry. The
 * result is 0 only when 'sum' is 0, so it depends only on the total, never
 * on how the words were grouped. Adding the sum to itself rotated by 16
 * adds its halves in the high half, with the low half's carry in it. */
static inline uint16_t
sp_csum_fold(uint32_t sum)
{
    return (uint16_t)((sum + (sum << 16 | sum >> 16)) >> 16);
}

/* The terms of one changed 16-bit word: ~old + new. */
static inline uint32_t
sp_csum_delta16(uint16_t old, uint16_t new)
{
    return (uint32_t)(uint16_t)~old + new;
}

/* The terms of a changed 32-bit field (two words). */
static inline uint32_t
sp_csum_delta32(uint32_t old, uint32_t new)
{
    return sp_csum_delta16((uint16_t)old, (uint16_t) new) +
           sp_csum_delta16((uint16_t)(old >> 16), (uint16_t)(new >> 16));
}

/* RFC 1624 eqn. 3: the checksum after words whose terms sum to 'delta'
 * changed ('delta' below 2^32 - 2^16: up to 65537 words). */
static inline uint16_t
sp_csum_update(uint16_t csum, uint32_t delta)
{
    return (uint16_t)~sp_csum_fold((uint16_t)~csum + delta);
}

/* Updates the checksum stored at p. */
static inline void
sp_csum_update_at(uint8_t *p, uint32_t delta)
{
    sp_store16(p, sp_csum_update(sp_load16(p), delta));
}

/* Updates a UDP checksum stored at p: 0 (no checksum) stays 0, and a
 * computed 0 is sent as 0xffff (RFC 768). */
static inline void
sp_csum_update_udp_at(uint8_t *p, uint32_t delta)
{
    uint16_t csum = sp_load16(p);

    if (csum) {
        csum = sp_csum_update(csum, delta);
        sp_store16(p, csum ? csum : 0xffff);
    }
}

#endif /* SP_CSUM_H */
