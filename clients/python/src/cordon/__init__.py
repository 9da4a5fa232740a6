"""cordon — the Python client of a cordon session's control API (docs/session-api.md).

    from cordon import Session
    with Session.start("work", workspace=".") as s:
        r = s.exec("make test")
        print(r.exit_code, r.stdout)

Owns the package's public names (re-exported from cordon.session, cordon.types,
cordon.errors). Uses only the standard library. Must never: import anything outside it.
"""
from .errors import APIError, CordonError, SessionNotFound, StartError
from .session import BackgroundJob, Session, find_cordon, socket_dir, socket_path
from .types import (Answer, Approval, ApprovalAsked, ApprovalEvent, Event, ExecResult, Exit, Job, Output, Refusal,
                    SessionInfo, Settled, Started, UnknownEvent)

__version__ = "0.1.0"

__all__ = [
    "APIError", "Answer", "Approval", "ApprovalAsked", "ApprovalEvent", "BackgroundJob", "CordonError", "Event",
    "ExecResult", "Exit", "Job", "Output", "Refusal", "Session", "SessionInfo", "SessionNotFound", "Settled",
    "StartError", "Started", "UnknownEvent", "find_cordon", "socket_dir", "socket_path",
]
