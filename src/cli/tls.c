/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS for the OpenFlow channel (src/cli/openflow.c), over OpenSSL. The
 * channel's thread drives every connection with poll(), so each call
 * returns at once: what TLS waits for (the handshake may need to read
 * while the channel writes) is kept per direction for the next poll().
 * The files are read again when they change (refresh).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "cli/cli.h"
#include "cli/tls.h"

struct sp_tls {
    SSL *ssl;
    short recv_want, send_want;
    char error[256];
};

static SSL_CTX *ctx;
/* What the context is made of, and the files' state when last read. */
static struct sp_tls_config conf;
static struct stat files_read[3];

/* --ssl-protocols' words, in version order. */
static const struct {
    const char *name;
    unsigned bit;
    int version;
} protocols[] = {
    {"TLSv1.2", SP_TLS_V1_2, TLS1_2_VERSION},
    {"TLSv1.3", SP_TLS_V1_3, TLS1_3_VERSION},
};

/* OpenSSL's reason for its last error, or 'fallback'. */
static const char *
last_reason(const char *fallback)
{
    unsigned long e = ERR_peek_last_error();
    const char *reason = e ? ERR_reason_error_string(e) : NULL;

    return reason ? reason : fallback;
}

/* No passphrase is asked for: an encrypted key is refused, where
 * OpenSSL's default would prompt on the terminal of a daemon. */
static int
no_passphrase(char *buf, int size, int rwflag, void *aux)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)aux;
    return -1;
}

/* Reads the first PEM private key (into *pkey) or, with pkey NULL,
 * certificate (into *x) of path: false when the file cannot be opened
 * (errno says why), else a NULL result when it holds none (OpenSSL's
 * error says why). */
static bool
read_pem(const char *path, EVP_PKEY **pkey, X509 **x)
{
    FILE *f = fopen(path, "r");

    if (!f) {
        return false;
    }
    ERR_clear_error();
    if (pkey) {
        *pkey = PEM_read_PrivateKey(f, NULL, no_passphrase, NULL);
    } else {
        *x = PEM_read_X509(f, NULL, no_passphrase, NULL);
    }
    fclose(f);
    return true;
}

int
sp_tls_file_check(const char *option, const char *path, struct sp_err *err)
{
    bool key = !strcmp(option, "--private-key");
    EVP_PKEY *pkey = NULL;
    X509 *x = NULL;

    if (!read_pem(path, key ? &pkey : NULL, &x)) {
        return sp_err_set(err, "%s: '%s': %s", option, path, strerror(errno));
    }
    if (!pkey && !x) {
        sp_err_set(err, "%s: '%s': no PEM %s (%s)", option, path,
                   key ? "private key without a passphrase" : "certificate",
                   last_reason("unreadable"));
    }
    EVP_PKEY_free(pkey);
    X509_free(x);
    ERR_clear_error();
    return pkey || x ? 0 : -1;
}

int
sp_tls_pair_check(const char *key, const char *cert, struct sp_err *err)
{
    EVP_PKEY *pkey = NULL;
    X509 *x = NULL;
    bool pair;

    read_pem(key, &pkey, NULL);
    read_pem(cert, NULL, &x);
    pair = pkey && x && X509_check_private_key(x, pkey);
    EVP_PKEY_free(pkey);
    X509_free(x);
    ERR_clear_error();
    if (!pair) {
        return sp_err_set(err,
                          "--private-key '%s' is not the key of "
                          "--certificate '%s'",
                          key, cert);
    }
    return 0;
}

int
sp_tls_parse_protocols(const char *list, unsigned *bits, struct sp_err *err)
{
    const char *word = list;

    *bits = 0;
    do {
        size_t len = strcspn(word, ",");
        unsigned bit = 0;

        for (size_t i = 0; i < sizeof protocols / sizeof protocols[0]; i++) {
            if (strlen(protocols[i].name) == len &&
                !strncmp(word, protocols[i].name, len)) {
                bit = protocols[i].bit;
            }
        }
        if (!bit) {
            return sp_err_set(err,
                              "--ssl-protocols: '%.*s' in '%s'; expected "
                              "TLSv1.2 and TLSv1.3, comma-separated (none "
                              "older is offered)",
                              (int)len, word, list);
        }
        *bits |= bit;
        word += len;
    } while (*word++ == ',');
    return 0;
}

/* Gives c the TLS 1.2 ciphers of 'list'; -1 with err naming it when
 * OpenSSL offers none of them. */
static int
set_ciphers(SSL_CTX *c, const char *list, struct sp_err *err)
{
    if (!SSL_CTX_set_cipher_list(c, list)) {
        ERR_clear_error();
        return sp_err_set(err,
                          "--ssl-ciphers: '%s'; no TLS 1.2 cipher OpenSSL "
                          "offers (openssl ciphers -v LIST lists them)",
                          list);
    }
    return 0;
}

int
sp_tls_ciphers_check(const char *list, struct sp_err *err)
{
    SSL_CTX *c = SSL_CTX_new(TLS_method());
    int rc = c ? set_ciphers(c, list, err)
               : sp_err_set(err, "TLS: %s", last_reason("out of memory"));

    SSL_CTX_free(c);
    ERR_clear_error();
    return rc;
}

/* The versions of 'bits' (0: all) as the context's lowest and highest. */
static void
set_versions(SSL_CTX *c, unsigned bits)
{
    int lowest = 0, highest = 0;

    for (size_t i = 0; i < sizeof protocols / sizeof protocols[0]; i++) {
        if (!bits || bits & protocols[i].bit) {
            lowest = lowest ? lowest : protocols[i].version;
            highest = protocols[i].version;
        }
    }
    SSL_CTX_set_min_proto_version(c, lowest);
    SSL_CTX_set_max_proto_version(c, highest);
}

