/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry: grammar, errors, selection under hidden features, the width
 * cap, and the autovalidator against a deliberately wrong variant. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/prctl.h>
#endif

#include "simdpath/cpu.h"
#include "simdpath/emc.h"
#include "simdpath/random.h"
#include "testlib.h"

static int
reset(void **state)
{
    (void)state;
    sp_dispatch_hide_features(0);
    sp_dispatch_reset();
    return 0;
}

static const struct sp_variant *
chosen(enum sp_kernel_id k, enum sp_choice_mode *mode)
{
    const struct sp_variant *v;
    enum sp_choice_mode m = sp_dispatch_choice(k, &v);

    if (mode) {
        *mode = m;
    }
    return v;
}

/* The variant auto should pick: highest priority among those whose needs
 * the (masked) CPU meets and whose width is within 'cap'. */
static const struct sp_variant *
expected_best(unsigned cap)
{
    const struct sp_variant *best = sp_variant_get(0);

    for (unsigned i = 1; i < sp_variant_count(); i++) {
        const struct sp_variant *v = sp_variant_get(i);

        if ((v->requires & ~sp_dispatch_features()) == 0 &&
            (!cap || v->width <= cap) && v->priority > best->priority) {
            best = v;
        }
    }
    return best;
}

static void
assert_auto_is(const struct sp_variant *best)
{
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        enum sp_choice_mode mode;

        assert_ptr_equal(chosen(k, &mode), sp_variant_provider(best, k));
        assert_int_equal(mode, SP_CHOICE_AUTO);
        assert_ptr_equal(sp_kernel_table_get(&sp_kernels_active, k),
                         sp_kernel_table_get(best->kernels, k));
    }
}

static void
test_default_is_best(void **state)
{
    (void)state;
    assert_auto_is(expected_best(0));
}

/* CI runs this suite on CPUs whose best variant it knows (native AVX-512,
 * qemu Haswell, Westmere, cortex-a72) and says which in SP_EXPECT_AUTO. */
/* A table with a hole would crash the first caller of that kernel. */
static void
test_every_table_complete(void **state)
{
    (void)state;
    for (unsigned i = 0; i < sp_variant_count(); i++) {
        for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
            if (!sp_kernel_table_get(sp_variant_get(i)->kernels, k)) {
                fail_msg("variant %s has no %s kernel",
                         sp_variant_get(i)->name, sp_kernel_name(k));
            }
        }
    }
}

/* cmocka counts a skip() as a pass; main reports it to meson as status 77
 * when nothing failed. */
static bool skipped;

static void
test_expected_auto(void **state)
{
    (void)state;
    const char *want = getenv("SP_EXPECT_AUTO");
    const struct sp_variant *v;

    if (!want || !*want) {
        print_message("SKIP: SP_EXPECT_AUTO is not set\n");
        skipped = true;
        skip();
    }
    v = sp_variant_find(want);
    if (!v) {
        fail_msg("SP_EXPECT_AUTO=%s is not a compiled variant", want);
    }
    assert_ptr_equal(expected_best(0), v);
    assert_auto_is(v);
}

static void
test_forced_everywhere(void **state)
{
    (void)state;
    struct sp_err err;
    const struct sp_variant *v;

    for (unsigned i = 0; i < sp_variant_count(); i++) {
        v = sp_variant_get(i);
        if (!sp_variant_supported(v)) {
            continue;
        }
        assert_int_equal(sp_dispatch_set_impl(v->name, &err), 0);
        for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
            enum sp_choice_mode mode;

            assert_ptr_equal(chosen(k, &mode), sp_variant_provider(v, k));
            assert_int_equal(mode, SP_CHOICE_FORCED);
            assert_ptr_equal(sp_kernel_table_get(&sp_kernels_active, k),
                             sp_kernel_table_get(v->kernels, k));
        }
    }
}

