/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <stdio.h>

#include "simdpath/dispatch.h"

int
sp_err_vset(struct sp_err *err, const char *fmt, va_list args)
{
    if (err) {
        vsnprintf(err->msg, sizeof err->msg, fmt, args);
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
