/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Feeds packets to every mfex variant this CPU runs, in batches of the
 * sizes every test covers, and fails the test on any difference with
 * scalar. Each packet's bytes end right before an inaccessible page, so a
 * read past its end faults; keys are fenced the same way.
 */
#ifndef SP_MFEXCHECK_H
#define SP_MFEXCHECK_H

#include <stdint.h>

#include "testlib.h"

/* Bytes of the largest packet accepted: libpcap's largest snapshot length,
 * as simdpath parse-pcap takes. */
#define SP_MFEXCHECK_LEN_MAX 262144

void sp_mfexcheck_init(void);
/* Queues one packet; a full batch is checked at once. */
void sp_mfexcheck_add(const uint8_t *bytes, uint32_t len);
/* Checks the packets still queued. */
void sp_mfexcheck_flush(void);
void sp_mfexcheck_fini(void);
/* Packets checked so far. */
uint64_t sp_mfexcheck_count(void);

#endif /* SP_MFEXCHECK_H */