static void
test_per_kernel_and_order(void **state)
{
    (void)state;
    struct sp_err err;
    enum sp_choice_mode mode;
    const struct sp_variant *scalar = sp_variant_get(0);

    assert_int_equal(sp_dispatch_set_impl("hash=scalar", &err), 0);
    assert_ptr_equal(chosen(SP_KERNEL_hash, &mode), scalar);
    assert_int_equal(mode, SP_CHOICE_FORCED);
    assert_ptr_equal(
        chosen(SP_KERNEL_batch_copy, &mode),
        sp_variant_provider(expected_best(0), SP_KERNEL_batch_copy));
    assert_int_equal(mode, SP_CHOICE_AUTO);

    /* Later items win; a bare choice covers every kernel. */
    assert_int_equal(sp_dispatch_set_impl("scalar,hash=autovalidate", &err),
                     0);
    chosen(SP_KERNEL_hash, &mode);
    assert_int_equal(mode, SP_CHOICE_AUTOVALIDATE);
    assert_ptr_equal(chosen(SP_KERNEL_batch_copy, &mode), scalar);
    assert_int_equal(mode, SP_CHOICE_FORCED);

    /* Each call applies on top of the last. */
    assert_int_equal(sp_dispatch_set_impl("batch_copy=auto", &err), 0);
    chosen(SP_KERNEL_batch_copy, &mode);
    assert_int_equal(mode, SP_CHOICE_AUTO);
    chosen(SP_KERNEL_hash, &mode);
    assert_int_equal(mode, SP_CHOICE_AUTOVALIDATE);

    assert_int_equal(sp_dispatch_set_impl("auto", &err), 0);
    assert_auto_is(expected_best(0));
}

/* Fails unless 'spec' is refused with a message holding every 'needles'
 * string, and the choices are left as they were. */
static void
assert_refused(const char *spec, const char *const *needles)
{
    struct sp_err err = {.msg = ""};
    enum sp_choice_mode before[SP_KERNEL_COUNT], after;
    const struct sp_variant *before_v[SP_KERNEL_COUNT];

    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        before_v[k] = chosen(k, &before[k]);
    }
    assert_int_equal(sp_dispatch_set_impl(spec, &err), -1);
    for (; *needles; needles++) {
        if (!strstr(err.msg, *needles)) {
            fail_msg("'%s': error \"%s\" lacks \"%s\"", spec, err.msg,
                     *needles);
        }
    }
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        assert_ptr_equal(chosen(k, &after), before_v[k]);
        assert_int_equal(after, before[k]);
    }
}

static void
test_grammar_errors(void **state)
{
    (void)state;
    struct sp_err err;
    const char *foreign = sp_variant_find("avx2") ? "neon" : "avx2";
    char spec[64];

    assert_int_equal(sp_dispatch_set_impl("hash=scalar", &err), 0);
    assert_refused("bogus",
                   (const char *const[]){"unknown variant 'bogus'",
                                         "valid here:", "scalar", "auto",
                                         "autovalidate", NULL});
    assert_refused("", (const char *const[]){"empty", NULL});
    assert_refused(",", (const char *const[]){"empty item", NULL});
    assert_refused("scalar,", (const char *const[]){"empty item", NULL});
    assert_refused("scalar,,auto", (const char *const[]){"empty item", NULL});
    assert_refused("foo=scalar",
                   (const char *const[]){"unknown kernel 'foo'", "hash",
                                         "batch_copy", "ipv4_rewrite", NULL});
    assert_refused("hash=", (const char *const[]){"hash:", "unknown variant",
                                                  "scalar", NULL});
    assert_refused("hash=scalar=scalar",
                   (const char *const[]){"unknown variant", NULL});
    /* All or nothing: a bad item later leaves the earlier ones unapplied. */
    assert_refused("batch_copy=scalar,bogus",
                   (const char *const[]){"bogus", NULL});
    snprintf(spec, sizeof spec, "batch_copy=%s", foreign);
    assert_refused(spec, (const char *const[]){"not compiled", foreign,
                                               "valid here:", NULL});
}

