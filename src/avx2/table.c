/* SPDX-License-Identifier: BSD-3-Clause */
#include "dispatch/isa.h"

const struct sp_kernel_table sp_avx2_kernels = {
    .mfex = sp_avx2_mfex,
    .hash = sp_avx2_hash,
    .emc = sp_avx2_emc,
    .classifier = sp_avx2_classifier,
    .batch_copy = sp_avx2_batch_copy,
    .ipv4_rewrite = sp_avx2_ipv4_rewrite,
};
