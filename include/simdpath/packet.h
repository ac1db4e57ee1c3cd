/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A packet as the kernels see it: its bytes, its length and the metadata the
 * parser fills in. No DPDK type appears here; the I/O layer keeps its own
 * handle (an mbuf) in 'owner'.
 */
#ifndef SP_PACKET_H
#define SP_PACKET_H

#include <stdbool.h>
#include <stdint.h>

/* Largest batch a kernel takes: one rx burst. */
#define SP_BATCH_MAX 32

/* An offset the packet does not have (no L3 or no L4 header). */
#define SP_OFS_NONE UINT16_MAX

struct sp_packet {
    uint8_t *data;    /* first byte of the Ethernet header (L2 offset 0) */
    uint32_t len;     /* bytes at data; nothing past them is read */
    uint16_t in_port; /* copied into the flow key by the parser */
    uint16_t l3_ofs;  /* filled in by miniflow extract, or SP_OFS_NONE */
    uint16_t l4_ofs;  /* likewise */
    uint16_t status;  /* parse status, see the miniflow extract kernel */
    uint16_t pad;     /* the parser's 8-byte metadata store writes 0 here */
    bool reframed;    /* data or len moved since rx (the action sets it) */
    void *owner;      /* the I/O layer's handle for this packet */
};

/* Up to one burst of packets; kernels take the pointer array. */
struct sp_batch {
    uint32_t count;
    struct sp_packet *pkts[SP_BATCH_MAX];
};

/* The bit mask of the first n packets of a batch (n <= SP_BATCH_MAX). */
static inline uint32_t
sp_batch_lanes(uint32_t n)
{
    return n >= 32 ? UINT32_MAX : (UINT32_C(1) << n) - 1;
}

/* One past the last packet of 'lanes': how far a loop over them goes. */
static inline unsigned
sp_batch_end(uint32_t lanes)
{
    return lanes ? 32 - (unsigned)__builtin_clz(lanes) : 0;
}

/* The packets of 'lanes' among a batch's first n: n when that is all of
 * them, without a call to libgcc's popcount (the datapath is built for
 * CPUs that may lack POPCNT). */
static inline uint32_t
sp_batch_count(uint32_t lanes, uint32_t n)
{
    return lanes == sp_batch_lanes(n) ? n
           : lanes                    ? (uint32_t)__builtin_popcount(lanes)
                                      : 0;
}

#endif /* SP_PACKET_H */
