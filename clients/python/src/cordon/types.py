"""cordon.types — what a session's control API answers, as typed dataclasses.

Owns the dataclasses of docs/session-api.md (the session, jobs, approvals, refusals, the
streamed exec events, an exec's collected result) and their construction from decoded JSON.
Uses nothing but the standard library. Must never: drop what it does not model — every object
keeps the decoded JSON it came from in `raw`, so a field the API adds later is still reachable.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

Json = Dict[str, Any]


def _opt_int(v: Any) -> Optional[int]:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _opt_float(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _opt_str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


@dataclass
class SessionInfo:
    """GET /v1/session."""
    name: str
    pid: int
    profile: str
    workspace: str
    socket: str
    started: float
    owner_pid: Optional[int]
    detached: bool
    jobs_running: int
    session_exec: bool
    stopping: bool
    raw: Json = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: Json) -> "SessionInfo":
        return cls(name=str(d.get("name", "")), pid=int(d.get("pid") or 0), profile=str(d.get("profile", "")),
                   workspace=str(d.get("workspace", "")), socket=str(d.get("socket", "")),
                   started=float(d.get("started") or 0), owner_pid=_opt_int(d.get("owner_pid")),
                   detached=bool(d.get("detached")), jobs_running=int(d.get("jobs_running") or 0),
                   session_exec=bool(d.get("session_exec", True)), stopping=bool(d.get("stopping")), raw=d)


@dataclass
class Refusal:
    """Something the sandbox refused, as the `refusal` hook found it in a command's output."""
    kind: str
    path: Optional[str]
    line: Optional[str]
    reason: Optional[str]
    raw: Json = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: Json) -> "Refusal":
        return cls(kind=str(d.get("kind", "")), path=_opt_str(d.get("path")), line=_opt_str(d.get("line")),
                   reason=_opt_str(d.get("reason")), raw=d)


@dataclass
class Approval:
    """A pending question for a person: `kind` "network" (host, port) or "rerun" (command)."""
    id: int
    kind: str
    question: str
    command: Optional[str]
    host: Optional[str]
    port: Optional[int]
    job: Optional[int]
    asked: Optional[float]
    expires: Optional[float]
    raw: Json = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: Json) -> "Approval":
        return cls(id=int(d.get("id") or 0), kind=str(d.get("kind", "")), question=str(d.get("question", "")),
                   command=_opt_str(d.get("command")), host=_opt_str(d.get("host")), port=_opt_int(d.get("port")),
                   job=_opt_int(d.get("job")), asked=_opt_float(d.get("asked")),
                   expires=_opt_float(d.get("expires")), raw=d)


@dataclass
class Snapshot:
    """A review session's snapshot (POST/GET /v1/snapshots): its `label`, when `taken` (Unix
    seconds), the pending `changes` it held then and the `entries` copied (-1 when unknown)."""
    label: str
    taken: float
    changes: int
    entries: int
    raw: Json = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: Json) -> "Snapshot":
        changes, entries = d.get("changes"), d.get("entries")
        return cls(label=str(d.get("label", "")), taken=float(d.get("taken") or 0),
                   changes=int(changes) if changes is not None else -1,
                   entries=int(entries) if entries is not None else -1, raw=d)


@dataclass
class Rollback:
    """POST /v1/rollback's answer: the `label` returned to, the processes that still hold the old
    workspace open (`holders`: {"pid", "comm"}, pids as the sandbox sees them) and the one line
    naming them (`message`, None when none)."""
    label: str
    holders: List[Dict[str, Any]]
    message: Optional[str]
    raw: Json = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: Json) -> "Rollback":
        hs = d.get("holders")
        return cls(label=str(d.get("label", "")),
                   holders=[x for x in hs if isinstance(x, dict)] if isinstance(hs, list) else [],
                   message=_opt_str(d.get("message")), raw=d)


@dataclass
class Grant:
    """A grant in force (GET /v1/grants): `kind` "network" (id "gN", host, port, open
    connections) or "rerun" (id "rN", command); `scope` "session", "timed" (ends at `expires`,
    Unix seconds) or "command"; `by` who gave it, `granted` when."""
    id: str
    kind: str
    scope: str
    target: str
    host: Optional[str]
    port: Optional[int]
    command: Optional[str]
    open: Optional[int]
    by: str
    granted: float
    expires: Optional[float]
    raw: Json = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: Json) -> "Grant":
        return cls(id=str(d.get("id", "")), kind=str(d.get("kind", "")), scope=str(d.get("scope", "")),
                   target=str(d.get("target", "")), host=_opt_str(d.get("host")), port=_opt_int(d.get("port")),
                   command=_opt_str(d.get("command")), open=_opt_int(d.get("open")), by=str(d.get("by", "")),
                   granted=float(d.get("granted") or 0), expires=_opt_float(d.get("expires")), raw=d)


