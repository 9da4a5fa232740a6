#!/bin/bash
# bench/create.sh — what the home's guard of new names (controller/home_create_guard.h) costs:
# where the copy-on-write home takes its rule, every call that creates a name (mkdir, open with
# O_CREAT, symlink, ...) is answered by the controller, a round trip, so creating a file inside
# costs more than without it; `--home readonly` starts no guard (the home is read-only whole).
#
#   bench/create.sh CORDON_BIN        (ROUNDS=7 N=20000 by default)
#
# Prints, each the best of ROUNDS runs taken in turn (the least disturbed by the machine's load),
# ns per created file (N files made with open(O_CREAT) and closed, in the workspace and in /tmp)
# on the host, inside `cordon run --home readonly` (no guard: the floor) and inside `cordon run`
# (the coding profile's copy-on-write home), the workspace under the home as the issue's rows
# have it; then the ratio guarded / floor. Needs gcc. Reports only; asserts nothing about time.
set -euo pipefail

die() { printf 'create.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
command -v gcc >/dev/null || die "gcc is not installed"
rounds=${ROUNDS:-7} n=${N:-20000}

# not under the host's /tmp, which the sandbox replaces: the home must be the host's
work=$(mktemp -d /var/tmp/cordon-bench-create.XXXXXX)
trap 'rm -rf -- "$work"' EXIT
export HOME=$work/home XDG_STATE_HOME=$work/state
mkdir -p "$HOME/proj" "$XDG_STATE_HOME"
for i in $(seq 1 30); do mkdir "$HOME/project$i" "$HOME/.dot$i"; done
cd "$HOME/proj"

cat >loop.c <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
int main(int argc, char **argv)
{
    const char *dir = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    char path[4096];
    double t = now();
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/c%d", dir, i);
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        if (fd < 0)
            return 1;
        close(fd);
    }
    double per = (now() - t) / n;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/c%d", dir, i);
        unlink(path);
    }
    printf("%.0f\n", per);
    return 0;
}
EOF
gcc -O2 -o loop loop.c
mkdir -p out

best() { # best of $rounds: "$@" prints one number
    local b= v
    for _ in $(seq "$rounds"); do
        v=$("$@")
        if [ -z "$b" ] || [ "$v" -lt "$b" ]; then b=$v; fi
    done
    echo "$b"
}
for where in workspace tmp; do
    dir=$PWD/out
    [ "$where" = tmp ] && dir=/tmp
    host=$(best ./loop "$dir" "$n")
    floor=$(best "$cordon" run --home readonly -- ./loop "$dir" "$n")
    guarded=$(best "$cordon" run -- ./loop "$dir" "$n")
    printf '%-9s host %6d ns   --home readonly %6d ns   copy-on-write home %6d ns   ratio %s\n' \
        "$where" "$host" "$floor" "$guarded" "$(awk -v a="$guarded" -v b="$floor" 'BEGIN { printf "%.2f", a / b }')"
done
