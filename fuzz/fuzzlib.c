/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzlib.h"
#include "simdpath/openflow.h"

unsigned
sp_fuzz_variants(enum sp_kernel_id k, const struct sp_variant **out)
{
    unsigned n = 0;

    for (unsigned i = 1; i < sp_variant_count(); i++) {
        const struct sp_variant *v = sp_variant_get(i);

        if (sp_variant_supported(v) && sp_variant_provider(v, k) == v) {
            out[n++] = v;
        }
    }
    return n;
}

/* Its PMD thread never runs: nothing calls the I/O. */
static const struct sp_io_ops no_io;

struct sp_dp *
sp_fuzz_dp_create(unsigned n_ports)
{
    struct sp_dp_config config = {
        .n_ports = n_ports, .n_pmds = 1, .n_rxq = 1, .emc_insert_inv_prob = 1};
    struct sp_err err;
    struct sp_dp *dp = sp_dp_create(&config, &no_io, &err);

    if (!dp) {
        fprintf(stderr, "fuzz: cannot create a datapath: %s\n", err.msg);
        abort();
    }
    return dp;
}

size_t
sp_fuzz_of_message_len(const uint8_t *p, size_t avail)
{
    size_t len;

    if (avail < SP_OFP_HEADER_LEN || p[0] != SP_OFP_VERSION) {
        return 0;
    }
    len = (size_t)p[2] << 8 | p[3];
    return len >= SP_OFP_HEADER_LEN && len <= avail ? len : 0;
}

int
sp_fuzz_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    /* Interrupted, a TCP connect goes on (called again: EALREADY, then
     * EISCONN once done); a Unix one is abandoned and starts again. */
    while (connect(fd, addr, len)) {
        struct pollfd p = {fd, POLLOUT, 0};

        if (errno == EISCONN) {
            return 0;
        }
        if (errno == EALREADY) {
            poll(&p, 1, -1);
        } else if (errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

uint8_t
sp_fuzz_byte(struct sp_fuzz_input *in)
{
    uint8_t b = 0;

    sp_fuzz_bytes(in, &b, 1);
    return b;
}

void
sp_fuzz_bytes(struct sp_fuzz_input *in, void *out, size_t len)
{
    size_t take = len < in->size ? len : in->size;

    memcpy(out, in->data, take);
    memset((uint8_t *)out + take, 0, len - take);
    in->data += take;
    in->size -= take;
}
