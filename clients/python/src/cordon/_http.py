"""cordon._http — HTTP/1.1 over a session's Unix socket, one keep-alive connection reused.

Owns the connections of one Session: http.client over AF_UNIX, the idle connection kept for
the next request, the retry of a request that met a connection the session had closed while
idle, and the mapping of answers to JSON, lines or errors (cordon.errors).
Uses only the standard library (http.client, socket, json, threading).
Must never: send a request twice once any of its answer has arrived, reuse a connection whose
answer was not read to its end, or connect anywhere but the socket path it was given.
"""
from __future__ import annotations

import http.client
import json
import os
import socket
import stat
import threading
from typing import Any, Dict, Iterator, Optional, Tuple

from .errors import APIError, CordonError, SessionNotFound


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("cordon", timeout=None)
        self._path = path
        self._hold = False
        self._held: Optional[bytes] = None

    def request_one_write(self, method: str, path: str, body: Optional[bytes], headers: Dict[str, str]) -> None:
        """request(), but the head and the body leave in one write: http.client writes them
        separately, and the session would wake for the head and again for the body."""
        self._hold, self._held = body is not None, None
        try:
            self.request(method, path, body=body, headers=headers)
        finally:
            self._hold, self._held = False, None

    def send(self, data: Any) -> None:
        if self._hold and isinstance(data, bytes):
            if self._held is None:
                self._held = data
                return
            data, self._held, self._hold = self._held + data, None, False
        super().send(data)

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self._path)
        except BaseException:
            s.close()
            raise
        self.sock = s


def remove_stale(path: str) -> None:
    """A socket nobody answers on (its controller died): remove it and NAME.jobs.json, as the
    CLI does, so the name is free again. Only if it is a socket."""
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            return
        os.unlink(path)
        if path.endswith(".sock"):
            os.unlink(path[:-5] + ".jobs.json")
    except OSError:
        pass


# Errors that mean "the session closed this connection while it was idle": a request on a
# reused connection that fails with one of them, before any answer, is sent again.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)


class Transport:
    """The connections of one session. Safe to share between threads: a request takes the idle
    connection or opens one, and gives it back when its answer was read to the end."""

    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.path = path
        self._idle: Optional[_UnixConnection] = None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            c, self._idle = self._idle, None
        if c is not None:
            c.close()

    def _take(self) -> Tuple[_UnixConnection, bool]:
        with self._lock:
            c, self._idle = self._idle, None
        if c is not None:
            return c, True
        return self._connect(), False

    def _connect(self) -> _UnixConnection:
        c = _UnixConnection(self.path)
        try:
            c.connect()
        except (FileNotFoundError, ConnectionRefusedError) as e:
            if isinstance(e, ConnectionRefusedError):
                remove_stale(self.path)
            raise SessionNotFound(self.name, self.path) from None
        except OSError as e:
            raise CordonError("cannot connect to session '%s' at %s: %s"
                              % (self.name, self.path, e.strerror or e)) from None
        return c

    def _give(self, c: _UnixConnection, resp: http.client.HTTPResponse) -> None:
        if resp.will_close or not resp.isclosed():
            c.close()
            return
        with self._lock:
            if self._idle is None:
                self._idle = c
                return
        c.close()

    def open(self, method: str, path: str, body: Optional[Dict[str, Any]] = None
             ) -> Tuple[_UnixConnection, http.client.HTTPResponse]:
        """Sends one request; returns its connection and the answer (status and headers read).
        An error status is read and raised as APIError (the connection kept when it can be)."""
        payload = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = {"Host": "cordon"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        c, reused = self._take()
        while True:
            try:
                c.request_one_write(method, path, payload, headers)
                resp = c.getresponse()
                break
            except _STALE as e:
                c.close()
                if reused:
                    c, reused = self._connect(), False
                    continue
                raise CordonError("lost the connection to session '%s': %s" % (self.name, e)) from None
            except OSError as e:
                c.close()
                raise CordonError("lost the connection to session '%s': %s" % (self.name, e)) from None
            except http.client.HTTPException as e:
                c.close()
                raise CordonError("session '%s' sent a malformed HTTP answer: %r" % (self.name, e)) from None
        if resp.status >= 400:
            try:
                data = resp.read()
            except (OSError, http.client.HTTPException):
                data = b""
            self._give(c, resp)
            message = ""
            try:
                v = json.loads(data)
                if isinstance(v, dict) and isinstance(v.get("error"), str):
                    message = v["error"]
            except ValueError:
                pass
            raise APIError(resp.status, message or ("%s %s: HTTP %d" % (method, path, resp.status)), method, path)
        return c, resp

    def read_body(self, c: _UnixConnection, resp: http.client.HTTPResponse) -> bytes:
        try:
            data = resp.read()
        except (OSError, http.client.HTTPException) as e:
            c.close()
            raise CordonError("lost the connection to session '%s': %s" % (self.name, e)) from None
        self._give(c, resp)
        return data

    def json(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        c, resp = self.open(method, path, body)
        data = self.read_body(c, resp)
        try:
            v = json.loads(data)
        except ValueError:
            v = None
        if not isinstance(v, dict):
            raise CordonError("session '%s' answered %s %s with something not a JSON object: %r"
                              % (self.name, method, path, data[:200]))
        return v

    def lines(self, c: _UnixConnection, resp: http.client.HTTPResponse) -> Iterator[bytes]:
        """The answer's lines (without their newline) as they arrive. The connection goes back to
        the idle slot after the last; closing the iterator early closes it instead."""
        done = False
        try:
            while True:
                try:
                    line = resp.readline()
                except (OSError, http.client.HTTPException) as e:
                    raise CordonError("lost the connection to session '%s': %s" % (self.name, e)) from None
                if not line:
                    break
                if line.endswith(b"\n"):
                    line = line[:-1]
                if line:
                    yield line
            done = True
        finally:
            if done:
                self._give(c, resp)
            else:
                c.close()
