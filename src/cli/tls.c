/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS for the OpenFlow channel (src/cli/openflow.c), over OpenSSL. The
 * channel's thread drives every connection with poll(), so each call
 * returns at once: what TLS waits for (the handshake may need to read
 * while the channel writes) is kept per direction for the next poll().
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "cli/tls.h"

struct sp_tls {
    SSL *ssl;
    short recv_want, send_want;
    char error[256];
};

static SSL_CTX *ctx;

/* OpenSSL's reason for its last error, or 'fallback'. */
static const char *
last_reason(const char *fallback)
{
    unsigned long e = ERR_peek_last_error();
    const char *reason = e ? ERR_reason_error_string(e) : NULL;

    return reason ? reason : fallback;
}

static int
readable(const char *option, const char *path, struct sp_err *err)
{
    FILE *f = fopen(path, "r");

    if (!f) {
        return sp_err_set(err, "%s: '%s': %s", option, path, strerror(errno));
    }
    fclose(f);
    return 0;
}

int
sp_tls_setup(const char *key, const char *cert, const char *ca,
             struct sp_err *err)
{
    STACK_OF(X509_NAME) * names;
    int rc = -1;

    if (readable("--private-key", key, err) ||
        readable("--certificate", cert, err) ||
        readable("--ca-cert", ca, err)) {
        return -1;
    }
    ERR_clear_error();
    ctx = SSL_CTX_new(TLS_method());
    if (!ctx) {
        return sp_err_set(err, "TLS: %s", last_reason("out of memory"));
    }
    if (!SSL_CTX_use_certificate_chain_file(ctx, cert)) {
        sp_err_set(err, "--certificate: '%s': %s", cert,
                   last_reason("not a PEM certificate"));
    } else if (!SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM)) {
        if (ERR_GET_REASON(ERR_peek_last_error()) ==
            X509_R_KEY_VALUES_MISMATCH) {
            sp_err_set(err,
                       "--private-key '%s' is not the key of --certificate "
                       "'%s'",
                       key, cert);
        } else {
            sp_err_set(err, "--private-key: '%s': %s", key,
                       last_reason("not a PEM private key"));
        }
    } else if (!SSL_CTX_load_verify_locations(ctx, ca, NULL) ||
               !(names = SSL_load_client_CA_file(ca))) {
        sp_err_set(err, "--ca-cert: '%s': %s", ca,
                   last_reason("no PEM certificate in it"));
    } else {
        /* The server asks the client for a certificate by these names. */
        SSL_CTX_set_client_CA_list(ctx, names);
        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        SSL_CTX_set_verify(
            ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        /* A peer that closes its socket without close_notify has ended
         * its side, as over TCP; the channel's output buffer moves and
         * is sent in parts. */
        SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
        SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                  SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
        rc = 0;
    }
    if (rc) {
        sp_tls_teardown();
    }
    ERR_clear_error();
    return rc;
}

void
sp_tls_teardown(void)
{
    SSL_CTX_free(ctx);
    ctx = NULL;
}

struct sp_tls *
sp_tls_new(int fd, bool server)
{
    struct sp_tls *t = calloc(1, sizeof *t);

    if (!t || !(t->ssl = SSL_new(ctx)) || !SSL_set_fd(t->ssl, fd)) {
        if (t) {
            SSL_free(t->ssl);
        }
        free(t);
        ERR_clear_error();
        return NULL;
    }
    if (server) {
        SSL_set_accept_state(t->ssl);
    } else {
        SSL_set_connect_state(t->ssl);
    }
    return t;
}

void
sp_tls_free(struct sp_tls *t)
{
    if (!t) {
        return;
    }
    if (SSL_is_init_finished(t->ssl)) {
        SSL_shutdown(t->ssl); /* close_notify, not waiting for the peer's */
    }
    SSL_free(t->ssl);
    free(t);
    ERR_clear_error();
}

/* The outcome of an SSL_read or SSL_write that returned rc. */
static ssize_t
outcome(struct sp_tls *t, int rc, short *want)
{
    int e = SSL_get_error(t->ssl, rc);
    long verify;

    *want = 0;
    switch (e) {
    case SSL_ERROR_WANT_READ:
        *want = POLLIN;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_WANT_WRITE:
        *want = POLLOUT;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_ZERO_RETURN:
        return 0;
    case SSL_ERROR_SYSCALL:
        if (!ERR_peek_error()) {
            int saved = errno ? errno : ECONNRESET;

            snprintf(t->error, sizeof t->error, "%s", strerror(saved));
            ERR_clear_error();
            errno = saved;
            return -1;
        }
        break;
    default:
        break;
    }
    verify = SSL_get_verify_result(t->ssl);
    snprintf(t->error, sizeof t->error, "%s%s%s", last_reason("TLS failed"),
             verify == X509_V_OK ? "" : ": ",
             verify == X509_V_OK ? "" : X509_verify_cert_error_string(verify));
    ERR_clear_error();
    errno = EPROTO;
    return -1;
}

ssize_t
sp_tls_recv(struct sp_tls *t, void *buf, size_t n)
{
    size_t got = 0;
    int rc;

    ERR_clear_error();
    rc = SSL_read_ex(t->ssl, buf, n, &got);
    if (rc > 0) {
        t->recv_want = 0;
        return (ssize_t)got;
    }
    return outcome(t, rc, &t->recv_want);
}

ssize_t
sp_tls_send(struct sp_tls *t, const void *buf, size_t n)
{
    size_t sent = 0;
    int rc;

    ERR_clear_error();
    rc = SSL_write_ex(t->ssl, buf, n, &sent);
    if (rc > 0) {
        t->send_want = 0;
        return (ssize_t)sent;
    }
    return outcome(t, rc, &t->send_want);
}

short
sp_tls_recv_want(const struct sp_tls *t)
{
    return t->recv_want;
}

short
sp_tls_send_want(const struct sp_tls *t)
{
    return t->send_want;
}

bool
sp_tls_established(const struct sp_tls *t)
{
    return SSL_is_init_finished(t->ssl);
}

bool
sp_tls_pending(const struct sp_tls *t)
{
    return SSL_pending(t->ssl) > 0;
}

const char *
sp_tls_error(const struct sp_tls *t)
{
    return t->error;
}
