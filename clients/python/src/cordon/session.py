"""cordon.session — a cordon session from Python: start or attach, run commands, answer questions.

Owns the Session class (the endpoints of docs/session-api.md as methods), BackgroundJob, where
a session's socket is (socket_path) and how `cordon session start` is found and run.
Uses cordon._http for the requests, cordon.types for the answers, and the `cordon` binary
(PATH, CORDON_BIN or cordon_bin=) only to start a session.
Must never: stop a session it attached to (only one it started: when asked, on leaving its
`with` block, or, unless detached, by this process's exit), or run anything but `cordon
session start` itself.
"""
from __future__ import annotations

import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse
from types import TracebackType
from typing import Any, Callable, Deque, Dict, Generator, List, Mapping, Optional, Sequence, Type, Union, Literal



from ._http import Conn, Response, Transport
from ._options import start_args
from .errors import APIError, CordonError, SessionEnded, SessionNotFound, StartError
from .types import (Answer, Approval, ApprovalAsked, ApprovalEvent, Dropped, Event, ExecResult, Exit, Grant, Job,
                    Rollback, Snapshot,
                    Output, SessionEndedEvent, SessionInfo, Settled, Started, event_from_json)

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_ANSWERS = ("once", "session", "deny")
_SUN_PATH_MAX = 108  # sizeof(struct sockaddr_un.sun_path)


PathArg = Union[str, "os.PathLike[str]"]
HomeMode = Literal["overlay", "readonly", "tmpfs"]


def start_error(name: str, code: int, stderr: str) -> StartError:
    """`session start` failed: its last line of stderr says why."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    msg = lines[-1] if lines else "cordon session start %s failed (exit %d)" % (name, code)
    return StartError(msg, code, stderr)


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise CordonError("invalid session name %r: 1 to 64 characters of A-Z a-z 0-9 _ . -, "
                          "not starting with '.' or '-'" % (name,))


def socket_dir(env: Optional[Mapping[str, str]] = None) -> str:
    """$XDG_RUNTIME_DIR/cordon when XDG_RUNTIME_DIR is set (and not empty), else /tmp/cordon-UID."""
    xdg = (os.environ if env is None else env).get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "cordon")
    return "/tmp/cordon-%d" % os.getuid()


def socket_path(name: str, env: Optional[Mapping[str, str]] = None) -> str:
    """The control socket of session NAME, as the CLI finds it."""
    _check_name(name)
    path = os.path.join(socket_dir(env), name + ".sock")
    if len(os.fsencode(path)) >= _SUN_PATH_MAX:
        raise CordonError("the socket path of session '%s' is too long for a Unix socket (set "
                          "XDG_RUNTIME_DIR to a shorter directory): %s" % (name, path))
    return path


def find_cordon(cordon_bin: Optional[str] = None) -> str:
    """cordon_bin, else $CORDON_BIN, else `cordon` on PATH."""
    for candidate in (cordon_bin, os.environ.get("CORDON_BIN")):
        if candidate:
            return candidate
    found = shutil.which("cordon")
    if not found:
        raise CordonError("cannot find the cordon binary: put it on PATH, set CORDON_BIN or pass cordon_bin=")
    return found


class BackgroundJob:
    """A job started by Session.background: its `pid` (inside the sandbox), its `log` path (inside
    the sandbox) and the session's `message`; logs(), stop() and info() act on it."""

    def __init__(self, session: "Session", pid: int, log: str, message: str, command: str) -> None:
        self.session = session
        self.pid = pid
        self.log = log
        self.message = message
        self.command = command

    def __repr__(self) -> str:
        return "BackgroundJob(pid=%d, log=%r)" % (self.pid, self.log)

    def logs(self, tail: Optional[int] = None, follow: bool = False) -> str:
        return self.session.logs(self.pid, tail=tail, follow=follow)

    def follow(self, tail: Optional[int] = None) -> Generator[Event, None, None]:
        return self.session.follow_logs(self.pid, tail=tail)

    def stop(self) -> Job:
        return self.session.stop(self.pid)

    def info(self) -> Optional[Job]:
        """This job as GET /v1/jobs lists it now (None once the session forgot it)."""
        for j in self.session.jobs():
            if j.pid == self.pid:
                return j
        return None


