/* test_config_wire.c — the sandbox configuration survives the trip to init unchanged. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sandbox/config_wire.h"
#include "sandbox/sandbox_config.h"
#include "test.h"

static void test_round_trip(void)
{
    struct sandbox_config a = {0}, b = {0};
    a.workspace = xstrdup("/home/dev/app");
    a.cwd = xstrdup("/home/dev/app/sub dir");
    a.workspace_readonly = false;
    a.net_unrestricted = true;
    a.net_loopback = true;
    str_list_push(&a.writable, "/var/tmp/x");
    str_list_push(&a.hidden, "/home/dev/.ssh");
    str_list_push(&a.hidden, "/etc/shadow");
    str_list_push(&a.hidden_except, "/home/dev/.ssh\tknown_hosts*\t*.pub");
    a.exec_per_command = true;
    str_list_push(&a.readonly_in_workspace, ".git/hooks");
    str_list_push(&a.env, "PATH=/usr/bin:/bin");
    str_list_push(&a.env, "EMPTY=");
    a.rlimits[0] = (struct sandbox_rlimit){RLIMIT_CORE, 0, 0};
    a.rlimits[1] = (struct sandbox_rlimit){RLIMIT_NOFILE, 1024, RLIM_INFINITY};
    a.n_rlimits = 2;
    str_list_push(&a.protected_paths, "/home/dev/.config/cordon");
    a.host_ports[0] = 5432;
    a.host_ports[1] = 6379;
    a.n_host_ports = 2;
    a.net_transparent = NET_TRANSPARENT_REQUIRED;
    a.tmp_size = 2ULL << 30;
    a.shm_size = 512ULL << 20;
    str_list_push(&a.grant_binds, "s/run/cordon/grants/ssh_agent.sock\t/tmp/ssh-x/agent\twith tab");
    str_list_push(&a.shift_binds, "/root");
    str_list_push(&a.shift_binds, "/var/tmp");
    int fd = memfd_create("cfg", MFD_CLOEXEC);
    CHECK(fd >= 0);
    CHECK_EQ_INT(config_wire_write(fd, &a), 0);
    char err[256];
    CHECK_EQ_INT(config_wire_read(fd, &b, err, sizeof err), 0);
    CHECK(strcmp(b.workspace, a.workspace) == 0 && strcmp(b.cwd, a.cwd) == 0);
    CHECK(!b.workspace_readonly && b.net_unrestricted && b.net_loopback);
    CHECK_EQ_INT(b.hidden.len, 2);
    CHECK(strcmp(b.hidden.items[1], "/etc/shadow") == 0);
    CHECK(b.hidden_except.len == 1 &&
          strcmp(b.hidden_except.items[0], "/home/dev/.ssh\tknown_hosts*\t*.pub") == 0);
    CHECK(b.exec_per_command);
    CHECK(str_list_contains(&b.env, "EMPTY="));
    CHECK_EQ_INT(b.n_rlimits, 2);
    CHECK(b.rlimits[1].hard == RLIM_INFINITY && b.rlimits[1].soft == 1024);
    CHECK(b.protected_paths.len == 1 &&
          strcmp(b.protected_paths.items[0], "/home/dev/.config/cordon") == 0);
    CHECK(b.n_host_ports == 2 && b.host_ports[0] == 5432 && b.host_ports[1] == 6379);
    CHECK(b.net_transparent == NET_TRANSPARENT_REQUIRED);
    CHECK(b.tmp_size == a.tmp_size && b.shm_size == a.shm_size);
    CHECK(b.grant_binds.len == 1 && strcmp(b.grant_binds.items[0], a.grant_binds.items[0]) == 0);
    CHECK(b.shift_binds.len == 2 && strcmp(b.shift_binds.items[1], "/var/tmp") == 0);
    sandbox_config_free(&a);
    sandbox_config_free(&b);
}

/* A profile key's record is typed by its row: a value not of the key's kind, or a key init does
 * not get, is refused like any malformed record. */
static void test_key_records_are_typed(void)
{
    struct sandbox_config a = {0}, b = {0};
    a.workspace = xstrdup("/w");
    a.cwd = xstrdup("/w");
    a.workspace_readonly = true;
    a.home_mode = SANDBOX_HOME_TMPFS;
    str_list_push(&a.home_tool_dirs, "go");
    str_list_push(&a.run_binds, "/run/x=y");
    a.root_writes = true; /* the controller's only: not on the wire */
    int fd = memfd_create("cfg", MFD_CLOEXEC);
    CHECK_EQ_INT(config_wire_write(fd, &a), 0);
    char err[256];
    CHECK_EQ_INT(config_wire_read(fd, &b, err, sizeof err), 0);
    CHECK(b.workspace_readonly && b.home_mode == SANDBOX_HOME_TMPFS && !b.root_writes);
    CHECK(b.home_tool_dirs.len == 1 && strcmp(b.home_tool_dirs.items[0], "go") == 0);
    CHECK(b.run_binds.len == 1 && strcmp(b.run_binds.items[0], "/run/x=y") == 0);
    CHECK(b.tmp_size == 0 && b.n_host_ports == 0);
    sandbox_config_free(&b);
    static const char *const bad[] = {
        "Knetwork.loopback=2", "Knetwork.loopback=",   "Khome=3",
        "Kroot_writes=1",      "Kno.such.key=1",       "Knetwork.loopback",
        "Klimits.tmp_size=1G", "Knetwork.host_ports=0"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        int g = memfd_create("cfg", MFD_CLOEXEC);
        CHECK(write(g, "w/w\0c/w\0", 8) == 8);
        CHECK(write(g, bad[i], strlen(bad[i]) + 1) == (ssize_t)strlen(bad[i]) + 1);
        CHECK_EQ_INT(config_wire_read(g, &b, err, sizeof err), -1);
        CHECK_STR_CONTAINS(err, "malformed");
        sandbox_config_free(&b);
        close(g);
    }
    close(fd);
    sandbox_config_free(&a);
}

static void test_garbage_is_refused(void)
{
    int fd = memfd_create("cfg", MFD_CLOEXEC);
    CHECK(write(fd, "Zjunk\0", 6) == 6);
    struct sandbox_config b = {0};
    char err[256];
    CHECK_EQ_INT(config_wire_read(fd, &b, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "malformed");
    int empty = memfd_create("cfg", MFD_CLOEXEC);
    CHECK_EQ_INT(config_wire_read(empty, &b, err, sizeof err), -1);
    CHECK_STR_CONTAINS(err, "missing");
    sandbox_config_free(&b);
}

TEST_MAIN({"round trip", test_round_trip}, {"key records are typed", test_key_records_are_typed},
          {"garbage is refused", test_garbage_is_refused})
