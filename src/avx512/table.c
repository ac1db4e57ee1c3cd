/* SPDX-License-Identifier: BSD-3-Clause */
#include "isa.h"

const struct sp_kernel_table sp_avx512_kernels = {
    .hash = sp_avx2_hash,
    .emc = sp_avx512_emc,
    .classifier = sp_avx512_classifier,
    .batch_copy = sp_avx512_batch_copy,
};
