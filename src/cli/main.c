/* SPDX-License-Identifier: BSD-3-Clause */
/* simdpath: global options, the environment, and the command table. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "simdpath/dispatch.h"

static const char usage_text[] =
    "Usage: simdpath [OPTION]... COMMAND [ARG]...\n"
    "A userspace packet dataplane whose hot functions are compiled for\n"
    "every instruction set and chosen at start-up by CPU detection.\n"
    "\n"
    "Commands:\n"
    "  run [RUN OPTION]... [-- EAL ARG...]\n"
    "                   forward packets between DPDK ports by flow rules;\n"
    "                   with no options, the bundled demo ('simdpath run\n"
    "                   --help' has the options)\n"
    "  impls            show every kernel and variant: compiled, supported\n"
    "                   by this CPU, active; the CPU and its features\n"
    "  check [--rounds N] [--seed S]\n"
    "                   run every variant the CPU supports against the\n"
    "                   scalar reference on generated input; exit 1 on any\n"
    "                   difference\n"
    "  ctl [--socket PATH] COMMAND [ARG]...\n"
    "                   send a command to a running simdpath ('simdpath ctl\n"
    "                   help' lists them)\n"
    "  parse-pcap FILE [--impl SPEC] [--max-simd BITS]\n"
    "                   parse every packet of an Ethernet pcap file and\n"
    "                   print its flow key in flow rule syntax and the parse\n"
    "                   status; with --impl autovalidate (or mfex=...) exit\n"
    "                   1 if a variant disagrees with scalar\n"
    "  help             show this help\n"
    "\n"
    "Options:\n"
    "      --impl SPEC      choose kernel variants: VARIANT for every\n"
    "                       kernel, or KERNEL=VARIANT[,KERNEL=VARIANT...];\n"
    "                       VARIANT is scalar, avx2, avx512, avx512vbmi,\n"
    "                       neon, sve, auto or autovalidate (applied\n"
    "                       after SIMDPATH_IMPL)\n"
    "      --max-simd BITS  never use vectors wider than BITS (128, 256 or\n"
    "                       512)\n"
    "                       (--impl and --max-simd are also accepted after\n"
    "                       run and parse-pcap, and apply after these)\n"
    "  -h, --help           show this help and exit\n"
    "  -V, --version        show the version and exit\n"
    "\n"
    "Environment:\n"
    "  SIMDPATH_IMPL        the same grammar as --impl (ctl ignores it)\n"
    "  SIMDPATH_CTL         the control socket (default\n"
    "                       $XDG_RUNTIME_DIR/simdpath.ctl, else for root\n"
    "                       /run/simdpath/simdpath.ctl)\n"
    "\n"
    "Exit status: 0 success, 1 the command found a problem, 2 a bad\n"
    "option, value or environment.\n"
    "\n"
    "Examples:\n"
    "  simdpath impls\n"
    "  simdpath --impl avx2 impls\n"
    "  simdpath --impl hash=scalar,batch_copy=autovalidate impls\n"
    "  SIMDPATH_IMPL=autovalidate simdpath check\n"
    "  simdpath parse-pcap capture.pcap --impl autovalidate\n";

static enum sp_log_level log_level = SP_LOG_INFO;
/* Where the option being applied was written ("FILE:LINE:COL"), if not
 * on the command line. */
static const char *log_origin;

int
sp_cli_set_log_level(const char *name)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};

    for (unsigned i = 0; i < sizeof names / sizeof *names; i++) {
        if (!strcmp(name, names[i])) {
            log_level = (enum sp_log_level)i;
            return 0;
        }
    }
    sp_cli_error("--log-level",
                 "invalid level '%s'; expected error, warning, info or "
                 "debug",
                 name);
    return -1;
}

enum sp_log_level
sp_cli_log_level(void)
{
    return log_level;
}

void
sp_cli_set_origin(const char *where)
{
    log_origin = where;
}

/* Whether fd is the journal's stream (systemd sets JOURNAL_STREAM to its
 * "device:inode"), which reads a "<N>" syslog priority before a line. */
static bool
is_journal(int fd)
{
    const char *env = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;

    return env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 &&
           !fstat(fd, &st) && st.st_dev == dev && st.st_ino == ino;
}

static void
log_line(enum sp_log_level level, const char *context, const char *fmt,
         va_list args)
{
    /* syslog's priorities: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
    static const int priorities[] = {3, 4, 6, 7};
    FILE *out = level <= SP_LOG_WARNING ? stderr : stdout;

    if (level > log_level) {
        return;
    }
    if (is_journal(fileno(out))) {
        fprintf(out, "<%d>", priorities[level]);
    }
    fputs("simdpath: ", out);
    if (log_origin) {
        fprintf(out, "%s: ", log_origin);
    }
    if (context) {
        fprintf(out, "%s: ", context);
    }
    vfprintf(out, fmt, args);
    fputc('\n', out);
    if (out == stdout) {
        fflush(out);
    }
}

void
sp_cli_log(enum sp_log_level level, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    log_line(level, NULL, fmt, args);
    va_end(args);
}

void
sp_cli_error(const char *context, const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    log_line(SP_LOG_ERROR, context, fmt, args);
    va_end(args);
}

int
sp_cli_parse_uint(const char *opt, const char *text, unsigned long max,
                  unsigned long *out)
{
    /* Digits only: strtoul() would take a sign ("-1" wraps) and blanks. */
    bool digits = text[0] && !text[strspn(text, "0123456789")];

    errno = 0;
    *out = digits ? strtoul(text, NULL, 10) : 0;
    if (!digits || errno || *out > max) {
        sp_cli_error(opt,
                     "invalid value '%s'; expected a number from 0 to %lu",
                     text, max);
        return -1;
    }
    return 0;
}

