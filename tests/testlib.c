/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <urcu-qsbr.h>

#include "simdpath/flow_parse.h"
#include "testlib.h"

const uint32_t sp_test_batch_sizes[] = {0,  1,  2,  3,  4,  5,  7,  8,  9,
                                        15, 16, 17, 23, 24, 25, 30, 31, 32};
const unsigned sp_test_batch_size_count =
    sizeof sp_test_batch_sizes / sizeof sp_test_batch_sizes[0];

void
sp_guarded_alloc(struct sp_guarded *g, size_t len, size_t align)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t body = (len + SP_GUARD_BYTES + align + page - 1) / page * page;
    uintptr_t end;

    g->map_len = body + page;
    g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(g->map != MAP_FAILED);
    assert_int_equal(mprotect(g->map + body, page, PROT_NONE), 0);
    memset(g->map, SP_GUARD_FILL, body);
    /* The end of data is the fence page, rounded down so data is aligned;
     * the bytes between data+len and the fence are guard bytes too. */
    end = (uintptr_t)(g->map + body);
    g->data = (uint8_t *)((end - len) & ~(uintptr_t)(align - 1));
    g->len = len;
}

void
sp_guarded_check(const struct sp_guarded *g)
{
    const uint8_t *body_end =
        g->map + g->map_len - (size_t)sysconf(_SC_PAGESIZE);

    for (const uint8_t *p = g->data - SP_GUARD_BYTES; p < g->data; p++) {
        assert_int_equal(*p, SP_GUARD_FILL);
    }
    for (const uint8_t *p = g->data + g->len; p < body_end; p++) {
        assert_int_equal(*p, SP_GUARD_FILL);
    }
}

void
sp_guarded_free(struct sp_guarded *g)
{
    munmap(g->map, g->map_len);
}

unsigned
sp_test_variants(const struct sp_variant **out, unsigned max)
{
    unsigned n = 0;

    for (unsigned i = 0; i < sp_variant_count() && n < max; i++) {
        if (sp_variant_supported(sp_variant_get(i))) {
            out[n++] = sp_variant_get(i);
        }
    }
    return n;
}

uint32_t
sp_test_sum_be(const uint8_t *p, uint32_t len)
{
    uint32_t sum = 0;

    for (uint32_t i = 0; i + 1 < len; i += 2) {
        sum += (uint32_t)p[i] << 8 | p[i + 1];
    }
    if (len & 1) {
        sum += (uint32_t)p[len - 1] << 8;
    }
    return sum;
}

uint16_t
sp_test_fold_be(uint32_t sum)
{
    while (sum > 0xffff) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return (uint16_t)sum;
}

void
sp_test_put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

uint16_t
sp_test_get_be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

uint16_t
sp_test_l4_checksum(const uint8_t *ip, uint8_t proto, const uint8_t *l4,
                    uint32_t l4_len, uint32_t csum_ofs)
{
    uint8_t pseudo[40];
    uint32_t plen, sum;

    if (ip[0] >> 4 == 4) {
        memcpy(pseudo, ip + 12, 8);
        pseudo[8] = 0;
        pseudo[9] = proto ? proto : ip[9];
        sp_test_put_be16(pseudo + 10, (uint16_t)l4_len);
        plen = 12;
    } else {
        memcpy(pseudo, ip + 8, 32);
        sp_test_put_be16(pseudo + 32, 0);
        sp_test_put_be16(pseudo + 34, (uint16_t)l4_len);
        memset(pseudo + 36, 0, 3);
        pseudo[39] = proto ? proto : ip[6];
        plen = 40;
    }
    sum = sp_test_sum_be(pseudo, plen) + sp_test_sum_be(l4, l4_len) -
          sp_test_get_be16(l4 + csum_ofs);
    return (uint16_t)~sp_test_fold_be(sum);
}

void
sp_test_force(const char *kernel, const char *variant)
{
    char spec[64];
    struct sp_err err;

    snprintf(spec, sizeof spec, "%s=%s", kernel, variant);
    if (sp_dispatch_set_impl(spec, &err)) {
        fail_msg("%s", err.msg);
    }
}

int
sp_test_rcu_setup(void **state)
{
    (void)state;
    rcu_register_thread();
    return 0;
}

int
sp_test_rcu_teardown(void **state)
{
    (void)state;
    rcu_unregister_thread();
    return 0;
}

const struct sp_variant *sp_runnable[SP_VARIANT_MAX];
unsigned sp_n_runnable;

int
sp_test_setup_variants(void **state)
{
    (void)state;
    sp_n_runnable = sp_test_variants(sp_runnable, SP_VARIANT_MAX);
    return 0;
}

uint32_t
sp_test_crc32c(const uint8_t *p, size_t len)
{
    uint32_t crc = UINT32_MAX;

    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++) {
            crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
        }
    }
    return ~crc;
}

struct sp_match
sp_test_match(const char *text, uint32_t *priority)
{
    struct sp_flow_spec spec;
    struct sp_err err;

    if (sp_flow_parse_match(text, &spec, &err)) {
        fail_msg("%s: column %u: %s", text, err.column, err.msg);
    }
    if (priority) {
        *priority = spec.priority;
    }
    return spec.match;
}
