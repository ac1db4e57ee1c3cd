/* SPDX-License-Identifier: BSD-3-Clause */
/* Key hash, the specification: table-driven CRC-32C, slicing by 8. */
#include <endian.h>

#include "common/crc32c_tables.h"
#include "dispatch/isa.h"

/* The CRC-32C update for 8 bytes, first byte in the low bits of 'word'. */
static uint32_t
crc32c_u64(uint32_t crc, uint64_t word)
{
    const uint32_t(*t)[256] = sp_crc32c_tables;
    uint32_t lo = crc ^ (uint32_t)word;
    uint32_t hi = (uint32_t)(word >> 32);

    return t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
           t[4][lo >> 24] ^ t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
           t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
}

/* Block b of a key as the little-endian word of its bytes, whatever the
 * host byte order, so the hash is defined by the key's bytes. */
static uint64_t
block_le(const struct sp_flow_key *key, unsigned b)
{
    return le64toh(key->blocks[b]);
}

void
sp_scalar_hash(const struct sp_flow_key *keys, const struct sp_flow_key *mask,
               uint32_t n, uint32_t *hashes)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t crc = UINT32_MAX;

        for (unsigned b = 0; b < SP_FLOW_KEY_BLOCKS; b++) {
            uint64_t word = block_le(&keys[i], b);

            if (mask) {
                word &= block_le(mask, b);
            }
            crc = crc32c_u64(crc, word);
        }
        hashes[i] = ~crc;
    }
}
