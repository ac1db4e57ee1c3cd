/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The registry: compiled variants, CPU support, the choice per kernel and
 * the --impl grammar. Writers take a mutex; the datapath only reads
 * sp_kernels_active, whose entries are stored atomically.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/internal.h"
#include "dispatch/isa.h"
#include "simdpath/cpu.h"

#define X86_AVX2_NEEDS                                                \
    (SP_CPU(OS_YMM) | SP_CPU(AVX) | SP_CPU(AVX2) | SP_CPU(BMI1) |     \
     SP_CPU(BMI2) | SP_CPU(POPCNT) | SP_CPU(SSE42) | SP_CPU(PCLMUL) | \
     SP_CPU(MOVBE))
#define X86_AVX512_NEEDS                                                    \
    (X86_AVX2_NEEDS | SP_CPU(OS_ZMM) | SP_CPU(AVX512F) | SP_CPU(AVX512BW) | \
     SP_CPU(AVX512VL) | SP_CPU(AVX512DQ))
#define X86_AVX512VBMI_NEEDS \
    (X86_AVX512_NEEDS | SP_CPU(AVX512VBMI) | SP_CPU(VPCLMULQDQ))

/* Priorities: auto takes the highest the CPU supports. Not const: sve's
 * width is the CPU's vector length, set by init_registry. */
static struct sp_variant builtin_variants[] = {
    {"scalar", 0, 0, 0, &sp_scalar_kernels},
#ifdef SP_HAVE_AVX2
    {"avx2", X86_AVX2_NEEDS, 256, 20, &sp_avx2_kernels},
#endif
#ifdef SP_HAVE_AVX512
    {"avx512", X86_AVX512_NEEDS, 512, 30, &sp_avx512_kernels},
#endif
#ifdef SP_HAVE_AVX512VBMI
    {"avx512vbmi", X86_AVX512VBMI_NEEDS, 512, 35, &sp_avx512vbmi_kernels},
#endif
#ifdef SP_HAVE_NEON
    {"neon", SP_CPU(ASIMD) | SP_CPU(CRC32), 128, 20, &sp_neon_kernels},
#endif
#ifdef SP_HAVE_SVE
    /* 128 bits, the least SVE allows, until the CPU says. */
    {"sve", SP_CPU(ASIMD) | SP_CPU(CRC32) | SP_CPU(SVE), 128, 25,
     &sp_sve_kernels},
#endif
};

/* Every variant name simdpath has on some architecture, so that a name
 * from another build is "not compiled" rather than "unknown". */
static const char *const all_isa_names[] = {
#define SP_ISA_NAME(isa) #isa,
    SP_ISAS(SP_ISA_NAME)
#undef SP_ISA_NAME
};

/* The ISAs of this CPU family whose flags the compiler refused, separated
 * by spaces (meson.build). */
static const char isas_refused[] = SP_ISAS_REFUSED;

const char *
sp_isa_name(unsigned index)
{
    return index < sizeof all_isa_names / sizeof all_isa_names[0]
               ? all_isa_names[index]
               : NULL;
}

/* Whether 'name' is a word of the space-separated list. */
static bool
in_word_list(const char *list, const char *name)
{
    size_t len = strlen(name);

    for (const char *p = strstr(list, name); p; p = strstr(p + 1, name)) {
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || !p[len])) {
            return true;
        }
    }
    return false;
}

const char *
sp_isa_absence(unsigned index)
{
    const char *name = sp_isa_name(index);

    if (!name || sp_variant_find(name)) {
        return NULL;
    }
    return in_word_list(isas_refused, name) ? "the compiler refused its flags"
                                            : "another architecture";
}

static const char *const kernel_names[] = {
#define SP_KERNEL_NAME(name) #name,
    SP_KERNELS(SP_KERNEL_NAME)
#undef SP_KERNEL_NAME
};