class Session:
    """One cordon session: Session.start(name, ...) starts one, Session.attach(name) connects to
    a running one (from any process of the same user). Requests reuse one keep-alive connection;
    a Session may be shared between threads (concurrent requests get connections of their own).

    A session it starts is owned by this process unless started with detach=True: it stops when
    the process exits in any way. As a context manager it stops the session on exit if it
    started it, never one it attached to.
    """

    def __init__(self, name: str, path: Optional[str] = None, *, owned: bool = False) -> None:
        self.name = name
        self.socket_path = path or socket_path(name)
        self.owned = owned
        self._t = Transport(name, self.socket_path)

    def __repr__(self) -> str:
        return "Session(%r, socket=%r%s)" % (self.name, self.socket_path, ", owned" if self.owned else "")

    # starting and attaching ------------------------------------------------------------------

    @classmethod
    def start(cls, name: str, *, workspace: Optional[PathArg] = None, profile: Optional[str] = None,
              network_allow: Optional[Sequence[str]] = None, network_deny: Optional[Sequence[str]] = None,
              allow_write: Optional[Sequence[PathArg]] = None, hide: Optional[Sequence[PathArg]] = None,
              allow_home_workspace: Optional[bool] = None, unrestricted_network: Optional[bool] = None,
              allow_loopback: Optional[bool] = None, allow_docker: Optional[bool] = None,
              allow_host_port: Optional[Sequence[int]] = None, publish: Optional[Sequence[str]] = None,
              ask_sandbox_off: Optional[bool] = None, plan: Optional[bool] = None,
              permission_timeout: Optional[Union[float, str]] = None, policy: Optional[PathArg] = None,
              home: Optional[HomeMode] = None, session_exec: Optional[bool] = None,
              allow_ssh_agent: Optional[bool] = None, allow_gpg_agent: Optional[bool] = None,
              idle_timeout: Optional[Union[float, str]] = None,
              max_lifetime: Optional[Union[float, str]] = None,
              expiry_warning: Optional[Union[float, str]] = None,
              review: Optional[bool] = None, credential: Optional[Sequence[str]] = None,
              upstream_ca: Optional[PathArg] = None,
              detach: bool = False, owner: Optional[int] = None, extra_args: Sequence[str] = (),
              cordon_bin: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
              timeout: Optional[float] = 60) -> "Session":
        """Runs `cordon session start NAME` and returns the session once it answers.

        The session is owned by this process: it stops when this process exits, however it
        exits (SIGKILL too: `session start` watches its starter with a pidfd), and when a
        `with` block around it is left. detach=True lets it outlive this process (stop it with
        stop_session() or `cordon session stop NAME`); owner=PID ties it to that process instead.

        Every other keyword is the `session start` flag of the same name (docs/session-api.md):
        workspace (default: the current directory), profile, network_allow, network_deny,
        allow_write, hide, allow_home_workspace, unrestricted_network, allow_loopback,
        allow_docker, allow_host_port, publish ("[HOSTADDR:]HOSTPORT:PORT"), ask_sandbox_off,
        plan, permission_timeout (seconds or "30s"), policy, home ("overlay", "readonly",
        "tmpfs"), session_exec, allow_ssh_agent, allow_gpg_agent, idle_timeout, max_lifetime,
        expiry_warning (seconds or "5m": the session ends by itself when idle, or that long
        after its start; then a call fails with the reason), review (the workspace
        copy-on-write: docs/review.md), credential ("NAME=HOST[,HOST...]": docs/network.md),
        upstream_ca. None leaves the profile's
        value; False turns a boolean off. extra_args go to `session start` as they are (for a
        flag newer than this client). env replaces the environment of `cordon` (and decides the
        socket's directory through XDG_RUNTIME_DIR)."""
        _check_name(name)
        options = dict(workspace=workspace, profile=profile, network_allow=network_allow,
                       network_deny=network_deny, allow_write=allow_write, hide=hide,
                       allow_home_workspace=allow_home_workspace, unrestricted_network=unrestricted_network,
                       allow_loopback=allow_loopback, allow_docker=allow_docker, allow_host_port=allow_host_port,
                       publish=publish, ask_sandbox_off=ask_sandbox_off, plan=plan,
                       permission_timeout=permission_timeout, policy=policy, home=home, session_exec=session_exec,
                       allow_ssh_agent=allow_ssh_agent, allow_gpg_agent=allow_gpg_agent,
                       idle_timeout=idle_timeout, max_lifetime=max_lifetime,
                       expiry_warning=expiry_warning, review=review, credential=credential,
                       upstream_ca=upstream_ca)
        args = start_args(find_cordon(cordon_bin), name, options, detach, owner, extra_args)
        path = socket_path(name, env)
        # stderr to a file, not a pipe: the controller `session start` leaves running keeps
        # its stderr, and a pipe would not reach its end until the session stops.
        with tempfile.TemporaryFile() as err:
            try:
                p = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                   env=None if env is None else dict(env), timeout=timeout)
            except FileNotFoundError:
                raise CordonError("cannot run %s: no such file (set CORDON_BIN or pass cordon_bin=)" % args[0]) from None
            except subprocess.TimeoutExpired:
                raise CordonError("cordon session start %s did not return within %s s" % (name, timeout)) from None
            err.seek(0)
            stderr = err.read().decode("utf-8", "replace")
        if p.returncode != 0:
            raise start_error(name, p.returncode, stderr)
        return cls(name, path, owned=True)

    @classmethod
    def attach(cls, name: str, *, socket: Optional[str] = None) -> "Session":
        """Connects to running session NAME (e.g. one a detached worker started in another
        process); raises SessionNotFound when none answers."""
        s = cls(name, socket)
        s.status()  # raises SessionNotFound when nobody answers
        return s

    def close(self) -> None:
        """Closes the kept connection (the session keeps running)."""
        self._t.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, et: Optional[Type[BaseException]], ev: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        try:
            if self.owned:
                try:
                    self.stop_session()
                except SessionNotFound:
                    pass
        finally:
            self.close()

    # the session ------------------------------------------------------------------------------

    def status(self) -> SessionInfo:
        return SessionInfo.from_json(self._t.json("GET", "/v1/session"))

    def stop_session(self, wait: bool = True, timeout: float = 60) -> None:
        """POST /v1/session/stop; with wait, returns once the session's socket is gone."""
        try:
            self._t.json("POST", "/v1/session/stop")
        except APIError as e:
            if e.status != 409:  # 409: already stopping
                raise
        self._t.close()
        if not wait:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not os.path.exists(self.socket_path):
                return
            try:
                self._t.json("GET", "/v1/session")
                self._t.close()
            except (SessionNotFound, CordonError):
                return
            time.sleep(0.05)
        raise CordonError("session '%s' did not stop within %s s" % (self.name, timeout))

    # commands ---------------------------------------------------------------------------------

    def stream(self, command: str, timeout: Optional[float] = None, turn: Optional[str] = None
               ) -> Generator[Event, None, None]:
        """POST /v1/exec: the command's events as they happen (Started, Output, ApprovalAsked,
        Exit). Leaving the loop early closes the connection; the command keeps running."""
        body: Dict[str, Any] = {"command": command}
        if timeout is not None:
            body["timeout"] = timeout
        if turn is not None:
            body["turn"] = turn
        c, resp = self._t.open("POST", "/v1/exec", body)
        return self._events(c, resp)

    def _events(self, c: Conn, resp: Response) -> Generator[Event, None, None]:
        for line in self._t.lines(c, resp):
            try:
                d = json.loads(line)
            except ValueError:
                raise CordonError("session '%s' sent a line that is not JSON: %r" % (self.name, line[:200])) from None
            if isinstance(d, dict):
                yield event_from_json(d)

    def exec(self, command: str, timeout: Optional[float] = None, turn: Optional[str] = None, *,
             on_stdout: Optional[Callable[[str], None]] = None,
             on_stderr: Optional[Callable[[str], None]] = None) -> ExecResult:
        """Runs command (a `bash -c` string) in the session and waits for its end.

        timeout: seconds, then TERM and KILL (result.timed_out). turn: a tag for cancel().
        on_stdout/on_stderr get the output as it arrives. Questions about the command go to
        the session's approvers (watch_approvals), not to this call: result.approvals and
        result.settled say what was asked and how it ended."""
        out, err = bytearray(), bytearray()
        pid = 0
        exit_ev: Optional[Exit] = None
        approvals: List[Approval] = []
        settled: List[Settled] = []
        ended: Optional[str] = None
        for ev in self.stream(command, timeout=timeout, turn=turn):
            if isinstance(ev, Output):
                if ev.stream == "stderr":
                    err += ev.data
                    if on_stderr is not None:
                        on_stderr(ev.text)
                else:
                    out += ev.data
                    if on_stdout is not None:
                        on_stdout(ev.text)
            elif isinstance(ev, Exit):
                exit_ev = ev
            elif isinstance(ev, ApprovalAsked):
                approvals.append(ev.approval)
            elif isinstance(ev, Settled):
                settled.append(ev)
            elif isinstance(ev, Started):
                pid = ev.pid
            elif isinstance(ev, SessionEndedEvent):
                ended = ev.reason
        if ended is not None and (exit_ev is None or exit_ev.stopped):  # its end stopped the command
            raise SessionEnded(self.name, ended, "the command ran")
        if exit_ev is None:
            raise CordonError("session '%s' ended the exec of %r before its exit event" % (self.name, command))
        return ExecResult(command=command, pid=exit_ev.pid or pid, exit_code=exit_ev.exit_code,
                          signal=exit_ev.signal, timed_out=exit_ev.timed_out, stopped=exit_ev.stopped,
                          ran_outside=exit_ev.ran_outside, duration_ms=exit_ev.duration_ms,
                          refusals=exit_ev.refusals, stdout_bytes=bytes(out), stderr_bytes=bytes(err),
                          approvals=approvals, settled=settled, raw=exit_ev.raw)

    def background(self, command: str, turn: Optional[str] = None, restart: Optional[str] = None,
                   backoff: Optional[float] = None) -> BackgroundJob:
        """Starts command as a background job (its output to its log); 409 APIError when eight
        are running already. restart ("on-failure", "on-failure:N", "always", "always:N") has
        the session start the same command again when it ends, waiting backoff seconds (default
        1) doubled at each restart up to 300; stop() ends it and its restarts. A bad value is a
        400 APIError naming it."""
        body: Dict[str, Any] = {"command": command, "background": True}
        if turn is not None:
            body["turn"] = turn
        if restart is not None:
            body["restart"] = restart
        if backoff is not None:
            body["backoff"] = backoff
        d = self._t.json("POST", "/v1/exec", body)
        return BackgroundJob(self, int(d.get("pid") or 0), str(d.get("log", "")), str(d.get("message", "")), command)

    def jobs(self) -> List[Job]:
        d = self._t.json("GET", "/v1/jobs")
        return [Job.from_json(j) for j in d.get("jobs") or [] if isinstance(j, dict)]

    def logs_bytes(self, pid: int, tail: Optional[int] = None) -> bytes:
        """A background job's log as it is now; with tail, only its last `tail` lines."""
        c, resp = self._t.open("GET", "/v1/jobs/%d/log" % int(pid))
        if tail is None:
            return self._t.read_body(c, resp)
        if tail <= 0:
            self._t.read_body(c, resp)
            return b""
        keep: Deque[bytes] = collections.deque(maxlen=tail)
        partial = b""
        while True:
            chunk = self._t.read1(c, resp)
            if not chunk:
                break
            parts = (partial + chunk).split(b"\n")
            partial = parts.pop()
            keep.extend(p + b"\n" for p in parts)
        self._t.read_body(c, resp)
        if partial:
            keep.append(partial)
        return b"".join(keep)

    def logs(self, pid: int, tail: Optional[int] = None, follow: bool = False) -> str:
        """A background job's log as it is now (with tail, its last `tail` lines); with follow,
        and what the job writes next, returned once the job has ended (SessionEnded when the
        session ends first)."""
        if not follow:
            return self.logs_bytes(pid, tail).decode("utf-8", "replace")
        out = bytearray()
        for ev in self.follow_logs(pid, tail=tail):
            if isinstance(ev, Output):
                out += ev.data
            elif isinstance(ev, Dropped):
                out += b"%s[cordon: %d bytes of this log were dropped while it was read]\n" % (
                    b"\n" if out and not out.endswith(b"\n") else b"", ev.bytes)
        return out.decode("utf-8", "replace")

    def follow_logs(self, pid: int, tail: Optional[int] = None) -> Generator[Event, None, None]:
        """GET /v1/jobs/PID/log?follow=1&format=ndjson: the log (from its last `tail` lines, when
        given) and then what the job writes, as Output events (stream "log") as they come; a
        Dropped event where the log's cap dropped bytes not yet sent; the job's Exit last, once
        it has ended. The session's end raises SessionEnded with its reason. Leaving the loop
        early closes the connection; the job runs on."""
        if tail is not None and (not isinstance(tail, int) or tail < 0):
            raise ValueError("tail must be a number of lines >= 0, not %r" % (tail,))
        path = "/v1/jobs/%d/log?follow=1&format=ndjson" % int(pid)
        if tail is not None:
            path += "&tail=%d" % tail
        c, resp = self._t.open("GET", path)
        for ev in self._events(c, resp):
            if isinstance(ev, SessionEndedEvent):
                raise SessionEnded(self.name, ev.reason, "the log was followed")
            yield ev

    def stop(self, pid: int) -> Job:
        """Stops a job's process group (TERM, then KILL after the grace period); returns the job."""
        return Job.from_json(self._t.json("POST", "/v1/jobs/%d/stop" % int(pid)))

    def cancel(self, turn: str) -> List[int]:
        """Stops every process group that commands of this turn started; returns their pids."""
        d = self._t.json("POST", "/v1/turns/%s/cancel" % urllib.parse.quote(turn, safe=""))
        return [int(p) for p in d.get("stopped") or []]

    # approvals --------------------------------------------------------------------------------

    def approvals(self) -> List[Approval]:
        d = self._t.json("GET", "/v1/approvals")
        return [Approval.from_json(a) for a in d.get("approvals") or [] if isinstance(a, dict)]

    def answer(self, approval_id: int, answer: str, by: Optional[str] = None,
               for_seconds: Optional[float] = None) -> Answer:
        """Answers a pending question: "once", "session" or "deny" (404 APIError when it is no
        longer pending). by: who answered (1 to 200 bytes), for the settled events."""
        if answer not in _ANSWERS:
            raise ValueError("answer must be one of %s, not %r" % (", ".join(_ANSWERS), answer))
        body: Dict[str, Any] = {"answer": answer}
        if by is not None:
            body["by"] = by
        if for_seconds is not None:  # with "session": the allow ends that many seconds from now
            body["for"] = for_seconds
        d = self._t.json("POST", "/v1/approvals/%d" % int(approval_id), body)
        return Answer(id=int(d.get("id") or approval_id), answer=str(d.get("answer", answer)),
                      message=str(d.get("message", "")), raw=d)

    # snapshots (review mode) -------------------------------------------------------------------

    def snapshot(self, label: Optional[str] = None) -> Snapshot:
        """Records the pending changes of a --review session as they are, under label (a plain
        name) or the next of s1, s2, ...; 409 APIError when the session is not in review mode or
        the label is taken, 400 for a bad label."""
        body: Dict[str, Any] = {} if label is None else {"label": label}
        return Snapshot.from_json(self._t.json("POST", "/v1/snapshots", body))

    def snapshots(self) -> List[Snapshot]:
        """The session's snapshots, oldest first."""
        d = self._t.json("GET", "/v1/snapshots")
        return [Snapshot.from_json(x) for x in d.get("snapshots") or [] if isinstance(x, dict)]

    def rollback(self, label: str) -> Rollback:
        """Returns the session's workspace to snapshot label (404 APIError when there is none);
        the processes still holding the old workspace open are in the answer's holders."""
        return Rollback.from_json(self._t.json("POST", "/v1/rollback", {"label": label}))

    # grants -----------------------------------------------------------------------------------

    def grants(self) -> List[Grant]:
        """The grants in force: destinations a person allowed (gN) and commands allowed to run
        outside for the session (rN), with scope, author, expiry and open connections."""
        d = self._t.json("GET", "/v1/grants")
        return [Grant.from_json(g) for g in d.get("grants") or [] if isinstance(g, dict)]

    def grant_network(self, target: str, for_seconds: Optional[float] = None, by: Optional[str] = None) -> Grant:
        """Allows "HOST:PORT" ("[V6]:PORT") ahead of any question, for for_seconds or the session
        (the policy's deny rules still win); 400 APIError for a bad target or duration."""
        body: Dict[str, Any] = {"network": target}
        if for_seconds is not None:
            body["for"] = for_seconds
        if by is not None:
            body["by"] = by
        return Grant.from_json(self._t.json("POST", "/v1/grants", body))

    def revoke(self, grant_id: str) -> int:
        """Ends a grant now; the number of connections it let through that were closed (404
        APIError when no such grant is in force)."""
        d = self._t.json("DELETE", "/v1/grants/%s" % urllib.parse.quote(grant_id, safe=""))
        return int(d.get("closed") or 0)

    # review mode and forks (docs/review.md) ---------------------------------------------------

    def review(self) -> Dict[str, Any]:
        """GET /v1/review: the session's pending changes, as `cordon review --json` prints them:
        {"workspace", "changes": [{"path", "change", "host_trusted", "why", "kind", "mode",
        "host_mode", "link"}]}. 409 APIError when the session is not in review mode. Applying
        and discarding stay the person's (`cordon apply`, `cordon discard`)."""
        return self._t.json("GET", "/v1/review")

    def fork(self, new_name: str) -> "Session":
        """POST /v1/fork: starts session new_name over this session's workspace, its pending
        changes included, in review mode with a layer of its own (`cordon review --fork
        new_name`), with this session's start options and owner. Returns the new session, owned
        as this one is. 409 APIError when new_name is running or its fork layer still holds
        pending changes."""
        _check_name(new_name)
        d = self._t.json("POST", "/v1/fork", {"name": new_name})
        sock = d.get("socket")
        return Session(str(d.get("name") or new_name), sock if isinstance(sock, str) else None, owned=self.owned)

    def watch_approvals(self) -> Generator[ApprovalEvent, None, None]:
        """GET /v1/approvals?watch=1: subscribes as an approver. Yields "subscribed" first, then
        every question as it is asked ("question"; the ones pending then come at once) and its
        outcome ("settled"), until the loop is left (which closes the connection and
        unsubscribes) or the session ends (SessionEnded, with its reason). With no approver subscribed, the session denies every
        question at once; answer each with answer(ev.approval.id, ...), from a person."""
        c, resp = self._t.open("GET", "/v1/approvals?watch=1")
        ctype = (resp.getheader("Content-Type") or "").split(";")[0].strip()
        if ctype != "application/x-ndjson":
            self._t.read_body(c, resp)
            raise CordonError("session '%s' cannot be watched for approvals (GET /v1/approvals?watch=1 answered "
                              "%s, not a stream): its cordon is older than this client" % (self.name, ctype or "?"))
        return self._approval_events(c, resp)

    def _approval_events(self, c: Conn, resp: Response) -> Generator[ApprovalEvent, None, None]:
        for line in self._t.lines(c, resp):
            try:
                d = json.loads(line)
            except ValueError:
                raise CordonError("session '%s' sent a line that is not JSON: %r" % (self.name, line[:200])) from None
            if isinstance(d, dict) and d.get("event") == "session_ended":
                raise SessionEnded(self.name, str(d.get("reason", "")), "approvals were watched")
            if isinstance(d, dict):
                yield ApprovalEvent.from_json(d)
