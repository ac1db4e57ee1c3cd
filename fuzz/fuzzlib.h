/* SPDX-License-Identifier: BSD-3-Clause */
/* What the fuzz targets share: the variants to compare with scalar, and a
 * datapath on ports that never carry a packet. */
#ifndef SP_FUZZLIB_H
#define SP_FUZZLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "simdpath/datapath.h"
#include "simdpath/dispatch.h"

/* The variants this CPU runs, other than scalar, that have their own code
 * for kernel k; returns how many (at most SP_VARIANT_MAX). */
unsigned sp_fuzz_variants(enum sp_kernel_id k, const struct sp_variant **out);

/* A datapath of 'n_ports' ports and one PMD thread that is never run, for
 * rule and control commands; aborts if it cannot be made. */
struct sp_dp *sp_fuzz_dp_create(unsigned n_ports);

/* The length of the OpenFlow message at the front of 'p' (of 'avail'
 * bytes), or 0 unless it is a whole OpenFlow 1.3 message no shorter than
 * its header: what a switch may send. */
size_t sp_fuzz_of_message_len(const uint8_t *p, size_t avail);

/* connect(), carried through when libFuzzer's -timeout alarm interrupts
 * it; 0, or -1 with errno. */
int sp_fuzz_connect(int fd, const struct sockaddr *addr, socklen_t len);

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
