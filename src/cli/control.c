/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket: a server thread that multiplexes its clients with
 * poll(), and the `simdpath ctl` client. docs/control.md has the protocol.
 */
#define _GNU_SOURCE /* accept4, struct ucred */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/control.h"

/* Connections served at once; one more replaces the least recently
 * active, so that idle or stuck clients never lock others out. */
#define MAX_CLIENTS 16
#define RUN_DIR     "/run/simdpath"
#define STR(x)      #x
#define XSTR(x)     STR(x)

struct client {
    int fd;
    bool eof;      /* the client sent all it will send */
    bool skipping; /* inside a line already refused as too long */
    bool refused;  /* another user's: every line is discarded */
    size_t used;
    char in[SP_CTL_LINE_MAX + 1]; /* a line and its newline */
    char *out;                    /* the reply being sent, or NULL */
    size_t out_len, out_sent;
    uint64_t last_active;
};

static struct {
    int fd;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    dev_t dev; /* the socket we bound, so we remove no other */
    ino_t ino;
    const struct sp_ctl_command *commands;
    size_t n_commands;
    void *ctx;
    pthread_t thread;
    bool running;
    bool stop; /* written by sp_ctl_stop(), read by the server: atomics */
    uint64_t tick;
    struct client clients[MAX_CLIENTS];
} server = {.fd = -1};

const char *
sp_ctl_default_path(void)
{
    static char path[PATH_MAX];
    const char *env = getenv("SIMDPATH_CTL");
    const char *run = getenv("XDG_RUNTIME_DIR");

    if (env && *env) {
        return env;
    }
    if (run && *run) {
        /* Too long a result fails as too long a path, not cut short. */
        snprintf(path, sizeof path, "%s/simdpath.ctl", run);
        return path;
    }
    return geteuid() == 0 ? RUN_DIR "/simdpath.ctl" : NULL;
}

static int
make_address(const char *path, struct sockaddr_un *addr, struct sp_err *err)
{
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    if (!*path) {
        snprintf(err->msg, sizeof err->msg,
                 "the control socket path is "
                 "empty");
        return -1;
    }
    if (strlen(path) >= sizeof addr->sun_path) {
        snprintf(err->msg, sizeof err->msg,
                 "control socket path '%.200s...' is longer than %zu bytes",
                 path, sizeof addr->sun_path - 1);
        return -1;
    }
    memcpy(addr->sun_path, path, strlen(path) + 1);
    return 0;
}

/* Only root and our own user may be at the other end, either way. */
static bool
peer_trusted(int fd, uid_t *uid)
{
    struct ucred cred;
    socklen_t len = sizeof cred;

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
        *uid = (uid_t)-1;
        return false;
    }
    *uid = cred.uid;
    return cred.uid == 0 || cred.uid == geteuid();
}

/* The index of the first byte a command line may not hold (a control
 * byte other than tab), or len. */
static size_t
find_control_byte(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            return i;
        }
    }
    return len;
}

/* ---- server ---- */

static void
drop_client(struct client *c)
{
    close(c->fd);
    free(c->out);
    c->fd = -1;
    c->out = NULL;
}

static void
print_help(FILE *out)
{
    for (size_t i = 0; i < server.n_commands; i++) {
        fprintf(out, "%s\n", server.commands[i].usage);
    }
}

/* Runs one command; the body goes to out, a failure to err. */
static int
execute(char *line, FILE *out, struct sp_err *err)
{
    size_t name_len;
    const char *args;

    line += strspn(line, " \t");
    name_len = strcspn(line, " \t");
    args = line + name_len + strspn(line + name_len, " \t");
    if (!name_len) {
        snprintf(err->msg, sizeof err->msg,
                 "empty command; 'help' lists the commands");
        return -1;
    }
    if (name_len == 4 && !strncmp(line, "help", 4)) {
        if (*args) {
            snprintf(err->msg, sizeof err->msg, "help takes no arguments");
            return -1;
        }
        print_help(out);
        return 0;
    }
    for (size_t i = 0; i < server.n_commands; i++) {
        const struct sp_ctl_command *cmd = &server.commands[i];

        if (strlen(cmd->name) != name_len ||
            strncmp(line, cmd->name, name_len)) {
            continue;
        }
        if (cmd->takes_args != (*args != '\0')) {
            snprintf(err->msg, sizeof err->msg, "%s %s (%s)", cmd->name,
                     cmd->takes_args ? "needs an argument"
                                     : "takes no arguments",
                     cmd->usage);
            return -1;
        }
        return cmd->fn(args, out, server.ctx, err);
    }
    snprintf(err->msg, sizeof err->msg,
             "unknown command '%.*s'; 'help' lists the commands",
             (int)(name_len > 64 ? 64 : name_len), line);
    return -1;
}

