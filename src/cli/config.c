/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration file (simdpath run --config FILE): the command line's
 * long options, one "option value" or "option = value" per line, turned
 * into "--option=value" arguments placed before the command line's, so
 * that the command line wins and a repeated option (--port) adds to the
 * file's. Every line is checked before any option is applied.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "simdpath/textfile.h"

#define CONFIG_LINE_MAX 4095
/* More than any run needs (32 ports), few enough to hold in memory. */
#define CONFIG_MAX_SETTINGS 1024

/* The expanded arguments and where each came from, kept until exit. */
static char **expanded;
static char **origins;
static int n_settings;

/* The --config value, if any: a first pass of getopt that applies and
 * reports nothing (the real pass reports what is wrong). */
static int
find_config(int argc, char **argv, const char *shortopts,
            const struct option *options, int config_opt, const char **path)
{
    int saved_opterr = opterr, opt, rc = 0;

    opterr = 0;
    optind = 0;
    while ((opt = getopt_long(argc, argv, shortopts, options, NULL)) != -1) {
        if (opt != config_opt) {
            continue;
        }
        if (*path) {
            sp_cli_error("--config", "given twice ('%s', then '%s')", *path,
                         optarg);
            rc = -1;
            break;
        }
        *path = optarg;
    }
    opterr = saved_opterr;
    optind = 0;
    return rc;
}

static const struct option *
find_option(const struct option *options, const char *name, size_t len)
{
    for (; options->name; options++) {
        if (strlen(options->name) == len &&
            !strncmp(options->name, name, len)) {
            return options;
        }
    }
    return NULL;
}

/* Parses one line (len bytes, NUL-terminated) into *arg ("--name=value")
 * and *where ("PATH:LINE:COL" of the value), both NULL for a blank or
 * comment line; or sets err. */
static int
parse_line(const char *path, unsigned line_no, char *line, long len,
           const struct option *options, int config_opt, char **arg,
           char **where, struct sp_err *err)
{
    const char *nul = memchr(line, '\0', (size_t)len);
    const struct option *o;
    size_t name, name_len, value, value_len, end;

    if (nul) {
        return sp_err_set_at(err, (unsigned)(nul - line + 1),
                             "NUL byte; a configuration file is text");
    }
    for (long i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];

        /* A comment starts a line or follows a blank: a value may hold
         * '#' (a device argument, a path). */
        if (c == '#' &&
            (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
            line[i] = '\0';
            break;
        }
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            return sp_err_set_at(err, (unsigned)i + 1, "control byte 0x%02x",
                                 c);
        }
    }
    name = strspn(line, " \t");
    if (!line[name]) {
        return 0;
    }
    /* "--port x", as pasted from a command line, is "port x". */
    if (!strncmp(line + name, "--", 2)) {
        name += 2;
    }
    name_len = strcspn(line + name, " \t=");
    if (!name_len) {
        return sp_err_set_at(err, (unsigned)name + 1,
                             "an option name is missing");
    }
    o = find_option(options, line + name, name_len);
    if (!o) {
        return sp_err_set_at(err, (unsigned)name + 1,
                             "unknown option '%.*s' ('simdpath run --help' "
                             "lists them)",
                             (int)name_len, line + name);
    }
    if (o->has_arg != required_argument || o->val == config_opt) {
        return sp_err_set_at(err, (unsigned)name + 1,
                             "'%s' cannot be set in a configuration file",
                             o->name);
    }
    value = name + name_len;
    value += strspn(line + value, " \t");
    if (line[value] == '=') {
        value++;
        value += strspn(line + value, " \t");
    }
    value_len = strcspn(line + value, " \t");
    if (!value_len) {
        return sp_err_set_at(err, (unsigned)value + 1, "'%s' needs a value",
                             o->name);
    }
    end = value + value_len + strspn(line + value + value_len, " \t");
    if (line[end]) {
        return sp_err_set_at(err, (unsigned)end + 1,
                             "one value per option; '%s' has '%.*s' already",
                             o->name, (int)value_len, line + value);
    }
    *arg = malloc(strlen(o->name) + value_len + 4);
    *where = malloc(strlen(path) + 32);
    if (!*arg || !*where) {
        free(*arg);
        free(*where);
        *arg = *where = NULL;
        return sp_err_set(err, "out of memory");
    }
    sprintf(*arg, "--%s=%.*s", o->name, (int)value_len, line + value);
    sprintf(*where, "%s:%u:%zu", path, line_no, value + 1);
    return 0;
}

