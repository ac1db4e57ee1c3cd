/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: miniflow extract, every variant this CPU runs against
 * scalar. An input is one control byte and a packet; the batch is 1-32
 * copies of the packet cut shorter and shorter (by a step the control byte
 * gives), each in a buffer of exactly its length so ASan sees any read past
 * it, with varied in_port. Any difference in a key, offset or status
 * aborts. Each key scalar gives is also printed as parse-pcap prints it
 * and the print parsed as a rule's match, as docs/flow-syntax.md promises
 * it can be: a valid match that covers the key.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzlib.h"
#include "simdpath/flow_format.h"
#include "simdpath/flow_parse.h"
#include "simdpath/mfex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct batch {
    struct sp_packet pkts[SP_BATCH_MAX];
    struct sp_packet *ptrs[SP_BATCH_MAX];
    struct sp_flow_key keys[SP_BATCH_MAX];
};

static void
run(const struct sp_variant *v, struct batch *b, struct sp_packet *proto,
    uint32_t n)
{
    memcpy(b->pkts, proto, n * sizeof *proto);
    for (uint32_t i = 0; i < n; i++) {
        b->ptrs[i] = &b->pkts[i];
    }
    v->kernels->mfex(b->ptrs, n, b->keys);
}

/* The key as parse-pcap prints it, pasted into a rule. */
static void
check_printed_key(const struct sp_flow_key *key)
{
    char text[1024];
    struct sp_flow_spec spec;
    struct sp_err err;
    int len = sp_flow_format(key, NULL, text, sizeof text);

    if (len < 0 || (size_t)len >= sizeof text) {
        fprintf(stderr, "fuzz_mfex: printed key longer than %zu bytes\n",
                sizeof text);
        abort();
    }
    if (sp_flow_parse_match(text, &spec, &err) ||
        sp_match_validate(&spec.match, &err)) {
        fprintf(stderr, "fuzz_mfex: printed key '%s' is no match: %s\n", text,
                err.msg);
        abort();
    }
    if (!sp_match_covers(&spec.match, key)) {
        fprintf(stderr,
                "fuzz_mfex: printed key '%s' does not match the "
                "key\n",
                text);
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct batch want, got;
    struct sp_packet proto[SP_BATCH_MAX];
    uint8_t *bufs[SP_BATCH_MAX];
    const struct sp_variant *vs[SP_VARIANT_MAX];
    unsigned nv = sp_fuzz_variants(SP_KERNEL_mfex, vs);
    uint32_t n, step, len;

    if (size < 1 || size > UINT16_MAX) {
        return 0;
    }
    n = 1 + data[0] % SP_BATCH_MAX;
    step = 1 + (data[0] >> 5);
    len = (uint32_t)size - 1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t cut = i * step < len ? len - i * step : 0;

        bufs[i] = malloc(cut ? cut : 1);
        memcpy(bufs[i], data + 1, cut);
        proto[i] = (struct sp_packet){.data = bufs[i],
                                      .len = cut,
                                      .in_port = (uint16_t)(i * 257 + data[0]),
                                      .l3_ofs = 0xbeef,
                                      .l4_ofs = 0xbeef,
                                      .status = 0xbeef};
    }
    run(sp_variant_get(0), &want, proto, n);
    for (uint32_t i = 0; i < n; i++) {
        check_printed_key(&want.keys[i]);
    }
    for (unsigned v = 0; v < nv; v++) {
        run(vs[v], &got, proto, n);
        for (uint32_t i = 0; i < n; i++) {
            if (memcmp(&got.keys[i], &want.keys[i], sizeof want.keys[i]) ||
                got.pkts[i].l3_ofs != want.pkts[i].l3_ofs ||
                got.pkts[i].l4_ofs != want.pkts[i].l4_ofs ||
                got.pkts[i].status != want.pkts[i].status) {
                fprintf(stderr,
                        "fuzz_mfex: variant %s differs from scalar on "
                        "packet %u (len %u): status %s/%s\n",
                        vs[v]->name, i, proto[i].len,
                        sp_mfex_status_name(got.pkts[i].status),
                        sp_mfex_status_name(want.pkts[i].status));
                abort();
            }
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        free(bufs[i]);
    }
    return 0;
}
