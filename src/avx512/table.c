/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Built twice, as src/avx512's other files: with AVX-512F/BW/VL/DQ it is
 * the avx512 table, with VBMI and VPCLMULQDQ on top the avx512vbmi one.
 */
#include "dispatch/isa.h"

#ifndef __AVX512VBMI__
/* AVX-512F/BW/VL/DQ (Skylake-SP and later). The hash is the AVX2 code:
 * a 512-bit fold needs VPCLMULQDQ, which these CPUs may lack. */
#define sp_avx512_hash sp_avx2_hash
const struct sp_kernel_table sp_avx512_kernels = SP_KERNEL_TABLE(sp_avx512);
#else
/* The same plus VBMI and VPCLMULQDQ (Ice Lake, Zen 4 and later): vpermb
 * instead of emulating it (mfex.c), and the 512-bit fold of the hash
 * (hash.c); the other kernels are avx512's. */
#define sp_avx512vbmi_emc          sp_avx512_emc
#define sp_avx512vbmi_classifier   sp_avx512_classifier
#define sp_avx512vbmi_batch_copy   sp_avx512_batch_copy
#define sp_avx512vbmi_ipv4_rewrite sp_avx512_ipv4_rewrite
#define sp_avx512vbmi_key_match    sp_avx512_key_match
const struct sp_kernel_table sp_avx512vbmi_kernels =
    SP_KERNEL_TABLE(sp_avx512vbmi);
#endif
