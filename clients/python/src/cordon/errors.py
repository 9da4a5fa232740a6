"""cordon.errors — the exceptions of the Python client of a cordon session.

Owns the exception classes and the mapping of an API error answer to one of them.
Uses nothing but the standard library. Must never: swallow the session's one-line message
(every exception carries it as its str()).
"""
from __future__ import annotations

from typing import Optional


class CordonError(Exception):
    """Base of every error this package raises: str(e) is one line that says what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class SessionNotFound(CordonError):
    """No session of that name answers on its socket (never started, stopped, or died)."""

    def __init__(self, name: str, socket_path: str) -> None:
        super().__init__("no session named '%s' (no controller answers on %s; cordon session list "
                         "shows the running ones)" % (name, socket_path))
        self.name = name
        self.socket_path = socket_path


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
