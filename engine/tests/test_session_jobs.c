/* test_session_jobs.c — a session job's phases (session_jobs.h): the paths a foreground and a
 * background job take (and a supervised one's restarts), what "running" and "streaming" mean in each phase, and a move the list
 * does not have stopping the process (asserted), tried in a child. */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/session_jobs.h"
#include "test.h"

static void test_foreground_path(void)
{
    struct job j;
    memset(&j, 0, sizeof j);
    j.id = 1;
    CHECK(j.phase == JOB_STARTING); /* a zeroed job is starting */
    CHECK(job_running(&j));
    CHECK(!job_streaming(&j));
    job_move(&j, JOB_RUNNING);
    CHECK(job_running(&j) && job_streaming(&j));
    job_move(&j, JOB_DRAINING);
    CHECK(!job_running(&j) && job_streaming(&j)); /* what it wrote before its end still goes */
    job_move(&j, JOB_JUDGING);
    CHECK(!job_running(&j) && !job_streaming(&j));
    job_move(&j, JOB_ASKING);
    job_move(&j, JOB_RERUNNING);
    CHECK(!job_running(&j) && !job_streaming(&j));
    job_move(&j, JOB_FINISHED);
    CHECK(j.phase == JOB_FINISHED);
}

static void test_background_path(void)
{
    struct job j;
    memset(&j, 0, sizeof j);
    j.background = true;
    job_move(&j, JOB_RUNNING);
    CHECK(job_running(&j));
    CHECK(!job_streaming(&j)); /* a background job's output goes to its log */
    job_move(&j, JOB_FINISHED);
    CHECK(!job_running(&j));
}

static void test_supervised_path(void)
{
    struct job j;
    memset(&j, 0, sizeof j);
    j.background = true;
    job_move(&j, JOB_RUNNING);
    job_move(&j, JOB_RESTARTING); /* ended, its policy wants it again */
    CHECK(job_running(&j));       /* not over: it holds its slot, a follower waits on */
    CHECK(!job_streaming(&j));
    job_move(&j, JOB_STARTING);   /* the backoff passed: init asked again */
    job_move(&j, JOB_RESTARTING); /* init refused that start: waited on again */
    job_move(&j, JOB_FINISHED);   /* stopped while waiting */
    CHECK(!job_running(&j));
}

/* The move in a child: its exit status, or 128 + the signal that ended it. */
static int move_in_child(enum job_phase from, enum job_phase to, bool background)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct job j;
        memset(&j, 0, sizeof j);
        j.phase = from;
        j.background = background;
        signal(SIGABRT, SIG_DFL);
        job_move(&j, to);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void test_moves_not_listed(void)
{
    CHECK_EQ_INT(move_in_child(JOB_JUDGING, JOB_ASKING, false), 0); /* one that is */
    CHECK(move_in_child(JOB_FINISHED, JOB_RUNNING, false) != 0);
    CHECK(move_in_child(JOB_STARTING, JOB_DRAINING, false) != 0);
    CHECK(move_in_child(JOB_RUNNING, JOB_ASKING, false) != 0);
    CHECK(move_in_child(JOB_RUNNING, JOB_DRAINING, true) != 0); /* background jobs do not drain */
    CHECK(move_in_child(JOB_RUNNING, JOB_RESTARTING, false) != 0); /* nor foreground restart */
    CHECK(move_in_child(JOB_RESTARTING, JOB_RUNNING, true) != 0);  /* it starts first */
    CHECK(move_in_child(JOB_FINISHED, JOB_RESTARTING, true) != 0);
}

TEST_MAIN({"foreground_path", test_foreground_path}, {"background_path", test_background_path},
          {"supervised_path", test_supervised_path}, {"moves_not_listed", test_moves_not_listed})
