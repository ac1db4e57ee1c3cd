/* SPDX-License-Identifier: BSD-3-Clause */
/* simdpath run's OpenFlow channel (docs/openflow.md). */
#ifndef SP_CLI_OPENFLOW_H
#define SP_CLI_OPENFLOW_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/tls.h"
#include "simdpath/dispatch.h"

struct sp_dp;
struct sp_dp_config;

/* --controller may be given this many times: the controllers of a
 * cluster, each connected to (ROLE_REQUEST decides which is master). */
#define SP_OF_CONTROLLERS_MAX 8

struct sp_of_channel_config {
    bool listen, listen_tls; /* --openflow ptcp: or pssl: */
    char listen_ip[64], listen_port[8];
    unsigned n_controllers;
    struct sp_of_controller_addr {
        char host[256], port[8];
        bool tls; /* ssl:, not tcp: */
    } controllers[SP_OF_CONTROLLERS_MAX];
    /* --private-key, --certificate, --ca-cert, --ssl-protocols and
     * --ssl-ciphers: for ssl: and pssl:. */
    struct sp_tls_config tls;
    /* --inactivity-probe: after this long with nothing from the
     * controller an ECHO_REQUEST, after as long again with still nothing
     * a new connection; 0: never. */
    unsigned probe_ms;
};

#define SP_OF_PROBE_DEFAULT_MS 5000

/* The option values: --openflow ptcp:PORT[:IP] or pssl:PORT[:IP] (IP
 * defaults to 127.0.0.1), --controller tcp:HOST:PORT or ssl:HOST:PORT
 * (each adds one, up to SP_OF_CONTROLLERS_MAX, none twice), --fail-mode
 * secure, --inactivity-probe MS, and TLS's (OPTION is "private-key",
 * "certificate", "ca-cert", "ssl-protocols" or "ssl-ciphers"). Return 0,
 * or -1 with err naming the option and value. */
int sp_of_channel_parse_listen(const char *spec,
                               struct sp_of_channel_config *c,
                               struct sp_err *err);
int sp_of_channel_parse_controller(const char *spec,
                                   struct sp_of_channel_config *c,
                                   struct sp_err *err);
int sp_of_channel_parse_tls(const char *option, const char *value,
                            struct sp_of_channel_config *c,
                            struct sp_err *err);
int sp_of_channel_parse_fail_mode(const char *mode, struct sp_err *err);
/* --inactivity-probe MS: 0, or 1000 to 3600000. */
int sp_of_channel_parse_probe(const char *ms, struct sp_of_channel_config *c,
                              struct sp_err *err);

/* Reads the TLS files if ssl: or pssl: needs them, and binds the
 * listening socket (before EAL starts, so a bad file or address starts
 * nothing). */
int sp_of_channel_open(const struct sp_of_channel_config *c,
                       struct sp_err *err);
/* The TCP port the channel listens on (the one the kernel chose for
 * ptcp:0), or 0 without --openflow. */
unsigned sp_of_channel_listen_port(void);
/* Starts the channel's thread; nothing to do without --openflow or
 * --controller. */
int sp_of_channel_start(struct sp_dp *dp, const struct sp_dp_config *config,
                        struct sp_err *err);
/* Stops the thread, closes every socket; the rules stay. Idempotent. */
void sp_of_channel_stop(void);
/* ctl port-mod: sets port's config bits (SP_DP_PORT_*) of 'mask' to
 * those of 'config', the device's link with PORT_DOWN, as a controller's
 * PORT_MOD does; a change goes to every connection as PORT_STATUS. With no
 * channel running, only the port. From any thread; 0, or -1 with err
 * saying why the device refused. */
int sp_of_channel_port_mod(struct sp_dp *dp, unsigned port, uint32_t config,
                           uint32_t mask, struct sp_err *err);
/* The channel's state for ctl openflow-show: what it listens on, each
 * controller's connection (or why there is none), the other
 * connections, their roles and the master election; from any thread. */
void sp_of_channel_show(FILE *out);

#endif /* SP_CLI_OPENFLOW_H */