/* Makes the reply to one line (len bytes, NUL in place of its newline, or
 * NULL with a protocol error in 'refusal'); it ends with OK or ERROR. */
static void
reply(struct client *c, char *line, size_t len, const char *refusal)
{
    struct sp_err err = {.msg = ""};
    FILE *out = open_memstream(&c->out, &c->out_len);
    size_t bad;
    int rc = -1;

    if (!out) {
        drop_client(c);
        return;
    }
    if (refusal) {
        snprintf(err.msg, sizeof err.msg, "%s", refusal);
    } else if ((bad = find_control_byte(line, len)) < len) {
        snprintf(err.msg, sizeof err.msg,
                 "control byte 0x%02x at column %zu; line not executed",
                 (unsigned char)line[bad], bad + 1);
    } else {
        rc = execute(line, out, &err);
    }
    if (rc) {
        char text[SP_ERR_TEXT_LEN];

        fprintf(out, "ERROR: %s\n",
                sp_err_text(&err, NULL, text, sizeof text));
    } else {
        fputs("OK\n", out);
    }
    if (fclose(out)) {
        drop_client(c);
        return;
    }
    c->out_sent = 0;
}

/* Sends what the socket takes of the pending reply. */
static void
flush_reply(struct client *c)
{
    while (c->out_sent < c->out_len) {
        /* A client that left must not end the process by SIGPIPE. */
        ssize_t w = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent,
                         MSG_NOSIGNAL);

        if (w < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                drop_client(c);
            }
            return;
        }
        c->out_sent += (size_t)w;
        c->last_active = ++server.tick;
    }
    free(c->out);
    c->out = NULL;
}

/* Executes the complete lines received, one reply at a time. */
static void
process_input(struct client *c)
{
    while (c->fd >= 0 && !c->out) {
        char *nl = memchr(c->in, '\n', c->used);
        size_t len;

        if (c->refused) {
            /* Read to the end, so that the refusal is not lost to a
             * reset for unread data. */
            c->used = 0;
            if (c->eof) {
                drop_client(c);
            }
            return;
        }
        if (!nl) {
            if (c->skipping) {
                c->used = 0; /* the rest of a line refused already */
            }
            if (c->used == sizeof c->in) {
                c->used = 0;
                c->skipping = true;
                reply(c, NULL, 0,
                      "line longer than " XSTR(
                          SP_CTL_LINE_MAX) " bytes; not executed");
            } else if (c->eof && c->used) {
                c->used = 0;
                reply(c, NULL, 0, "line without a newline; not executed");
            } else {
                if (c->eof) {
                    drop_client(c);
                }
                return;
            }
            if (c->fd >= 0 && c->out) {
                flush_reply(c);
            }
            continue;
        }
        len = (size_t)(nl - c->in);
        *nl = '\0';
        if (c->skipping) {
            c->skipping = false;
        } else {
            reply(c, c->in, len, NULL);
        }
        c->used -= len + 1;
        memmove(c->in, nl + 1, c->used);
        if (c->fd >= 0 && c->out) {
            flush_reply(c);
        }
    }
}

static void
receive(struct client *c)
{
    ssize_t r;

    if (c->used == sizeof c->in) {
        return; /* a hang-up is seen once the line is answered */
    }
    r = recv(c->fd, c->in + c->used, sizeof c->in - c->used, 0);
    if (r > 0) {
        c->used += (size_t)r;
        c->last_active = ++server.tick;
    } else if (r == 0) {
        c->eof = true;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        drop_client(c);
    }
}

