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
#include "simdpath/packet.h"

/* Table layouts the lookup kernels read (emc.h, classifier.h). */
struct sp_emc;
struct sp_rule;
struct sp_cls_subtable;
struct sp_cls_buckets;

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
 * candidate bucket (sp_cls_bucket_index 0), then, if that bucket's n_moved
 * is not 0, its second, slot by slot: the first slot with that signature
 * and a non-NULL rule whose key equals the masked key is the answer.
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
 * The kernel list: X(name, summary). 'name' is the identifier used in the
 * kernel table, in sp_<isa>_<name>, and in the --impl grammar.
 */
#define SP_KERNELS(X)                                       \
    X(hash, "CRC-32C hash of masked flow keys")             \
    X(emc, "exact match cache lookup of a batch")           \
    X(classifier, "tuple-space subtable lookup of a batch") \
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