static void
test_unsupported_variant(void **state)
{
    (void)state;
    for (unsigned i = 1; i < sp_variant_count(); i++) {
        const struct sp_variant *v = sp_variant_get(i);
        char needle[64];

        if (!v->requires || !sp_variant_supported(v)) {
            continue;
        }
        /* Hide the variant's last feature: forcing it must fail and name
         * the missing feature. */
        unsigned bit = 63 - (unsigned)__builtin_clzll(v->requires);

        sp_dispatch_hide_features(UINT64_C(1) << bit);
        snprintf(needle, sizeof needle, "missing: %s",
                 sp_cpu_feature_name(bit));
        assert_refused(v->name, (const char *const[]){"not supported", needle,
                                                      "scalar", NULL});
        sp_dispatch_hide_features(0);
    }
}

/* Hiding any one feature a variant needs makes auto fall back to the best
 * variant that does not need it. */
static void
test_selection_under_hidden_features(void **state)
{
    (void)state;
    unsigned tried = 0;

    for (unsigned i = 1; i < sp_variant_count(); i++) {
        uint64_t needs = sp_variant_get(i)->requires;

        for (unsigned bit = 0; bit < 64; bit++) {
            if (!(needs & (UINT64_C(1) << bit))) {
                continue;
            }
            sp_dispatch_hide_features(UINT64_C(1) << bit);
            assert_false(sp_variant_supported(sp_variant_get(i)));
            assert_int_equal(expected_best(0)->requires & (UINT64_C(1) << bit),
                             0);
            assert_auto_is(expected_best(0));
            tried++;
        }
    }
    sp_dispatch_hide_features(UINT64_MAX);
    assert_auto_is(sp_variant_get(0));
    sp_dispatch_hide_features(0);
    print_message("checked selection with %u hidden features\n", tried);
}

static void
test_max_simd(void **state)
{
    (void)state;
    struct sp_err err;
    static const unsigned caps[] = {128, 256, 512, 0};

    for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
        assert_int_equal(sp_dispatch_set_max_simd(caps[c], &err), 0);
        assert_int_equal(sp_dispatch_max_simd(), caps[c]);
        assert_auto_is(expected_best(caps[c]));
        assert_true(!caps[c] || expected_best(caps[c])->width <= caps[c]);
    }
    assert_int_equal(sp_dispatch_set_max_simd(100, &err), -1);
    assert_non_null(strstr(err.msg, "128, 256 or 512"));

    /* A forced wide variant blocks a lower cap, and a cap blocks forcing. */
    for (unsigned i = 0; i < sp_variant_count(); i++) {
        const struct sp_variant *v = sp_variant_get(i);
        char spec[64];

        if (v->width < 256 || !sp_variant_supported(v)) {
            continue;
        }
        snprintf(spec, sizeof spec, "batch_copy=%s", v->name);
        assert_int_equal(sp_dispatch_set_impl(spec, &err), 0);
        assert_int_equal(sp_dispatch_set_max_simd(v->width / 2, &err), -1);
        assert_non_null(strstr(err.msg, "batch_copy"));
        assert_int_equal(sp_dispatch_set_impl("auto", &err), 0);
        assert_int_equal(sp_dispatch_set_max_simd(v->width / 2, &err), 0);
        assert_refused(spec, (const char *const[]){"above --max-simd", NULL});
        sp_dispatch_reset();
    }
}

/* sve's width, which --max-simd caps, is the vector length the kernel
 * gives this process (as the OS reports it, not as SVE code reads it). */
static void
test_sve_width(void **state)
{
    (void)state;
    const struct sp_variant *v = sp_variant_find("sve");

    if (!v || !sp_variant_supported(v)) {
        assert_true(!v || v->width == 128);
        return;
    }
#if defined(__aarch64__) && defined(PR_SVE_GET_VL)
    int vl = prctl(PR_SVE_GET_VL);

    assert_true(vl > 0);
    assert_int_equal(v->width, (unsigned)(vl & PR_SVE_VL_LEN_MASK) * 8);
#else
    fail_msg("sve supported but the vector length cannot be read");
#endif
}

/* A variant that is wrong on purpose: the second packet's status off by
 * one, one hash bit flipped, and the last selected pointer dropped. */
static uint32_t
broken_mfex(struct sp_packet *const *pkts, uint32_t n,
            struct sp_flow_key *keys)
{
    uint32_t errors = sp_variant_get(0)->kernels->mfex(pkts, n, keys);