static struct client *
free_slot(void)
{
    struct client *oldest = &server.clients[0];

    for (size_t i = 0; i < MAX_CLIENTS; i++) {
        struct client *c = &server.clients[i];

        if (c->fd < 0) {
            return c;
        }
        if (c->last_active < oldest->last_active) {
            oldest = c;
        }
    }
    drop_client(oldest);
    return oldest;
}

static void
accept_clients(void)
{
    for (unsigned n = 0; n < MAX_CLIENTS; n++) {
        int fd = accept4(server.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct client *c;
        uid_t uid;

        if (fd < 0) {
            return;
        }
        c = free_slot();
        c->fd = fd;
        c->eof = c->skipping = false;
        c->refused = !peer_trusted(fd, &uid);
        c->used = 0;
        c->last_active = ++server.tick;
        if (c->refused) {
            char msg[64];

            snprintf(msg, sizeof msg, "uid %d may not use this socket",
                     (int)uid);
            reply(c, NULL, 0, msg);
            if (c->fd >= 0) {
                flush_reply(c);
            }
        }
    }
}

static short
wanted_events(const struct client *c)
{
    if (c->out) {
        return POLLOUT;
    }
    /* A full buffer waits until its line is answered. */
    return !c->eof && c->used < sizeof c->in ? POLLIN : 0;
}

static void *
server_main(void *arg)
{
    struct pollfd p[MAX_CLIENTS + 1];

    (void)arg;
    while (!__atomic_load_n(&server.stop, __ATOMIC_ACQUIRE)) {
        p[0] = (struct pollfd){server.fd, POLLIN, 0};
        for (size_t i = 0; i < MAX_CLIENTS; i++) {
            const struct client *c = &server.clients[i];

            p[i + 1] = (struct pollfd){c->fd, wanted_events(c), 0};
        }
        /* The timeout only bounds how long sp_ctl_stop() waits. */
        if (poll(p, MAX_CLIENTS + 1, 100) <= 0) {
            continue;
        }
        for (size_t i = 0; i < MAX_CLIENTS; i++) {
            struct client *c = &server.clients[i];

            if (c->fd < 0 || !p[i + 1].revents) {
                continue;
            }
            if (c->out) {
                flush_reply(c);
            } else {
                receive(c);
            }
            if (c->fd >= 0) {
                process_input(c);
            }
        }
        if (p[0].revents & POLLIN) {
            accept_clients();
        }
    }
    for (size_t i = 0; i < MAX_CLIENTS; i++) {
        if (server.clients[i].fd >= 0) {
            drop_client(&server.clients[i]);
        }
    }
    return NULL;
}

/* A socket some process accepts connections on. */
static bool
socket_in_use(const struct sockaddr_un *addr)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    bool used;

    if (fd < 0) {
        return true;
    }
    used = connect(fd, (const struct sockaddr *)addr, sizeof *addr) == 0 ||
           errno != ECONNREFUSED;
    close(fd);
    return used;
}

/* The directory holding the socket: only root or we may write it, or
 * another user could put a socket of theirs in its place. */
static int
check_directory(const char *path, struct sp_err *err)
{
    char dir[sizeof server.path];
    const char *slash = strrchr(path, '/');
    struct stat st;

    if (!slash) {
        snprintf(dir, sizeof dir, ".");
    } else {
        snprintf(dir, sizeof dir, "%.*s",
                 (int)(slash == path ? 1 : slash - path), path);
    }
    /* The default for root: made here, never world-writable. */
    if (!strcmp(dir, RUN_DIR) && mkdir(RUN_DIR, 0700) && errno != EEXIST) {
        snprintf(err->msg, sizeof err->msg, "cannot create %s: %s", RUN_DIR,
                 strerror(errno));
        return -1;
    }
    if (stat(dir, &st)) {
        snprintf(err->msg, sizeof err->msg, "control socket directory %s: %s",
                 dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err->msg, sizeof err->msg,
                 "control socket directory %s is not a directory", dir);
        return -1;
    }
    if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
        (st.st_mode & (S_IWGRP | S_IWOTH))) {
        snprintf(err->msg, sizeof err->msg,
                 "control socket directory %s may be written by another "
                 "user, who could replace the socket; choose one only "
                 "root or you can write",
                 dir);
        return -1;
    }
    return 0;
}

