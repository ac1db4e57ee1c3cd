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

/* 0 if 'path' holds what OPTION takes, in PEM: a private key without a
 * passphrase ("--private-key") or a certificate ("--certificate",
 * "--ca-cert"); else -1 with err naming the option, the path and why. */
int sp_tls_file_check(const char *option, const char *path,
                      struct sp_err *err);
/* Reads --private-key, --certificate and --ca-cert (PEM) into the one
 * context every TLS connection uses: TLS 1.2 or later, and both ends must
 * show a certificate signed by the CA (as ovs-vswitchd and its
 * controllers check each other). Returns 0, or -1 with err naming the
 * option, the file and what is wrong with it. */
int sp_tls_setup(const char *key, const char *cert, const char *ca,
                 struct sp_err *err);
/* Frees the context; the connections must be freed first. */
void sp_tls_teardown(void);
/* One line for ctl openflow-show: the certificate in use, its issuer and
 * when it expires. */
void sp_tls_show(FILE *out);

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
