/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control interface: a Unix socket (mode 0600) that takes command
 * lines and answers each with text lines, the last of which is "OK" or
 * "ERROR: <why>" (docs/control.md has the protocol). `simdpath ctl` is its
 * client.
 */
#ifndef SP_CONTROL_H
#define SP_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "simdpath/dispatch.h"

/* Bytes of one command line, not counting its newline. */
#define SP_CTL_LINE_MAX 4095

/* Writes the reply body to out; returns 0, or -1 with err set. */
typedef int sp_ctl_handler(const char *args, FILE *out, void *ctx,
                           struct sp_err *err);

struct sp_ctl_command {
    const char *name;
    const char *usage; /* "impl-set SPEC: ..." for the help command */
    bool takes_args;   /* else any argument is refused */
    sp_ctl_handler *fn;
};

/* Creates the listening socket at 'path' (NULL: there is no default, which
 * is an error), replacing only a socket nobody listens on. Done before
 * anything else starts, so every problem with the path is found first. */
int sp_ctl_open(const char *path, struct sp_err *err);
/* Serves the socket sp_ctl_open() made, in a thread of its own. */
int sp_ctl_start(const struct sp_ctl_command *commands, size_t n_commands,
                 void *ctx, struct sp_err *err);
/* Stops serving, closes and removes the socket; harmless if not open. */
void sp_ctl_stop(void);

/* The default socket path: $SIMDPATH_CTL, else
 * $XDG_RUNTIME_DIR/simdpath.ctl, else for root
 * /run/simdpath/simdpath.ctl; NULL for anyone else. */
const char *sp_ctl_default_path(void);

#endif /* SP_CONTROL_H */