int
sp_ctl_open(const char *path, struct sp_err *err)
{
    struct sockaddr_un addr;
    struct stat st;
    mode_t old_mask;
    bool exists;
    int rc;

    if (!path) {
        snprintf(err->msg, sizeof err->msg,
                 "no control socket: XDG_RUNTIME_DIR is not set and this "
                 "is not root; give --ctl PATH or set SIMDPATH_CTL");
        return -1;
    }
    if (make_address(path, &addr, err)) {
        return -1;
    }
    exists = !lstat(path, &st);
    if (exists && !S_ISSOCK(st.st_mode)) {
        snprintf(err->msg, sizeof err->msg,
                 "%s exists and is not a socket; not replacing it", path);
        return -1;
    }
    if (check_directory(path, err)) {
        return -1;
    }
    if (exists) {
        if (socket_in_use(&addr)) {
            snprintf(err->msg, sizeof err->msg,
                     "control socket %s is in use by another process", path);
            return -1;
        }
        unlink(path); /* left by a process that died */
    }
    /* Writing to a client that left must not end the process: these
     * sends say MSG_NOSIGNAL, but not every library's socket writes do. */
    signal(SIGPIPE, SIG_IGN);
    server.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (server.fd < 0) {
        snprintf(err->msg, sizeof err->msg, "socket: %s", strerror(errno));
        return -1;
    }
    old_mask = umask(0177); /* owner-only: the socket controls traffic */
    rc = bind(server.fd, (struct sockaddr *)&addr, sizeof addr);
    umask(old_mask);
    if (rc || listen(server.fd, 64) || stat(path, &st)) {
        snprintf(err->msg, sizeof err->msg,
                 "cannot create control socket %s: %s", path, strerror(errno));
        if (!rc) {
            unlink(path);
        }
        close(server.fd);
        server.fd = -1;
        return -1;
    }
    snprintf(server.path, sizeof server.path, "%s", path);
    server.dev = st.st_dev;
    server.ino = st.st_ino;
    return 0;
}

int
sp_ctl_start(const struct sp_ctl_command *commands, size_t n_commands,
             void *ctx, struct sp_err *err)
{
    server.commands = commands;
    server.n_commands = n_commands;
    server.ctx = ctx;
    __atomic_store_n(&server.stop, false, __ATOMIC_RELAXED);
    for (size_t i = 0; i < MAX_CLIENTS; i++) {
        server.clients[i].fd = -1;
    }
    if (pthread_create(&server.thread, NULL, server_main, NULL)) {
        snprintf(err->msg, sizeof err->msg, "cannot start control thread");
        return -1;
    }
    server.running = true;
    return 0;
}

void
sp_ctl_stop(void)
{
    struct stat st;

    if (server.running) {
        __atomic_store_n(&server.stop, true, __ATOMIC_RELEASE);
        pthread_join(server.thread, NULL);
        server.running = false;
    }
    if (server.fd < 0) {
        return;
    }
    close(server.fd);
    server.fd = -1;
    if (!lstat(server.path, &st) && st.st_dev == server.dev &&
        st.st_ino == server.ino) {
        unlink(server.path);
    }
}

/* ---- client ---- */

static const char ctl_usage[] =
    "Usage: simdpath ctl [--socket PATH] COMMAND [ARG]...\n"
    "Sends COMMAND to a running 'simdpath run' and prints the reply; exits\n"
    "0 if it ended with OK, 1 on ERROR or no reply.\n"
    "'simdpath ctl help' lists the commands.\n"
    "\n"
    "  --socket PATH  the control socket (default $SIMDPATH_CTL, else\n"
    "                 $XDG_RUNTIME_DIR/simdpath.ctl, else for root\n"
    "                 /run/simdpath/simdpath.ctl)\n"
    "\n"
    "The arguments are joined by spaces into one line of at most 4095\n"
    "bytes, without control characters. The reply is printed with bytes\n"
    "other than printable ASCII, tab and newline written as \\xNN. A socket\n"
    "served by a user other than root or you is refused unused.\n";

