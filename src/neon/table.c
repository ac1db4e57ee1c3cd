/* SPDX-License-Identifier: BSD-3-Clause */
#include "dispatch/isa.h"

const struct sp_kernel_table sp_neon_kernels = {
    .mfex = sp_neon_mfex,
    .hash = sp_neon_hash,
    .emc = sp_neon_emc,
    .classifier = sp_neon_classifier,
    .batch_copy = sp_neon_batch_copy,
    .ipv4_rewrite = sp_neon_ipv4_rewrite,
};
