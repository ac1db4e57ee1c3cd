/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the fuzz targets (fuzz/) found, each kept as a test of its own so
 * it stays fixed; the inputs are also in the targets' seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdpath/datapath.h"
#include "testlib.h"

/* Its PMD thread never runs: nothing calls the I/O. */
static const struct sp_io_ops no_io;

static struct sp_dp *
idle_dp(void)
{
    struct sp_dp_config config = {
        .n_ports = 4, .n_pmds = 1, .n_rxq = 1, .emc_insert_inv_prob = 1};
    struct sp_err err;
    struct sp_dp *dp = sp_dp_create(&config, &no_io, &err);

    if (!dp) {
        fail_msg("sp_dp_create: %s", err.msg);
    }
    return dp;
}

/* fuzz_ctl, "flow-dump" before any rule: the rule list was still NULL and
 * went to qsort, which may not take NULL (UBSan stops there). */
static void
test_flow_dump_without_rules(void **state)
{
    struct sp_dp *dp = idle_dp();
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    (void)state;
    sp_dp_flows_dump(dp, out);
    fclose(out);
    assert_int_equal(len, 0);
    free(text);
    sp_dp_destroy(dp);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flow_dump_without_rules),
    };

    return cmocka_run_group_tests_name("fuzz_found", tests, NULL, NULL);
}