static int
parse_max_simd(const char *text, unsigned *bits)
{
    static const char *const widths[] = {"128", "256", "512"};

    for (unsigned i = 0; i < sizeof widths / sizeof *widths; i++) {
        if (!strcmp(text, widths[i])) {
            *bits = 128u << i;
            return 0;
        }
    }
    sp_cli_error("--max-simd", "invalid width '%s'; expected 128, 256 or 512",
                 text);
    return -1;
}

static int
apply_max_simd(unsigned bits)
{
    struct sp_err err;

    if (sp_dispatch_set_max_simd(bits, &err)) {
        sp_cli_error("--max-simd", "%s", err.msg);
        return -1;
    }
    return 0;
}

static int
apply_impl(const char *context, const char *spec)
{
    struct sp_err err;

    if (sp_dispatch_set_impl(spec, &err)) {
        sp_cli_error(context, "%s", err.msg);
        return -1;
    }
    return 0;
}

int
sp_cli_common_option(int opt, const char *arg)
{
    unsigned bits;

    switch (opt) {
    case SP_OPT_IMPL:
        return apply_impl("--impl", arg) ? -1 : 1;
    case SP_OPT_MAX_SIMD:
        return parse_max_simd(arg, &bits) || apply_max_simd(bits) ? -1 : 1;
    default:
        return 0;
    }
}

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    bool kernels; /* uses the kernels, so SIMDPATH_IMPL applies */
};

#ifndef SP_HAVE_DPDK
/* This build has no packet I/O: say so rather than "unknown command". */
static int
run_without_dpdk(int argc, char **argv)
{
    (void)argc, (void)argv;
    sp_cli_error("run", "this simdpath was built without DPDK (libdpdk-dev "
                        "missing at build time); install it and rebuild");
    return SP_EXIT_FAILURE;
}
#define sp_cmd_run run_without_dpdk
#endif

static const struct command commands[] = {
    {"run", sp_cmd_run, true},
    {"impls", sp_cmd_impls, true},
    {"check", sp_cmd_check, true},
    /* A bad SIMDPATH_IMPL must not keep anyone from stopping a run. */
    {"ctl", sp_cmd_ctl, false},
    {"parse-pcap", sp_cmd_parse_pcap, true},
};

int
main(int argc, char **argv)
{
    static const struct option options[] = {
        SP_CLI_COMMON_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *impl = NULL;
    unsigned max_simd = 0;
    struct sp_err err;
    int opt;

    /* '+': options end at the command, which parses its own. */
    while ((opt = getopt_long(argc, argv, "+hV", options, NULL)) != -1) {
        switch (opt) {
        case SP_OPT_IMPL:
            impl = optarg;
            break;
        case SP_OPT_MAX_SIMD:
            if (parse_max_simd(optarg, &max_simd)) {
                return SP_EXIT_USAGE;
            }
            break;
        case 'h':
            fputs(usage_text, stdout);
            return SP_EXIT_OK;
        case 'V':
            puts("simdpath " SP_VERSION);
            return SP_EXIT_OK;
        default:
            fputs("Try 'simdpath --help' for more information.\n", stderr);
            return SP_EXIT_USAGE;
        }
    }
    if (optind == argc) {
        fputs("simdpath: missing command\n"
              "Try 'simdpath --help' for more information.\n",
              stderr);
        return SP_EXIT_USAGE;
    }
    if (!strcmp(argv[optind], "help")) {
        fputs(usage_text, stdout);
        return SP_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[optind], commands[i].name)) {
            continue;
        }
        /* The library applied SIMDPATH_IMPL; a command that runs no
         * kernel ignores a bad one. */
        if (commands[i].kernels && sp_dispatch_env_status(&err)) {
            sp_cli_error("SIMDPATH_IMPL", "%s", err.msg);
            return SP_EXIT_USAGE;
        }
        if ((max_simd && apply_max_simd(max_simd)) ||
            (impl && apply_impl("--impl", impl))) {
            return SP_EXIT_USAGE;
        }
        optind++;
        return commands[i].run(argc - optind + 1, argv + optind - 1);
    }
    sp_cli_error(argv[optind], "unknown command; commands: run, impls, "
                               "check, ctl, parse-pcap, help");
    return SP_EXIT_USAGE;
}