@dataclass
class Answer:
    """POST /v1/approvals/ID's answer."""
    id: int
    answer: str
    message: str
    raw: Json = field(repr=False, default_factory=dict)


@dataclass
class ApprovalEvent:
    """One line of GET /v1/approvals?watch=1: `event` is "subscribed" (first: from then on
    questions come to this subscriber), "question" (with `approval`) or "settled" (a question
    was answered, timed out or denied because the last approver left: its `id`, `answer` and
    `by`, who answered or "timeout")."""
    event: str
    approval: Optional[Approval]
    id: Optional[int]
    answer: Optional[str]
    by: Optional[str]
    session: Optional[str]
    reason: Optional[str] = None  # "expiring": why the session will end
    raw: Json = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, d: Json) -> "ApprovalEvent":
        a = d.get("approval")
        approval = Approval.from_json(a) if isinstance(a, dict) else None
        ident = _opt_int(d.get("id"))
        if ident is None and approval is not None:
            ident = approval.id
        return cls(event=str(d.get("event", "")), approval=approval, id=ident,
                   answer=_opt_str(d.get("answer")), by=_opt_str(d.get("by")), session=_opt_str(d.get("session")),
                   reason=_opt_str(d.get("reason")), raw=d)


@dataclass
class Job:
    """A job of GET /v1/jobs: a background job, or a foreground command still running."""
    pid: int
    command: str
    turn: Optional[str]
    background: bool
    state: str  # "running" | "restarting" | "exited" | "stopped"
    exit_code: Optional[int]
    signal: Optional[int]
    started: Optional[float]
    ended: Optional[float]
    duration_ms: Optional[float]
    timed_out: bool
    sandbox_running: bool
    log: Optional[str]
    # With --session-exec=false, a sandbox its command left processes in: the leader's end
    # and what is left (None when the session does not say).
    leader_running: Optional[bool] = None
    leader_exit_code: Optional[int] = None
    leader_signal: Optional[int] = None
    left: Optional[int] = None
    left_pids: Optional[List[int]] = None
    # A supervised job's (exec --restart): its policy and backoff as given, restarts so far, the
    # status its last run ended with, when it starts again (while "restarting"), and the pid of
    # the run now (`pid` stays its first run's, which names its log).
    restart: Optional[str] = None
    backoff: Optional[float] = None
    restarts: int = 0
    last_exit: Optional[int] = None
    next_start: Optional[float] = None
    current_pid: Optional[int] = None
    raw: Json = field(repr=False, default_factory=dict)

    @property
    def running(self) -> bool:
        return self.state == "running"

    @classmethod
    def from_json(cls, d: Json) -> "Job":
        return cls(pid=int(d.get("pid") or 0), command=str(d.get("command", "")), turn=_opt_str(d.get("turn")),
                   background=bool(d.get("background")), state=str(d.get("state", "")),
                   exit_code=_opt_int(d.get("exit_code")), signal=_opt_int(d.get("signal")),
                   started=_opt_float(d.get("started")), ended=_opt_float(d.get("ended")),
                   duration_ms=_opt_float(d.get("duration_ms")), timed_out=bool(d.get("timed_out")),
                   sandbox_running=bool(d.get("sandbox_running")), log=_opt_str(d.get("log")),
                   leader_running=d["leader_running"] if isinstance(d.get("leader_running"), bool) else None,
                   leader_exit_code=_opt_int(d.get("leader_exit_code")), leader_signal=_opt_int(d.get("leader_signal")),
                   left=_opt_int(d.get("left")),
                   left_pids=[int(p) for p in d["left_pids"]] if isinstance(d.get("left_pids"), list) else None,
                   restart=_opt_str(d.get("restart")), backoff=_opt_float(d.get("backoff")),
                   restarts=int(d.get("restarts") or 0), last_exit=_opt_int(d.get("last_exit")),
                   next_start=_opt_float(d.get("next_start")), current_pid=_opt_int(d.get("current_pid")),
                   raw=d)


# The streamed exec's events -----------------------------------------------------------------

@dataclass
class Started:
    """{"event":"started","pid":N}: the command runs, as pid N inside the sandbox."""
    pid: int
    raw: Json = field(repr=False, default_factory=dict)