/* A context of c, or NULL with err set. */
static SSL_CTX *
make_ctx(const struct sp_tls_config *cf, struct sp_err *err)
{
    SSL_CTX *c;

    if (sp_tls_file_check("--private-key", cf->key, err) ||
        sp_tls_file_check("--certificate", cf->cert, err) ||
        sp_tls_file_check("--ca-cert", cf->ca, err) ||
        sp_tls_pair_check(cf->key, cf->cert, err)) {
        return NULL;
    }
    ERR_clear_error();
    c = SSL_CTX_new(TLS_method());
    if (c) {
        SSL_CTX_set_default_passwd_cb(c, no_passphrase);
    }
    if (!c) {
        sp_err_set(err, "TLS: %s", last_reason("out of memory"));
    } else if (!SSL_CTX_use_certificate_chain_file(c, cf->cert)) {
        sp_err_set(err, "--certificate: '%s': %s", cf->cert,
                   last_reason("not a PEM certificate"));
    } else if (!SSL_CTX_use_PrivateKey_file(c, cf->key, SSL_FILETYPE_PEM)) {
        sp_err_set(err, "--private-key: '%s': %s", cf->key,
                   last_reason("not a PEM private key"));
    } else if (!SSL_CTX_load_verify_locations(c, cf->ca, NULL) ||
               (SSL_CTX_set_client_CA_list(c, SSL_load_client_CA_file(cf->ca)),
                !SSL_CTX_get_client_CA_list(c))) {
        /* The client CA list: the names the server asks certificates
         * by. */
        sp_err_set(err, "--ca-cert: '%s': %s", cf->ca,
                   last_reason("no PEM certificate in it"));
    } else if (!*cf->ciphers || !set_ciphers(c, cf->ciphers, err)) {
        set_versions(c, cf->protocols);
        SSL_CTX_set_verify(
            c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        /* A peer that closes its socket without close_notify has ended
         * its side, as over TCP; the channel's output buffer moves and
         * is sent in parts. */
        SSL_CTX_set_options(c, SSL_OP_IGNORE_UNEXPECTED_EOF);
        SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
        ERR_clear_error();
        return c;
    }
    SSL_CTX_free(c);
    ERR_clear_error();
    return NULL;
}

/* What the files were when last read: a change (a new file renamed over,
 * or rewritten) is read before the next connection. */
static void
snapshot(struct stat *st)
{
    const char *paths[3] = {conf.key, conf.cert, conf.ca};

    for (int i = 0; i < 3; i++) {
        if (stat(paths[i], &st[i])) {
            memset(&st[i], 0, sizeof st[i]);
        }
    }
}

static bool
same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
           a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int
sp_tls_setup(const struct sp_tls_config *c, struct sp_err *err)
{
    conf = *c;
    snapshot(files_read);
    ctx = make_ctx(&conf, err);
    return ctx ? 0 : -1;
}

void
sp_tls_teardown(void)
{
    SSL_CTX_free(ctx);
    ctx = NULL;
}

/* As ovs-vswitchd does, files changed since they were read are read
 * again, so that certificates are renewed without a restart; a set that
 * does not load keeps the one in use, once logged. */
static void
refresh(void)
{
    struct stat now[3];
    struct sp_err err;
    SSL_CTX *fresh;

    snapshot(now);
    if (same_stat(&now[0], &files_read[0]) &&
        same_stat(&now[1], &files_read[1]) &&
        same_stat(&now[2], &files_read[2])) {
        return;
    }
    memcpy(files_read, now, sizeof now);
    fresh = make_ctx(&conf, &err);
    if (!fresh) {
        sp_cli_log(SP_LOG_WARNING,
                   "OpenFlow: TLS: a file changed and does not load, the "
                   "one read before stays in use: %s",
                   err.msg);
        return;
    }
    SSL_CTX_free(ctx); /* each connection holds a reference of its own */
    ctx = fresh;
    sp_cli_log(SP_LOG_INFO,
               "OpenFlow: TLS: read --private-key, --certificate and "
               "--ca-cert again, for the connections from now on");
}

void
sp_tls_show(FILE *out)
{
    X509 *x = SSL_CTX_get0_certificate(ctx);
    BIO *bio = BIO_new(BIO_s_mem());
    char *text;
    long len;

    if (!x || !bio) {
        BIO_free(bio);
        return;
    }
    BIO_puts(bio, "TLS certificate: ");
    X509_NAME_print_ex(bio, X509_get_subject_name(x), 0, XN_FLAG_ONELINE);
    BIO_puts(bio, ", issuer ");
    X509_NAME_print_ex(bio, X509_get_issuer_name(x), 0, XN_FLAG_ONELINE);
    BIO_puts(bio, ", not after ");
    ASN1_TIME_print(bio, X509_get0_notAfter(x));
    len = BIO_get_mem_data(bio, &text);
    fprintf(out, "%.*s\n", (int)len, text);
    BIO_free(bio);
    ERR_clear_error();
    fprintf(out, "TLS versions:");
    for (size_t i = 0; i < sizeof protocols / sizeof protocols[0]; i++) {
        if (!conf.protocols || conf.protocols & protocols[i].bit) {
            fprintf(out, " %s", protocols[i].name);
        }
    }
    fprintf(out, ", TLS 1.2 ciphers: %s\n",
            *conf.ciphers ? conf.ciphers : "OpenSSL's default");
}

void
sp_tls_show_session(FILE *out, const struct sp_tls *t)
{
    fprintf(out, ", %s %s", SSL_get_version(t->ssl),
            SSL_get_cipher_name(t->ssl));
}

struct sp_tls *
sp_tls_new(int fd, bool server)
{
    struct sp_tls *t;

    refresh();
    t = calloc(1, sizeof *t);

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
