/* test_tls_terminate.c — tls_terminate.c end to end over socket pairs: a client that trusts
 * only the terminator's CA speaks HTTPS through it to a server whose certificate a second CA
 * (given as network.upstream_ca) signed; the request is rewritten on its way up (cred_rewrite.c
 * puts TOKEN's value for its placeholder), the answer comes back as is. A server
 * with a certificate for another name, or from an authority nobody trusts, is refused with one
 * line before the client hears "200"; another credential's placeholder is refused with a 403 and the server
 * never sees it. */
#include <pthread.h>
#include <sys/socket.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "proxy/cred_rewrite.h"
#include "proxy/tls_mint.h"
#include "proxy/tls_terminate.h"
#include "test.h"

/* ---- the credentials: TOKEN for the test's hosts, OTHER for another ---- */

#define PH "cordon_ph_TOKEN_0123456789abcdef0123"
#define VAL "tok_the_real_secret_value_0123456789"
#define PH_OTHER "cordon_ph_OTHER_0123456789abcdef0123"

static struct cred_set *creds(void)
{
    struct cred_set *s = cred_set_new();
    char why[256];
    const char *hosts[] = {"api.test", "127.0.0.2"};
    CHECK_EQ_INT(cred_set_add(s, "TOKEN", PH, VAL, hosts, 2, why, sizeof why), 0);
    const char *other[] = {"elsewhere.test"};
    CHECK_EQ_INT(cred_set_add(s, "OTHER", PH_OTHER, "other_value", other, 1, why, sizeof why), 0);
    return s;
}

/* ---- the real server: answers one request with what it received ---- */

struct server {
    int fd;
    SSL_CTX *ctx;
    char got[4096];
    size_t got_len;
};

static void *serve(void *arg)
{
    struct server *s = arg;
    SSL *ssl = SSL_new(s->ctx);
    SSL_set_fd(ssl, s->fd);
    if (SSL_accept(ssl) == 1) {
        size_t n = 0;
        /* read until the end of the head */
        while (s->got_len < sizeof s->got - 1 &&
               SSL_read_ex(ssl, s->got + s->got_len, sizeof s->got - 1 - s->got_len, &n)) {
            s->got_len += n;
            s->got[s->got_len] = '\0';
            if (strstr(s->got, "\r\n\r\n"))
                break;
        }
        char reply[256];
        int len =
            snprintf(reply, sizeof reply,
                     "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
        size_t w;
        SSL_write_ex(ssl, reply, (size_t)len, &w);
        SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    close(s->fd);
    return NULL;
}

/* A CA for the server, its PEM in a file (the test's network.upstream_ca), and a server context
 * with a leaf for name. */
static struct tls_ca *server_ca(const char *name, char *ca_path, size_t n, SSL_CTX **ctx)
{
    char why[256];
    struct tls_ca *ca = tls_ca_new("test upstream CA", 2, why, sizeof why);
    CHECK(ca != NULL);
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(ca_path, n, "%s/tls-term-%d.pem", tmp, (int)getpid());
    FILE *f = fopen(ca_path, "w");
    CHECK(f != NULL);
    fputs(tls_ca_cert_pem(ca), f);
    fclose(f);
    struct tls_mint *m = tls_mint_new(ca, 4, why, sizeof why);
    *ctx = tls_mint_server_ctx(m, name, why, sizeof why);
    CHECK(*ctx != NULL);
    tls_mint_free(m); /* the context holds its certificate and key */
    return ca;
}

/* The client's side: read the proxy's answer to its CONNECT (up to the blank line) into head. */
static void read_head(int fd, char *head, size_t n)
{
    size_t len = 0;
    while (len < n - 1) {
        ssize_t r = read(fd, head + len, 1);
        if (r <= 0)
            break;
        len++;
        head[len] = '\0';
        if (len >= 4 && memcmp(head + len - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    head[len] = '\0';
}

static void read_rest(int fd, char *buf, size_t n)
{
    size_t len = 0;
    ssize_t r;
    while (len < n - 1 && (r = read(fd, buf + len, n - 1 - len)) > 0)
        len += (size_t)r;
    buf[len] = '\0';
}

/* Run one client exchange through a terminator to a server presenting srv_name's leaf. */
struct run {
    char head[1024];   /* the proxy's answer to CONNECT */
    char reply[4096];  /* what came back over TLS (or after the head, unencrypted) */
    char server[4096]; /* what the server received */
    bool client_tls;   /* the client's handshake succeeded */
};

/* The client's TLS over fd, trusting only the terminator's CA: request sent, reply read. */
struct client {
    int fd;
    const char *host, *request, *ca_pem;
    struct run *out;
};

static void *client_tls(void *arg)
{
    struct client *cl = arg;
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    BIO *pem = BIO_new_mem_buf(cl->ca_pem, -1);
    X509 *ca = PEM_read_bio_X509(pem, NULL, NULL, NULL);
    X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), ca);
    X509_free(ca);
    BIO_free(pem);
    SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
    SSL *ssl = SSL_new(cctx);
    SSL_set_fd(ssl, cl->fd);
    if (strchr(cl->host, '.') && !(cl->host[0] >= '0' && cl->host[0] <= '9')) {
        SSL_set_tlsext_host_name(ssl, cl->host);
        SSL_set1_host(ssl, cl->host);
    } else {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), cl->host);
    }
    if (SSL_connect(ssl) == 1) {
        cl->out->client_tls = true;
        size_t w, n, len = 0;
        SSL_write_ex(ssl, cl->request, strlen(cl->request), &w);
        while (len < sizeof cl->out->reply - 1 &&
               SSL_read_ex(ssl, cl->out->reply + len, sizeof cl->out->reply - 1 - len, &n))
            len += n;
        cl->out->reply[len] = '\0';
    }
    SSL_free(ssl);
    SSL_CTX_free(cctx);
    return NULL;
}

static void run_one_as(const char *host, const char *srv_name, bool give_ca, const char *request,
                       enum tls_greeting greet, struct run *out)
{
    memset(out, 0, sizeof *out);
    signal(SIGPIPE, SIG_IGN); /* the server thread may write to a client that left */
    char ca_path[512], why[512] = "";
    SSL_CTX *srv_ctx;
    struct tls_ca *sca = server_ca(srv_name, ca_path, sizeof ca_path, &srv_ctx);
    struct cred_set *set = creds();
    struct tls_terminator *t =
        tls_terminator_new(give_ca ? ca_path : NULL, false, set, why, sizeof why);
    if (!t)
        fprintf(stderr, "  %s\n", why);
    CHECK(t != NULL);

    int cp[2], up[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, cp) == 0);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, up) == 0);
    struct server srv = {.fd = up[1], .ctx = srv_ctx};
    pthread_t th, cth;
    CHECK(pthread_create(&th, NULL, serve, &srv) == 0);
    int fd = cp[0];
    struct client cl = {fd, host, request, tls_terminator_ca_pem(t), out};
    if (greet == TLS_GREET_NONE) {
        /* a transparent client: its ClientHello is under way before the terminator starts,
         * which gets the first 60 bytes of it read already and the rest on the socket */
        CHECK(pthread_create(&cth, NULL, client_tls, &cl) == 0);
        char pre[60];
        size_t got = 0;
        while (got < sizeof pre) {
            ssize_t r = read(cp[1], pre + got, sizeof pre - got);
            CHECK(r > 0);
            got += (size_t)r;
        }
        CHECK_EQ_INT(pre[0], 0x16);
        CHECK(tls_terminate_start(t, cp[1], up[0], host, 443, greet, pre, sizeof pre) == 0);
        pthread_join(cth, NULL);
        snprintf(out->head, sizeof out->head, "(transparent)");
    } else {
        CHECK(tls_terminate_start(t, cp[1], up[0], host, 443, greet, NULL, 0) == 0);
        bool up_ok;
        if (greet == TLS_GREET_SOCKS) {
            unsigned char r[10] = {0};
            CHECK(read(fd, r, sizeof r) == (ssize_t)sizeof r);
            snprintf(out->head, sizeof out->head, "SOCKS %u", r[1]);
            up_ok = r[1] == 0;
        } else {
            read_head(fd, out->head, sizeof out->head);
            up_ok = strncmp(out->head, "HTTP/1.1 200", 12) == 0;
        }
        if (up_ok)
            client_tls(&cl);
        else
            read_rest(fd, out->reply, sizeof out->reply);
    }
    close(fd);
    pthread_join(th, NULL);
    memcpy(out->server, srv.got, srv.got_len + 1);
    tls_terminator_free(t);
    cred_set_free(set);
    SSL_CTX_free(srv_ctx);
    tls_ca_free(sca);
    unlink(ca_path);
}

static void run_one(const char *host, const char *srv_name, bool give_ca, const char *request,
                    struct run *out)
{
    run_one_as(host, srv_name, give_ca, request, TLS_GREET_HTTP, out);
}

static void test_socks_and_transparent(void)
{
    struct run r;
    const char *req = "GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " PH "\r\n\r\n";
    run_one_as("api.test", "api.test", true, req, TLS_GREET_SOCKS, &r);
    CHECK_STR_CONTAINS(r.head, "SOCKS 0");
    CHECK(r.client_tls);
    CHECK_STR_CONTAINS(r.server, "Authorization: Bearer " VAL "\r\n");
    CHECK_STR_CONTAINS(r.reply, "hello");
    run_one_as("api.test", "other.test", true, req, TLS_GREET_SOCKS, &r);
    CHECK_STR_CONTAINS(r.head, "SOCKS 5");
    CHECK_EQ_INT(strlen(r.server), 0);
    run_one_as("api.test", "api.test", true, req, TLS_GREET_NONE, &r);
    CHECK(r.client_tls);
    CHECK_STR_CONTAINS(r.server, "Authorization: Bearer " VAL "\r\n");
    CHECK_STR_CONTAINS(r.reply, "hello");
}

static void test_terminated_and_rewritten(void)
{
    struct run r;
    run_one("api.test", "api.test", true,
            "GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " PH "\r\n\r\n", &r);
    CHECK_STR_CONTAINS(r.head, "200 Connection established");
    CHECK(r.client_tls);
    CHECK_STR_CONTAINS(r.server, "Authorization: Bearer " VAL "\r\n");
    CHECK(strstr(r.server, PH) == NULL);
    CHECK_STR_CONTAINS(r.reply, "HTTP/1.1 200 OK");
    CHECK_STR_CONTAINS(r.reply, "hello");
}

static void test_ip_host(void)
{
    struct run r;
    run_one("127.0.0.2", "127.0.0.2", true, "GET / HTTP/1.1\r\nHost: 127.0.0.2\r\n\r\n", &r);
    CHECK_STR_CONTAINS(r.head, "200 Connection established");
    CHECK(r.client_tls);
    CHECK_STR_CONTAINS(r.reply, "hello");
}

static void test_wrong_name_refused(void)
{
    struct run r;
    run_one("api.test", "other.test", true, "GET / HTTP/1.1\r\n\r\n", &r);
    CHECK_STR_CONTAINS(r.head, "HTTP/1.1 502");
    CHECK_STR_CONTAINS(r.head, "X-Cordon-Error: upstream-certificate");
    CHECK_STR_CONTAINS(r.reply, "cordon: refused api.test:443: its certificate does not verify");
    CHECK_STR_CONTAINS(r.reply, "mismatch");
    CHECK(strchr(r.reply, '\n') == r.reply + strlen(r.reply) - 1); /* one line */
    CHECK_EQ_INT(strlen(r.server), 0);
}

