"""cordon._http — HTTP/1.1 over a session's Unix socket, one keep-alive connection reused.

Owns the connections of one Session: a small HTTP/1.1 client on an AF_UNIX socket (the request
in one write; the answer's head, then its body by Content-Length, chunked, or to the close),
the idle connection kept for the next request, the retry of a request that met a connection
the session had closed while idle, and the mapping of answers to JSON, lines or errors
(cordon.errors). Not http.client: its head parsing (through the email package) cost about a
third of a millisecond of CPU per request, 5 to 10% of an exec's round trip.
Uses only the standard library (socket, json, threading).
Must never: send a request twice once any of its answer has arrived, reuse a connection whose
answer was not read to its end, or connect anywhere but the socket path it was given.
"""
from __future__ import annotations

import json
import os
import socket
import stat
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .errors import APIError, CordonError, SessionNotFound

_MAX_HEAD = 64 * 1024  # a head longer than this is not from a cordon session


class _Closed(Exception):
    """The session closed the connection before any byte of the answer."""


class _Malformed(Exception):
    pass


class Conn:
    """One connection: the socket and the bytes read from it not consumed yet."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except BaseException:
            self.sock.close()
            raise
        self.buf = b""
        self.got_any = False  # a byte of the current answer arrived

    def close(self) -> None:
        self.sock.close()

    def fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            if not self.got_any and not self.buf:
                raise _Closed()
            raise _Malformed("the session closed the connection in the middle of an answer")
        self.got_any = True
        self.buf += data

    def line(self) -> bytes:
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                out, self.buf = self.buf[:i], self.buf[i + 2:]
                return out
            if len(self.buf) > _MAX_HEAD:
                raise _Malformed("a line of more than %d bytes" % _MAX_HEAD)
            self.fill()

    def exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def request(self, method: str, path: str, payload: Optional[bytes]) -> "Response":
        head = "%s %s HTTP/1.1\r\nHost: cordon\r\n" % (method, path)
        if payload is not None:
            head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(payload)
        data = (head + "\r\n").encode("utf-8")
        self.got_any = False
        self.sock.sendall(data + payload if payload is not None else data)
        while True:
            status_line = self.line()
            parts = status_line.split(b" ", 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
                raise _Malformed("not an HTTP/1.x status line: %r" % status_line[:100])
            status = int(parts[1])
            headers: Dict[str, str] = {}
            while True:
                ln = self.line()
                if not ln:
                    break
                k, sep, v = ln.partition(b":")
                if not sep:
                    raise _Malformed("a header line without a colon: %r" % ln[:100])
                headers[k.strip().lower().decode("latin-1")] = v.strip().decode("latin-1")
            if 100 <= status < 200:
                continue  # an interim answer: the real one follows
            conn_hdr = headers.get("connection", "").lower()
            will_close = conn_hdr == "close" or (parts[0] == b"HTTP/1.0" and conn_hdr != "keep-alive")
            return Response(self, method, status, headers, will_close)


class Response:
    """An answer: status, headers, and its body read piece by piece (read1) or whole (read)."""

    def __init__(self, conn: Conn, method: str, status: int, headers: Dict[str, str], will_close: bool) -> None:
        self._c = conn
        self.status = status
        self.headers = headers
        self.will_close = will_close
        self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        self.complete = False
        # chunked: -1 before the first chunk, 0 after a chunk (its CRLF follows), >0 bytes left
        self._left: Optional[int] = -1 if self.chunked else None
        if not self.chunked:
            cl = headers.get("content-length")
            if cl is not None:
                if not cl.isdigit():
                    raise _Malformed("Content-Length %r" % cl)
                self._left = int(cl)
            elif method == "HEAD" or status in (204, 304):
                self._left = 0
            else:
                self.will_close = True  # the body ends with the connection
        if self._left == 0 and not self.chunked:
            self.complete = True

    def getheader(self, name: str, default: Optional[str] = None) -> Optional[str]:
        return self.headers.get(name.lower(), default)

    def _take(self, n: Optional[int]) -> bytes:
        c = self._c
        if not c.buf:
            c.fill()
        if n is None or n >= len(c.buf):
            out, c.buf = c.buf, b""
        else:
            out, c.buf = c.buf[:n], c.buf[n:]
        return out

    def read1(self) -> bytes:
        """The next bytes of the body (what has arrived, at least one byte); b"" at its end."""
        if self.complete:
            return b""
        c = self._c
        if self.chunked:
            assert self._left is not None
            if self._left <= 0:
                if self._left == 0:
                    c.exactly(2)  # the CRLF after the previous chunk
                size_field = c.line().split(b";")[0].strip()
                try:
                    size = int(size_field, 16)
                except ValueError:
                    raise _Malformed("a chunk size %r" % size_field[:20]) from None
                if size == 0:
                    while c.line():  # trailers, then the empty line
                        pass
                    self.complete = True
                    return b""
                self._left = size
            out = self._take(self._left)
            self._left -= len(out)
            return out
        if self._left is not None:
            out = self._take(self._left)
            self._left -= len(out)
            if self._left == 0:
                self.complete = True
            return out
        try:  # to the close
            return self._take(None)
        except _Malformed:
            self.complete = True
            return b""

    def read(self) -> bytes:
        parts: List[bytes] = []
        while True:
            data = self.read1()
            if not data:
                return b"".join(parts)
            parts.append(data)


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


class Transport:
    """The connections of one session. Safe to share between threads: a request takes the idle
    connection or opens one, and gives it back when its answer was read to the end."""

    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.path = path
        self._idle: Optional[Conn] = None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            c, self._idle = self._idle, None
        if c is not None:
            c.close()

    def _take(self) -> Tuple[Conn, bool]:
        with self._lock:
            c, self._idle = self._idle, None
        if c is not None:
            return c, True
        return self._connect(), False

    def _connect(self) -> Conn:
        try:
            return Conn(self.path)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            if isinstance(e, ConnectionRefusedError):
                remove_stale(self.path)
            raise SessionNotFound(self.name, self.path) from None
        except OSError as e:
            raise CordonError("cannot connect to session '%s' at %s: %s"
                              % (self.name, self.path, e.strerror or e)) from None

    def _give(self, c: Conn, resp: Response) -> None:
        if resp.will_close or not resp.complete or c.buf:
            c.close()
            return
        with self._lock:
            if self._idle is None:
                self._idle = c
                return
        c.close()

    def _lost(self, c: Conn, e: BaseException) -> CordonError:
        c.close()
        if isinstance(e, _Malformed):
            return CordonError("session '%s' sent a malformed HTTP answer: %s" % (self.name, e))
        if isinstance(e, _Closed):
            return CordonError("lost the connection to session '%s': it closed the connection" % self.name)
        return CordonError("lost the connection to session '%s': %s" % (self.name, e))

    def open(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Tuple[Conn, Response]:
        """Sends one request; returns its connection and the answer (status and headers read).
        An error status is read and raised as APIError (the connection kept when it can be)."""
        payload = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        c, reused = self._take()
        while True:
            try:
                resp = c.request(method, path, payload)
                break
            except (_Closed, BrokenPipeError, ConnectionResetError) as e:
                # a reused connection the session had closed while idle: nothing of an answer
                # arrived, so the request was not taken; send it again on a new one
                if reused and not c.got_any:
                    c.close()
                    c, reused = self._connect(), False
                    continue
                raise self._lost(c, e) from None
            except (OSError, _Malformed) as e:
                raise self._lost(c, e) from None
        if resp.status >= 400:
            try:
                data = resp.read()
            except (OSError, _Malformed, _Closed):
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

    def read1(self, c: Conn, resp: Response) -> bytes:
        try:
            return resp.read1()
        except (OSError, _Malformed, _Closed) as e:
            raise self._lost(c, e) from None

    def read_body(self, c: Conn, resp: Response) -> bytes:
        try:
            data = resp.read()
        except (OSError, _Malformed, _Closed) as e:
            raise self._lost(c, e) from None
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

    def lines(self, c: Conn, resp: Response) -> Iterator[bytes]:
        """The answer's lines (without their newline) as they arrive. The connection goes back to
        the idle slot after the last; closing the iterator early closes it instead."""
        done = False
        partial = b""
        try:
            while True:
                data = self.read1(c, resp)
                if not data:
                    break
                if partial:
                    data = partial + data
                pieces = data.split(b"\n")
                partial = pieces.pop()
                for p in pieces:
                    if p:
                        yield p
            if partial:
                yield partial
            done = True
        finally:
            if done:
                self._give(c, resp)
            else:
                c.close()
