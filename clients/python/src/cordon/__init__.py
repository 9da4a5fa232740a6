"""cordon — the Python client of a cordon session's control API (docs/session-api.md).

    from cordon import Session
    with Session.start("work", workspace=".") as s:   # owned: it ends with this program
        r = s.exec("make test")
        print(r.exit_code, r.stdout)

and from asyncio, cordon.AsyncSession (cordon.aio) with the same methods, awaited.

Owns the package's public names (re-exported from cordon.session, cordon.aio, cordon.types,
cordon.errors) and __version__, the cordon release it belongs to (the build writes it into
cordon/_version.py; from a checkout it is read from the engine's CMakeLists.txt). Uses only the standard library. Must never: import anything outside it.
"""
from .errors import APIError, CordonError, SessionEnded, SessionNotFound, StartError
from .session import BackgroundJob, Session, find_cordon, socket_dir, socket_path
from .types import (Answer, Approval, ApprovalAsked, ApprovalEvent, Dropped, Event, ExecResult, Exit, Grant, Job,
                    Rollback, Snapshot,
                    Output, Refusal, SessionEndedEvent, SessionInfo, Settled, Started, UnknownEvent)

from .aio import AsyncBackgroundJob, AsyncSession


def _version() -> str:
    from importlib import import_module
    try:  # cordon/_version.py is written by the build (clients/python/_build) into the wheel
        return str(import_module("._version", __name__).version)
    except ImportError:
        pass
    import os
    import re
    cmake = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "CMakeLists.txt")
    try:
        with open(cmake, encoding="utf-8") as f:
            m = re.search(r"project\(cordon VERSION ([0-9][0-9A-Za-z.+-]*)", f.read())
    except OSError:
        m = None
    return m.group(1) if m else "0+unknown"


__version__ = _version()

__all__ = [
    "APIError", "Answer", "AsyncBackgroundJob", "AsyncSession", "Approval", "ApprovalAsked", "ApprovalEvent", "BackgroundJob", "CordonError", "Dropped", "Event",
    "ExecResult", "Exit", "Job", "Output", "Refusal", "Rollback", "Session", "SessionEnded", "SessionEndedEvent", "SessionInfo", "SessionNotFound", "Settled",
    "Snapshot", "StartError", "Started", "UnknownEvent", "find_cordon", "socket_dir", "socket_path",
]
