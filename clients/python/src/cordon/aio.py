"""cordon.aio — a cordon session from asyncio: AsyncSession, the Session API with `await`.

Owns AsyncSession and AsyncBackgroundJob and their HTTP/1.1 over the session's Unix socket on
asyncio streams (one connection a request, closed after its answer), with the same answers
(cordon.types) and errors (cordon.errors) as Session. Cancelling a task that awaits exec()
stops the command (POST /v1/jobs/PID/stop) before the CancelledError goes on; cancelling
stream(), logs() or watch_approvals() ends the wait and closes the connection.
Uses only the standard library (asyncio), cordon._options for `session start`'s arguments.
Must never: block the event loop on I/O, stop a session it attached to, or leave a command it
was cancelled in the middle of running.
"""
from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
import urllib.parse
from types import TracebackType
from typing import Any, AsyncIterator, Dict, List, Mapping, Optional, Sequence, Tuple, Type, Union

from ._options import start_args
from .errors import APIError, CordonError, SessionEnded, SessionNotFound
from .session import HomeMode, PathArg, _check_name, find_cordon, socket_path, start_error
from ._http import remove_stale
from .types import (Answer, Approval, ApprovalAsked, ApprovalEvent, Dropped, Event, ExecResult, Exit, Grant, Job,
                    Rollback, Snapshot,
                    Output, SessionEndedEvent, SessionInfo, Settled, Started, event_from_json)

_MAX_HEAD = 64 * 1024
_ANSWERS = ("once", "session", "deny")


