/* test_client_args.c — the pure parts of cordon-client: exec's arguments (options before "--"
 * and after the shell string, words joined), session names and socket paths, the request body,
 * PIDs, and the NDJSON stream (lines cut anywhere, events, base64). No session needed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_exec.h"
#include "client/client_jobs.h"
#include "client/client_ndjson.h"
#include "base/session_socket.h"
#include "test.h"
#include "base/util.h"

#define ARGV(...) ((char **)(const char *[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)))
#define PARSE(a, err, ...) \
    cexec_parse_args(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (a), err, sizeof err)

static void test_exec_plain(void)
{
    struct cexec_args a;
    char err[256];
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--", "npm test"), CEXEC_RUN);
    CHECK(strcmp(a.name, "web") == 0);
    CHECK(strcmp(a.command, "npm test") == 0);
    CHECK(!a.background && !a.json && !a.has_timeout && !a.turn);
    cexec_args_free(&a);
}

static void test_exec_options_before_and_after(void)
{
    struct cexec_args a;
    char err[256];
    /* the issue's own example: an option after the shell string */
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--", "npm run dev", "--background"), CEXEC_RUN);
    CHECK(a.background);
    CHECK(strcmp(a.command, "npm run dev") == 0);
    cexec_args_free(&a);

    CHECK_EQ_INT(PARSE(&a, err, "exec", "--turn", "t-1", "web", "--timeout=2.5", "--", "make",
                       "--json", "--turn=t-2", "--timeout", "3"),
                 CEXEC_RUN);
    CHECK(strcmp(a.name, "web") == 0);
    CHECK(strcmp(a.command, "make") == 0);
    CHECK(a.json && a.has_timeout && a.timeout == 3.0);
    CHECK(strcmp(a.turn, "t-2") == 0); /* the last one counts */
    cexec_args_free(&a);
}

static void test_exec_words_joined(void)
{
    struct cexec_args a;
    char err[256];
    CHECK_EQ_INT(
        PARSE(&a, err, "exec", "web", "--", "ls", "-la", "--background", "/tmp", "--", "x y"),
        CEXEC_RUN);
    CHECK(strcmp(a.command, "ls -la /tmp -- x y") == 0);
    CHECK(a.background);
    cexec_args_free(&a);
    /* the first word after "--" is the shell string even when it looks like an option */
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--", "--json"), CEXEC_RUN);
    CHECK(strcmp(a.command, "--json") == 0 && !a.json);
    cexec_args_free(&a);
}

static void test_exec_usage_errors(void)
{
    struct cexec_args a;
    char err[256];
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "true"), CEXEC_USAGE);
    CHECK_STR_CONTAINS(err, "before '--'");
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web"), CEXEC_USAGE);
    CHECK_STR_CONTAINS(err, "missing '--'");
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--"), CEXEC_USAGE);
    CHECK_STR_CONTAINS(err, "empty");
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--", ""), CEXEC_USAGE);
    CHECK_STR_CONTAINS(err, "empty");
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "--", "true"), CEXEC_USAGE);
    CHECK_STR_CONTAINS(err, "missing NAME");
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "x/y", "--", "true"), CEXEC_USAGE);
    CHECK(strcmp(err, "invalid session name 'x/y' (letters, digits, '_', '.', '-'; at most 64)") ==
          0);
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--timeout", "0", "--", "true"), CEXEC_USAGE);
    CHECK_STR_CONTAINS(err, "--timeout '0'");
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--", "true", "--timeout"), CEXEC_USAGE);
    CHECK_STR_CONTAINS(err, "needs a value");
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--background", "--", "true", "--timeout=1"),
                 CEXEC_USAGE);
    CHECK_STR_CONTAINS(err, "foreground");
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--frob", "--", "true"), CEXEC_USAGE);
    CHECK_STR_CONTAINS(err, "unknown option '--frob'");
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--turn=", "--", "true"), CEXEC_USAGE);
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "--help"), CEXEC_HELP);
    cexec_args_free(&a);
}

static void test_timeout_values(void)
{
    double v;
    CHECK(cexec_parse_timeout("30", &v) && v == 30.0);
    CHECK(cexec_parse_timeout("0.25", &v) && v == 0.25);
    CHECK(cexec_parse_timeout(".5", &v) && v == 0.5);
    CHECK(cexec_parse_timeout("1e2", &v) && v == 100.0);
    const char *bad[] = {"0",   "0.0", "-1",  "+1",  " 1",    "1s",
                         "abc", "",    "inf", "nan", "1e999", "0x10"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        if (cexec_parse_timeout(bad[i], &v)) {
            fprintf(stderr, "  accepted '%s'\n", bad[i]);
            CHECK(0);
        }
    }
    char s[40];
    cexec_format_seconds(30, s, sizeof s);
    CHECK(strcmp(s, "30") == 0);
    cexec_format_seconds(0.1, s, sizeof s);
    CHECK(strcmp(s, "0.1") == 0);
    cexec_format_seconds(1.0 / 3, s, sizeof s);
    CHECK(strtod(s, NULL) == 1.0 / 3);
}

static void test_exec_body(void)
{
    struct cexec_args a;
    char err[256];
    size_t len;
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--timeout", "1.5", "--turn", "t\"7", "--",
                       "echo \"hi\"\n\tdone"),
                 CEXEC_RUN);
    char *body = cexec_body(&a, &len);
    CHECK(
        strcmp(body,
               "{\"command\":\"echo \\\"hi\\\"\\n\\tdone\",\"timeout\":1.5,\"turn\":\"t\\\"7\"}") ==
        0);
    CHECK_EQ_INT(len, strlen(body));
    free(body);
    cexec_args_free(&a);
    CHECK_EQ_INT(PARSE(&a, err, "exec", "web", "--background", "--", "x"), CEXEC_RUN);
    body = cexec_body(&a, &len);
    CHECK(strcmp(body, "{\"command\":\"x\",\"background\":true}") == 0);
    free(body);
    cexec_args_free(&a);
}

static void test_session_names(void)
{
    CHECK(csock_name_valid("web"));
    CHECK(csock_name_valid("a"));
    CHECK(csock_name_valid("My_proj.v2-x"));
    CHECK(csock_name_valid("0abc"));
    char max[65];
    memset(max, 'n', 64);
    max[64] = '\0';
    CHECK(csock_name_valid(max));
    char over[66];
    memset(over, 'n', 65);
    over[65] = '\0';
    CHECK(!csock_name_valid(over));
    const char *bad[] = {"", ".hidden", "-x", "x/y", "a b", "..", "é", "a\n", "web;rm"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        CHECK(!csock_name_valid(bad[i]));
}

static void test_socket_paths(void)
{
    char p[CSOCK_PATH_MAX];
    CHECK_EQ_INT(csock_path_for("/run/user/1000", 1000, "web", p, sizeof p), 0);
    CHECK(strcmp(p, "/run/user/1000/cordon/web.sock") == 0);
    CHECK_EQ_INT(csock_path_for("", 1000, "web", p, sizeof p), 0);
    CHECK(strcmp(p, "/tmp/cordon-1000/web.sock") == 0);
    CHECK_EQ_INT(csock_path_for(NULL, 0, "web", p, sizeof p), 0);
    CHECK(strcmp(p, "/tmp/cordon-0/web.sock") == 0);
    CHECK_EQ_INT(csock_dir_for("/x", 5, p, sizeof p), 0);
    CHECK(strcmp(p, "/x/cordon") == 0);
    /* a path that does not fit in sun_path is refused, not cut */
    char longdir[100];
    memset(longdir, 'd', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[sizeof longdir - 1] = '\0';
    CHECK(csock_path_for(longdir, 0, "web", p, sizeof p) < 0);
}

static void test_pids(void)
{
    long pid;
    CHECK(cjobs_parse_pid("12", &pid) && pid == 12);
    CHECK(cjobs_parse_pid("2147483647", &pid) && pid == 2147483647L);
    const char *bad[] = {"",  "0", "-1", "+1", "1x", "x", "2147483648", "99999999999999999999",
                         " 1"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        CHECK(!cjobs_parse_pid(bad[i], &pid));
}

static void test_command_line(void)
{
    char *s = cjobs_command_line("sleep 1\necho \"done\"\t\x01");
    CHECK(strcmp(s, "sleep 1\\necho \"done\"\\t\\x01") == 0);
    free(s);
}

/* Collects lines as "[line]" for comparison. */
struct collected {
    char buf[1024];
    int stop_at; /* stop (return -7) at this line number, 1-based; 0 never */
    int n;
};

static int collect(void *ctx, const char *line, size_t len)
{
    struct collected *c = ctx;
    size_t used = strlen(c->buf);
    snprintf(c->buf + used, sizeof c->buf - used, "[%.*s]", (int)len, line);
    return ++c->n == c->stop_at ? -7 : 0;
}

static void test_lines_split_anywhere(void)
{
    const char *stream = "{\"a\":1}\n{\"b\":2}\r\n\n{\"c\":\"x\\ny\"}\nlast";
    size_t n = strlen(stream);
    /* every way of cutting the stream in two pieces, and byte by byte */
    for (size_t cut = 0; cut <= n; cut++) {
        struct ndjson_lines l = {0};
        struct collected c = {{0}, 0, 0};
        CHECK_EQ_INT(ndjson_feed(&l, stream, cut, collect, &c), 0);
        CHECK_EQ_INT(ndjson_feed(&l, stream + cut, n - cut, collect, &c), 0);
        CHECK_EQ_INT(ndjson_finish(&l, collect, &c), 0);
        CHECK(strcmp(c.buf, "[{\"a\":1}][{\"b\":2}][{\"c\":\"x\\ny\"}][last]") == 0);
        ndjson_lines_free(&l);
    }
    struct ndjson_lines l = {0};
    struct collected c = {{0}, 0, 0};
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_INT(ndjson_feed(&l, stream + i, 1, collect, &c), 0);
    CHECK_EQ_INT(ndjson_finish(&l, collect, &c), 0);
    CHECK(strcmp(c.buf, "[{\"a\":1}][{\"b\":2}][{\"c\":\"x\\ny\"}][last]") == 0);
    ndjson_lines_free(&l);
}

static void test_lines_stop(void)
{
    struct ndjson_lines l = {0};
    struct collected c = {{0}, 2, 0};
    CHECK_EQ_INT(ndjson_feed(&l, "a\nb\nc\n", 6, collect, &c), -7);
    CHECK(strcmp(c.buf, "[a][b]") == 0);
    ndjson_lines_free(&l);
}

static void test_base64(void)
{
    unsigned char out[16];
    CHECK_EQ_INT(ndjson_base64_decode("/w==", 4, out), 1);
    CHECK(out[0] == 0xff);
    CHECK_EQ_INT(ndjson_base64_decode("aGVsbG8=", 8, out), 5);
    CHECK(memcmp(out, "hello", 5) == 0);
    CHECK_EQ_INT(ndjson_base64_decode("aGVsbG8", 7, out), 5); /* padding optional */
    CHECK_EQ_INT(ndjson_base64_decode("AAEC", 4, out), 3);
    CHECK(out[0] == 0 && out[1] == 1 && out[2] == 2);
    CHECK_EQ_INT(ndjson_base64_decode("", 0, out), 0);
    CHECK_EQ_INT(ndjson_base64_decode("a", 1, out), -1);
    CHECK_EQ_INT(ndjson_base64_decode("a$==", 4, out), -1);
    CHECK_EQ_INT(ndjson_base64_decode("/w==AA", 6, out), -1);
    CHECK_EQ_INT(ndjson_base64_decode("/w=", 3, out), -1);
}

static int decode(const char *line, struct ndjson_event *ev, char *err, size_t errlen)
{
    return ndjson_decode(line, strlen(line), ev, err, errlen);
}

static void test_events(void)
{
    struct ndjson_event ev;
    char err[160];
    CHECK_EQ_INT(decode("{\"event\":\"started\",\"pid\":12}", &ev, err, sizeof err), 0);
    CHECK(ev.kind == NDJSON_STARTED && ev.pid == 12);
    ndjson_event_free(&ev);

    CHECK_EQ_INT(decode("{\"event\":\"output\",\"stream\":\"stdout\",\"data\":\"hi\\u0000\\n\"}",
                        &ev, err, sizeof err),
                 0);
    CHECK(ev.kind == NDJSON_OUTPUT && ev.fd == 1 && ev.len == 4 &&
          memcmp(ev.data, "hi\0\n", 4) == 0);
    ndjson_event_free(&ev);

    CHECK_EQ_INT(decode("{\"event\":\"output\",\"stream\":\"stderr\",\"data_base64\":\"/w==\"}",
                        &ev, err, sizeof err),
                 0);
    CHECK(ev.kind == NDJSON_OUTPUT && ev.fd == 2 && ev.len == 1 &&
          (unsigned char)ev.data[0] == 0xff);
    ndjson_event_free(&ev);

    CHECK_EQ_INT(
        decode("{\"event\":\"exit\",\"pid\":12,\"exit_code\":143,\"signal\":15,\"timed_out\":true,"
               "\"stopped\":false,\"duration_ms\":3.1}",
               &ev, err, sizeof err),
        0);
    CHECK(ev.kind == NDJSON_EXIT && ev.exit_code == 143 && ev.signal == 15 && ev.timed_out &&
          !ev.stopped);
    CHECK(fabs(ev.duration_ms - 3.1) < 1e-9);
    ndjson_event_free(&ev);

    CHECK_EQ_INT(decode("{\"event\":\"progress\",\"x\":[1]}", &ev, err, sizeof err), 0);
    CHECK(ev.kind == NDJSON_OTHER);
    ndjson_event_free(&ev);

    /* a job log's events (format=ndjson): output without a stream is ours to print */
    CHECK_EQ_INT(decode("{\"event\":\"output\",\"data\":\"line\\n\"}", &ev, err, sizeof err), 0);
    CHECK(ev.kind == NDJSON_OUTPUT && ev.fd == 1 && ev.len == 5 &&
          memcmp(ev.data, "line\n", 5) == 0);
    ndjson_event_free(&ev);

    CHECK_EQ_INT(decode("{\"event\":\"dropped\",\"bytes\":63488}", &ev, err, sizeof err), 0);
    CHECK(ev.kind == NDJSON_DROPPED && ev.bytes == 63488);
    ndjson_event_free(&ev);

    CHECK_EQ_INT(decode("{\"event\":\"session_ended\",\"session\":\"web\",\"reason\":\"lifetime\"}",
                        &ev, err, sizeof err),
                 0);
    CHECK(ev.kind == NDJSON_SESSION_ENDED && strcmp(ev.reason, "lifetime") == 0);
    ndjson_event_free(&ev);
}

static void test_bad_events(void)
{
    const char *bad[] = {
        "{\"event\":\"output\",\"stream\":\"stdout\"", /* cut */
        "[1]",
        "{\"pid\":1}",
        "{\"event\":\"output\",\"stream\":\"stdin\",\"data\":\"x\"}",
        "{\"event\":\"output\",\"stream\":\"stdout\"}",
        "{\"event\":\"output\",\"stream\":\"stdout\",\"data_base64\":\"!!\"}",
        "{\"event\":\"exit\",\"pid\":1}",
        "{\"event\":\"exit\",\"exit_code\":256}",
        "{\"event\":\"exit\",\"exit_code\":1.5}",
        "{\"event\":\"exit\",\"exit_code\":0,\"timed_out\":\"yes\"}",
        "{\"event\":\"output\",\"stream\":1,\"data\":\"x\"}",
        "{\"event\":\"dropped\"}",
        "{\"event\":\"dropped\",\"bytes\":-1}",
        "{\"event\":\"session_ended\",\"session\":\"web\"}",
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        struct ndjson_event ev;
        char err[160] = "";
        if (decode(bad[i], &ev, err, sizeof err) == 0) {
            fprintf(stderr, "  accepted %s\n", bad[i]);
            CHECK(0);
        }
        CHECK(err[0] != '\0');
        ndjson_event_free(&ev);
    }
}

TEST_MAIN({"exec: shell string after --", test_exec_plain},
          {"exec: options before -- and after the shell string",
           test_exec_options_before_and_after},
          {"exec: later words joined with spaces", test_exec_words_joined},
          {"exec: usage errors", test_exec_usage_errors},
          {"exec: timeout values", test_timeout_values}, {"exec: request body", test_exec_body},
          {"session names", test_session_names}, {"socket paths", test_socket_paths},
          {"PIDs", test_pids}, {"commands shown on one line", test_command_line},
          {"ndjson: lines cut anywhere", test_lines_split_anywhere},
          {"ndjson: a line handler stops the feed", test_lines_stop}, {"base64", test_base64},
          {"ndjson: events", test_events}, {"ndjson: malformed events", test_bad_events})
