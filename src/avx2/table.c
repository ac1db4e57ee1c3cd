/* SPDX-License-Identifier: BSD-3-Clause */
/* The avx2 table: its own code for every kernel. */
#include "dispatch/isa.h"

const struct sp_kernel_table sp_avx2_kernels = SP_KERNEL_TABLE(sp_avx2);
