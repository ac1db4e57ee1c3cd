/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket: server thread and the `simdpath ctl` client. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/control.h"

#define LINE_MAX_LEN 4096

static struct {
    int fd;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    const struct sp_ctl_command *commands;
    size_t n_commands;
    void *ctx;
    pthread_t thread;
    volatile bool stop;
} server = {.fd = -1};

const char *
sp_ctl_default_path(void)
{
    static char path[108];
    const char *env = getenv("SIMDPATH_CTL");
    const char *run = getenv("XDG_RUNTIME_DIR");

    if (env && *env) {
        return env;
    }
    if (run && *run) {
        snprintf(path, sizeof path, "%s/simdpath.ctl", run);
    } else {
        snprintf(path, sizeof path, "/tmp/simdpath-%u.ctl",
                 (unsigned)getuid());
    }
    return path;
}

static int
make_address(const char *path, struct sockaddr_un *addr, struct sp_err *err)
{
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr->sun_path) {
        snprintf(err->msg, sizeof err->msg,
                 "control socket path '%s' is longer than %zu bytes", path,
                 sizeof addr->sun_path - 1);
        return -1;
    }
    memcpy(addr->sun_path, path, strlen(path) + 1);
    return 0;
}

static void
write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = write(fd, buf, len);

        if (w <= 0) {
            return;
        }
        buf += w;
        len -= (size_t)w;
    }
}

static void
print_help(FILE *out)
{
    for (size_t i = 0; i < server.n_commands; i++) {
        fprintf(out, "%s\n", server.commands[i].usage);
    }
}

/* Runs one command line; the reply ends with OK or ERROR. */
static void
serve_line(int fd, char *line)
{
    struct sp_err err = {{0}};
    char *body = NULL;
    size_t body_len = 0;
    FILE *out = open_memstream(&body, &body_len);
    size_t name_len;
    const char *args;
    int rc = -1;

    if (!out) {
        return;
    }
    line[strcspn(line, "\r\n")] = '\0';
    name_len = strcspn(line, " \t");
    args = line + name_len + strspn(line + name_len, " \t");
    if (name_len == 4 && !strncmp(line, "help", 4)) {
        print_help(out);
        rc = 0;
    } else {
        snprintf(err.msg, sizeof err.msg,
                 "unknown command '%.*s'; 'help' lists the commands",
                 (int)name_len, line);
        for (size_t i = 0; i < server.n_commands; i++) {
            const char *name = server.commands[i].name;

            if (strlen(name) == name_len && !strncmp(line, name, name_len)) {
                rc = server.commands[i].fn(args, out, server.ctx, &err);
                break;
            }
        }
    }
    if (rc) {
        fprintf(out, "ERROR: %s\n", err.msg);
    } else {
        fputs("OK\n", out);
    }
    fclose(out);
    write_all(fd, body, body_len);
    free(body);
}

static void
serve_client(int fd)
{
    char line[LINE_MAX_LEN];
    size_t used = 0;

    while (used < sizeof line - 1) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t r;

        /* A client that says nothing for 5 s is dropped. */
        if (poll(&p, 1, 5000) <= 0) {
            return;
        }
        r = read(fd, line + used, sizeof line - 1 - used);
        if (r <= 0) {
            break;
        }
        used += (size_t)r;
        if (memchr(line, '\n', used)) {
            break;
        }
    }
    line[used] = '\0';
    serve_line(fd, line);
}

static void *
server_main(void *arg)
{
    (void)arg;
    while (!server.stop) {
        struct pollfd p = {server.fd, POLLIN, 0};
        int client;

        if (poll(&p, 1, 200) <= 0) {
            continue;
        }
        client = accept(server.fd, NULL, NULL);
        if (client >= 0) {
            serve_client(client);
            close(client);
        }
    }
    return NULL;
}

