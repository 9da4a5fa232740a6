/* test_late_names.c — the root-only names of the home that follow init's configuration: a list
 * sent whole arrives whole (empty included, and longer than a socket's buffer); a list cut short,
 * a name outside the home or not canonical, or bytes after the end mark are refused with one
 * line, and nothing of such a list is taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/late_names.h"
#include "test.h"

/* raw (len bytes) written to one end of a socket pair, that end closed, the other end read
 * back as late_names_recv reads it, for home /root. */
static int recv_raw(const char *raw, size_t len, struct str_list *out, char *err, size_t errlen)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    CHECK(write(sv[0], raw, len) == (ssize_t)len);
    close(sv[0]);
    int r = late_names_recv(sv[1], "/root", out, err, errlen);
    close(sv[1]);
    return r;
}

static void test_round_trip(void)
{
    struct str_list names = {0}, got = {0};
    str_list_push(&names, "/root/.npmrc");
    str_list_push(&names, "/root/.config/tool/token");
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    CHECK_EQ_INT(late_names_send(sv[0], &names), 0);
    close(sv[0]);
    char err[256] = "";
    CHECK_EQ_INT(late_names_recv(sv[1], "/root", &got, err, sizeof err), 0);
    close(sv[1]);
    CHECK_EQ_INT((int)got.len, 2);
    CHECK(strcmp(got.items[0], "/root/.npmrc") == 0);
    CHECK(strcmp(got.items[1], "/root/.config/tool/token") == 0);
    str_list_free(&got);
    /* none at all: the end mark alone */
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    struct str_list none = {0};
    CHECK_EQ_INT(late_names_send(sv[0], &none), 0);
    close(sv[0]);
    CHECK_EQ_INT(late_names_recv(sv[1], "/root", &got, err, sizeof err), 0);
    close(sv[1]);
    CHECK_EQ_INT((int)got.len, 0);
    str_list_free(&names);
}

/* More than a socket's buffer: the sender blocks until the reader has taken the first part. */
static void test_long_list(void)
{
    struct str_list names = {0}, got = {0};
    char name[300];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "/root/.cache/%0200d", i);
        str_list_push(&names, name);
    }
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        close(sv[1]);
        _exit(late_names_send(sv[0], &names) == 0 ? 0 : 1);
    }
    close(sv[0]);
    char err[256] = "";
    CHECK_EQ_INT(late_names_recv(sv[1], "/root", &got, err, sizeof err), 0);
    close(sv[1]);
    int st = 0;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_EQ_INT((int)got.len, 5000);
    CHECK(strcmp(got.items[4999], names.items[4999]) == 0);
    str_list_free(&names);
    str_list_free(&got);
}

static void test_refused(void)
{
    static const struct {
        const char *raw;
        size_t len;
        const char *says;
    } cases[] = {
        {"/root/.npmrc\0", 13, "did not finish"}, /* no end mark: the walk failed */
        {"", 0, "did not finish"},                /* nothing at all */
        {"/etc/shadow\0\0", 13, "not a canonical path inside the home"},
        {"/root\0\0", 7, "not a canonical path inside the home"}, /* the home itself */
        {"/rootx/a\0\0", 10, "not a canonical path inside the home"},
        {"/root/../etc/shadow\0\0", 21, "not a canonical path inside the home"},
        {"/root/./a\0\0", 11, "not a canonical path inside the home"},
        {"/root//a\0\0", 10, "not a canonical path inside the home"},
        {"/root/a/\0\0", 10, "not a canonical path inside the home"},
        {"root/a\0\0", 8, "not a canonical path inside the home"},
        {"/root/a\0\0/root/b\0", 17, "malformed"}, /* bytes after the end mark */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct str_list got = {0};
        char err[256] = "";
        CHECK_EQ_INT(recv_raw(cases[i].raw, cases[i].len, &got, err, sizeof err), -1);
        CHECK_STR_CONTAINS(err, cases[i].says);
        str_list_free(&got);
    }
}

TEST_MAIN({"round trip", test_round_trip}, {"long list", test_long_list}, {"refused", test_refused})
