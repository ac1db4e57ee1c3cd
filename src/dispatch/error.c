/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>

#include "simdpath/dispatch.h"

int
sp_err_vset(struct sp_err *err, const char *fmt, va_list args)
{
    if (err) {
        vsnprintf(err->msg, sizeof err->msg, fmt, args);
        err->line = 0;
        err->column = 0;
    }
    return -1;
}

int
sp_err_set(struct sp_err *err, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    sp_err_vset(err, fmt, args);
    va_end(args);
    return -1;
}

int
sp_err_set_at(struct sp_err *err, unsigned column, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    sp_err_vset(err, fmt, args);
    va_end(args);
    if (err) {
        err->column = column;
    }
    return -1;
}

const char *
sp_err_text(const struct sp_err *err, const char *file, char *buf, size_t size)
{
    if (file && err->line && err->column) {
        snprintf(buf, size, "%s:%u:%u: %s", file, err->line, err->column,
                 err->msg);
    } else if (file && err->line) {
        snprintf(buf, size, "%s:%u: %s", file, err->line, err->msg);
    } else if (err->column) {
        snprintf(buf, size, "column %u: %s", err->column, err->msg);
    } else {
        snprintf(buf, size, "%s", err->msg);
    }
    return buf;
}
