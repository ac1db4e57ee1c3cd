/* SPDX-License-Identifier: BSD-3-Clause */
/* The simdpath program's commands. */
#ifndef SP_CLI_H
#define SP_CLI_H

#include <stdio.h>

#include "simdpath/dispatch.h"

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
/* Checks that path is a capture of Ethernet frames, the only link type
 * simdpath parses; -1 with err naming the file if not. Counts its
 * packets into *packets unless that is NULL. */
int sp_cli_pcap_check(const char *path, uint64_t *packets, struct sp_err *err);

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

/* The kernel x variant table of `simdpath impls` (also impl-show). */
void sp_cli_print_kernels(FILE *out);

struct sp_dp;
struct sp_dp_config;

/* simdpath run's control commands (on the socket sp_ctl_open() made),
 * telemetry and final report. */
int sp_run_control_start(struct sp_dp *dp, const struct sp_dp_config *config,
                         struct sp_err *err);
void sp_run_telemetry_register(void);
/* Prints the kernels in use and every counter; returns the autovalidate
 * mismatches seen (their count is printed when any check ran). */
uint64_t sp_run_report(struct sp_dp *dp, const struct sp_dp_config *config,
                       FILE *out);
int sp_cmd_run(int argc, char **argv);
/* Stops simdpath run as a stop signal does (ctl stop), from any thread;
 * only a second signal forces the exit. */
void sp_run_request_stop(void);

/* simdpath run --config FILE (option config_opt of options, a getopt
 * table whose options are all long ones; shortopts as getopt takes them):
 * inserts the file's settings as "--name=value" arguments after
 * (*argv)[0], before the command line's, replacing *argc and *argv.
 * Reports a bad file ("FILE:LINE:COL: ...") and returns -1. */
struct option;
int sp_cli_config_expand(int *argc, char ***argv, const char *shortopts,
                         const struct option *options, int config_opt);
/* Names, in the errors that follow, the file line that argument 'index'
 * of the expanded arguments came from, or none (sp_cli_set_origin). */
void sp_cli_config_locate(int index);

/* Reads a number of digits only, from 0 to max, into *out; or reports
 * the value as opt's and returns -1. */
int sp_cli_parse_uint(const char *opt, const char *text, unsigned long max,
                      unsigned long *out);

/* Reports "simdpath: <context>: <message>" on stderr, at level error. */
void sp_cli_error(const char *context, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* simdpath's messages: errors and warnings on stderr, the rest on stdout
 * (with the report they belong to), each as "simdpath: <message>" and,
 * when the stream is the journal, its syslog priority in front. Those
 * above the level (--log-level, default info) are not printed. */
enum sp_log_level { SP_LOG_ERROR, SP_LOG_WARNING, SP_LOG_INFO, SP_LOG_DEBUG };
void sp_cli_log(enum sp_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sets the level by its name, or reports it and returns -1. */
int sp_cli_set_log_level(const char *name);
enum sp_log_level sp_cli_log_level(void);
/* Names where the option being applied was written ("FILE:LINE:COL") in
 * every error until it is set again; NULL for the command line. */
void sp_cli_set_origin(const char *where);

#endif /* SP_CLI_H */
