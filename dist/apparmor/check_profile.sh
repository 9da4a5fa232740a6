#!/bin/sh
# check_profile.sh PROFILE — the syntax check of cordon's AppArmor profile (a ctest test):
# apparmor_parser --skip-kernel-load parses it without loading anything. The profile needs
# AppArmor 4.0 (its abi and the `userns` rule, as on Ubuntu 24.04); an older parser (Debian 12
# ships 3.0) checks the rest of it with those two lines set back to 3.0's, and says so.
# Fails when apparmor_parser is missing (the Makefile's `deps` installs the apparmor package):
# a check that silently did not run would look like one that passed.
set -eu
profile=$1
parser=$(command -v apparmor_parser || true)
for p in /usr/sbin/apparmor_parser /sbin/apparmor_parser; do
    [ -n "$parser" ] || [ ! -x "$p" ] || parser=$p
done
if [ -z "$parser" ]; then
    echo "apparmor_parser is missing: install the apparmor package (make deps)" >&2
    exit 1
fi
# What the profile is for must be there, whichever parser reads it.
grep -q '^abi <abi/4\.0>,$' "$profile" || { echo "$profile: no abi <abi/4.0>" >&2; exit 1; }
for name in cordon cordon-session; do
    awk -v n="$name" '$1 == "profile" && $2 == n { p = 1 } p && $1 == "userns," { ok = 1 }
        p && $1 == "}" { exit } END { exit !ok }' "$profile" ||
        { echo "$profile: profile $name does not allow userns" >&2; exit 1; }
done
version=$("$parser" --version 2>/dev/null | sed -n 's/.*version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if [ "${version:-0}" -ge 4 ]; then
    cp "$profile" "$tmp"
else
    sed -e 's|^abi <abi/4\.0>,$|abi <abi/3.0>,|' -e '/^[[:space:]]*userns,$/d' "$profile" >"$tmp"
    echo "# apparmor_parser ${version:-?}.x predates AppArmor 4.0: checked the profile without" \
         "its userns rules, with abi 3.0"
fi
rc=0
out=$("$parser" --skip-kernel-load --skip-cache -Q "$tmp" 2>&1) || rc=$?
# (without AppArmor in the running kernel the parser notes that it has no cache: not a finding)
printf '%s\n' "$out" | grep -v -e '^Cache read/write disabled' -e '^$' >&2 || true
exit "$rc"
