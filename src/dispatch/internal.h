/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to src/dispatch: what the registry and autovalidator share. */
#ifndef SP_DISPATCH_INTERNAL_H
#define SP_DISPATCH_INTERNAL_H

#include <stddef.h>

#include "simdpath/dispatch.h"

/* Registration index of v, or -1. */
int sp_variant_index(const struct sp_variant *v);

/* The autovalidate pseudo-variant: each entry runs every allowed variant,
 * compares it with scalar and returns scalar's result. */
extern const struct sp_kernel_table sp_autovalidate_kernels;

#endif /* SP_DISPATCH_INTERNAL_H */