    if (n > 1) {
        pkts[1]->status++;
    }
    return errors;
}

static void
broken_hash(const struct sp_flow_key *keys, const struct sp_flow_key *mask,
            uint32_t n, uint32_t *hashes)
{
    sp_variant_get(0)->kernels->hash(keys, mask, n, hashes);
    if (n > 2) {
        hashes[2] ^= 0x100;
    }
}

static uint32_t
broken_batch_copy(void **dst, void *const *src, uint32_t n, uint32_t select)
{
    uint32_t count =
        sp_variant_get(0)->kernels->batch_copy(dst, src, n, select);

    return count ? count - 1 : 0;
}

/* Rewrites as scalar does, then changes the last byte of the second
 * packet. */
static uint32_t
broken_ipv4_rewrite(struct sp_packet *const *pkts, uint32_t n,
                    const struct sp_ipv4_set *set)
{
    uint32_t expired = sp_variant_get(0)->kernels->ipv4_rewrite(pkts, n, set);

    if (n > 1 && pkts[1]->len) {
        pkts[1]->data[pkts[1]->len - 1] ^= 1;
    }
    return expired;
}

/* Lookups that lose their first answer. */
static uint32_t
broken_emc(const struct sp_emc *emc, uint64_t gen,
           const struct sp_flow_key *keys, const uint32_t *hashes, uint32_t n,
           const struct sp_rule **rules)
{
    uint32_t hits =
        sp_variant_get(0)->kernels->emc(emc, gen, keys, hashes, n, rules);

    return hits & (hits - 1);
}

static uint32_t
broken_classifier(const struct sp_cls_subtable *st,
                  const struct sp_cls_buckets *buckets,
                  const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                  const struct sp_rule **rules)
{
    uint32_t found = sp_variant_get(0)->kernels->classifier(st, buckets, keys,
                                                            n, todo, rules);

    return found & (found - 1);
}

static uint32_t
broken_key_match(const struct sp_flow_key *keys, uint32_t n, uint32_t todo,
                 const struct sp_flow_key *mask,
                 const struct sp_flow_key *value)
{
    uint32_t hits =
        sp_variant_get(0)->kernels->key_match(keys, n, todo, mask, value);

    return hits & (hits - 1);
}

static const struct sp_kernel_table broken_kernels = SP_KERNEL_TABLE(broken);

static const struct sp_variant broken = {"broken", 0, 0, -1, &broken_kernels};

static char log_text[8192];

static void
capture_log(const char *text, void *ctx)
{
    (void)ctx;
    strncat(log_text, text, sizeof log_text - strlen(log_text) - 1);
}

