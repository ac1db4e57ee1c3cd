/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SIMDPATH_IMPL as the library reads it at start-up, with no call to
 * sp_dispatch_set_impl: meson runs this program once with a valid value
 * ("applied") and once with a bad one ("refused").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* The value meson sets; this program must not pick its own. */
#define APPLIED "hash=scalar,emc=autovalidate"
#define REFUSED "hash=bogus"

static enum sp_choice_mode
mode_of(enum sp_kernel_id k, const struct sp_variant **v)
{
    return sp_dispatch_choice(k, v);
}

/* The first call into the registry already has SIMDPATH_IMPL's choices. */
static void
test_applied_at_start_up(void **state)
{
    (void)state;
    const struct sp_variant *v;
    struct sp_err err;

    assert_int_equal(mode_of(SP_KERNEL_hash, &v), SP_CHOICE_FORCED);
    assert_string_equal(v->name, "scalar");
    assert_ptr_equal(SP_KERNEL(hash),
                     sp_variant_find("scalar")->kernels->hash);
    assert_int_equal(mode_of(SP_KERNEL_emc, &v), SP_CHOICE_AUTOVALIDATE);
    assert_int_equal(mode_of(SP_KERNEL_mfex, &v), SP_CHOICE_AUTO);
    assert_int_equal(sp_dispatch_env_status(&err), 0);
    /* What the program sets later overrides it, as --impl does. */
    assert_int_equal(sp_dispatch_set_impl("hash=auto", &err), 0);
    assert_int_equal(mode_of(SP_KERNEL_hash, &v), SP_CHOICE_AUTO);
}

/* A bad value changes nothing and is reported, naming the value and what
 * is valid, to every caller that asks. */
static void
test_refused_is_reported(void **state)
{
    (void)state;
    const struct sp_variant *v;
    struct sp_err err;

    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        assert_int_equal(mode_of(k, &v), SP_CHOICE_AUTO);
    }
    for (int i = 0; i < 2; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(sp_dispatch_env_status(&err), -1);
        if (!strstr(err.msg, "'bogus'") || !strstr(err.msg, "valid here:") ||
            !strstr(err.msg, "auto")) {
            fail_msg("SIMDPATH_IMPL refused with \"%s\"", err.msg);
        }
    }
    assert_int_equal(sp_dispatch_env_status(NULL), -1);
    assert_int_equal(sp_dispatch_set_impl("scalar", &err), 0);
    assert_int_equal(mode_of(SP_KERNEL_hash, &v), SP_CHOICE_FORCED);
}

int
main(int argc, char **argv)
{
    const char *env = getenv("SIMDPATH_IMPL");
    bool refused = argc > 1 && !strcmp(argv[1], "refused");
    const struct CMUnitTest applied[] = {
        cmocka_unit_test(test_applied_at_start_up),
    };
    const struct CMUnitTest bad[] = {
        cmocka_unit_test(test_refused_is_reported),
    };

    if (!env || strcmp(env, refused ? REFUSED : APPLIED)) {
        fprintf(stderr, "run with SIMDPATH_IMPL=%s (meson test does)\n",
                refused ? REFUSED : APPLIED);
        return 77;
    }
    return refused ? cmocka_run_group_tests(bad, NULL, NULL)
                   : cmocka_run_group_tests(applied, NULL, NULL);
}
