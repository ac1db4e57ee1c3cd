/* SPDX-License-Identifier: BSD-3-Clause */
/* The simdpath program's commands. */
#ifndef SP_CLI_H
#define SP_CLI_H

/* Exit codes, as documented in --help. */
#define SP_EXIT_OK      0
#define SP_EXIT_FAILURE 1 /* the command ran and found a problem */
#define SP_EXIT_USAGE   2 /* bad option, value or environment */

/* Each command takes its own arguments (argv[0] is the command name) after
 * the global options were applied, and returns an exit code. */
int sp_cmd_impls(int argc, char **argv);
int sp_cmd_check(int argc, char **argv);
int sp_cmd_ctl(int argc, char **argv);

/* Reports "simdpath: <context>: <message>" on stderr. */
void sp_cli_error(const char *context, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* SP_CLI_H */
