/* SPDX-License-Identifier: BSD-3-Clause */
#include "dispatch/isa.h"

const struct sp_kernel_table sp_scalar_kernels = {
    .mfex = sp_scalar_mfex,
    .hash = sp_scalar_hash,
    .emc = sp_scalar_emc,
    .classifier = sp_scalar_classifier,
    .batch_copy = sp_scalar_batch_copy,
    .ipv4_rewrite = sp_scalar_ipv4_rewrite,
};