static void
test_autovalidate_catches_broken(void **state)
{
    (void)state;
    struct sp_err err;
    struct sp_random rng = {3};
    struct sp_flow_key keys[8];
    uint32_t hashes[8], want[8];
    void *src[SP_BATCH_MAX], *dst[SP_BATCH_MAX], *want_ptrs[SP_BATCH_MAX];
    int index;

    assert_int_equal(sp_dispatch_register_variant(&broken, &err), 0);
    assert_int_equal(sp_dispatch_register_variant(&broken, &err), -1);
    assert_non_null(strstr(err.msg, "already registered"));
    index = (int)sp_variant_count() - 1;
    assert_ptr_equal(sp_variant_get((unsigned)index), &broken);
    /* Priority below scalar: auto never picks it. */
    assert_auto_is(expected_best(0));

    log_text[0] = '\0';
    sp_dispatch_set_log(capture_log, NULL);
    assert_int_equal(sp_dispatch_set_impl("autovalidate", &err), 0);
    sp_random_fill(&rng, keys, sizeof keys);
    sp_variant_get(0)->kernels->hash(keys, NULL, 8, want);
    for (int call = 0; call < 3; call++) {
        SP_KERNEL(hash)(keys, NULL, 8, hashes);
        assert_memory_equal(hashes, want, sizeof want);
    }
    assert_int_equal(
        sp_autovalidate_mismatches(SP_KERNEL_hash, (unsigned)index), 3);
    assert_int_equal(sp_autovalidate_checks(SP_KERNEL_hash, (unsigned)index),
                     3);
    /* A hash of fewer than 3 keys is right even from this variant. */
    SP_KERNEL(hash)(keys, NULL, 2, hashes);
    assert_int_equal(
        sp_autovalidate_mismatches(SP_KERNEL_hash, (unsigned)index), 3);
    /* Real variants agree with scalar. */
    for (int i = 1; i < index; i++) {
        assert_int_equal(
            sp_autovalidate_mismatches(SP_KERNEL_hash, (unsigned)i), 0);
    }
    /* One report for the first mismatch, with a hex dump. */
    assert_non_null(strstr(log_text, "kernel hash: variant broken differs "
                                     "from scalar at item 2"));
    assert_non_null(strstr(log_text, "scalar hash (4 bytes)"));
    assert_null(
        strstr(strstr(log_text, "variant broken") + 1, "variant broken"));

    sp_random_fill(&rng, src, sizeof src);
    uint32_t count = SP_KERNEL(batch_copy)(dst, src, SP_BATCH_MAX, 0xf0f0);

    assert_int_equal(count, 8);
    assert_int_equal(sp_variant_get(0)->kernels->batch_copy(
                         want_ptrs, src, SP_BATCH_MAX, 0xf0f0),
                     8);
    assert_memory_equal(dst, want_ptrs, 8 * sizeof(void *));
    assert_int_equal(
        sp_autovalidate_mismatches(SP_KERNEL_batch_copy, (unsigned)index), 1);
    assert_non_null(strstr(log_text, "kernel batch_copy: variant broken"));

    /* mfex: scalar's metadata reaches the caller, the variant's is
     * compared and reported with the packet. */
    uint8_t frame[60] = {[12] = 0x08, [14] = 0x45};
    struct sp_packet pkts[2] = {{.data = frame, .len = 60},
                                {.data = frame, .len = 60}};
    struct sp_packet *ptrs[2] = {&pkts[0], &pkts[1]};

    SP_KERNEL(mfex)(ptrs, 2, keys);
    assert_int_equal(pkts[1].status, SP_MFEX_L3_BAD_LEN);
    assert_int_equal(
        sp_autovalidate_mismatches(SP_KERNEL_mfex, (unsigned)index), 1);
    assert_non_null(strstr(log_text, "kernel mfex: variant broken differs "
                                     "from scalar at item 1"));
    assert_non_null(strstr(log_text, "variant l3_ofs, l4_ofs, status"));
    /* The in-place rewrite: the caller gets scalar's bytes, and the
     * report holds the original and both results. */
    {
        uint8_t frames[2][34], want_frames[2][34];
        struct sp_packet rw_pkts[2], want_pkts[2];
        struct sp_packet *rw_ptrs[2] = {&rw_pkts[0], &rw_pkts[1]};
        struct sp_packet *want_ptrs2[2] = {&want_pkts[0], &want_pkts[1]};
        const struct sp_ipv4_set set = {.dst = 0x01020304,
                                        .dst_mask = UINT32_MAX};

        sp_random_fill(&rng, frames, sizeof frames);
        for (int i = 0; i < 2; i++) {
            frames[i][14] = 0x45;
            rw_pkts[i] = (struct sp_packet){
                .data = frames[i], .len = 34, .l3_ofs = 14, .l4_ofs = 34};
            want_pkts[i] = rw_pkts[i];
            want_pkts[i].data = want_frames[i];
        }
        memcpy(want_frames, frames, sizeof frames);
        sp_variant_get(0)->kernels->ipv4_rewrite(want_ptrs2, 2, &set);
        SP_KERNEL(ipv4_rewrite)(rw_ptrs, 2, &set);
        assert_memory_equal(frames, want_frames, sizeof frames);
        assert_int_equal(sp_autovalidate_mismatches(SP_KERNEL_ipv4_rewrite,
                                                    (unsigned)index),
                         1);
        assert_non_null(strstr(log_text, "kernel ipv4_rewrite: variant "
                                         "broken differs from scalar at "
                                         "item 1"));
        assert_non_null(strstr(log_text, "original packet (34 bytes)"));
        assert_non_null(strstr(log_text, "variant packet (34 bytes)"));
        for (int i = 1; i < index; i++) {
            assert_int_equal(sp_autovalidate_mismatches(SP_KERNEL_ipv4_rewrite,
                                                        (unsigned)i),
                             0);
        }
    }
    /* The lookups: one rule, found by the classifier and the EMC. Its
     * subtable has a second rule: one of a single rule is compared with
     * it without the kernel. */
    struct sp_cls *cls = sp_cls_create(NULL);
    struct sp_match match;
    struct sp_emc emc;
    const struct sp_rule *rule, *got;

    memset(&match, 0, sizeof match);
    match.key = keys[0];
    memset(&match.mask, 0xff, 12); /* dl_dst, dl_src */
    sp_match_mask_key(&match);
    rule = sp_cls_insert(cls, &match, 1, NULL, &err);
    assert_non_null(rule);
    match.key.dl_dst[0] ^= 1;
    assert_non_null(sp_cls_insert(cls, &match, 1, NULL, &err));
    assert_int_equal(sp_cls_lookup(cls, keys, 1, 1, &got), 1);
    assert_ptr_equal(got, rule);
    assert_int_equal(
        sp_autovalidate_mismatches(SP_KERNEL_classifier, (unsigned)index), 1);
    assert_non_null(strstr(log_text, "kernel classifier: variant broken"));
    assert_int_equal(sp_emc_init(&emc, 8, 1, &err), 0);
    assert_true(sp_emc_insert(&emc, 1, &keys[0], want[0], rule, &rng));
    assert_int_equal(SP_KERNEL(emc)(&emc, 1, keys, want, 1, &got), 1);
    assert_int_equal(
        sp_autovalidate_mismatches(SP_KERNEL_emc, (unsigned)index), 1);
    assert_non_null(strstr(log_text, "kernel emc: variant broken"));
    sp_emc_destroy(&emc);
    sp_cls_destroy(cls);
    /* A subtable of one rule of two blocks: the key match kernel. */
    cls = sp_cls_create(NULL);
    match.key.dl_dst[0] ^= 1;
    rule = sp_cls_insert(cls, &match, 1, NULL, &err);
    assert_non_null(rule);
    assert_int_equal(sp_cls_lookup(cls, keys, 1, 1, &got), 1);
    assert_ptr_equal(got, rule);
    assert_int_equal(
        sp_autovalidate_mismatches(SP_KERNEL_key_match, (unsigned)index), 1);
    assert_non_null(strstr(log_text, "kernel key_match: variant broken"));
    assert_non_null(strstr(log_text, "variant matches (4 bytes)"));
    sp_cls_destroy(cls);

    /* Forcing it by name works; auto is back after unregistering. */
    assert_int_equal(sp_dispatch_set_impl("hash=broken", &err), 0);
    assert_ptr_equal(SP_KERNEL(hash), broken_hash);
    sp_dispatch_unregister_variant(&broken);
    assert_null(sp_variant_find("broken"));
    assert_int_equal(sp_dispatch_set_impl("auto", &err), 0);
    sp_dispatch_set_log(NULL, NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_default_is_best, reset),
        cmocka_unit_test_setup(test_every_table_complete, reset),
        cmocka_unit_test_setup(test_expected_auto, reset),
        cmocka_unit_test_setup(test_forced_everywhere, reset),
        cmocka_unit_test_setup(test_per_kernel_and_order, reset),
        cmocka_unit_test_setup(test_grammar_errors, reset),
        cmocka_unit_test_setup(test_unsupported_variant, reset),
        cmocka_unit_test_setup(test_selection_under_hidden_features, reset),
        cmocka_unit_test_setup(test_max_simd, reset),
        cmocka_unit_test_setup(test_sve_width, reset),
        cmocka_unit_test_setup(test_autovalidate_catches_broken, reset),
    };

    int failed = cmocka_run_group_tests_name("dispatch", tests, NULL, reset);

    return failed ? failed : skipped ? 77 : 0;
}
