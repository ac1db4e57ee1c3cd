/* SPDX-License-Identifier: BSD-3-Clause */
/* The neon table: its own code for every kernel. */
#include "dispatch/isa.h"

const struct sp_kernel_table sp_neon_kernels = SP_KERNEL_TABLE(sp_neon);
