#!/bin/sh
# podman.sh up [YAML] | down [YAML] — cordon's pod (default cordon-pod.yaml beside this script)
# on this machine with Debian's Podman 4.3 and runc, as `podman kube play` and `podman kube down`,
# with what this machine and Podman need that a cluster's nodes already have:
#   - ids for Podman's automatic user namespaces (hostUsers: false is Podman's --userns=auto):
#     a `containers` range in /etc/subuid and /etc/subgid, added when missing
#     (containers:1000000000:1000000000, below the upper half of the id space, which cordon's
#     sandboxes of root callers use on the host);
#   - runc and cgroupfs, and the caller's own hard RLIMIT_NOFILE/NPROC where root may not raise
#     them (some VMs): a containers.conf of the pod's own (CONTAINERS_CONF);
#   - the Localhost seccomp profile: Podman 4.3 ignores the pod's securityContext.seccompProfile
#     and reads the older annotation instead, so the YAML is played from a copy that adds
#     seccomp.security.alpha.kubernetes.io/pod: localhost/seccomp-cordon.json, with
#     --seccomp-profile-root naming a folder that holds seccomp-cordon.json;
#   - AppArmor, where this machine has it: apparmor-cordon-pod loaded, and the copy annotated
#     with it for both containers (Podman reads the annotation, not appArmorProfile).
# Podman ignores procMount: Unmasked (its /proc keeps its masks): cordon then says in one line
# that the sandbox shares the container's /proc, and keeps other processes' from it with
# Landlock; the kubelet gives the container an unmasked /proc, and the sandbox its own
# (docs/fleet.md). `up` returns once the session answers in the pod (asked from its cordon
# container, 60 s at most; Podman ignores `stdin: true`, so the MCP variant's agent container
# has exited by then); `down` ends the pod and checks that none of its containers is left.
# State (the copy, the profile, containers.conf) in $CORDON_POD_STATE (default /run/cordon-pod-try).
# Uses: podman, runc, sed; apparmor_parser where AppArmor is on. Needs root (rootful Podman).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}
yaml=${2:-$here/cordon-pod.yaml}
state=${CORDON_POD_STATE:-/run/cordon-pod-try}
range=1000000000:1000000000

die() { echo "podman.sh: $*" >&2; exit 1; }
usage() { echo "usage: podman.sh up|down [YAML]" >&2; exit 2; }
[ -n "$cmd" ] || usage
[ "$(id -u)" = 0 ] || die "run as root: the pod is played with rootful Podman"
command -v podman >/dev/null || die "podman is not installed (make deps installs it)"
command -v runc >/dev/null || die "runc is not installed (make deps installs it)"
[ -f "$yaml" ] || die "no pod file at $yaml"
pod=$(sed -n '/^metadata:/,/^[a-z]/s/^  name: *//p' "$yaml" | head -n 1)
[ -n "$pod" ] || die "$yaml names no pod"
copy=$state/$(basename "$yaml")
export CONTAINERS_CONF="$state/containers.conf"

apparmor_on() { [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]; }

up() {
    mkdir -p "$state/seccomp"
    chmod 700 "$state"
    for f in /etc/subuid /etc/subgid; do
        if ! grep -q '^containers:' "$f" 2>/dev/null; then
            echo "containers:$range" >>"$f"
            echo "podman.sh: added containers:$range to $f (Podman's user namespaces, hostUsers: false)"
        fi
    done
    ulimits=
    if ! podman --runtime runc --cgroup-manager cgroupfs run --rm --network none \
        localhost/cordon:latest true 2>/dev/null; then
        n=$(ulimit -Hn)
        ulimits="default_ulimits = [\"nofile=$n:$n\", \"nproc=$n:$n\"]"
    fi
    printf '[containers]\n%s\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n' \
        "$ulimits" >"$CONTAINERS_CONF"
    image=$(sed -n 's/^ *image: *//p' "$yaml" | head -n 1)
    podman image exists "$image" || die "no image $image here: make image builds it"
    cp "$here/seccomp-cordon.json" "$state/seccomp/"
    notes="    seccomp.security.alpha.kubernetes.io/pod: localhost/seccomp-cordon.json"
    if apparmor_on; then
        apparmor_parser -r "$here/apparmor-cordon-pod" || die "apparmor_parser could not load apparmor-cordon-pod"
        for c in $(sed -n 's/^    - name: *//p' "$yaml"); do
            notes="$notes
    container.apparmor.security.beta.kubernetes.io/$c: localhost/cordon-pod"
        done
    fi
    awk -v notes="$notes" '{ print } /^metadata:$/ && !done { print "  annotations:"; print notes; done = 1 }' \
        "$yaml" >"$copy"
    podman kube play --seccomp-profile-root "$state/seccomp" "$copy" >/dev/null
    i=0
    until podman exec "$pod-cordon" cordon session status agent >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 60 ]; then
            podman logs "$pod-cordon" >&2 || true
            die "the session in pod $pod did not answer within 60 s (its log above)"
        fi
        sleep 1
    done
    echo "podman.sh: pod $pod is up: podman exec $pod-agent cordon exec agent -- 'CMD'"
}

down() {
    [ -f "$copy" ] || copy=$yaml
    podman kube down "$copy" >/dev/null 2>&1 || true
    # kube down can leave the pod itself behind (seen under load: a pod "Created" with no
    # container); removing it is what down means
    if podman pod exists "$pod" 2>/dev/null; then
        podman pod rm -f "$pod" >/dev/null 2>&1 || true
    fi
    left=$(podman ps -a --filter "pod=$pod" --format '{{.Names}}' 2>/dev/null || true)
    [ -z "$left" ] || die "containers of pod $pod are left: $left"
    ! podman pod exists "$pod" 2>/dev/null || die "pod $pod is left"
    rm -rf "$state"
    echo "podman.sh: pod $pod is down"
}

case $cmd in
up) up ;;
down) down ;;
*) usage ;;
esac