/* Writes s to f, bytes a terminal could act on as \xNN. */
static void
put_escaped(const char *s, size_t len, FILE *f)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) {
            putc(c, f);
        } else {
            fprintf(f, "\\x%02x", c);
        }
    }
}

/* Joins the arguments into one command line; 0, or -1 after saying why. */
static int
join_arguments(int argc, char **argv, char *line)
{
    size_t used = 0;

    for (int i = 0; i < argc; i++) {
        size_t len = strlen(argv[i]);
        size_t bad = find_control_byte(argv[i], len);

        if (bad < len) {
            sp_cli_error("ctl", "argument %d holds control byte 0x%02x", i + 1,
                         (unsigned char)argv[i][bad]);
            return -1;
        }
        if (used + (used > 0) + len > SP_CTL_LINE_MAX) {
            sp_cli_error("ctl", "the command is longer than %d bytes",
                         SP_CTL_LINE_MAX);
            return -1;
        }
        if (used) {
            line[used++] = ' ';
        }
        memcpy(line + used, argv[i], len);
        used += len;
    }
    line[used++] = '\n';
    line[used] = '\0';
    return 0;
}

static int
send_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = send(fd, buf, len, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Prints the reply but its last line, which is returned (malloc'd). */
static char *
print_reply(int fd)
{
    FILE *in = fdopen(fd, "r");
    char *line = NULL, *last = NULL;
    size_t cap = 0;
    ssize_t len, last_len = 0;

    if (!in) {
        close(fd);
        return NULL;
    }
    while ((len = getline(&line, &cap, in)) > 0) {
        if (last) {
            put_escaped(last, (size_t)last_len, stdout);
            free(last);
        }
        last = line;
        last_len = len;
        line = NULL;
        cap = 0;
    }
    free(line);
    fclose(in);
    return last;
}

/* The client: sends one command line, prints the reply, and exits 0 if it
 * ended with OK. */
int
sp_cmd_ctl(int argc, char **argv)
{
    const char *path = sp_ctl_default_path();
    struct sockaddr_un addr;
    struct sp_err err;
    char line[SP_CTL_LINE_MAX + 2];
    char *last;
    uid_t uid;
    int fd, rc;

    if (argc > 2 && !strcmp(argv[1], "--socket")) {
        path = argv[2];
        argc -= 2;
        argv += 2;
    }
    if (argc < 2 || !strcmp(argv[1], "--help")) {
        fputs(ctl_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? SP_EXIT_USAGE : SP_EXIT_OK;
    }
    if (!path) {
        sp_cli_error("ctl", "no control socket: XDG_RUNTIME_DIR is not set "
                            "and this is not root; give --socket PATH or "
                            "set SIMDPATH_CTL");
        return SP_EXIT_USAGE;
    }
    if (join_arguments(argc - 1, argv + 1, line)) {
        return SP_EXIT_USAGE;
    }
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
    if (!peer_trusted(fd, &uid)) {
        sp_cli_error("ctl",
                     "%s is served by uid %d, neither root nor you: "
                     "refusing to use it",
                     path, (int)uid);
        close(fd);
        return SP_EXIT_FAILURE;
    }
    /* One command: the server answers it, sees the end, and closes. */
    if (send_all(fd, line, strlen(line)) || shutdown(fd, SHUT_WR)) {
        sp_cli_error("ctl", "cannot send to %s: %s", path, strerror(errno));
        close(fd);
        return SP_EXIT_FAILURE;
    }
    last = print_reply(fd);
    rc = last && !strcmp(last, "OK\n") ? SP_EXIT_OK : SP_EXIT_FAILURE;
    if (rc) {
        fflush(stdout);
        if (last) {
            put_escaped(last, strlen(last), stderr);
            if (last[strlen(last) - 1] != '\n') {
                fputc('\n', stderr);
            }
        } else {
            fputs("ERROR: no reply\n", stderr);
        }
    }
    free(last);
    return rc;
}
