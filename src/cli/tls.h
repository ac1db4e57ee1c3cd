/* SPDX-License-Identifier: BSD-3-Clause */
/* TLS for the OpenFlow channel's ssl: controllers and pssl: listener
 * (docs/openflow.md, TLS), over OpenSSL, on non-blocking sockets. */
#ifndef SP_CLI_TLS_H
#define SP_CLI_TLS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "simdpath/dispatch.h"

/* One connection's TLS. */
struct sp_tls;

/* --ssl-protocols' versions, as bits. */
#define SP_TLS_V1_2 1u
#define SP_TLS_V1_3 2u

/* What every TLS connection is made with: the files (PEM), the versions
 * offered (--ssl-protocols; 0: both) and TLS 1.2's ciphers
 * (--ssl-ciphers, in OpenSSL's list syntax; "": OpenSSL's default). */
struct sp_tls_config {
    char key[4096], cert[4096], ca[4096];
    unsigned protocols;
    char ciphers[1024];
};

/* 0 if 'path' holds what OPTION takes, in PEM: a private key without a
 * passphrase ("--private-key") or a certificate ("--certificate",
 * "--ca-cert"); else -1 with err naming the option, the path and why. */
int sp_tls_file_check(const char *option, const char *path,
                      struct sp_err *err);
/* 0 if the private key at 'key' is the one of the certificate at 'cert'
 * (each as sp_tls_file_check takes it); else -1 with err naming both. */
int sp_tls_pair_check(const char *key, const char *cert, struct sp_err *err);
/* --ssl-protocols LIST: TLSv1.2 and TLSv1.3, comma-separated, as
 * SP_TLS_V* bits in *bits; -1 with err naming a word not offered. */
int sp_tls_parse_protocols(const char *list, unsigned *bits,
                           struct sp_err *err);
/* --ssl-ciphers LIST: 0 if OpenSSL offers a TLS 1.2 cipher of it; else
 * -1 with err naming it. */
int sp_tls_ciphers_check(const char *list, struct sp_err *err);
/* Reads the files into the one context every TLS connection uses: the
 * versions and ciphers of c (TLS 1.2 or later), and both ends must show
 * a certificate signed by the CA (as ovs-vswitchd and its controllers
 * check each other). Returns 0, or -1 with err naming the option, the
 * file and what is wrong with it. */
int sp_tls_setup(const struct sp_tls_config *c, struct sp_err *err);
/* Frees the context; the connections must be freed first. */
void sp_tls_teardown(void);
/* Two lines for ctl openflow-show: the certificate in use, its issuer and
 * when it expires; the versions and TLS 1.2 ciphers offered. */
void sp_tls_show(FILE *out);
/* ", VERSION CIPHER" of an established connection, for its line in ctl
 * openflow-show. */
void sp_tls_show_session(FILE *out, const struct sp_tls *t);

/* TLS on connected socket fd, as the server (accepted) or the client; the
 * handshake runs within the first sp_tls_recv or sp_tls_send. The files
 * are read again first if they changed since they were read (a renewed
 * certificate); if they do not load, the ones read before stay, and a
 * warning says why. NULL when out of memory. */
struct sp_tls *sp_tls_new(int fd, bool server);
/* Sends close_notify if the socket takes it now, and frees. */
void sp_tls_free(struct sp_tls *t);

/* As recv() and send() on a non-blocking socket: the bytes moved, 0 when
 * the peer ended the session (recv), or -1 with errno EAGAIN, the
 * direction the TLS waits for then in sp_tls_want, or EPROTO when TLS
 * failed (sp_tls_error says why) or another errno of the socket. */
ssize_t sp_tls_recv(struct sp_tls *t, void *buf, size_t n);
ssize_t sp_tls_send(struct sp_tls *t, const void *buf, size_t n);
/* What the last recv (or send) that returned EAGAIN waits for: POLLIN or
 * POLLOUT; 0 after one that did not. */
short sp_tls_recv_want(const struct sp_tls *t);
short sp_tls_send_want(const struct sp_tls *t);
/* Whether the handshake is done. */
bool sp_tls_established(const struct sp_tls *t);
/* Whether decrypted bytes wait in the TLS, which poll() cannot see. */
bool sp_tls_pending(const struct sp_tls *t);
/* Why the connection failed: OpenSSL's reason, and the certificate's
 * problem where verifying it failed. */
const char *sp_tls_error(const struct sp_tls *t);

#endif /* SP_CLI_TLS_H */
