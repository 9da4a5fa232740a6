#!/bin/bash
# bench/rename.sh — what the rename listener (docs/git.md, "Settings") costs: every rename in
# the sandbox is answered by the controller (a round trip), so a rename inside costs more than
# one outside; git makes few (a commit of 500 files makes 16).
#
#   bench/rename.sh CORDON_BIN        (ROUNDS=7 N=10000 RUNS=10 by default)
#
# Prints, each the best of ROUNDS runs taken in turn (the least disturbed by the machine's load):
#   ns per rename, N renames of one file back and forth, on the host and inside `cordon run`
#   ns per getppid(), as the cost of an ordinary call through the two filters (no change expected)
# then a hyperfine run (RUNS) of a script that writes 500 files, `git add`s and commits them and
# removes them in a second commit, on the host and inside `cordon run`.
# Needs gcc, git and hyperfine. Reports only; asserts nothing about time.
set -euo pipefail

die() { printf 'rename.sh: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 CORDON_BIN"
cordon=$1
case $cordon in /*) ;; *) cordon=$PWD/$cordon ;; esac
[ -x "$cordon" ] || die "$cordon is not an executable file"
for p in gcc git hyperfine; do command -v "$p" >/dev/null || die "$p is not installed"; done
rounds=${ROUNDS:-7} n=${N:-10000} runs=${RUNS:-10}

work=$(mktemp -d "${TMPDIR:-/tmp}/cordon-bench-rename.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
cd "$work"
export XDG_STATE_HOME=$work/state

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
    int n = argc > 2 ? atoi(argv[2]) : 10000;
    double t;
    if (argv[1][0] == 'g') {
        t = now();
        for (int i = 0; i < n; i++)
            getppid();
    } else {
        close(open("rn_a", O_CREAT | O_WRONLY, 0644));
        t = now();
        for (int i = 0; i < n; i++)
            if (rename(i % 2 ? "rn_b" : "rn_a", i % 2 ? "rn_a" : "rn_b") < 0)
                return 1;
        unlink(n % 2 ? "rn_b" : "rn_a");
    }
    printf("%.0f\n", (now() - t) / n);
    return 0;
}
EOF
gcc -O2 -o loop loop.c

best() { # best of $rounds: "$@" prints one number
    local b= v
    for _ in $(seq "$rounds"); do
        v=$("$@")
        if [ -z "$b" ] || [ "$v" -lt "$b" ]; then b=$v; fi
    done
    echo "$b"
}
for what in rename getppid; do
    k=$n
    [ "$what" = getppid ] && k=$((n * 100))
    host=$(best ./loop "$what" "$k")
    inside=$(best "$cordon" run -- ./loop "$what" "$k")
    printf '%-8s host %6d ns   cordon run %6d ns   (+%d ns)\n' "$what" "$host" "$inside" $((inside - host))
done

git init -q -b main repo
cat >repo/commit500.sh <<'EOF'
set -e
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com
rm -rf files && mkdir files
for i in $(seq 1 500); do echo "$i $RANDOM" > files/f$i; done
git add files && git commit -q -m "500 files"
git rm -rq files && git commit -q -m "remove them"
EOF
cd repo
hyperfine -N -w 2 -r "$runs" -n "git commit of 500 files, host" "bash commit500.sh" \
    -n "git commit of 500 files, cordon run" "$cordon run -- bash commit500.sh"