int
sp_ctl_start(const char *path, const struct sp_ctl_command *commands,
             size_t n_commands, void *ctx, struct sp_err *err)
{
    struct sockaddr_un addr;
    mode_t old_mask;
    int rc;

    if (make_address(path, &addr, err)) {
        return -1;
    }
    server.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (server.fd < 0) {
        snprintf(err->msg, sizeof err->msg, "socket: %s", strerror(errno));
        return -1;
    }
    /* A socket left by a process that died is replaced; a live one is
     * not (connect succeeds). */
    if (connect(server.fd, (struct sockaddr *)&addr, sizeof addr) == 0) {
        snprintf(err->msg, sizeof err->msg,
                 "control socket %s is in use by another simdpath", path);
        close(server.fd);
        server.fd = -1;
        return -1;
    }
    close(server.fd);
    server.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(path);
    old_mask = umask(0177); /* owner-only: the socket controls traffic */
    rc = bind(server.fd, (struct sockaddr *)&addr, sizeof addr);
    umask(old_mask);
    if (rc || listen(server.fd, 8)) {
        snprintf(err->msg, sizeof err->msg, "control socket %s: %s", path,
                 strerror(errno));
        close(server.fd);
        server.fd = -1;
        return -1;
    }
    snprintf(server.path, sizeof server.path, "%s", path);
    server.commands = commands;
    server.n_commands = n_commands;
    server.ctx = ctx;
    server.stop = false;
    if (pthread_create(&server.thread, NULL, server_main, NULL)) {
        snprintf(err->msg, sizeof err->msg, "cannot start control thread");
        close(server.fd);
        unlink(path);
        server.fd = -1;
        return -1;
    }
    return 0;
}

void
sp_ctl_stop(void)
{
    if (server.fd < 0) {
        return;
    }
    server.stop = true;
    pthread_join(server.thread, NULL);
    close(server.fd);
    unlink(server.path);
    server.fd = -1;
}

static const char ctl_usage[] =
    "Usage: simdpath ctl [--socket PATH] COMMAND [ARG]...\n"
    "Sends COMMAND to a running 'simdpath run' and prints the reply.\n"
    "'simdpath ctl help' lists the commands.\n";

/* The client: joins the arguments into one line, prints the reply, and
 * exits 0 if it ended with OK. */
int
sp_cmd_ctl(int argc, char **argv)
{
    const char *path = sp_ctl_default_path();
    struct sockaddr_un addr;
    struct sp_err err;
    char line[LINE_MAX_LEN] = "";
    char reply[LINE_MAX_LEN];
    char last[LINE_MAX_LEN] = "";
    FILE *in;
    int fd, first = 1;

    if (argc > 2 && !strcmp(argv[1], "--socket")) {
        path = argv[2];
        argc -= 2;
        argv += 2;
    }
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        fputs(ctl_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? SP_EXIT_USAGE : SP_EXIT_OK;
    }
    for (; first < argc; first++) {
        size_t used = strlen(line);

        snprintf(line + used, sizeof line - used, "%s%s", used ? " " : "",
                 argv[first]);
    }
    strncat(line, "\n", sizeof line - strlen(line) - 1);
    if (make_address(path, &addr, &err)) {
        sp_cli_error("ctl", "%s", err.msg);
        return SP_EXIT_USAGE;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr)) {
        sp_cli_error("ctl",
                     "cannot connect to %s: %s (is 'simdpath run' "
                     "running? --socket or SIMDPATH_CTL name another)",
                     path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return SP_EXIT_FAILURE;
    }
    write_all(fd, line, strlen(line));
    in = fdopen(fd, "r");
    while (in && fgets(reply, sizeof reply, in)) {
        if (last[0]) {
            fputs(last, stdout);
        }
        memcpy(last, reply, sizeof last);
    }
    if (in) {
        fclose(in);
    }
    if (!strcmp(last, "OK\n")) {
        return SP_EXIT_OK;
    }
    fputs(last[0] ? last : "ERROR: no reply\n", stderr);
    return SP_EXIT_FAILURE;
}
