/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control interface: a Unix socket (mode 0600) that takes one command
 * line per connection and answers with text lines, the last of which is
 * "OK" or "ERROR: <why>". `simdpath ctl` is its client.
 */
#ifndef SP_CONTROL_H
#define SP_CONTROL_H

#include <stddef.h>
#include <stdio.h>

#include "simdpath/dispatch.h"

/* Writes the reply body to out; returns 0, or -1 with err set. */
typedef int sp_ctl_handler(const char *args, FILE *out, void *ctx,
                           struct sp_err *err);

struct sp_ctl_command {
    const char *name;
    const char *usage; /* "impl-set SPEC: ..." for the help command */
    sp_ctl_handler *fn;
};

/* Listens on 'path' in a thread of its own until sp_ctl_stop(). */
int sp_ctl_start(const char *path, const struct sp_ctl_command *commands,
                 size_t n_commands, void *ctx, struct sp_err *err);
void sp_ctl_stop(void);

/* The default socket path: $SIMDPATH_CTL, else
 * $XDG_RUNTIME_DIR/simdpath.ctl, else /tmp/simdpath-$UID.ctl. */
const char *sp_ctl_default_path(void);

#endif /* SP_CONTROL_H */
