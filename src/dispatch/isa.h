/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal: the kernel functions and table of every ISA, declared from the
 * kernel list (SP_KERNELS in simdpath/kernels.h). ISA 'isa' defines
 * sp_<isa>_<kernel> in src/<isa>/<kernel>.c for each kernel it has code
 * for, and its table sp_<isa>_kernels in src/<isa>/table.c with
 * SP_KERNEL_TABLE. The registry (registry.c) offers the ones meson built.
 */
#ifndef SP_ISA_H
#define SP_ISA_H

#include "simdpath/kernels.h"

/* Every ISA simdpath has on some architecture, in the order `impls` lists
 * them. avx512vbmi is src/avx512's VBMI kernels built again with VBMI. */
#define SP_ISAS(X) X(scalar) X(avx2) X(avx512) X(avx512vbmi) X(neon) X(sve)

#define SP_ISA_DECLARATIONS(isa) \
    SP_KERNEL_DECLARE(sp_##isa)  \
    extern const struct sp_kernel_table sp_##isa##_kernels;
SP_ISAS(SP_ISA_DECLARATIONS)
#undef SP_ISA_DECLARATIONS

/* The scalar parser's loops (src/generic/mfex_scalar.h) compiled with AVX2
 * and with NEON (src/generic/mfex.h, MFEX_INLINE_SCALAR), the parser
 * inlined into them (no call and no vzeroupper per packet): the SIMD
 * variants' fallbacks for a batch, or the packets of one ('lanes'), that
 * none of their profiles match; AVX-512 takes AVX2's. */
uint32_t sp_avx2_mfex_whole_batch(struct sp_packet *const *pkts, uint32_t n,
                                  struct sp_flow_key *keys);
uint32_t sp_avx2_mfex_lanes(struct sp_packet *const *pkts, uint32_t lanes,
                            struct sp_flow_key *keys);
uint32_t sp_neon_mfex_whole_batch(struct sp_packet *const *pkts, uint32_t n,
                                  struct sp_flow_key *keys);
uint32_t sp_neon_mfex_lanes(struct sp_packet *const *pkts, uint32_t lanes,
                            struct sp_flow_key *keys);

/* The SVE vector length of this CPU in bits (src/sve/table.c); only on a
 * CPU with SVE. */
unsigned sp_sve_vector_bits(void);

#endif /* SP_ISA_H */