struct choice {
    enum sp_choice_mode mode;
    const struct sp_variant *forced; /* SP_CHOICE_FORCED only */
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const struct sp_variant *variants[SP_VARIANT_MAX];
static unsigned n_variants;
static uint64_t hidden_features;
static unsigned max_simd;
static struct choice choices[SP_KERNEL_COUNT];
/* Why SIMDPATH_IMPL was refused at start-up; empty when it was not. */
static struct sp_err env_refusal;

struct sp_kernel_table sp_kernels_active;

const char *
sp_kernel_name(enum sp_kernel_id k)
{
    return k < SP_KERNEL_COUNT ? kernel_names[k] : NULL;
}

sp_any_fn
sp_kernel_table_get(const struct sp_kernel_table *t, enum sp_kernel_id k)
{
    switch (k) {
#define SP_KERNEL_GET(name) \
    case SP_KERNEL_##name:  \
        return (sp_any_fn)t->name;
        SP_KERNELS(SP_KERNEL_GET)
#undef SP_KERNEL_GET
    case SP_KERNEL_COUNT:
        break;
    }
    return NULL;
}

/* Publishes one entry of the active table to the calling threads. */
static void
activate(enum sp_kernel_id k, const struct sp_kernel_table *t)
{
    switch (k) {
#define SP_KERNEL_SET(name)                                                   \
    case SP_KERNEL_##name:                                                    \
        __atomic_store_n(&sp_kernels_active.name, t->name, __ATOMIC_RELEASE); \
        break;
        SP_KERNELS(SP_KERNEL_SET)
#undef SP_KERNEL_SET
    case SP_KERNEL_COUNT:
        break;
    }
}

uint64_t
sp_dispatch_features(void)
{
    return sp_cpu_detect_features() & ~hidden_features;
}

bool
sp_variant_supported(const struct sp_variant *v)
{
    return (v->requires & ~sp_dispatch_features()) == 0;
}

bool
sp_variant_allowed(const struct sp_variant *v)
{
    return sp_variant_supported(v) && (!max_simd || v->width <= max_simd);
}

unsigned
sp_variant_count(void)
{
    sp_dispatch_init();
    return n_variants;
}

const struct sp_variant *
sp_variant_get(unsigned index)
{
    sp_dispatch_init();
    return index < n_variants ? variants[index] : NULL;
}

const struct sp_variant *
sp_variant_find(const char *name)
{
    sp_dispatch_init();
    for (unsigned i = 0; i < n_variants; i++) {
        if (!strcmp(variants[i]->name, name)) {
            return variants[i];
        }
    }
    return NULL;
}

int
sp_variant_index(const struct sp_variant *v)
{
    for (unsigned i = 0; i < n_variants; i++) {
        if (variants[i] == v) {
            return (int)i;
        }
    }
    return -1;
}

const struct sp_variant *
sp_variant_provider(const struct sp_variant *v, enum sp_kernel_id k)
{
    sp_any_fn fn = sp_kernel_table_get(v->kernels, k);

    for (unsigned i = 0; i < n_variants; i++) {
        if (sp_kernel_table_get(variants[i]->kernels, k) == fn) {
            return variants[i];
        }
    }
    return v;
}

/* The best variant auto may pick now. Scalar is always allowed. */
static const struct sp_variant *
best_allowed(void)
{
    const struct sp_variant *best = variants[0];

    for (unsigned i = 1; i < n_variants; i++) {
        if (sp_variant_allowed(variants[i]) &&
            variants[i]->priority > best->priority) {
            best = variants[i];
        }
    }
    return best;
}

/* Makes sp_kernels_active follow 'choices'. Called with the lock held. */
static void
apply_choices(void)
{
    const struct sp_variant *best = best_allowed();

    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        const struct sp_kernel_table *t = best->kernels;

        if (choices[k].mode == SP_CHOICE_FORCED) {
            t = choices[k].forced->kernels;
        } else if (choices[k].mode == SP_CHOICE_AUTOVALIDATE) {
            t = &sp_autovalidate_kernels;
        }
        activate(k, t);
    }
}

static int parse_spec(const char *spec, struct choice next[SP_KERNEL_COUNT],
                      struct sp_err *err);

/* SIMDPATH_IMPL is read here, on the first call into the registry, so
 * that every program linking the library honours it. A bad value is kept
 * for sp_dispatch_env_status(), not fatal: a library does not exit, and
 * a program that runs no kernel (simdpath ctl) need not care. */
static void
init_registry(void)
{
    size_t n = sizeof builtin_variants / sizeof builtin_variants[0];
    const char *env = getenv("SIMDPATH_IMPL");
    struct choice next[SP_KERNEL_COUNT] = {{0}};

    sp_cpu_detect_features();
    for (size_t i = 0; i < n; i++) {
#ifdef SP_HAVE_SVE
        if (builtin_variants[i].kernels == &sp_sve_kernels &&
            sp_variant_supported(&builtin_variants[i])) {
            builtin_variants[i].width = sp_sve_vector_bits();
        }
#endif
        variants[n_variants++] = &builtin_variants[i];
    }
    if (env && !parse_spec(env, next, &env_refusal)) {
        memcpy(choices, next, sizeof choices);
    }
    apply_choices();
}

void
sp_dispatch_init(void)
{
    pthread_once(&init_once, init_registry);
}

