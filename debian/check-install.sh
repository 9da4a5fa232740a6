#!/bin/sh
# check-install.sh — installs a built cordon .deb into a fresh Debian 12 container and runs it
# there: `cordon --version`, `cordon run -- true` as root and as uid 65534, a session (which
# runs /usr/libexec/cordon/cordon-session), the manual page and the completions in place.
#
# Usage: debian/check-install.sh DEB [CACHE_DIR]
# The container is the debootstrapped bookworm minbase image the specs use
# (spec/fixtures/container/build-image.sh, cached in CACHE_DIR, default
# build-deps/container-rootfs); it holds the package's dependencies, so dpkg -i needs no
# network. Run by `make deb`. Exits 0 when every check passed, 1 on the first that failed
# (its output shown), 77 when it cannot run here (not root, no podman or runc), saying why.
# Uses: podman, runc, debootstrap (first run only). Never touches a container it did not start.
set -eu
deb=$1
cache=${2:-build-deps/container-rootfs}
image=cordon-test-image
podman="podman --runtime runc --cgroup-manager cgroupfs"

skip() { echo "check-install.sh: SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: the image is built with debootstrap and run with rootful podman"
for prog in podman runc; do
    command -v $prog >/dev/null || skip "$prog is not installed (make deps installs it)"
done
[ -f "$deb" ] || { echo "check-install.sh: no package at $deb" >&2; exit 1; }

sh spec/fixtures/container/build-image.sh "$cache" "$image"

# Rootful podman raises RLIMIT_NOFILE and RLIMIT_NPROC for the container, which a root without
# CAP_SYS_RESOURCE (some VMs) may not: then the caller's own hard limit is passed for both.
flags=
if ! $podman run --rm $image true 2>/dev/null; then
    n=$(ulimit -Hn)
    flags="--ulimit nofile=$n:$n --ulimit nproc=$n:$n"
    $podman run --rm $flags $image true || skip "podman cannot run a container here"
fi

dir=$(cd "$(dirname "$deb")" && pwd)
name=cordon-deb-check-$$
trap '$podman rm -f $name >/dev/null 2>&1 || true' EXIT INT TERM
$podman run -d --name $name $flags -v "$dir":/deb:ro $image sleep infinity >/dev/null

step() {
    what=$1
    shift
    if out=$($podman exec -w /tmp $name sh -c "$*" 2>&1); then
        echo "check-install.sh: ok: $what"
    else
        echo "check-install.sh: FAILED: $what" >&2
        echo "$out" >&2
        exit 1
    fi
}
step "dpkg -i $(basename "$deb")" "dpkg -i /deb/$(basename "$deb")"
step "cordon --version" "cordon --version | grep -x 'cordon [0-9.]*'"
step "cordon run -- true (root)" "mkdir -p /tmp/ws && cd /tmp/ws && cordon run -- true"
step "cordon run -- true (uid 65534)" \
    "mkdir -p /tmp/ws65534 /tmp/home65534 && chown 65534 /tmp/ws65534 /tmp/home65534 && cd /tmp/ws65534 && \
     HOME=/tmp/home65534 setpriv --reuid=65534 --regid=65534 --clear-groups cordon run -- true"
step "exit status through the package: 125 for an unknown flag, the command's own" \
    "cd /tmp/ws && { cordon run --no-such-flag -- true 2>/dev/null; [ \$? = 125 ]; } && \
     { cordon run -- sh -c 'exit 7'; [ \$? = 7 ]; }"
step "a session (cordon-session from /usr/libexec/cordon)" \
    "test -x /usr/libexec/cordon/cordon-session && test ! -e /usr/bin/cordon-session && \
     mkdir -p /run/cs && chmod 700 /run/cs && cd /tmp/ws && export XDG_RUNTIME_DIR=/run/cs && \
     cordon session start deb --detach && cordon exec deb -- 'echo in-session' | grep -x in-session && \
     cordon session stop deb"
step "man page cordon-run(1)" \
    "if command -v man >/dev/null; then man -w cordon-run; else test -s /usr/share/man/man1/cordon-run.1.gz; fi && \
     test -s /usr/share/man/man1/cordon.1.gz && test -s /usr/share/man/man5/cordon-profile.5.gz"
step "completions" \
    "test -s /usr/share/bash-completion/completions/cordon && test -s /usr/share/zsh/vendor-completions/_cordon && \
     bash -c '. /usr/share/bash-completion/completions/cordon && COMP_WORDS=(cordon ru) COMP_CWORD=1 && _cordon && \
       [ \"\${COMPREPLY[*]}\" = run ]'"
step "policies and profiles in /usr/share/cordon" \
    "test -s /usr/share/cordon/profiles/coding.lua && cordon policy check"
echo "check-install.sh: $(basename "$deb") installs and runs on Debian 12"
