/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include "mfexcheck.h"
#include "simdpath/mfex.h"

#define META_POISON 0xdead

static struct sp_guarded bufs[SP_BATCH_MAX];
static struct sp_guarded key_buf;
static struct sp_packet pkts[SP_BATCH_MAX];
static uint32_t queued;
static unsigned size_index; /* which of sp_test_batch_sizes is next */
static uint64_t checked;

void
sp_mfexcheck_init(void)
{
    for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
        sp_guarded_alloc(&bufs[i], SP_MFEXCHECK_LEN_MAX, 1);
    }
    sp_guarded_alloc(&key_buf, SP_BATCH_MAX * sizeof(struct sp_flow_key), 64);
    sp_test_setup_variants(NULL);
    queued = 0;
    size_index = 0;
    checked = 0;
}

void
sp_mfexcheck_fini(void)
{
    for (unsigned i = 0; i < SP_BATCH_MAX; i++) {
        sp_guarded_check(&bufs[i]);
        sp_guarded_free(&bufs[i]);
    }
    sp_guarded_free(&key_buf);
}

uint64_t
sp_mfexcheck_count(void)
{
    return checked;
}

static void
hex(const char *label, const void *data, size_t len)
{
    const uint8_t *p = data;

    fprintf(stderr, "  %s:", label);
    for (size_t i = 0; i < len && i < 128; i++) {
        fprintf(stderr, "%s%02x", i % 32 ? " " : "\n    ", p[i]);
    }
    fputc('\n', stderr);
}

/* Runs one variant on the queued packets with poisoned metadata and keys,
 * so a field it forgets to write shows. Keys end at the fence page. The
 * count the kernel returned is checked against the statuses it wrote. */
static struct sp_flow_key *
run(const struct sp_variant *v, uint32_t n)
{
    uint32_t errors, not_ok = 0;

    struct sp_flow_key *keys =
        (struct sp_flow_key *)(key_buf.data + key_buf.len) - n;
    struct sp_packet *ptrs[SP_BATCH_MAX];

    memset(keys, 0x5a, n * sizeof *keys);
    for (uint32_t i = 0; i < n; i++) {
        pkts[i].l3_ofs = META_POISON;
        pkts[i].l4_ofs = META_POISON;
        pkts[i].status = META_POISON;
        ptrs[i] = &pkts[i];
    }
    errors = v->kernels->mfex(ptrs, n, keys);
    for (uint32_t i = 0; i < n; i++) {
        not_ok += pkts[i].status != SP_MFEX_OK;
    }
    if (errors != not_ok) {
        fail_msg("mfex variant %s returned %u for %u packets not ok of %u",
                 v->name, errors, not_ok, n);
    }
    return keys;
}

void
sp_mfexcheck_flush(void)
{
    struct sp_flow_key want[SP_BATCH_MAX];
    struct sp_packet meta[SP_BATCH_MAX];
    uint32_t n = queued;

    memcpy(want, run(sp_runnable[0], n), n * sizeof want[0]);
    memcpy(meta, pkts, n * sizeof meta[0]);
    for (unsigned v = 1; v < sp_n_runnable; v++) {
        const struct sp_flow_key *got = run(sp_runnable[v], n);

        for (uint32_t i = 0; i < n; i++) {
            if (!memcmp(&got[i], &want[i], sizeof want[i]) &&
                pkts[i].l3_ofs == meta[i].l3_ofs &&
                pkts[i].l4_ofs == meta[i].l4_ofs &&
                pkts[i].status == meta[i].status) {
                continue;
            }
            fprintf(stderr,
                    "variant %s differs from scalar on packet %u of %u "
                    "(len %u): l3 %u/%u l4 %u/%u status %s/%s\n",
                    sp_runnable[v]->name, i, n, pkts[i].len, pkts[i].l3_ofs,
                    meta[i].l3_ofs, pkts[i].l4_ofs, meta[i].l4_ofs,
                    sp_mfex_status_name(pkts[i].status),
                    sp_mfex_status_name(meta[i].status));
            hex("packet", pkts[i].data, pkts[i].len);
            hex("variant key", &got[i], sizeof got[i]);
            hex("scalar key", &want[i], sizeof want[i]);
            fail_msg("mfex variant %s differs from scalar",
                     sp_runnable[v]->name);
        }
    }
    checked += n;
    queued = 0;
}

void
sp_mfexcheck_add(const uint8_t *bytes, uint32_t len)
{
    struct sp_guarded *g = &bufs[queued];

    assert_true(len <= SP_MFEXCHECK_LEN_MAX);
    /* Batch sizes cycle through the list; size 0 is an empty call. */
    if (sp_test_batch_sizes[size_index] == 0) {
        sp_mfexcheck_flush();
        size_index = (size_index + 1) % sp_test_batch_size_count;
    }
    pkts[queued] = (struct sp_packet){
        .data = g->data + g->len - len,
        .len = len,
        .in_port = (uint16_t)(queued * 4099 + len),
    };
    memcpy(pkts[queued].data, bytes, len);
    queued++;
    if (queued >= sp_test_batch_sizes[size_index]) {
        sp_mfexcheck_flush();
        size_index = (size_index + 1) % sp_test_batch_size_count;
    }
}