/* Reads every setting of path into args[] and where[] (room for
 * CONFIG_MAX_SETTINGS); returns their count, or -1 with err set. */
static int
read_settings(const char *path, const struct option *options, int config_opt,
              char **args, char **where, struct sp_err *err)
{
    FILE *f = sp_text_open(path, "the configuration", err);
    char line[CONFIG_LINE_MAX + 1];
    unsigned line_no = 0;
    int n = 0, rc = 0;
    long len;

    if (!f) {
        return -1;
    }
    while (!rc && (len = sp_text_read_line(f, line, CONFIG_LINE_MAX)) != -1) {
        line_no++;
        if (len == -2) {
            rc = sp_err_set_at(err, CONFIG_LINE_MAX + 1,
                               "line longer than %d bytes", CONFIG_LINE_MAX);
        } else if (n == CONFIG_MAX_SETTINGS) {
            rc = sp_err_set_at(err, 1, "more than %d settings",
                               CONFIG_MAX_SETTINGS);
        } else {
            args[n] = where[n] = NULL;
            rc = parse_line(path, line_no, line, len, options, config_opt,
                            &args[n], &where[n], err);
            n += args[n] != NULL;
        }
        if (rc) {
            err->line = line_no;
        }
    }
    if (!rc && ferror(f)) {
        rc = sp_err_set(err, "%s: cannot read the configuration: %s", path,
                        strerror(errno));
    }
    fclose(f);
    if (rc) {
        for (int i = 0; i < n; i++) {
            free(args[i]);
            free(where[i]);
        }
        return -1;
    }
    return n;
}

int
sp_cli_config_expand(int *argc, char ***argv, const char *shortopts,
                     const struct option *options, int config_opt)
{
    const char *path = NULL;
    char **args, **where, **new_argv;
    struct sp_err err;
    int n;

    if (find_config(*argc, *argv, shortopts, options, config_opt, &path)) {
        return -1;
    }
    if (!path) {
        return 0;
    }
    args = calloc(CONFIG_MAX_SETTINGS, sizeof *args);
    where = calloc(CONFIG_MAX_SETTINGS, sizeof *where);
    new_argv =
        calloc((size_t)*argc + CONFIG_MAX_SETTINGS + 1, sizeof *new_argv);
    n = args && where && new_argv
            ? read_settings(path, options, config_opt, args, where, &err)
            : sp_err_set(&err, "%s: out of memory", path);
    if (n < 0) {
        char text[SP_ERR_TEXT_LEN];

        sp_cli_error("run", "%s", sp_err_text(&err, path, text, sizeof text));
        free(args);
        free(where);
        free(new_argv);
        return -1;
    }
    new_argv[0] = (*argv)[0];
    memcpy(new_argv + 1, args, (size_t)n * sizeof *args);
    memcpy(new_argv + 1 + n, *argv + 1, (size_t)(*argc - 1) * sizeof **argv);
    free(args);
    expanded = new_argv;
    origins = where;
    n_settings = n;
    *argc += n;
    *argv = new_argv;
    return 0;
}

void
sp_cli_config_locate(int index)
{
    bool from_file = expanded && index >= 1 && index <= n_settings;

    sp_cli_set_origin(from_file ? origins[index - 1] : NULL);
}
