/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal: the kernel functions and table of every ISA folder. Each folder
 * defines sp_<isa>_<kernel> for the kernels it implements and one table,
 * sp_<isa>_kernels, in its table.c.
 */
#ifndef SP_ISA_H
#define SP_ISA_H

#include "simdpath/kernels.h"

#define SP_ISA_DECLARE(isa)                     \
    sp_mfex_fn sp_##isa##_mfex;                 \
    sp_hash_fn sp_##isa##_hash;                 \
    sp_emc_fn sp_##isa##_emc;                   \
    sp_classifier_fn sp_##isa##_classifier;     \
    sp_batch_copy_fn sp_##isa##_batch_copy;     \
    sp_ipv4_rewrite_fn sp_##isa##_ipv4_rewrite; \
    extern const struct sp_kernel_table sp_##isa##_kernels

/* The scalar parser on the packets whose bits are set in 'lanes': the SIMD
 * variants' fallback for the packets none of their profiles match, called
 * once per batch after their vector loop (the parser is inlined into this
 * loop, as into sp_scalar_mfex: no call and no vzeroupper per packet). */
void sp_scalar_mfex_lanes(struct sp_packet *const *pkts, uint32_t lanes,
                          struct sp_flow_key *keys);

SP_ISA_DECLARE(scalar);
SP_ISA_DECLARE(avx2);
SP_ISA_DECLARE(avx512);
SP_ISA_DECLARE(neon);

/* AVX-512 with VBMI and VPCLMULQDQ: the avx512 table except for the
 * kernels that use vpermb (src/avx512/mfex.c built again with VBMI) and
 * the 512-bit fold (src/avx512/hash.c, by function attribute). */
sp_mfex_fn sp_avx512vbmi_mfex;
extern const struct sp_kernel_table sp_avx512vbmi_kernels;

#endif /* SP_ISA_H */