@dataclass
class Output:
    """{"event":"output",...}: bytes the command wrote on `stream` ("stdout" or "stderr"; "log"
    for a followed log's bytes)."""
    stream: str
    data: bytes
    raw: Json = field(repr=False, default_factory=dict)

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


@dataclass
class ApprovalAsked:
    """{"event":"approval",...}: a question about this command was asked of the session's
    approvers. For information: the exec's client is the agent whose command wants more, and
    is not the one to answer (an approver is; see Session.watch_approvals)."""
    session: Optional[str]
    approval: Approval
    raw: Json = field(repr=False, default_factory=dict)


@dataclass
class Settled:
    """{"event":"settled",...}: the outcome of a question asked about this command: `answer`
    and `by` (who answered, or "timeout")."""
    id: int
    answer: str
    by: Optional[str]
    raw: Json = field(repr=False, default_factory=dict)


@dataclass
class Exit:
    """{"event":"exit",...}: the command's process ended; the last event of the stream."""
    pid: int
    exit_code: int
    signal: int
    timed_out: bool
    stopped: bool
    duration_ms: float
    ran_outside: bool
    refusals: List[Refusal]
    raw: Json = field(repr=False, default_factory=dict)


@dataclass
class Dropped:
    """{"event":"dropped","bytes":N} (a followed log): N bytes not yet sent were dropped by the
    log's cap (session.log_cap) while it was read."""
    bytes: int
    raw: Json = field(repr=False, default_factory=dict)


@dataclass
class SessionEndedEvent:
    """{"event":"session_ended",...}: the last line of a stream the session's end closed, with
    why (`reason`). The collecting methods raise SessionEnded with it."""
    session: Optional[str]
    reason: str
    raw: Json = field(repr=False, default_factory=dict)


@dataclass
class UnknownEvent:
    """An event this client does not know (a newer session): kept as decoded."""
    event: str
    raw: Json = field(repr=False, default_factory=dict)


Event = Union[Started, Output, ApprovalAsked, Settled, Exit, Dropped, SessionEndedEvent, UnknownEvent]


def event_from_json(d: Json) -> Event:
    kind = d.get("event")
    if kind == "output":
        if isinstance(d.get("data"), str):
            data = d["data"].encode("utf-8")
        else:
            data = base64.b64decode(d.get("data_base64") or "")
        return Output(stream=str(d.get("stream", "log")), data=data, raw=d)
    if kind == "started":
        return Started(pid=int(d.get("pid") or 0), raw=d)
    if kind == "exit":
        refusals = [Refusal.from_json(r) for r in d.get("refusals") or [] if isinstance(r, dict)]
        return Exit(pid=int(d.get("pid") or 0), exit_code=int(d.get("exit_code") or 0),
                    signal=int(d.get("signal") or 0), timed_out=bool(d.get("timed_out")),
                    stopped=bool(d.get("stopped")), duration_ms=float(d.get("duration_ms") or 0),
                    ran_outside=bool(d.get("ran_outside")), refusals=refusals, raw=d)
    if kind == "approval" and isinstance(d.get("approval"), dict):
        return ApprovalAsked(session=_opt_str(d.get("session")), approval=Approval.from_json(d["approval"]), raw=d)
    if kind == "settled":
        return Settled(id=int(d.get("id") or 0), answer=str(d.get("answer", "")), by=_opt_str(d.get("by")), raw=d)
    if kind == "dropped":
        return Dropped(bytes=int(d.get("bytes") or 0), raw=d)
    if kind == "session_ended":
        return SessionEndedEvent(session=_opt_str(d.get("session")), reason=str(d.get("reason", "")), raw=d)
    return UnknownEvent(event=str(kind), raw=d)


@dataclass
class ExecResult:
    """A foreground exec, collected: its output (decoded in `stdout`/`stderr`, exact in
    `stdout_bytes`/`stderr_bytes`), its exit event's fields, and the questions asked about it
    with their outcomes."""
    command: str
    pid: int
    exit_code: int
    signal: int
    timed_out: bool
    stopped: bool
    ran_outside: bool
    duration_ms: float
    refusals: List[Refusal]
    stdout_bytes: bytes = field(repr=False)
    stderr_bytes: bytes = field(repr=False)
    approvals: List[Approval] = field(default_factory=list)
    settled: List[Settled] = field(default_factory=list)
    raw: Json = field(repr=False, default_factory=dict)

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.stopped
