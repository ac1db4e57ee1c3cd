/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: control-socket requests. Each input is sent, as a
 * client would, to the control server `simdpath run` starts (sp_ctl_open
 * and sp_run_control_start: run_control.c's commands over control.c's
 * socket), serving a datapath of 4 ports that carries no traffic; the
 * client then closes its side and reads the reply to the end. As
 * docs/control.md says, every line sent must be answered by one status
 * line ("OK" or "ERROR: ..."), in order, with nothing after the last,
 * and a line too long, holding a control byte, cut by EOF or naming no
 * command must be refused; the server must not crash, leak or hang.
 * Every input starts with no rule (those added are deleted as flow-del
 * takes flow-dump's lines), the kernels chosen by auto and every port's
 * config clear.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/control.h"
#include "cli/openflow.h"
#include "fuzzlib.h"

#define N_PORTS   4
#define REPLY_MAX (1 << 26)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* main.c's, which the fuzzer's main replaces. */
void
sp_cli_error(const char *context, const char *fmt, ...)
{
    (void)context, (void)fmt;
}

/* run.c's, which the fuzzer does not link: the stop command has nothing
 * to stop. */
void
sp_run_request_stop(void)
{
}

/* openflow.c's, which the fuzzer does not link either: no channel runs,
 * as in a run without --openflow or --controller. */
void
sp_of_channel_show(FILE *out)
{
    fputs("OpenFlow: off\n", out);
}

/* With no channel, the port's config alone (its link as the simulated
 * ports have it: always up). */
int
sp_of_channel_port_mod(struct sp_dp *dp, unsigned port, uint32_t config,
                       uint32_t mask, struct sp_err *err)
{
    (void)err;
    sp_dp_port_config_set(
        dp, port, (sp_dp_port_config(dp, port) & ~mask) | (config & mask));
    return 0;
}

static void __attribute__((noreturn))
fail(const char *what, const char *reply, size_t len)
{
    fprintf(stderr, "fuzz_ctl: %s; reply (%zu bytes): %.*s\n", what, len,
            (int)(len < 400 ? len : 400), reply);
    abort();
}

/* Sends the request, closes the sending side, reads the reply to EOF. */
static size_t
request(const char *path, const uint8_t *data, size_t size, char *reply)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t len = 0;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    if (fd < 0 || sp_fuzz_connect(fd, (struct sockaddr *)&addr, sizeof addr)) {
        perror("fuzz_ctl: connect");
        abort();
    }
    /* A server that stops reading (a line too long) may close first. */
    while (size) {
        ssize_t w = send(fd, data, size, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR) {
            continue; /* libFuzzer's -timeout alarm */
        }
        if (w <= 0) {
            break;
        }
        data += w;
        size -= (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    for (;;) {
        ssize_t r = read(fd, reply + len, REPLY_MAX - len);

        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        len += (size_t)r;
        if (len == REPLY_MAX) {
            fail("reply too long", reply, len);
        }
    }
    close(fd);
    return len;
}

/* Whether docs/control.md says the server refuses this line whole: too
 * long, a control byte other than tab, no newline before EOF, or no
 * command word. */
static bool
must_refuse(const uint8_t *line, size_t len, bool newline)
{
    bool word = false;

    if (len > SP_CTL_LINE_MAX || !newline) {
        return true;
    }
    for (size_t i = 0; i < len; i++) {
        if ((line[i] < 0x20 && line[i] != '\t') || line[i] == 0x7f) {
            return true;
        }
        word |= line[i] != ' ' && line[i] != '\t';
    }
    return !word;
}

/* The protocol: every line sent is answered by exactly one status line
 * ("OK" or "ERROR: ..."), in order, the reply ends with one, and the
 * lines it must refuse get ERROR. */
static void
check_reply(const uint8_t *data, size_t size, const char *reply, size_t len)
{
    const char *r = reply, *end = reply + len;
    size_t pos = 0, n = 0;

    if (len && reply[len - 1] != '\n') {
        fail("reply does not end with a line", reply, len);
    }
    while (pos < size) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t line_len = nl ? (size_t)(nl - (data + pos)) : size - pos;
        bool refuse = must_refuse(data + pos, line_len, nl != NULL);
        const char *status = NULL;

        /* The next status line of the reply is this line's. */
        while (r < end && !status) {
            const char *eol = memchr(r, '\n', (size_t)(end - r));

            if (!strncmp(r, "OK\n", 3) || !strncmp(r, "ERROR: ", 7)) {
                status = r;
            }
            r = eol + 1;
        }
        if (!status) {
            fprintf(stderr, "fuzz_ctl: line %zu has no reply\n", n + 1);
            fail("fewer status lines than lines", reply, len);
        }
        if (refuse && status[0] != 'E') {
            fprintf(stderr, "fuzz_ctl: line %zu (%zu bytes) taken\n", n + 1,
                    line_len);
            fail("a line the protocol refuses was answered OK", reply, len);
        }
        n++;
        pos += line_len + (nl != NULL);
    }
    if (r != end) {
        fail("more in the reply than the lines' answers", reply, len);
    }
}

/* Deletes every rule, as flow-del takes what flow-dump prints: the next
 * input starts from an empty table, without a new server. */
static void
delete_flows(struct sp_dp *dp)
{
    char *text = NULL, *line, *save = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct sp_err err;

    sp_dp_flows_dump(dp, out);
    fclose(out);
    for (line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (sp_dp_flow_del(dp, line, &err)) {
            fprintf(stderr, "fuzz_ctl: flow-del of dumped '%s': %s\n", line,
                    err.msg);
            abort();
        }
    }
    free(text);
    if (sp_dp_flow_count(dp)) {
        fprintf(stderr, "fuzz_ctl: %u rules left\n", sp_dp_flow_count(dp));
        abort();
    }
}

/* A datapath and its control server on 'path'. */
static struct sp_dp *
serve(const char *path)
{
    static const struct sp_dp_config config = {
        .n_ports = N_PORTS, .n_pmds = 1, .n_rxq = 1};
    struct sp_dp *dp = sp_fuzz_dp_create(N_PORTS);
    struct sp_err err;

    if (sp_ctl_open(path, &err) || sp_run_control_start(dp, &config, &err)) {
        fprintf(stderr, "fuzz_ctl: %s\n", err.msg);
        abort();
    }
    return dp;
}

static char dir[] = "/tmp/fuzz_ctl.XXXXXX", path[108];

/* At exit: no socket or directory left in /tmp. */
static void
clean_up(void)
{
    sp_ctl_stop();
    rmdir(dir);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char reply[REPLY_MAX + 1];
    static struct sp_dp *dp;
    size_t len;

    /* One server for the whole run: starting and stopping one per input
     * costs more than most inputs. */
    if (!dp) {
        if (!mkdtemp(dir)) {
            perror("fuzz_ctl: mkdtemp");
            abort();
        }
        snprintf(path, sizeof path, "%s/ctl", dir);
        atexit(clean_up);
        dp = serve(path);
    }
    len = request(path, data, size, reply);
    delete_flows(dp);
    sp_dispatch_reset();
    for (unsigned port = 1; port <= N_PORTS; port++) {
        sp_dp_port_config_set(dp, port, 0);
    }

    reply[len] = '\0';
    check_reply(data, size, reply, len);
    return 0;
}
