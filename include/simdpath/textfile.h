/* SPDX-License-Identifier: BSD-3-Clause */
/* Line-oriented text files an operator writes: flow files, the config. */
#ifndef SP_TEXTFILE_H
#define SP_TEXTFILE_H

#include <stdio.h>

#include "simdpath/dispatch.h"

/* Opens path for reading if it is a regular file, without blocking on a
 * FIFO (which would wait for a writer); NULL with err ("PATH: cannot read
 * WHAT: reason") otherwise. */
FILE *sp_text_open(const char *path, const char *what, struct sp_err *err);

/* Reads one line of f into buf (at least max + 1 bytes) up to LF, CRLF or
 * a lone CR, as editors on every system write them. Returns its length,
 * -1 at the end of the file, -2 if it is longer than max. NUL bytes are
 * kept, for the caller to report. */
long sp_text_read_line(FILE *f, char *buf, long max);

#endif /* SP_TEXTFILE_H */