class _Response:
    """One answer on its own connection: status, headers, then the body (Content-Length,
    chunked, or to the close)."""

    def __init__(self, name: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.name = name
        self.r = reader
        self.w = writer
        self.status = 0
        self.headers: Dict[str, str] = {}
        self._left: Optional[int] = None  # bytes left (Content-Length or current chunk); None: to the close
        self._chunked = False
        self._done = False

    def _lost(self, why: str) -> CordonError:
        self.close()
        return CordonError("lost the connection to session '%s': %s" % (self.name, why))

    async def _line(self) -> bytes:
        try:
            line = await self.r.readuntil(b"\r\n")
        except asyncio.IncompleteReadError:
            raise self._lost("it closed the connection") from None
        except asyncio.LimitOverrunError:
            raise self._lost("a line longer than %d bytes" % _MAX_HEAD) from None
        return line[:-2]

    async def head(self) -> None:
        while True:
            parts = (await self._line()).split(b" ", 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
                raise self._lost("not an HTTP/1.x status line")
            self.status = int(parts[1])
            self.headers = {}
            while True:
                ln = await self._line()
                if not ln:
                    break
                k, _, v = ln.partition(b":")
                self.headers[k.strip().lower().decode("latin-1")] = v.strip().decode("latin-1")
            if not 100 <= self.status < 200:
                break
        self._chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        cl = self.headers.get("content-length")
        if self._chunked:
            self._left = -1
        elif cl is not None and cl.isdigit():
            self._left = int(cl)
            self._done = self._left == 0
        elif self.status in (204, 304):
            self._done = True

    async def read1(self) -> bytes:
        """The next bytes of the body; b"" at its end."""
        if self._done:
            return b""
        if self._chunked:
            assert self._left is not None
            if self._left <= 0:
                if self._left == 0:
                    await self._line()  # the CRLF after the previous chunk
                field = (await self._line()).split(b";")[0].strip()
                try:
                    size = int(field, 16)
                except ValueError:
                    raise self._lost("a chunk size %r" % field[:20]) from None
                if size == 0:
                    while await self._line():
                        pass
                    self._done = True
                    return b""
                self._left = size
            data = await self.r.read(self._left)
            if not data:
                raise self._lost("it closed the connection in the middle of an answer")
            self._left -= len(data)
            return data
        if self._left is None:
            data = await self.r.read(65536)
            if not data:
                self._done = True
            return data
        data = await self.r.read(min(self._left, 65536))
        if not data:
            raise self._lost("it closed the connection in the middle of an answer")
        self._left -= len(data)
        self._done = self._left == 0
        return data

    async def read(self) -> bytes:
        parts: List[bytes] = []
        while True:
            data = await self.read1()
            if not data:
                return b"".join(parts)
            parts.append(data)

    async def lines(self) -> AsyncIterator[bytes]:
        partial = b""
        while True:
            data = await self.read1()
            if not data:
                break
            pieces = (partial + data).split(b"\n")
            partial = pieces.pop()
            for p in pieces:
                if p:
                    yield p
        if partial:
            yield partial

    def close(self) -> None:
        self.w.close()


class AsyncBackgroundJob:
    """A job started by AsyncSession.background (as cordon.BackgroundJob, with awaits)."""

    def __init__(self, session: "AsyncSession", pid: int, log: str, message: str, command: str) -> None:
        self.session = session
        self.pid = pid
        self.log = log
        self.message = message
        self.command = command

    def __repr__(self) -> str:
        return "AsyncBackgroundJob(pid=%d, log=%r)" % (self.pid, self.log)

    async def logs(self, tail: Optional[int] = None, follow: bool = False) -> str:
        return await self.session.logs(self.pid, tail=tail, follow=follow)

    def follow(self, tail: Optional[int] = None) -> AsyncIterator[Event]:
        return self.session.follow_logs(self.pid, tail=tail)

    async def stop(self) -> Job:
        return await self.session.stop(self.pid)

    async def info(self) -> Optional[Job]:
        for j in await self.session.jobs():
            if j.pid == self.pid:
                return j
        return None


class AsyncSession:
    """One cordon session, from asyncio: `await AsyncSession.start(name, ...)` or
    `await AsyncSession.attach(name)`; `async with` stops a session it started on leaving the
    block. A session it starts is owned by this process unless detach=True (see Session.start)."""

    def __init__(self, name: str, path: Optional[str] = None, *, owned: bool = False) -> None:
        self.name = name
        self.socket_path = path or socket_path(name)
        self.owned = owned

    def __repr__(self) -> str:
        return "AsyncSession(%r, socket=%r%s)" % (self.name, self.socket_path, ", owned" if self.owned else "")

    @classmethod
    async def start(cls, name: str, *, workspace: Optional[PathArg] = None, profile: Optional[str] = None,
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
                    timeout: Optional[float] = 60) -> "AsyncSession":
        """As Session.start (the same keywords, the same ownership), without blocking the loop."""
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
        # stderr to a file, not a pipe: the controller keeps it (see Session.start)
        with tempfile.TemporaryFile() as err:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=err,
                    env=None if env is None else dict(env))
            except FileNotFoundError:
                raise CordonError("cannot run %s: no such file (set CORDON_BIN or pass cordon_bin=)" % args[0]) from None
            try:
                code = await asyncio.wait_for(proc.wait(), timeout)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()
                raise CordonError("cordon session start %s did not return within %s s" % (name, timeout)) from None
            except asyncio.CancelledError:
                # `session start` is not interrupted half-way (its session would come up all
                # the same, owned by this process): once it returns, the session it started
                # is stopped, then the cancellation goes on
                try:
                    if await asyncio.wait_for(proc.wait(), timeout) == 0:
                        await cls(name, path, owned=True).stop_session()
                except (CordonError, asyncio.TimeoutError):
                    proc.kill()
                raise
            err.seek(0)
            stderr = err.read().decode("utf-8", "replace")
        if code != 0:
            raise start_error(name, code, stderr)
        return cls(name, path, owned=True)

    @classmethod
    async def attach(cls, name: str, *, socket: Optional[str] = None) -> "AsyncSession":
        s = cls(name, socket)
        await s.status()
        return s

    async def __aenter__(self) -> "AsyncSession":
        return self

    async def __aexit__(self, et: Optional[Type[BaseException]], ev: Optional[BaseException],
                        tb: Optional[TracebackType]) -> None:
        if self.owned:
            try:
                await self.stop_session()
            except SessionNotFound:
                pass

    # requests ---------------------------------------------------------------------------------

    async def _open(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> _Response:
        try:
            reader, writer = await asyncio.open_unix_connection(self.socket_path, limit=_MAX_HEAD)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            if isinstance(e, ConnectionRefusedError):
                remove_stale(self.socket_path)
            raise SessionNotFound(self.name, self.socket_path) from None
        except OSError as e:
            raise CordonError("cannot connect to session '%s' at %s: %s"
                              % (self.name, self.socket_path, e.strerror or e)) from None
        resp = _Response(self.name, reader, writer)
        try:
            payload = None if body is None else json.dumps(body, separators=(",", ":")).encode()
            head = "%s %s HTTP/1.1\r\nHost: cordon\r\nConnection: close\r\n" % (method, path)
            if payload is not None:
                head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(payload)
            writer.write((head + "\r\n").encode() + (payload or b""))
            await writer.drain()
            await resp.head()
        except OSError as e:
            raise resp._lost(str(e)) from None
        except BaseException:
            resp.close()
            raise
        if resp.status >= 400:
            try:
                data = await resp.read()
            finally:
                resp.close()
            message = ""
            try:
                v = json.loads(data)
                if isinstance(v, dict) and isinstance(v.get("error"), str):
                    message = v["error"]
            except ValueError:
                pass
            raise APIError(resp.status, message or ("%s %s: HTTP %d" % (method, path, resp.status)), method, path)
        return resp

    async def _json(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        resp = await self._open(method, path, body)
        try:
            data = await resp.read()
        finally:
            resp.close()
        try:
            v = json.loads(data)
        except ValueError:
            v = None
        if not isinstance(v, dict):
            raise CordonError("session '%s' answered %s %s with something not a JSON object: %r"
                              % (self.name, method, path, data[:200]))
        return v

    def _decode(self, line: bytes) -> Dict[str, Any]:
        try:
            d = json.loads(line)
        except ValueError:
            raise CordonError("session '%s' sent a line that is not JSON: %r" % (self.name, line[:200])) from None
        return d if isinstance(d, dict) else {}

    # the session ------------------------------------------------------------------------------

    async def status(self) -> SessionInfo:
        return SessionInfo.from_json(await self._json("GET", "/v1/session"))

    async def stop_session(self, wait: bool = True, timeout: float = 60) -> None:
        """POST /v1/session/stop; with wait, returns once the session's socket is gone."""
        try:
            await self._json("POST", "/v1/session/stop")
        except APIError as e:
            if e.status != 409:
                raise
        if not wait:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not os.path.exists(self.socket_path):
                return
            try:
                await self._json("GET", "/v1/session")
            except CordonError:
                return
            await asyncio.sleep(0.05)
        raise CordonError("session '%s' did not stop within %s s" % (self.name, timeout))

    # commands ---------------------------------------------------------------------------------

    def _exec_body(self, command: str, timeout: Optional[float], turn: Optional[str]) -> Dict[str, Any]:
        body: Dict[str, Any] = {"command": command}
        if timeout is not None:
            body["timeout"] = timeout
        if turn is not None:
            body["turn"] = turn
        return body

    async def stream(self, command: str, timeout: Optional[float] = None, turn: Optional[str] = None
                     ) -> AsyncIterator[Event]:
        """POST /v1/exec: the command's events as they happen. Leaving the loop early (or being
        cancelled) closes the connection; the command keeps running (exec() stops it)."""
        resp = await self._open("POST", "/v1/exec", self._exec_body(command, timeout, turn))
        try:
            async for line in resp.lines():
                yield event_from_json(self._decode(line))
        finally:
            resp.close()

    async def exec(self, command: str, timeout: Optional[float] = None, turn: Optional[str] = None) -> ExecResult:
        """Runs command and returns its result (as Session.exec). Cancelled (asyncio), it stops
        the command first: TERM to its group, KILL after the grace period."""
        resp = await self._open("POST", "/v1/exec", self._exec_body(command, timeout, turn))
        out, err = bytearray(), bytearray()
        pid = 0
        exit_ev: Optional[Exit] = None
        approvals: List[Approval] = []
        settled: List[Settled] = []
        ended: Optional[str] = None
        lines = resp.lines()
        try:
            async for line in lines:
                ev = event_from_json(self._decode(line))
                if isinstance(ev, Output):
                    (err if ev.stream == "stderr" else out).extend(ev.data)
                elif isinstance(ev, Exit):
                    exit_ev = ev
                elif isinstance(ev, Started):
                    pid = ev.pid
                elif isinstance(ev, ApprovalAsked):
                    approvals.append(ev.approval)
                elif isinstance(ev, Settled):
                    settled.append(ev)
                elif isinstance(ev, SessionEndedEvent):
                    ended = ev.reason
        except asyncio.CancelledError:
            await self._stop_cancelled(resp, pid)
            raise
        finally:
            resp.close()
        if ended is not None and (exit_ev is None or exit_ev.stopped):  # its end stopped the command
            raise SessionEnded(self.name, ended, "the command ran")
        if exit_ev is None:
            raise CordonError("session '%s' ended the exec of %r before its exit event" % (self.name, command))
        return ExecResult(command=command, pid=exit_ev.pid or pid, exit_code=exit_ev.exit_code,
                          signal=exit_ev.signal, timed_out=exit_ev.timed_out, stopped=exit_ev.stopped,
                          ran_outside=exit_ev.ran_outside, duration_ms=exit_ev.duration_ms,
                          refusals=exit_ev.refusals, stdout_bytes=bytes(out), stderr_bytes=bytes(err),
                          approvals=approvals, settled=settled, raw=exit_ev.raw)

    async def _stop_cancelled(self, resp: _Response, pid: int) -> None:
        """An exec cancelled: its pid (from the started event, which comes first: read up to it
        when the cancel came sooner, for at most 10 s), then stop. Errors are not raised over
        the CancelledError; a second cancel ends the wait."""
        try:
            if not pid:
                async def first_pid() -> int:
                    async for line in resp.lines():
                        ev = event_from_json(self._decode(line))
                        if isinstance(ev, Started):
                            return ev.pid
                        if isinstance(ev, Exit):
                            return 0
                    return 0
                pid = await asyncio.wait_for(first_pid(), 10)
            if pid:
                await asyncio.wait_for(self.stop(pid), 60)
        except (CordonError, asyncio.TimeoutError, OSError):
            pass

    async def background(self, command: str, turn: Optional[str] = None, restart: Optional[str] = None,
                         backoff: Optional[float] = None) -> AsyncBackgroundJob:
        """As Session.background: restart and backoff make it a supervised job."""
        body: Dict[str, Any] = {"command": command, "background": True}
        if turn is not None:
            body["turn"] = turn
        if restart is not None:
            body["restart"] = restart
        if backoff is not None:
            body["backoff"] = backoff
        d = await self._json("POST", "/v1/exec", body)
        return AsyncBackgroundJob(self, int(d.get("pid") or 0), str(d.get("log", "")), str(d.get("message", "")),
                                  command)

    async def jobs(self) -> List[Job]:
        d = await self._json("GET", "/v1/jobs")
        return [Job.from_json(j) for j in d.get("jobs") or [] if isinstance(j, dict)]

    async def logs_bytes(self, pid: int, tail: Optional[int] = None) -> bytes:
        """A background job's log as it is now; with tail, only its last `tail` lines."""
        resp = await self._open("GET", "/v1/jobs/%d/log" % int(pid))
        try:
            data = await resp.read()
        finally:
            resp.close()
        if tail is None:
            return data
        if tail <= 0:
            return b""
        lines = data.splitlines(keepends=True)
        return b"".join(lines[-tail:])

    async def logs(self, pid: int, tail: Optional[int] = None, follow: bool = False) -> str:
        """As Session.logs: with follow, returned once the job has ended."""
        if not follow:
            return (await self.logs_bytes(pid, tail)).decode("utf-8", "replace")
        out = bytearray()
        async for ev in self.follow_logs(pid, tail=tail):
            if isinstance(ev, Output):
                out += ev.data
            elif isinstance(ev, Dropped):
                out += b"%s[cordon: %d bytes of this log were dropped while it was read]\n" % (
                    b"\n" if out and not out.endswith(b"\n") else b"", ev.bytes)
        return out.decode("utf-8", "replace")

    async def follow_logs(self, pid: int, tail: Optional[int] = None) -> AsyncIterator[Event]:
        """As Session.follow_logs: Output events (stream "log"), Dropped, the job's Exit last;
        SessionEnded when the session ends first. Leaving the loop closes the connection."""
        if tail is not None and (not isinstance(tail, int) or tail < 0):
            raise ValueError("tail must be a number of lines >= 0, not %r" % (tail,))
        path = "/v1/jobs/%d/log?follow=1&format=ndjson" % int(pid)
        if tail is not None:
            path += "&tail=%d" % tail
        resp = await self._open("GET", path)
        try:
            async for line in resp.lines():
                ev = event_from_json(self._decode(line))
                if isinstance(ev, SessionEndedEvent):
                    raise SessionEnded(self.name, ev.reason, "the log was followed")
                yield ev
        finally:
            resp.close()

    async def stop(self, pid: int) -> Job:
        return Job.from_json(await self._json("POST", "/v1/jobs/%d/stop" % int(pid)))

    async def cancel(self, turn: str) -> List[int]:
        d = await self._json("POST", "/v1/turns/%s/cancel" % urllib.parse.quote(turn, safe=""))
        return [int(p) for p in d.get("stopped") or []]

    # approvals --------------------------------------------------------------------------------

    async def approvals(self) -> List[Approval]:
        d = await self._json("GET", "/v1/approvals")
        return [Approval.from_json(a) for a in d.get("approvals") or [] if isinstance(a, dict)]

    async def answer(self, approval_id: int, answer: str, by: Optional[str] = None,
               for_seconds: Optional[float] = None) -> Answer:
        if answer not in _ANSWERS:
            raise ValueError("answer must be one of %s, not %r" % (", ".join(_ANSWERS), answer))
        body: Dict[str, Any] = {"answer": answer}
        if by is not None:
            body["by"] = by
        if for_seconds is not None:  # with "session": the allow ends that many seconds from now
            body["for"] = for_seconds
        d = await self._json("POST", "/v1/approvals/%d" % int(approval_id), body)
        return Answer(id=int(d.get("id") or approval_id), answer=str(d.get("answer", answer)),
                      message=str(d.get("message", "")), raw=d)

    # snapshots (review mode) -------------------------------------------------------------------

    async def snapshot(self, label: Optional[str] = None) -> Snapshot:
        """Records the pending changes of a --review session as they are, under label (a plain
        name) or the next of s1, s2, ...; 409 APIError when the session is not in review mode or
        the label is taken, 400 for a bad label."""
        body: Dict[str, Any] = {} if label is None else {"label": label}
        return Snapshot.from_json(await self._json("POST", "/v1/snapshots", body))

    async def snapshots(self) -> List[Snapshot]:
        """The session's snapshots, oldest first."""
        d = await self._json("GET", "/v1/snapshots")
        return [Snapshot.from_json(x) for x in d.get("snapshots") or [] if isinstance(x, dict)]

    async def rollback(self, label: str) -> Rollback:
        """Returns the session's workspace to snapshot label (404 APIError when there is none);
        the processes still holding the old workspace open are in the answer's holders."""
        return Rollback.from_json(await self._json("POST", "/v1/rollback", {"label": label}))

    # grants -----------------------------------------------------------------------------------

    async def grants(self) -> List[Grant]:
        """The grants in force: destinations a person allowed (gN) and commands allowed to run
        outside for the session (rN), with scope, author, expiry and open connections."""
        d = await self._json("GET", "/v1/grants")
        return [Grant.from_json(g) for g in d.get("grants") or [] if isinstance(g, dict)]

    async def grant_network(self, target: str, for_seconds: Optional[float] = None, by: Optional[str] = None) -> Grant:
        """Allows "HOST:PORT" ("[V6]:PORT") ahead of any question, for for_seconds or the session
        (the policy's deny rules still win); 400 APIError for a bad target or duration."""
        body: Dict[str, Any] = {"network": target}
        if for_seconds is not None:
            body["for"] = for_seconds
        if by is not None:
            body["by"] = by
        return Grant.from_json(await self._json("POST", "/v1/grants", body))

    async def revoke(self, grant_id: str) -> int:
        """Ends a grant now; the number of connections it let through that were closed (404
        APIError when no such grant is in force)."""
        d = await self._json("DELETE", "/v1/grants/%s" % urllib.parse.quote(grant_id, safe=""))
        return int(d.get("closed") or 0)

    async def review(self) -> Dict[str, Any]:
        """As Session.review: GET /v1/review, the pending changes as `cordon review --json`."""
        return await self._json("GET", "/v1/review")

    async def fork(self, new_name: str) -> "AsyncSession":
        """As Session.fork: POST /v1/fork, a new session from this one's workspace and pending
        changes, owned as this one is."""
        _check_name(new_name)
        d = await self._json("POST", "/v1/fork", {"name": new_name})
        sock = d.get("socket")
        return AsyncSession(str(d.get("name") or new_name), sock if isinstance(sock, str) else None,
                            owned=self.owned)

    async def watch_approvals(self) -> AsyncIterator[ApprovalEvent]:
        """As Session.watch_approvals: "subscribed", then each question and its outcome, until
        the loop is left or the task cancelled (which unsubscribes)."""
        resp = await self._open("GET", "/v1/approvals?watch=1")
        try:
            ctype = resp.headers.get("content-type", "").split(";")[0].strip()
            if ctype != "application/x-ndjson":
                raise CordonError("session '%s' cannot be watched for approvals (GET /v1/approvals?watch=1 answered "
                                  "%s, not a stream): its cordon is older than this client" % (self.name, ctype or "?"))
            async for line in resp.lines():
                d = self._decode(line)
                if d.get("event") == "session_ended":
                    raise SessionEnded(self.name, str(d.get("reason", "")), "approvals were watched")
                yield ApprovalEvent.from_json(d)
        finally:
            resp.close()


__all__: Tuple[str, ...] = ("AsyncSession", "AsyncBackgroundJob")
