/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hot functions ("kernels"), declared once. Every ISA implements the
 * same signatures; src/dispatch picks one variant per kernel at start-up.
 *
 * Rules for every kernel: pure (no globals, no allocation, no locks, no DPDK
 * types); the scalar variant is the specification and every other variant
 * gives byte-identical output for every input; nothing is read or written
 * outside the buffers described by the arguments.
 */
#ifndef SP_KERNELS_H
#define SP_KERNELS_H

#include <stdint.h>

#include "simdpath/flow_key.h"
#include "simdpath/mfex.h"
#include "simdpath/packet.h"

/*
 * mfex (miniflow extract): parse pkts[0..n) (n <= SP_BATCH_MAX) into
 * keys[i], all 64 bytes written: the fields the packet has, zero where it
 * has none, in_port copied from pkts[i]->in_port. Also sets, per packet:
 *  - l3_ofs: offset of the IPv4 or IPv6 header when the Ethernet type says
 *    IP and that header starts inside the frame, else SP_OFS_NONE (ARP,
 *    MPLS and other types have none);
 *  - l4_ofs: offset of the TCP, UDP, SCTP, ICMP or ICMPv6 header when it
 *    starts inside the IP payload, else SP_OFS_NONE (later fragments, other
 *    protocols, empty payload); a cut-short L4 header has l4_ofs set and
 *    status SP_MFEX_L4_TRUNCATED, so check status before touching it;
 *  - status: an enum sp_mfex_status (simdpath/mfex.h), where parsing
 *    stopped and why.
 * Reads only pkts[i]->data[0..len) and never writes packet bytes. Ethernet
 * padding after the IP total/payload length is ignored.
 */
typedef void sp_mfex_fn(struct sp_packet *const *pkts, uint32_t n,
                        struct sp_flow_key *keys);

/*
 * hash: CRC-32C (Castagnoli, as iSCSI: reflected, initial value and final
 * XOR 0xffffffff) of the 64 bytes of each key ANDed with 'mask', or of the
 * key itself when 'mask' is NULL. hashes[i] is the hash of keys[i]. Any n.
 * The same 32-bit value on every ISA, so tables built on one variant are
 * probed correctly by another.
 */
typedef void sp_hash_fn(const struct sp_flow_key *keys,
                        const struct sp_flow_key *mask, uint32_t n,
                        uint32_t *hashes);

/*
 * batch_copy: append src[i] to dst for every i < n (n <= SP_BATCH_MAX)
 * whose bit is set in 'select', in order; return how many were appended.
 * The caller checked once that dst has room for that many: the kernel
 * writes exactly those slots and nothing after them.
 */
typedef uint32_t sp_batch_copy_fn(void **dst, void *const *src, uint32_t n,
                                  uint32_t select);

/*
 * The kernel list: X(name, summary). 'name' is the identifier used in the
 * kernel table, in sp_<isa>_<name>, and in the --impl grammar.
 */
#define SP_KERNELS(X)                                         \
    X(mfex, "miniflow extract: parse packets into flow keys") \
    X(hash, "CRC-32C hash of masked flow keys")               \
    X(batch_copy, "append selected packet pointers to an output batch")

enum sp_kernel_id {
#define SP_KERNEL_ENUM(name, summary) SP_KERNEL_##name,
    SP_KERNELS(SP_KERNEL_ENUM)
#undef SP_KERNEL_ENUM
        SP_KERNEL_COUNT
};

/* One variant's implementation of every kernel. A variant that has no
 * implementation of its own for a kernel names another variant's function
 * explicitly (usually scalar's); nothing is ever NULL. */
struct sp_kernel_table {
#define SP_KERNEL_MEMBER(name, summary) sp_##name##_fn *name;
    SP_KERNELS(SP_KERNEL_MEMBER)
#undef SP_KERNEL_MEMBER
};

#endif /* SP_KERNELS_H */
