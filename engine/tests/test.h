/* test.h — the tiny harness every engine/tests/test_<unit>.c uses: a table of named tests,
 * each run in its own forked child with a deadline, TAP-like output, exit 1 on any
 * failure. Usage:
 *     static void test_x(void) { CHECK(1 + 1 == 2); CHECK_EQ_INT(f(), 0); }
 *     TEST_MAIN({"x", test_x}, {"y", test_y})
 */
#ifndef CORDON_TEST_H
#define CORDON_TEST_H
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

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            _exit(1);                                                                \
        }                                                                            \
    } while (0)
#define CHECK_EQ_INT(a, b)                                                            \
    do {                                                                              \
        long long _a = (long long)(a), _b = (long long)(b);                           \
        if (_a != _b) {                                                               \
            fprintf(stderr, "  %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, \
                    #a, _a, _b);                                                      \
            _exit(1);                                                                 \
        }                                                                             \
    } while (0)
#define CHECK_STR_CONTAINS(hay, needle)                                                  \
    do {                                                                                 \
        const char *_h = (hay), *_n = (needle);                                          \
        if (!_h || !strstr(_h, _n)) {                                                    \
            fprintf(stderr, "  %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
                    _h ? _h : "(null)", _n);                                             \
            _exit(1);                                                                    \
        }                                                                                \
    } while (0)

#define TEST_DEADLINE_SECONDS 20

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
static inline void test_leak_check(void) {}
static inline void test_leak_check_early(void) {}
#endif

static inline int test_run_all(const struct test_case *cases, size_t n)
{
    int failed = 0;
    printf("1..%zu\n", n);
    for (size_t i = 0; i < n; i++) {
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(TEST_DEADLINE_SECONDS);
            cases[i].fn();
            fflush(NULL);
            test_leak_check(); /* _exit skips LeakSanitizer's own check at exit */
            _exit(0);
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0)
            ;
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

#define TEST_MAIN(...)                                                  \
    int main(void)                                                      \
    {                                                                   \
        static const struct test_case cases[] = {__VA_ARGS__};          \
        return test_run_all(cases, sizeof cases / sizeof cases[0]);     \
    }
#endif
