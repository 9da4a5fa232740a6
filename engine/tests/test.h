/* test.h — the tiny harness every engine/tests/test_<unit>.c uses: a table of named tests,
 * each run in its own forked child with a deadline, TAP output, exit 1 on any failure.
 * A case that cannot run here calls TEST_SKIP("reason"): it is reported as
 * `ok N - name # SKIP reason` (TAP), never as a plain `ok`. Usage:
 *     static void test_x(void) { CHECK(1 + 1 == 2); CHECK_EQ_INT(f(), 0); }
 *     static void test_y(void) { if (getuid() != 0) TEST_SKIP("needs root"); ... }
 *     TEST_MAIN({"x", test_x}, {"y", test_y})
 */
#ifndef CORDON_TEST_H
#define CORDON_TEST_H
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct test_case {
    const char *name;
    void (*fn)(void);
};

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            _exit(1);                                                                  \
        }                                                                              \
    } while (0)
#define CHECK_EQ_INT(a, b)                                                                      \
    do {                                                                                        \
        long long _a = (long long)(a), _b = (long long)(b);                                     \
        if (_a != _b) {                                                                         \
            fprintf(stderr, "  %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, _a, \
                    _b);                                                                        \
            _exit(1);                                                                           \
        }                                                                                       \
    } while (0)
#define CHECK_STR_CONTAINS(hay, needle)                                                      \
    do {                                                                                     \
        const char *_h = (hay), *_n = (needle);                                              \
        if (!_h || !strstr(_h, _n)) {                                                        \
            fprintf(stderr, "  %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
                    _h ? _h : "(null)", _n);                                                 \
            _exit(1);                                                                        \
        }                                                                                    \
    } while (0)

#define TEST_DEADLINE_SECONDS 20

/* A skipped case hands its reason to the runner through a pipe and exits with this status:
 * the status alone could also come from a child the case forked, the reason could not. */
#define TEST_SKIP_STATUS 77
static int test_skip_fd = -1;

static inline void test_skip(const char *reason)
{
    size_t n = strlen(reason);
    if (n > 200)
        n = 200; /* below PIPE_BUF: one write, read whole by the runner */
    if (test_skip_fd < 0 || write(test_skip_fd, reason, n) != (ssize_t)n)
        _exit(1); /* a skip the runner cannot report is a failure, not an ok */
    fflush(NULL);
    _exit(TEST_SKIP_STATUS);
}
#define TEST_SKIP(reason) test_skip(reason)

/* Under AddressSanitizer, report leaks of the case now (fails the case with exit 23).
 * test_leak_check_early() is for a case about to make LeakSanitizer unusable (a seccomp
 * filter refusing ptrace, which it needs to stop the world): check now, skip it at the end. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
static int test_leaks_checked;
static inline void test_leak_check(void)
{
    if (!test_leaks_checked && __lsan_do_recoverable_leak_check())
        _exit(23);
}
static inline void test_leak_check_early(void)
{
    test_leak_check();
    test_leaks_checked = 1;
}
#else
static inline void test_leak_check(void)
{
}
static inline void test_leak_check_early(void)
{
}
#endif

static inline int test_run_all(const struct test_case *cases, size_t n)
{
    int failed = 0;
    printf("1..%zu\n", n);
    for (size_t i = 0; i < n; i++) {
        fflush(stdout);
        fflush(stderr);
        int skip_pipe[2];
        if (pipe2(skip_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
            perror("pipe2");
            return 1;
        }
        pid_t pid = fork();
        if (pid == 0) {
            close(skip_pipe[0]);
            test_skip_fd = skip_pipe[1];
            alarm(TEST_DEADLINE_SECONDS);
            cases[i].fn();
            fflush(NULL);
            test_leak_check(); /* _exit skips LeakSanitizer's own check at exit */
            _exit(0);
        }
        close(skip_pipe[1]);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0)
            ;
        char reason[256] = "";
        if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_STATUS) {
            ssize_t got = read(skip_pipe[0], reason, sizeof reason - 1);
            reason[got > 0 ? got : 0] = '\0';
        }
        close(skip_pipe[0]);
        if (reason[0]) {
            printf("ok %zu - %s # SKIP %s\n", i + 1, cases[i].name, reason);
            continue;
        }
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok) {
            failed++;
            if (WIFSIGNALED(status))
                fprintf(stderr, "  killed by signal %d%s\n", WTERMSIG(status),
                        WTERMSIG(status) == SIGALRM ? " (deadline)" : "");
        }
        printf("%s %zu - %s\n", ok ? "ok" : "not ok", i + 1, cases[i].name);
    }
    return failed ? 1 : 0;
}

#define TEST_MAIN(...)                                              \
    int main(void)                                                  \
    {                                                               \
        static const struct test_case cases[] = {__VA_ARGS__};      \
        return test_run_all(cases, sizeof cases / sizeof cases[0]); \
    }
#endif