enum sp_choice_mode
sp_dispatch_choice(enum sp_kernel_id k, const struct sp_variant **variant)
{
    enum sp_choice_mode mode;
    const struct sp_variant *v = NULL;

    sp_dispatch_init();
    pthread_mutex_lock(&lock);
    mode = choices[k].mode;
    if (mode == SP_CHOICE_AUTO) {
        v = sp_variant_provider(best_allowed(), k);
    } else if (mode == SP_CHOICE_FORCED) {
        v = sp_variant_provider(choices[k].forced, k);
    }
    pthread_mutex_unlock(&lock);
    if (variant) {
        *variant = v;
    }
    return mode;
}

/* Appends ", name" (or "name" first) to a list in buf. */
static void
list_append(char *buf, size_t size, const char *name)
{
    size_t used = strlen(buf);

    snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
}

/* "scalar, avx2, ..." for the variants that pass 'keep'. */
static void
list_variants(char *buf, size_t size, bool (*keep)(const struct sp_variant *))
{
    buf[0] = '\0';
    for (unsigned i = 0; i < n_variants; i++) {
        if (!keep || keep(variants[i])) {
            list_append(buf, size, variants[i]->name);
        }
    }
}

static void
list_kernels(char *buf, size_t size)
{
    buf[0] = '\0';
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        list_append(buf, size, kernel_names[k]);
    }
}

/* Parses one choice; on error says why, naming the valid ones. */
static int
parse_choice(const char *word, struct choice *out, struct sp_err *err)
{
    char valid[256];
    const struct sp_variant *v = NULL;

    if (!strcmp(word, "auto")) {
        *out = (struct choice){SP_CHOICE_AUTO, NULL};
        return 0;
    }
    if (!strcmp(word, "autovalidate")) {
        *out = (struct choice){SP_CHOICE_AUTOVALIDATE, NULL};
        return 0;
    }
    for (unsigned i = 0; i < n_variants; i++) {
        if (!strcmp(variants[i]->name, word)) {
            v = variants[i];
        }
    }
    list_variants(valid, sizeof valid, sp_variant_allowed);
    if (!v) {
        bool known = false;
        char compiled[256];

        for (size_t i = 0; i < sizeof all_isa_names / sizeof *all_isa_names;
             i++) {
            known |= !strcmp(all_isa_names[i], word);
        }
        list_variants(compiled, sizeof compiled, NULL);
        if (known) {
            sp_err_set(err,
                       "variant '%s' is not compiled into this %s build; "
                       "valid here: %s, auto, autovalidate",
                       word, sp_cpu_identity()->arch, valid);
        } else {
            sp_err_set(err,
                       "unknown variant '%s'; valid here: %s, auto, "
                       "autovalidate (compiled: %s)",
                       word, valid, compiled);
        }
        return -1;
    }
    if (!sp_variant_supported(v)) {
        char missing[256];

        sp_cpu_format_features(v->requires & ~sp_dispatch_features(), missing,
                               sizeof missing);
        sp_err_set(err,
                   "variant '%s' is not supported by this CPU (missing: %s); "
                   "valid here: %s, auto, autovalidate",
                   word, missing, valid);
        return -1;
    }
    if (!sp_variant_allowed(v)) {
        sp_err_set(err,
                   "variant '%s' uses %u-bit vectors, above --max-simd %u; "
                   "valid here: %s, auto, autovalidate",
                   word, v->width, max_simd, valid);
        return -1;
    }
    *out = (struct choice){SP_CHOICE_FORCED, v};
    return 0;
}

static int
find_kernel(const char *name)
{
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        if (!strcmp(kernel_names[k], name)) {
            return (int)k;
        }
    }
    return -1;
}

/* Parses a whole spec into 'next'. Called with the lock held. */
static int
parse_spec(const char *spec, struct choice next[SP_KERNEL_COUNT],
           struct sp_err *err)
{
    char buf[512];
    char *save = NULL;
    size_t len = strlen(spec);

    if (len == 0) {
        sp_err_set(err, "empty implementation choice; expected VARIANT or "
                        "KERNEL=VARIANT[,...]");
        return -1;
    }
    if (len >= sizeof buf) {
        sp_err_set(err, "implementation choice is too long (%zu bytes)", len);
        return -1;
    }
    if (spec[0] == ',' || spec[len - 1] == ',' || strstr(spec, ",,")) {
        sp_err_set(err,
                   "empty item in '%s'; expected VARIANT or "
                   "KERNEL=VARIANT separated by single commas",
                   spec);
        return -1;
    }
    memcpy(buf, spec, len + 1);
    for (char *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        struct choice c;

        if (!eq) {
            if (parse_choice(item, &c, err)) {
                return -1;
            }
            for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
                next[k] = c;
            }
            continue;
        }
        *eq = '\0';
        int k = find_kernel(item);

