"""cordon.errors — the exceptions of the Python client of a cordon session.

Owns the exception classes and the mapping of an API error answer to one of them.
Uses nothing but the standard library. Must never: swallow the session's one-line message
(every exception carries it as its str()).
"""
from __future__ import annotations

import json
import os
import time
from typing import Optional, Tuple

RECORD_KEPT_S = 24 * 3600  # how long a session's record says why it ended


def ended_reason(socket_path: str) -> Tuple[Optional[str], Optional[float]]:
    """Why the session of socket_path ended and when (Unix seconds, None if unknown), from its
    record NAME.record.json beside the socket (a day after its end); (None, None) when none."""
    path = socket_path[:-len(".sock")] + ".record.json" if socket_path.endswith(".sock") else ""
    try:
        with open(path, encoding="utf-8") as f:
            rec = json.load(f)
        since = rec.get("ended") or os.stat(path).st_mtime
    except (OSError, ValueError, AttributeError):
        return None, None
    if time.time() - since > RECORD_KEPT_S:
        return None, None
    reason = rec.get("reason")
    if not isinstance(reason, str):
        return "controller killed", None
    ended = rec.get("ended")
    return reason, float(ended) if isinstance(ended, (int, float)) else None


class CordonError(Exception):
    """Base of every error this package raises: str(e) is one line that says what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class SessionNotFound(CordonError):
    """No session of that name answers on its socket (never started, stopped, or died).
    `reason`: why it ended ("idle", "lifetime", "stopped", "owner exited", "controller killed")
    when it did in the last day, else None; `ended`: when (Unix seconds), if known."""

    def __init__(self, name: str, socket_path: str) -> None:
        reason, ended = ended_reason(socket_path)
        if reason:
            when = " at " + time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ended)) if ended else ""
            message = "no session named '%s': it ended%s (%s)" % (name, when, reason)
        else:
            message = ("no session named '%s' (no controller answers on %s; cordon session list "
                       "shows the running ones)" % (name, socket_path))
        super().__init__(message)
        self.name = name
        self.socket_path = socket_path
        self.reason = reason
        self.ended = ended


class SessionEnded(CordonError):
    """The session ended while this client was connected to it (an exec, a followed log, a
    watch of approvals): `reason` is why ("idle", "lifetime", "stopped", "owner exited", ...),
    as the stream's last event said."""

    def __init__(self, name: str, reason: str, during: str) -> None:
        super().__init__("session '%s' ended (%s) while %s" % (name, reason, during))
        self.name = name
        self.reason = reason


class APIError(CordonError):
    """The session answered a 4xx/5xx status: `status` and the API's one-line `message`.

    400 malformed request, 403 wrong uid, 404 unknown path or job (or approval), 405 wrong
    method, 409 refused by the session's state (a ninth background job, a stopping session),
    500 the session could not do it."""

    def __init__(self, status: int, message: str, method: str = "", path: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.method = method
        self.path = path

    def __repr__(self) -> str:
        return "APIError(%d, %r)" % (self.status, self.message)


class StartError(CordonError):
    """`cordon session start` failed: its last line of stderr, its exit code and all of stderr."""

    def __init__(self, message: str, exit_code: Optional[int], stderr: str) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr
