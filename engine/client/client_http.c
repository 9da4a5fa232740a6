/* client_http.c — see client_http.h.
 *
 * Why curl makes the only connection: a connect() probe before curl would cost the session a
 * second connection per command, and libcurl 7.88 (Debian 12) cannot be handed a socket that
 * is already connected (it ignores CURL_SOCKOPT_ALREADY_CONNECTED and fails with EISCONN). The
 * probe's precision is kept: curl reports the connect's errno (CURLINFO_OS_ERRNO), and a
 * failed connect has sent nothing, so ENOENT / ECONNREFUSED mean exactly what a probe would
 * have found. */
#include "client/client_http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void chttp_global_init(void)
{
    /* No TLS or Windows sockets to set up for a Unix socket. */
    curl_global_init(CURL_GLOBAL_NOTHING);
}

void chttp_global_cleanup(void) { curl_global_cleanup(); }

static void body_append(struct chttp *h, const char *data, size_t len)
{
    if (h->body_len + len + 1 > h->body_cap) {
        size_t cap = h->body_cap ? h->body_cap : 1024;
        while (cap < h->body_len + len + 1)
            cap *= 2;
        h->body = xrealloc(h->body, cap);
        h->body_cap = cap;
    }
    memcpy(h->body + h->body_len, data, len);
    h->body_len += len;
    h->body[h->body_len] = '\0';
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ud)
{
    struct chttp *h = ud;
    size_t len = size * nmemb;
    if (h->status == 0)
        curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &h->status);
    if (h->sink && chttp_ok(h)) {
        if (h->sink(h->sink_ctx, data, len) < 0) {
            h->sink_stopped = true;
            return 0; /* anything but len stops the transfer */
        }
        return len;
    }
    body_append(h, data, len);
    return len;
}

int chttp_open(struct chttp *h, const char *cmd, const char *name, bool quiet_missing)
{
    memset(h, 0, sizeof *h);
    h->cmd = cmd;
    h->name = name;
    h->quiet_missing = quiet_missing;
    if (csock_path(name, h->path, sizeof h->path) < 0) {
        fprintf(stderr, "cordon: %s: the socket path of session '%s' is too long for a Unix socket"
                        " (set XDG_RUNTIME_DIR to a shorter directory)\n", cmd, name);
        return 1;
    }
    h->curl = curl_easy_init();
    if (!h->curl) {
        fprintf(stderr, "cordon: %s: cannot set up libcurl\n", cmd);
        return 1;
    }
    CURL *c = h->curl;
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, h->path);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
    /* Leave signal dispositions alone: a closed stdout should end us with SIGPIPE as it
     * would end any command in a pipeline. */
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROXY, ""); /* no *_proxy environment look-ups */
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    return 0;
}

int chttp_request(struct chttp *h, const char *method, const char *path, const char *body,
                  size_t body_len, chttp_sink sink, void *sink_ctx)
{
    char url[2048];
    struct curl_slist *headers = NULL;
    int rc = -1;
    CURL *c = h->curl;
    h->status = 0;
    h->sink = sink;
    h->sink_ctx = sink_ctx;
    h->sink_stopped = false;
    h->missing = false;
    h->connect_errno = 0;
    h->body_len = 0;
    if (h->body)
        h->body[0] = '\0';
    int n = snprintf(url, sizeof url, "http://cordon%s", path);
    if (n < 0 || (size_t)n >= sizeof url) {
        h->result = CURLE_URL_MALFORMAT;
        return -1;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? body_len : 0));
        /* JSON, and no "Expect: 100-continue" round trip for larger bodies; without a body
         * no Content-Type at all (curl would call it a form). */
        headers = curl_slist_append(NULL, body ? "Expect:" : "Content-Type:");
        if (headers && body) {
            struct curl_slist *more = curl_slist_append(headers, "Content-Type: application/json");
            if (!more) {
                curl_slist_free_all(headers);
                headers = NULL;
            }
        }
        if (!headers) {
            h->result = CURLE_OUT_OF_MEMORY;
            goto out;
        }
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    h->result = curl_easy_perform(c);
    if (h->status == 0)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h->status);
    rc = h->result == CURLE_OK ? 0 : -1;
    if (h->result == CURLE_COULDNT_CONNECT) {
        long err = 0;
        curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &err);
        h->connect_errno = (int)err;
        if (err == ECONNREFUSED)
            csock_remove_stale(h->path);
        h->missing = err == ENOENT || err == ECONNREFUSED;
    }
out:
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(headers);
    return rc;
}

/* What went wrong, in words: the libcurl built here has no message table of its own
 * (third_party/curl/build.sh disables verbose strings). */
static const char *failure_text(CURLcode code)
{
    switch ((int)code) {
    case CURLE_GOT_NOTHING: return "the session closed the connection without answering";
    case CURLE_RECV_ERROR: return "receiving from the session failed (the connection was reset)";
    case CURLE_SEND_ERROR: return "sending to the session failed (the connection was reset)";
    case CURLE_PARTIAL_FILE: return "the answer was cut short";
    case CURLE_WRITE_ERROR: return "writing the output failed";
    case CURLE_OPERATION_TIMEDOUT: return "the session did not answer in time";
    case CURLE_OUT_OF_MEMORY: return "out of memory";
    case CURLE_COULDNT_CONNECT: return "cannot connect";
    default: return "the HTTP exchange failed";
    }
}

int chttp_lost(const struct chttp *h)
{
    if (h->missing) {
        if (!h->quiet_missing)
            fprintf(stderr, "cordon: no session named '%s' (cordon session list shows the running"
                            " ones)\n", h->name);
        return 1;
    }
    if (h->connect_errno) {
        fprintf(stderr, "cordon: %s: cannot connect to session '%s' at %s: %s\n", h->cmd, h->name,
                h->path, strerror(h->connect_errno));
        return 1;
    }
    fprintf(stderr, "cordon: %s: lost the connection to session '%s': %s (curl error %d)\n", h->cmd,
            h->name, failure_text(h->result), (int)h->result);
    return 1;
}

bool chttp_ok(const struct chttp *h) { return h->status >= 200 && h->status < 300; }

char *chttp_escape(struct chttp *h, const char *s) { return curl_easy_escape(h->curl, s, 0); }

void chttp_close(struct chttp *h)
{
    if (h->curl)
        curl_easy_cleanup(h->curl);
    h->curl = NULL;
    free(h->body);
    h->body = NULL;
}
