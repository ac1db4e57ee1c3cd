/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * When a rule's OpenFlow timeouts remove it, as ovs-vswitchd decides
 * (ofproto-dpif's rule_expire): the caller keeps the clock, so the tests
 * choose the time.
 */
#include "simdpath/openflow.h"

int
sp_of_flow_expiry(const struct sp_of_flow *f, uint64_t modified_ms,
                  uint64_t now_ms, double idle_age)
{
    uint64_t since_modified = now_ms > modified_ms ? now_ms - modified_ms : 0;

    if (f->hard_timeout && since_modified > f->hard_timeout * 1000ull) {
        return SP_OFPRR_HARD_TIMEOUT;
    }
    if (f->idle_timeout && idle_age > f->idle_timeout) {
        return SP_OFPRR_IDLE_TIMEOUT;
    }
    return -1;
}