static void test_untrusted_ca_refused(void)
{
    struct run r;
    run_one("api.test", "api.test", false, "GET / HTTP/1.1\r\n\r\n", &r);
    CHECK_STR_CONTAINS(r.head, "HTTP/1.1 502");
    CHECK_STR_CONTAINS(r.reply, "certificate does not verify");
    CHECK_EQ_INT(strlen(r.server), 0);
}

static void test_rewriter_refusal(void)
{
    struct run r;
    run_one("api.test", "api.test", true,
            "GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer " PH_OTHER "\r\n\r\n", &r);
    CHECK(r.client_tls);
    CHECK_STR_CONTAINS(r.reply, "HTTP/1.1 403");
    CHECK_STR_CONTAINS(r.reply, "X-Cordon-Error: credential-refused");
    CHECK_STR_CONTAINS(r.reply, "OTHER");
    CHECK(strstr(r.server, PH_OTHER) == NULL && strstr(r.server, "other_value") == NULL);
}

/* A credential's host on another port than 443, by a client that does not start TLS (ssh
 * through `cordon nc`): relayed as it is, both ways, after the "200". */
static void test_not_tls_relayed(void)
{
    signal(SIGPIPE, SIG_IGN);
    char why[512] = "";
    struct cred_set *set = creds();
    struct tls_terminator *t = tls_terminator_new(NULL, false, set, why, sizeof why);
    CHECK(t != NULL);
    int cp[2], up[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, cp) == 0);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, up) == 0);
    CHECK(tls_terminate_start(t, cp[1], up[0], "api.test", 22, TLS_GREET_HTTP, NULL, 0) == 0);
    char head[256];
    read_head(cp[0], head, sizeof head);
    CHECK_STR_CONTAINS(head, "200 Connection established");
    static const char hello[] = "SSH-2.0-client\r\n", banner[] = "SSH-2.0-server\r\n";
    CHECK(write(cp[0], hello, sizeof hello - 1) == (ssize_t)(sizeof hello - 1));
    char got[64] = "";
    size_t n = 0;
    while (n < sizeof hello - 1) {
        ssize_t r = read(up[1], got + n, sizeof got - 1 - n);
        CHECK(r > 0);
        n += (size_t)r;
    }
    CHECK(memcmp(got, hello, sizeof hello - 1) == 0);
    CHECK(write(up[1], banner, sizeof banner - 1) == (ssize_t)(sizeof banner - 1));
    close(up[1]);
    char back[64];
    read_rest(cp[0], back, sizeof back);
    CHECK(strcmp(back, banner) == 0);
    close(cp[0]);
    tls_terminator_free(t);
    cred_set_free(set);
}

static void test_bad_upstream_ca(void)
{
    char why[512] = "";
    CHECK(tls_terminator_new("/nonexistent/ca.pem", false, NULL, why, sizeof why) == NULL);
    CHECK_STR_CONTAINS(why, "network.upstream_ca: /nonexistent/ca.pem");
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[512];
    snprintf(path, sizeof path, "%s/tls-notpem-%d", tmp, (int)getpid());
    FILE *f = fopen(path, "w");
    fputs("not a certificate\n", f);
    fclose(f);
    CHECK(tls_terminator_new(path, false, NULL, why, sizeof why) == NULL);
    CHECK_STR_CONTAINS(why, "no PEM certificate");
    unlink(path);
}

TEST_MAIN({"terminated_and_rewritten", test_terminated_and_rewritten}, {"ip_host", test_ip_host},
          {"wrong_name_refused", test_wrong_name_refused},
          {"untrusted_ca_refused", test_untrusted_ca_refused},
          {"rewriter_refusal", test_rewriter_refusal},
          {"socks_and_transparent", test_socks_and_transparent},
          {"not_tls_relayed", test_not_tls_relayed}, {"bad_upstream_ca", test_bad_upstream_ca})
