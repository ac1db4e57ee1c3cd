/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the OpenFlow codec and session: byte access and building
 * messages in a struct sp_of_buf (big-endian, as on the wire). */
#ifndef SP_OPENFLOW_INTERNAL_H
#define SP_OPENFLOW_INTERNAL_H

#include "simdpath/openflow.h"

/* Appends n zero bytes; NULL when out of memory. */
uint8_t *sp_of_buf_put(struct sp_of_buf *b, size_t n);
int sp_of_put_bytes(struct sp_of_buf *b, const void *p, size_t n);
int sp_of_put16(struct sp_of_buf *b, uint16_t v);
int sp_of_put32(struct sp_of_buf *b, uint32_t v);
int sp_of_put64(struct sp_of_buf *b, uint64_t v);
void sp_of_set16(struct sp_of_buf *b, size_t ofs, uint16_t v);
/* Zeros up to a multiple of 8 bytes counted from start. */
int sp_of_pad8(struct sp_of_buf *b, size_t start);
uint16_t sp_of_get16(const uint8_t *p);
uint32_t sp_of_get32(const uint8_t *p);
uint64_t sp_of_get64(const uint8_t *p);

/* A message header at the end of b; sp_of_finish() sets its length once
 * the body is there. */
int sp_of_header(struct sp_of_buf *b, uint8_t type, uint32_t xid);
void sp_of_finish(struct sp_of_buf *b, size_t start);

/* Appends the OXM headers (ids) of the fields simdpath matches
 * (maskable ones with their mask bit), of all of them as wildcards, or of
 * those set_field sets: table features. */
enum sp_of_oxm_ids {
    SP_OF_OXM_IDS_MATCH,
    SP_OF_OXM_IDS_WILDCARDS,
    SP_OF_OXM_IDS_SET_FIELD,
};
int sp_of_put_oxm_ids(struct sp_of_buf *b, enum sp_of_oxm_ids which);

#endif /* SP_OPENFLOW_INTERNAL_H */
