/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One registry for every kernel: which variants exist, which the CPU runs,
 * which one each kernel uses, how an operator overrides that, and the
 * autovalidator that checks every variant against scalar on live input.
 *
 * Grammar of an implementation choice (--impl, SIMDPATH_IMPL, control):
 *
 *     spec  := item { "," item }
 *     item  := choice | kernel "=" choice
 *     choice:= variant | "auto" | "autovalidate"
 *
 * A bare choice applies to every kernel; later items override earlier ones.
 * A variant that has no implementation of its own for a kernel uses the one
 * its table names (scalar's); `simdpath impls` shows which.
 */
#ifndef SP_DISPATCH_H
#define SP_DISPATCH_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simdpath/kernels.h"

#define SP_VARIANT_MAX 16
#define SP_ERR_LEN     512

/* An error: what is wrong, and where when it is about a text (a rule, a
 * line of a file). Only sp_err_text() puts the two together. */
struct sp_err {
    char msg[SP_ERR_LEN]; /* without the place */
    unsigned line;        /* 1-based line of a file; 0: none */
    unsigned column;      /* 1-based column of the line or text; 0: none */
};

/* Writes a message into err (if not NULL), with no line or column;
 * returns -1, for "return sp_err_set(err, ...);". */
int sp_err_set(struct sp_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int sp_err_vset(struct sp_err *err, const char *fmt, va_list args);
/* The same at a column. */
int sp_err_set_at(struct sp_err *err, unsigned column, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Room for any sp_err_text(). */
#define SP_ERR_TEXT_LEN (SP_ERR_LEN + 4096 + 32)
/* The one form an error is shown in, into buf (as snprintf), returned:
 * "FILE:LINE:COLUMN: msg" for a line of 'file' (":COLUMN" when known),
 * "column COLUMN: msg" for a column of a text, else msg. */
const char *sp_err_text(const struct sp_err *err, const char *file, char *buf,
                        size_t size);

struct sp_variant {
    const char *name;  /* "scalar", "avx2", ... as in the grammar */
    uint64_t requires; /* SP_CPU(...) bits it needs */
    unsigned width;    /* widest vector in bits; 0 for scalar */
    int priority;      /* auto picks the highest supported one */
    const struct sp_kernel_table *kernels;
};

enum sp_choice_mode {
    SP_CHOICE_AUTO,         /* best supported variant within the cap */
    SP_CHOICE_FORCED,       /* named by the operator */
    SP_CHOICE_AUTOVALIDATE, /* every variant, checked against scalar */
};

/* The kernels in use. Read them through SP_KERNEL(name): an entry can be
 * switched while other threads call it. */
extern struct sp_kernel_table sp_kernels_active;
#define SP_KERNEL(name) \
    __atomic_load_n(&sp_kernels_active.name, __ATOMIC_ACQUIRE)

/* Detects the CPU, selects the best variants and applies SIMDPATH_IMPL
 * (the grammar above, all or nothing). Idempotent; every call below
 * (and the tables' create calls) calls it first, so every program that
 * links the library honours SIMDPATH_IMPL. */
void sp_dispatch_init(void);

/* 0 when SIMDPATH_IMPL is unset or was applied; else -1 with err saying
 * what is wrong with it and what is valid, and every kernel is auto. A
 * program that runs kernels should treat that as an error (simdpath
 * exits with status 2). */
int sp_dispatch_env_status(struct sp_err *err);

/* Applies an implementation spec on top of the current choices, all or
 * nothing. On error returns -1 and says why in err, listing what is valid. */
int sp_dispatch_set_impl(const char *spec, struct sp_err *err);

/* Caps every choice at 'bits' (0 = no cap, else 128, 256 or 512). Fails if
 * a forced choice is wider. */
int sp_dispatch_set_max_simd(unsigned bits, struct sp_err *err);
unsigned sp_dispatch_max_simd(void);

/* Back to the defaults: every kernel auto, no cap. */
void sp_dispatch_reset(void);

/* Test hook: pretend the CPU lacks 'hidden' features. Resets every choice
 * to auto and reselects. */
void sp_dispatch_hide_features(uint64_t hidden);

/* Features the registry decides with: detected minus hidden. */
uint64_t sp_dispatch_features(void);

/* The registered variants, in registration order (scalar first). */
unsigned sp_variant_count(void);
const struct sp_variant *sp_variant_get(unsigned index);
const struct sp_variant *sp_variant_find(const char *name);
/* Every variant name simdpath has on some architecture; NULL past the end.
 * A name missing from sp_variant_find() is not compiled in this build. */
const char *sp_isa_name(unsigned index);
/* Why the ISA sp_isa_name(index) names is not in this build ("another
 * architecture", or the compiler refused its flags); NULL when it is. */
const char *sp_isa_absence(unsigned index);
bool sp_variant_supported(const struct sp_variant *v);
/* Supported and within the width cap. */
bool sp_variant_allowed(const struct sp_variant *v);
/* The variant whose own code v runs for kernel k (v itself, or the one it
 * falls back to). */
const struct sp_variant *sp_variant_provider(const struct sp_variant *v,
                                             enum sp_kernel_id k);

/* Adds a variant (tests register deliberately wrong ones). */
int sp_dispatch_register_variant(const struct sp_variant *v,
                                 struct sp_err *err);
/* Removes a variant added above; choices that named it go back to auto. */
void sp_dispatch_unregister_variant(const struct sp_variant *v);

/* What kernel k uses now: the mode, and the variant whose code runs (NULL
 * under autovalidate). */
enum sp_choice_mode sp_dispatch_choice(enum sp_kernel_id k,
                                       const struct sp_variant **variant);

/* Any kernel, for code that handles every kernel alike. */
typedef void (*sp_any_fn)(void);
sp_any_fn sp_kernel_table_get(const struct sp_kernel_table *t,
                              enum sp_kernel_id k);

const char *sp_kernel_name(enum sp_kernel_id k);

/* Autovalidate counters, per kernel and per variant (registration index).
 * 'checks' counts comparisons made. */
uint64_t sp_autovalidate_checks(enum sp_kernel_id k, unsigned variant);
uint64_t sp_autovalidate_mismatches(enum sp_kernel_id k, unsigned variant);
void sp_autovalidate_reset(void);

/* Where the autovalidator's reports go (default: stderr). */
typedef void sp_log_fn(const char *text, void *ctx);
void sp_dispatch_set_log(sp_log_fn *fn, void *ctx);

#endif /* SP_DISPATCH_H */
