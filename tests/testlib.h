/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the cmocka tests. */
#ifndef SP_TESTLIB_H
#define SP_TESTLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "simdpath/dispatch.h"
#include "simdpath/match.h"

/*
 * A buffer whose last byte sits just before an inaccessible page, so a
 * kernel that reads or writes past its end faults at once, and whose bytes
 * before 'len' are preceded by guard bytes that are checked afterwards.
 */
struct sp_guarded {
    uint8_t *map;
    size_t map_len;
    uint8_t *data; /* 'len' usable bytes, ending at the fence page */
    size_t len;
};

#define SP_GUARD_FILL  0xa5
#define SP_GUARD_BYTES 64

void sp_guarded_alloc(struct sp_guarded *g, size_t len, size_t align);
/* Fails the test if a guard byte before data changed. */
void sp_guarded_check(const struct sp_guarded *g);
void sp_guarded_free(struct sp_guarded *g);

/* CRC-32C (iSCSI) bit at a time, independent of every table and
 * instruction the kernels use. */
uint32_t sp_test_crc32c(const uint8_t *p, size_t len);

/* The variants this CPU runs, scalar first. */
unsigned sp_test_variants(const struct sp_variant **out, unsigned max);

/* The same list for a whole test program: filled by
 * sp_test_setup_variants(), a cmocka group setup (state may be NULL). */
extern const struct sp_variant *sp_runnable[SP_VARIANT_MAX];
extern unsigned sp_n_runnable;
int sp_test_setup_variants(void **state);

/* Batch sizes every test covers: 0, 1, 31, 32 and around vector widths. */
extern const uint32_t sp_test_batch_sizes[];
extern const unsigned sp_test_batch_size_count;

/*
 * Checksums computed from scratch, independent of src/common/csum.h: the
 * RFC 1071 sum of big-endian words (an odd last byte padded with 0), its
 * fold, and the TCP/UDP/ICMPv6 checksum of the segment at l4 with the
 * pseudo header of the IPv4 or IPv6 header at ip (next header: ip's
 * protocol byte, or 'proto' when not 0), its own checksum field taken as
 * 0.
 */
uint32_t sp_test_sum_be(const uint8_t *p, uint32_t len);
uint16_t sp_test_fold_be(uint32_t sum);
uint16_t sp_test_l4_checksum(const uint8_t *ip, uint8_t proto,
                             const uint8_t *l4, uint32_t l4_len,
                             uint32_t csum_ofs);
void sp_test_put_be16(uint8_t *p, uint16_t v);
uint16_t sp_test_get_be16(const uint8_t *p);
/* Forces one kernel's variant ("classifier", "avx2"); fails the test if
 * the registry refuses. sp_dispatch_reset() undoes it. */
void sp_test_force(const char *kernel, const char *variant);

/* The match (and priority, if priority is not NULL) of a rule in flow
 * syntax; fails the test on a syntax error. */
struct sp_match sp_test_match(const char *text, uint32_t *priority);

/* Group setup and teardown for tests that look up flow tables: registers
 * the test thread as an RCU (QSBR) reader, and unregisters it. */
int sp_test_rcu_setup(void **state);
int sp_test_rcu_teardown(void **state);

#endif /* SP_TESTLIB_H */
