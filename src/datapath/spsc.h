/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bounded lock-free ring of fixed-size items between one producer
 * thread and one consumer thread: the producer fills a slot and publishes
 * it (release), the consumer reads it and gives it back (release). Neither
 * ever waits: a full ring refuses, an empty one has nothing. The indices
 * run free and are masked, so the slot count is a power of two.
 */
#ifndef SP_DATAPATH_SPSC_H
#define SP_DATAPATH_SPSC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct sp_spsc {
    uint32_t head __attribute__((aligned(64))); /* written by the producer */
    uint32_t tail __attribute__((aligned(64))); /* written by the consumer */
    uint32_t mask __attribute__((aligned(64)));
    size_t item_size;
    unsigned char *items;
};

/* 'slots' a power of two; -1 on no memory. */
static inline int
sp_spsc_init(struct sp_spsc *r, uint32_t slots, size_t item_size)
{
    r->head = r->tail = 0;
    r->mask = slots - 1;
    r->item_size = item_size;
    r->items = calloc(slots, item_size);
    return r->items ? 0 : -1;
}

static inline void
sp_spsc_free(struct sp_spsc *r)
{
    free(r->items);
    r->items = NULL;
}

static inline void *
sp_spsc_slot(const struct sp_spsc *r, uint32_t index)
{
    return r->items + (size_t)(index & r->mask) * r->item_size;
}

/* Producer: the next free slot, or NULL when the ring is full. */
static inline void *
sp_spsc_reserve(struct sp_spsc *r)
{
    uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

    return r->head - tail > r->mask ? NULL : sp_spsc_slot(r, r->head);
}

/* Producer: publishes the slot sp_spsc_reserve gave. */
static inline void
sp_spsc_publish(struct sp_spsc *r)
{
    __atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
}

/* Consumer: the oldest published slot, or NULL when the ring is empty. */
static inline void *
sp_spsc_peek(struct sp_spsc *r)
{
    uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

    return head == r->tail ? NULL : sp_spsc_slot(r, r->tail);
}

/* Consumer: gives the slot sp_spsc_peek gave back to the producer. */
static inline void
sp_spsc_release(struct sp_spsc *r)
{
    __atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_RELEASE);
}

#endif /* SP_DATAPATH_SPSC_H */
