/* test_mcp_wire.c — the MCP server's JSON-RPC side: a parsed value written back out is the
 * same value; request ids as JSON text; messages on stdout one whole line each; a request of
 * ours answered from another thread (as the stdin reader does) or not in time. */
#include "test.h"

#include <pthread.h>

#include "base/json_read.h"
#include "mcp/mcp_wire.h"

static struct json_value *parse(const char *s)
{
    char err[128];
    struct json_value *v = json_parse(s, strlen(s), err, sizeof err);
    if (!v) {
        fprintf(stderr, "  parse %s: %s\n", s, err);
        _exit(1);
    }
    return v;
}

static void round_trip(const char *in, const char *want)
{
    struct json_value *v = parse(in);
    struct json_buf b = {0};
    mcp_write_value(&b, v);
    if (strcmp(b.data, want) != 0) {
        fprintf(stderr, "  %s -> %s, expected %s\n", in, b.data, want);
        _exit(1);
    }
    json_buf_free(&b);
    json_free(v);
}

static void test_write_value(void)
{
    round_trip("{\"a\": [1, 2.5, -3e2, true, false, null], \"b\": \"x\\n\\u00e9\\\"\"}",
               "{\"a\":[1,2.5,-300,true,false,null],\"b\":\"x\\n\xc3\xa9\\\"\"}");
    round_trip("[]", "[]");
    round_trip("{}", "{}");
    round_trip("0.1", "0.1");
    round_trip("9007199254740993", "9007199254740992");
}

static void test_id_text(void)
{
    struct json_value *v = parse("{\"n\": 7, \"s\": \"a\\\"b\", \"z\": null, \"o\": {}}");
    char *n = mcp_id_text(json_get(v, "n")), *s = mcp_id_text(json_get(v, "s"));
    CHECK(strcmp(n, "7") == 0);
    CHECK(strcmp(s, "\"a\\\"b\"") == 0);
    CHECK(mcp_id_text(json_get(v, "z")) == NULL);
    CHECK(mcp_id_text(json_get(v, "o")) == NULL);
    CHECK(mcp_id_text(NULL) == NULL);
    free(n);
    free(s);
    json_free(v);
}

/* stdout replaced by a pipe; returns its read end. */
static int capture_stdout(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(dup2(p[1], STDOUT_FILENO) == STDOUT_FILENO);
    close(p[1]);
    return p[0];
}

static void test_send_lines(void)
{
    int r = capture_stdout();
    mcp_send_error("3", MCP_METHOD_NOT_FOUND, "no \"such\"\nmethod");
    mcp_send_error(NULL, MCP_PARSE_ERROR, "bad");
    mcp_send_result("\"x\"", "{}", 2);
    char buf[512] = "";
    ssize_t n = read(r, buf, sizeof buf - 1);
    CHECK(n > 0);
    CHECK(
        strcmp(buf,
               "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":"
               "\"no \\\"such\\\"\\nmethod\"}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"bad\"}}\n"
               "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}\n") == 0);
}

/* Plays the client: reads our request from the pipe and answers it through mcp_answer. */
static void *client(void *arg)
{
    int r = *(int *)arg;
    char buf[1024];
    size_t len = 0;
    while (len == 0 || buf[len - 1] != '\n') {
        ssize_t n = read(r, buf + len, sizeof buf - 1 - len);
        if (n <= 0)
            _exit(1);
        len += (size_t)n;
    }
    struct json_value *req = parse((buf[len - 1] = '\0', buf));
    const struct json_value *id = json_get(req, "id");
    CHECK(strcmp(json_get(req, "method")->str, "elicitation/create") == 0);
    char answer[200];
    snprintf(answer, sizeof answer,
             "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"action\":\"accept\"}}",
             (long long)id->number);
    json_free(req);
    mcp_answer(parse(answer));
    return NULL;
}

static void test_request_answered(void)
{
    int r = capture_stdout();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, client, &r) == 0);
    struct json_value *res = NULL;
    char err[128];
    CHECK(mcp_request("elicitation/create", "{\"message\":\"m\"}", 0, 10, &res, err, sizeof err) ==
          0);
    CHECK(strcmp(json_get(json_get(res, "result"), "action")->str, "accept") == 0);
    json_free(res);
    pthread_join(t, NULL);
}

static void test_request_unanswered(void)
{
    int r = capture_stdout();
    struct json_value *res = NULL;
    char err[128];
    CHECK(mcp_request("elicitation/create", "{}", 0, 0.2, &res, err, sizeof err) < 0);
    CHECK(res == NULL);
    CHECK_STR_CONTAINS(err, "no answer in time");
    char buf[1024] = "";
    CHECK(read(r, buf, sizeof buf - 1) > 0);
    CHECK_STR_CONTAINS(buf, "\"method\":\"elicitation/create\"");
    /* the client is told nobody waits for the answer any more */
    if (!strstr(buf, "notifications/cancelled")) {
        memset(buf, 0, sizeof buf);
        CHECK(read(r, buf, sizeof buf - 1) > 0);
    }
    CHECK_STR_CONTAINS(buf, "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1,");
    /* a late answer to it is dropped, not handed to anyone */
    mcp_answer(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"));
    close(r);
}

static void *canceller(void *arg)
{
    (void)arg;
    /* until the request is registered (it is, before it is written) */
    while (!mcp_request_cancel(42, "settled elsewhere"))
        usleep(1000);
    return NULL;
}

static void test_request_cancelled(void)
{
    int r = capture_stdout();
    pthread_t t;
    CHECK(!mcp_request_cancel(42, "nobody waits"));
    CHECK(pthread_create(&t, NULL, canceller, NULL) == 0);
    struct json_value *res = NULL;
    char err[128];
    CHECK(mcp_request("elicitation/create", "{}", 42, 30, &res, err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "settled elsewhere");
    pthread_join(t, NULL);
    char buf[1024] = "";
    size_t len = 0;
    while (!strstr(buf, "notifications/cancelled")) {
        ssize_t n = read(r, buf + len, sizeof buf - 1 - len);
        CHECK(n > 0);
        len += (size_t)n;
    }
    CHECK_STR_CONTAINS(buf, "\"reason\":\"settled elsewhere\"");
}

TEST_MAIN({"write_value", test_write_value}, {"id_text", test_id_text},
          {"send_lines", test_send_lines}, {"request_answered", test_request_answered},
          {"request_unanswered", test_request_unanswered},
          {"request_cancelled", test_request_cancelled})
