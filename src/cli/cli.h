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
int sp_cmd_parse_pcap(int argc, char **argv);

/* The options every command that takes options accepts, for its getopt
 * table; sp_cli_common_option() applies one at once. */
enum { SP_OPT_IMPL = 0x100, SP_OPT_MAX_SIMD };
#define SP_CLI_COMMON_OPTIONS                                \
    {"impl", required_argument, NULL, SP_OPT_IMPL},          \
    {                                                        \
        "max-simd", required_argument, NULL, SP_OPT_MAX_SIMD \
    }

/* Applies option 'opt' if it is a common one: returns 1 if it was, 0 if it
 * is not a common option, -1 after reporting a bad value. */
int sp_cli_common_option(int opt, const char *arg);

/* Reports "simdpath: <context>: <message>" on stderr. */
void sp_cli_error(const char *context, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* SP_CLI_H */
