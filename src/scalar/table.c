/* SPDX-License-Identifier: BSD-3-Clause */
/* The scalar table: the specification of every kernel. */
#include "dispatch/isa.h"

const struct sp_kernel_table sp_scalar_kernels = SP_KERNEL_TABLE(sp_scalar);
