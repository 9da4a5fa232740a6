#!/usr/bin/env python3
"""seccomp-cordon.py — makes seccomp-cordon.json, the Localhost seccomp profile of cordon's pod,
from the container runtime's default profile (containers/common's seccomp.json: Podman's and
CRI-O's RuntimeDefault; Debian's golang-github-containers-common installs it as
/usr/share/containers/seccomp.json).

What the default refuses a container without added capabilities and cordon's set-up calls is
allowed, and nothing else changes:
  sethostname  the sandbox's own UTS namespace is named "cordon" (the default allows it only
               with CAP_SYS_ADMIN in the container; without it cordon keeps the pod's name).
Everything else cordon's set-up calls the default already allows to every container: clone and
clone3 with namespace flags, unshare, setns, mount, umount2, pivot_root, the new mount API
(open_tree, move_mount, mount_setattr, fsopen, fsconfig, fsmount, fspick), seccomp (with
user notification), landlock_*, pidfd_*. containerd's RuntimeDefault (Docker's profile) allows
those only with CAP_SYS_ADMIN: that is why the pod names this profile instead of RuntimeDefault
(docs/fleet.md).

Usage: seccomp-cordon.py DEFAULT_PROFILE OUT    (OUT '-' for stdout)
Writes OUT only."""
import json
import sys

# Each: the call, and why cordon needs it (the list docs/fleet.md shows).
ADDED = {"sethostname": "the sandbox's UTS namespace gets its own name"}


def derive(profile):
    """The default for a container with no added capability, in a form containerd, CRI-O and
    Podman all read: archMap (CRI-O and Podman take the node's architecture from it, containerd
    ignores it and uses the node's), then rules of names, action, args, errnoRet only: a rule
    that needs a capability (includes.caps) is left out, one that applies without it
    (excludes.caps) is kept; rules for one architecture are kept (a name another architecture
    lacks is skipped by the runtime); then the calls of ADDED, allowed."""
    rules = []
    for rule in profile["syscalls"]:
        inc, exc = rule.get("includes") or {}, rule.get("excludes") or {}
        if inc.get("caps") or inc.get("minKernel") or exc.get("arches"):
            continue
        names = [n for n in rule["names"] if n not in ADDED]
        if not names:
            continue
        out = {"names": names, "action": rule["action"]}
        if rule.get("args"):
            out["args"] = rule["args"]
        if rule.get("errnoRet") is not None:
            out["errnoRet"] = rule["errnoRet"]
        rules.append(out)
    rules.append({"names": sorted(ADDED), "action": "SCMP_ACT_ALLOW"})
    return {"defaultAction": profile["defaultAction"],
            "defaultErrnoRet": profile.get("defaultErrnoRet", 1),
            "archMap": profile["archMap"], "syscalls": rules}


def main(src, dst):
    with open(src) as f:
        profile = json.load(f)
    text = json.dumps(derive(profile), indent=1, sort_keys=True) + "\n"
    if dst == "-":
        sys.stdout.write(text)
    else:
        with open(dst, "w") as f:
            f.write(text)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: seccomp-cordon.py DEFAULT_PROFILE OUT")
    main(sys.argv[1], sys.argv[2])