        if (k < 0) {
            char kernels[256];

            list_kernels(kernels, sizeof kernels);
            sp_err_set(err, "unknown kernel '%s'; kernels: %s", item, kernels);
            return -1;
        }
        if (parse_choice(eq + 1, &c, err)) {
            if (err) {
                char inner[SP_ERR_LEN];

                snprintf(inner, sizeof inner, "%s", err->msg);
                sp_err_set(err, "%s: %s", item, inner);
            }
            return -1;
        }
        next[k] = c;
    }
    return 0;
}

int
sp_dispatch_set_impl(const char *spec, struct sp_err *err)
{
    struct choice next[SP_KERNEL_COUNT];
    int rc;

    sp_dispatch_init();
    pthread_mutex_lock(&lock);
    memcpy(next, choices, sizeof next);
    rc = parse_spec(spec, next, err);
    if (!rc) {
        memcpy(choices, next, sizeof choices);
        apply_choices();
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int
sp_dispatch_env_status(struct sp_err *err)
{
    sp_dispatch_init();
    return env_refusal.msg[0] ? sp_err_set(err, "%s", env_refusal.msg) : 0;
}

int
sp_dispatch_set_max_simd(unsigned bits, struct sp_err *err)
{
    int rc = 0;

    sp_dispatch_init();
    if (bits != 0 && bits != 128 && bits != 256 && bits != 512) {
        sp_err_set(err, "invalid SIMD width %u; expected 128, 256 or 512",
                   bits);
        return -1;
    }
    pthread_mutex_lock(&lock);
    for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
        const struct sp_variant *v = choices[k].forced;

        if (choices[k].mode == SP_CHOICE_FORCED && bits && v->width > bits) {
            sp_err_set(err,
                       "kernel %s is set to '%s', which uses %u-bit "
                       "vectors, above --max-simd %u",
                       kernel_names[k], v->name, v->width, bits);
            rc = -1;
            break;
        }
    }
    if (!rc) {
        max_simd = bits;
        apply_choices();
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

unsigned
sp_dispatch_max_simd(void)
{
    return max_simd;
}

void
sp_dispatch_reset(void)
{
    sp_dispatch_init();
    pthread_mutex_lock(&lock);
    memset(choices, 0, sizeof choices);
    max_simd = 0;
    apply_choices();
    pthread_mutex_unlock(&lock);
}

void
sp_dispatch_hide_features(uint64_t hidden)
{
    sp_dispatch_init();
    pthread_mutex_lock(&lock);
    hidden_features = hidden;
    memset(choices, 0, sizeof choices);
    apply_choices();
    pthread_mutex_unlock(&lock);
}

int
sp_dispatch_register_variant(const struct sp_variant *v, struct sp_err *err)
{
    int rc = 0;

    sp_dispatch_init();
    pthread_mutex_lock(&lock);
    if (n_variants == SP_VARIANT_MAX) {
        sp_err_set(err, "too many variants (%d)", SP_VARIANT_MAX);
        rc = -1;
    }
    for (unsigned i = 0; !rc && i < n_variants; i++) {
        if (!strcmp(variants[i]->name, v->name)) {
            sp_err_set(err, "variant '%s' is already registered", v->name);
            rc = -1;
        }
    }
    for (unsigned k = 0; !rc && k < SP_KERNEL_COUNT; k++) {
        if (!sp_kernel_table_get(v->kernels, k)) {
            sp_err_set(err, "variant '%s' has no %s kernel", v->name,
                       kernel_names[k]);
            rc = -1;
        }
    }
    if (!rc) {
        variants[n_variants++] = v;
        sp_autovalidate_reset();
        apply_choices();
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void
sp_dispatch_unregister_variant(const struct sp_variant *v)
{
    sp_dispatch_init();
    pthread_mutex_lock(&lock);
    int index = sp_variant_index(v);

    if (index > 0) {
        memmove(&variants[index], &variants[index + 1],
                (n_variants - (unsigned)index - 1) * sizeof variants[0]);
        n_variants--;
        for (unsigned k = 0; k < SP_KERNEL_COUNT; k++) {
            if (choices[k].forced == v) {
                choices[k] = (struct choice){SP_CHOICE_AUTO, NULL};
            }
        }
        sp_autovalidate_reset();
        apply_choices();
    }
    pthread_mutex_unlock(&lock);
}
