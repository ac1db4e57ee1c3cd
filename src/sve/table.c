/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sve table: its own code where longer vectors change the work (the
 * EMC's key compare, the subtable's signature and key compares under one
 * whilelt predicate), NEON's elsewhere. The hash is crc32cx on scalar
 * registers either way; miniflow extract and the IPv4 rewrite work on
 * 16-byte pieces of headers, which SVE's longer vectors do not shorten,
 * and the key match on one 64-byte key at a time, which NEON holds;
 * NEON's batch copy (a whole batch in 64-byte loads, any other selection by
 * a bit scan) executes fewer instructions than SVE's compact did on every
 * case measured (docs/perf/arm.md).
 */
#include <arm_sve.h>

#include "dispatch/isa.h"

#define sp_sve_batch_copy   sp_neon_batch_copy
#define sp_sve_mfex         sp_neon_mfex
#define sp_sve_hash         sp_neon_hash
#define sp_sve_ipv4_rewrite sp_neon_ipv4_rewrite
#define sp_sve_key_match    sp_neon_key_match
const struct sp_kernel_table sp_sve_kernels = SP_KERNEL_TABLE(sp_sve);

unsigned
sp_sve_vector_bits(void)
{
    return (unsigned)svcntb() * 8;
}
