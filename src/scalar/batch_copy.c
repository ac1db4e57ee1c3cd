/* SPDX-License-Identifier: BSD-3-Clause */
/* Batch copy, the specification: one pointer per selected bit, in order. */
#include "dispatch/isa.h"
#include "generic/batch_copy.h"

uint32_t
sp_scalar_batch_copy(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    return sp_copy_selected(dst, src, select & sp_batch_lanes(n));
}
