"""cordon._options — the typed options of `cordon session start`, turned into its arguments.

Owns the table of every `session start` flag the clients set (keyword, flag, kind), the check
of each value's type, and the argument list of `cordon session start NAME ...` that
Session.start and AsyncSession.start run. spec/04-engine/session_clients_spec.lua compares
the table with `cordon session start --help`, so a flag the engine adds fails a spec until it
is here (and in the TypeScript client's table).
Uses nothing but the standard library.
Must never: drop an option it does not know (an unknown keyword is a TypeError), or pass a
value it has not checked.
"""
from __future__ import annotations

import os
from typing import Any, List, Mapping, Optional, Sequence, Tuple

# (keyword, flag, kind). Kinds: "str" (one non-empty string), "path" (a str or os.PathLike),
# "strs"/"paths" (a sequence of them; the flag once per item), "ports" (a sequence of ints
# 1..65535), "bool" (True: --flag, False: --flag=false, overriding the profile), "duration"
# (a number of seconds or a string such as "30s", "5m"), "home" (overlay, readonly, tmpfs).
# `detach` and `owner` are not in it: they decide who owns the session (see start_args).
# `--json` is left out: it changes what `session start` prints, which no client reads.
START_OPTIONS: Tuple[Tuple[str, str, str], ...] = (
    ("workspace", "--workspace", "path"),
    ("profile", "--profile", "str"),
    ("allow_home_workspace", "--allow-home-workspace", "bool"),
    ("allow_write", "--allow-write", "paths"),
    ("hide", "--hide", "paths"),
    ("unrestricted_network", "--unrestricted-network", "bool"),
    ("allow_loopback", "--allow-loopback", "bool"),
    ("allow_docker", "--allow-docker", "bool"),
    ("network_allow", "--network-allow", "strs"),
    ("network_deny", "--network-deny", "strs"),
    ("allow_host_port", "--allow-host-port", "ports"),
    ("publish", "--publish", "strs"),
    ("ask_sandbox_off", "--ask-sandbox-off", "bool"),
    ("plan", "--plan", "bool"),
    ("permission_timeout", "--permission-timeout", "duration"),
    ("policy", "--policy", "path"),
    ("home", "--home", "home"),
    ("session_exec", "--session-exec", "bool"),
    ("allow_ssh_agent", "--allow-ssh-agent", "bool"),
    ("allow_gpg_agent", "--allow-gpg-agent", "bool"),
    ("idle_timeout", "--idle-timeout", "duration"),
    ("max_lifetime", "--max-lifetime", "duration"),
    ("expiry_warning", "--expiry-warning", "duration"),
    ("review", "--review", "bool"),
    ("credential", "--credential", "strs"),
    ("upstream_ca", "--upstream-ca", "path"),
)
KEYWORDS = frozenset(k for k, _, _ in START_OPTIONS)
_HOMES = ("overlay", "readonly", "tmpfs")


def _bad(key: str, want: str, v: Any) -> TypeError:
    return TypeError("session start option %s takes %s, not %r" % (key, want, v))


def _text(key: str, v: Any, path: bool) -> str:
    if path and isinstance(v, os.PathLike):
        v = os.fspath(v)
    if not isinstance(v, str) or not v:
        raise _bad(key, "a non-empty path" if path else "a non-empty string", v)
    return v


def _items(key: str, v: Any) -> Sequence[Any]:
    if isinstance(v, (str, bytes, os.PathLike)):
        return [v]  # one rule or path given alone
    if not isinstance(v, (list, tuple)):
        raise _bad(key, "a list", v)
    return v


def _duration(key: str, v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise _bad(key, "seconds (a number) or a duration such as \"30s\"", v)
    if isinstance(v, str):
        return _text(key, v, False)
    if v <= 0:
        raise _bad(key, "a positive number of seconds", v)
    return "%gs" % v


def option_args(options: Mapping[str, Any]) -> List[str]:
    """The flags for options (keyword -> value; None means "not given"), in the table's order."""
    unknown = sorted(set(options) - KEYWORDS)
    if unknown:
        raise TypeError("unknown session start option(s): %s" % ", ".join(unknown))
    args: List[str] = []
    for key, flag, kind in START_OPTIONS:
        v = options.get(key)
        if v is None:
            continue
        if kind == "bool":
            if not isinstance(v, bool):
                raise _bad(key, "True or False", v)
            args.append(flag if v else flag + "=false")
        elif kind in ("str", "path"):
            args += [flag, _text(key, v, kind == "path")]
        elif kind in ("strs", "paths"):
            for item in _items(key, v):
                args += [flag, _text(key, item, kind == "paths")]
        elif kind == "ports":
            for port in [v] if isinstance(v, int) else _items(key, v):
                if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
                    raise _bad(key, "port numbers 1..65535", port)
                args += [flag, str(port)]
        elif kind == "duration":
            args += [flag, _duration(key, v)]
        elif kind == "home":
            if v not in _HOMES:
                raise _bad(key, " or ".join(_HOMES), v)
            args += [flag, v]
        else:  # pragma: no cover - the table's own kinds only
            raise AssertionError(kind)
    return args


def start_args(cordon: str, name: str, options: Mapping[str, Any], detach: bool, owner: Optional[int],
               extra_args: Sequence[str]) -> List[str]:
    """`cordon session start NAME` with the options. Not detached, the session's owner is the
    process that runs it (this program: `session start` watches its parent's pid with a pidfd
    and stops the session when it exits, however it exits), or `owner`."""
    if not isinstance(detach, bool):
        raise _bad("detach", "True or False", detach)
    args = [cordon, "session", "start", name] + option_args(options)
    if owner is not None:
        if detach:
            raise TypeError("session start: detach=True and owner= exclude each other")
        if isinstance(owner, bool) or not isinstance(owner, int) or owner <= 0:
            raise _bad("owner", "a process id", owner)
        args += ["--owner", str(owner)]
    elif detach:
        args.append("--detach")
    if isinstance(extra_args, str) or not all(isinstance(a, str) for a in extra_args):
        raise _bad("extra_args", "a list of strings", extra_args)
    return args + list(extra_args)

