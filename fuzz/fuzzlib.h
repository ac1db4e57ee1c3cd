/* SPDX-License-Identifier: BSD-3-Clause */
/* What the fuzz targets share: the variants to compare with scalar, and a
 * datapath on ports that never carry a packet. */
#ifndef SP_FUZZLIB_H
#define SP_FUZZLIB_H

#include <stddef.h>
#include <stdint.h>

#include "simdpath/datapath.h"
#include "simdpath/dispatch.h"

/* The variants this CPU runs, other than scalar, that have their own code
 * for kernel k; returns how many (at most SP_VARIANT_MAX). */
unsigned sp_fuzz_variants(enum sp_kernel_id k, const struct sp_variant **out);

/* A datapath of 'n_ports' ports and one PMD thread that is never run, for
 * rule and control commands; aborts if it cannot be made. */
struct sp_dp *sp_fuzz_dp_create(unsigned n_ports);

/* Fuzzer bytes, taken from the front. */
struct sp_fuzz_input {
    const uint8_t *data;
    size_t size;
};

/* The next byte, 0 once the input is used up. */
uint8_t sp_fuzz_byte(struct sp_fuzz_input *in);
/* Copies the next len bytes into out, zeros past the end of the input. */
void sp_fuzz_bytes(struct sp_fuzz_input *in, void *out, size_t len);

#endif /* SP_FUZZLIB_H */
