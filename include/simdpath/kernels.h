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

#include <stdbool.h>
#include <stdint.h>

#include "simdpath/flow_key.h"
#include "simdpath/mfex.h"
#include "simdpath/packet.h"

/* Table layouts the lookup kernels read (emc.h; the classifier's are private
 * to the library, in src/datapath/cls_layout.h). */
struct sp_emc;
struct sp_rule;
struct sp_cls_subtable;
struct sp_cls_buckets;

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
 * padding after the IP total/payload length is ignored. Returns how many
 * of the n packets have a status other than SP_MFEX_OK (the datapath's
 * parse errors, without a pass of its own over the statuses).
 */
typedef uint32_t sp_mfex_fn(struct sp_packet *const *pkts, uint32_t n,
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
 * emc: looks up n <= SP_BATCH_MAX keys in an exact match cache. hashes[i]
 * is the hash kernel's value for keys[i] (no mask). Key i hits when a slot
 * of its bucket (hash & (n_buckets - 1)) has signature hashes[i], generation
 * 'gen' and a key equal to keys[i] in all 64 bytes; the lowest such way
 * wins. Returns the hit mask; rules[i] is written for hits only. A disabled
 * EMC (n_buckets 0) hits nothing.
 */
typedef uint32_t sp_emc_fn(const struct sp_emc *emc, uint64_t gen,
                           const struct sp_flow_key *keys,
                           const uint32_t *hashes, uint32_t n,
                           const struct sp_rule **rules);

/*
 * classifier: looks up in one subtable the keys whose bits are set in
 * 'todo' among the first n <= SP_BATCH_MAX keys. For each, the key ANDed
 * with st->mask is hashed as the hash kernel defines (CRC-32C) and probed
 * in 'buckets' (the caller's RCU snapshot of st->buckets): its first
 * candidate bucket (sp_cls_bucket_index 0), then, if the key's bit is set
 * in that bucket's moved_hint (sp_cls_moved_bit), its second, then the
 * overflow buckets while they hold any, slot by slot: the first slot with
 * that signature and a non-NULL rule whose key equals the masked key is
 * the answer.
 * Returns the found mask (a subset of todo); rules[i] is written for found
 * keys only. Bucket entries may change concurrently: each slot's rule
 * pointer is read once.
 */
typedef uint32_t sp_classifier_fn(const struct sp_cls_subtable *st,
                                  const struct sp_cls_buckets *buckets,
                                  const struct sp_flow_key *keys, uint32_t n,
                                  uint32_t todo, const struct sp_rule **rules);

/*
 * batch_copy: append src[i] to dst for every i < n (n <= SP_BATCH_MAX)
 * whose bit is set in 'select', in order; return how many were appended.
 * The caller checked once that dst has room for that many: the kernel
 * writes exactly those slots and nothing after them.
 */
typedef uint32_t sp_batch_copy_fn(void **dst, void *const *src, uint32_t n,
                                  uint32_t select);

/*
 * ipv4_rewrite: what one rewrite does to every IPv4 header of a batch.
 * Values and masks are in network byte order (the header's bytes); bits set
 * in a mask take the value's bits, the others keep the packet's. A field
 * whose mask is 0 is not touched.
 */
struct sp_ipv4_set {
    uint32_t src, src_mask; /* source address */
    uint32_t dst, dst_mask; /* destination address */
    uint8_t tos, tos_mask;  /* DSCP (0xfc) and ECN (0x03) bits */
    uint8_t ttl, ttl_mask;  /* applied after dec_ttl */
    bool dec_ttl;           /* decrement the TTL first */
};

/*
 * ipv4_rewrite: applies 'set' to pkts[0..n) (n <= SP_BATCH_MAX) in place.
 *
 * A packet is rewritten when pkts[i]->l3_ofs is not SP_OFS_NONE and the
 * bytes there hold a complete IPv4 header inside pkts[i]->len (version 4,
 * IHL >= 5, IHL * 4 bytes present); any other packet is left untouched.
 * With dec_ttl, a packet whose TTL is 0 or 1 is left untouched and its bit
 * is set in the returned mask (the caller drops it); the result is 0
 * without dec_ttl.
 *
 * Per field, one incremental update (RFC 1624, eqn. 3) of the header
 * checksum: HC' = ~(~HC + sum over the field's 16-bit words of ~m + m'),
 * with the one's complement sum reduced by end-around carry (it is 0 only
 * when every term is 0), so the result does not depend on the order in
 * which fields or words are added. A touched field is always counted, even
 * when its value does not change. TOS counts its word 0, the TTL its word
 * 4 (once for dec_ttl and the set together), each address its two words.
 *
 * Address changes also update the TCP or UDP checksum with the same sum
 * over the touched addresses' words, when the header itself says the L4
 * header is there: fragment offset 0, protocol 6 with 20 bytes or 17 with
 * 8 bytes at l3_ofs + IHL * 4 inside the frame (l4_ofs is not used). A
 * UDP checksum of 0 (none) stays 0; a UDP result of 0 is sent as 0xffff.
 * Nothing outside those header bytes is read or written. The packets'
 * bytes overlap neither one another nor the set, the sp_packet structs or
 * the array (each packet has a buffer of its own): a variant may read
 * several packets before it writes any.
 */
typedef uint32_t sp_ipv4_rewrite_fn(struct sp_packet *const *pkts, uint32_t n,
                                    const struct sp_ipv4_set *set);

/*
 * key_match: the keys whose bits are set in 'todo' (a subset of the first
 * n) that equal 'value' under 'mask': (keys[i] & mask) == value in all 64
 * bytes ('value' has no bit outside 'mask'). Returns their mask; reads no
 * key from n on. How a subtable of one rule is looked up, with no hash and
 * no bucket (sp_cls_lookup, sp_cls_lookup_sole).
 */
typedef uint32_t sp_key_match_fn(const struct sp_flow_key *keys, uint32_t n,
                                 uint32_t todo, const struct sp_flow_key *mask,
                                 const struct sp_flow_key *value);

/*
 * The kernel list, the one place a kernel is named: X(name). 'name' is
 * the identifier used in the kernel table, in sp_<isa>_<name>, and in the
 * --impl grammar; its contract is the typedef sp_<name>_fn above.
 * Everything that has one entry per kernel is generated from it: the
 * enum and struct below, each ISA's declarations and table
 * (src/dispatch/isa.h, src/<isa>/table.c), the autovalidate table, the
 * registry's names and the tests' tables.
 */
#define SP_KERNELS_WITH(X, arg) \
    X(mfex, arg)                \
    X(hash, arg)                \
    X(emc, arg)                 \
    X(classifier, arg)          \
    X(batch_copy, arg)          \
    X(ipv4_rewrite, arg)        \
    X(key_match, arg)

#define SP_KERNEL_DROP_ARG(name, X) X(name)

/* The list without the extra argument: X(name). */
#define SP_KERNELS(X) SP_KERNELS_WITH(SP_KERNEL_DROP_ARG, X)

enum sp_kernel_id {
#define SP_KERNEL_ENUM(name) SP_KERNEL_##name,
    SP_KERNELS(SP_KERNEL_ENUM)
#undef SP_KERNEL_ENUM
        SP_KERNEL_COUNT
};

/* One variant's implementation of every kernel. A variant that has no
 * implementation of its own for a kernel names another variant's function
 * explicitly (usually scalar's); nothing is ever NULL. */
struct sp_kernel_table {
#define SP_KERNEL_MEMBER(name) sp_##name##_fn *name;
    SP_KERNELS(SP_KERNEL_MEMBER)
#undef SP_KERNEL_MEMBER
};

/* Declares prefix_<name> for every kernel: SP_KERNEL_DECLARE(sp_avx2). */
#define SP_KERNEL_DECLARE_ONE(name, prefix) sp_##name##_fn prefix##_##name;
#define SP_KERNEL_DECLARE(prefix) \
    SP_KERNELS_WITH(SP_KERNEL_DECLARE_ONE, prefix)

/* A table of prefix_<name> for every kernel: SP_KERNEL_TABLE(sp_avx2).
 * A kernel taken from another variant is a #define of its name before the
 * table (#define sp_avx512_hash sp_avx2_hash), so that the table holds the
 * other variant's function itself and `impls` shows where it comes from;
 * a kernel nobody defines is a link error, not a NULL entry. */
#define SP_KERNEL_TABLE_ONE(name, prefix) .name = prefix##_##name,
#define SP_KERNEL_TABLE(prefix)                      \
    {                                                \
        SP_KERNELS_WITH(SP_KERNEL_TABLE_ONE, prefix) \
    }

#endif /* SP_KERNELS_H */
