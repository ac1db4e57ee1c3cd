/* SPDX-License-Identifier: BSD-3-Clause */
#include "dispatch/isa.h"

/* AVX-512F/BW/VL/DQ (Skylake-SP and later). The hash is the AVX2 code:
 * a 512-bit fold needs VPCLMULQDQ, which these CPUs may lack. */
const struct sp_kernel_table sp_avx512_kernels = {
    .mfex = sp_avx512_mfex,
    .hash = sp_avx2_hash,
    .emc = sp_avx512_emc,
    .classifier = sp_avx512_classifier,
    .batch_copy = sp_avx512_batch_copy,
    .ipv4_rewrite = sp_avx512_ipv4_rewrite,
};

/* The same plus VBMI and VPCLMULQDQ (Ice Lake, Zen 4 and later): vpermb
 * instead of emulating it, and the 512-bit fold of the hash. */
const struct sp_kernel_table sp_avx512vbmi_kernels = {
    .mfex = sp_avx512vbmi_mfex,
    .hash = sp_avx512_hash,
    .emc = sp_avx512_emc,
    .classifier = sp_avx512_classifier,
    .batch_copy = sp_avx512_batch_copy,
    .ipv4_rewrite = sp_avx512_ipv4_rewrite,
};
