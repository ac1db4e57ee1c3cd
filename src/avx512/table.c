/* SPDX-License-Identifier: BSD-3-Clause */
#include "isa.h"

const struct sp_kernel_table sp_avx512_kernels = {
    .mfex = sp_avx512_mfex,
    .hash = sp_avx2_hash,
    .batch_copy = sp_avx512_batch_copy,
};

/* The same with AVX512-VBMI: vpermb instead of emulating it. */
const struct sp_kernel_table sp_avx512vbmi_kernels = {
    .mfex = sp_avx512vbmi_mfex,
    .hash = sp_avx2_hash,
    .batch_copy = sp_avx512_batch_copy,
};
