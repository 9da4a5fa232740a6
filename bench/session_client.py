#!/usr/bin/python3
"""bench/session_client.py — the cost of one exec through a session's control API, from one
long-lived client, against spawning `bash -c true` directly from the same process.

    session_client.py SOCKET RUNS [BLOCK]
    session_client.py --cli CORDON NAME RUNS [BLOCK]

Keeps ONE HTTP/1.1 keep-alive connection on the session's Unix socket and sends RUNS sequential
`POST /v1/exec {"command":"true"}`; each is timed from the first byte sent until the NDJSON
stream's exit event has been read (and the chunked body consumed, so the connection is ready for
the next request). In the same process, RUNS times os.posix_spawn("/bin/bash", ["bash", "-c",
"true"]) + os.waitpid: the baseline. The two alternate in blocks of BLOCK (25) back-to-back
runs, so both see the same machine state over time; at each switch the first run of the block
is not counted and the process pauses 50 ms first, so that what the session still does after an
exit event (reaping, bookkeeping) is charged to the next exec, as in a real command loop, and
not to the baseline. (Alternating one by one would put that work on the spawn and inflate both.)
Prints one JSON object: medians, means, min and max in milliseconds. Raises (exit 1) when the
session answers anything but a clean exit 0, or closes the connection.

With --cli, the same alternation in blocks for the CLI's round trip: os.posix_spawn of
`CORDON exec NAME -- true` (in this process's working directory and environment, so its
XDG_RUNTIME_DIR) against `bash -c true`, each + os.waitpid, output to /dev/null. hyperfine
runs all of one command's runs before the next's, so on a busy machine the two can see
different loads; blocks of 25 back to back keep them side by side.
"""
import json
import os
import socket
import statistics
import sys
import time

REQUEST_BODY = b'{"command":"true"}'
REQUEST = (b"POST /v1/exec HTTP/1.1\r\nHost: cordon\r\nContent-Type: application/json\r\n"
           b"Content-Length: " + str(len(REQUEST_BODY)).encode() + b"\r\n\r\n" + REQUEST_BODY)


class Conn:
    """A minimal HTTP/1.1 client on a Unix socket: enough for chunked NDJSON responses."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise RuntimeError("the session closed the connection")
        self.buf += data

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def _exactly(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def exec_true(self):
        """One exec; returns the exit event (a dict)."""
        self.sock.sendall(REQUEST)
        status = self._line()
        if not status.startswith(b"HTTP/1.1 200"):
            raise RuntimeError("unexpected status: %r" % status)
        headers = {}
        while True:
            line = self._line()
            if not line:
                break
            k, _, v = line.partition(b":")
            headers[k.strip().lower()] = v.strip().lower()
        if headers.get(b"connection") == b"close":
            raise RuntimeError("the session does not keep the connection alive")
        if headers.get(b"transfer-encoding") == b"chunked":
            body = b""
            while True:
                size = int(self._line().split(b";")[0], 16)
                if size == 0:
                    while self._line():  # trailers, then the empty line
                        pass
                    break
                body += self._exactly(size)
                self._exactly(2)  # CRLF after each chunk
        else:
            body = self._exactly(int(headers.get(b"content-length", b"0")))
        exit_event = None
        for line in body.splitlines():
            ev = json.loads(line)
            if ev.get("event") == "exit":
                exit_event = ev
        if not exit_event or exit_event.get("exit_code") != 0:
            raise RuntimeError("no clean exit event in: %r" % body[:500])
        return exit_event


def spawn_bash_true(env):
    pid = os.posix_spawn("/bin/bash", ["bash", "-c", "true"], env)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise RuntimeError("bash -c true: status %d" % status)


def spawn_ok(argv, env, devnull):
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise RuntimeError("%s: status %d" % (" ".join(argv), status))


def alternate(kinds, runs, block):
    """Runs each (name, fn, times) in turn, in blocks of block back-to-back timed runs; at each
    switch a 50 ms pause and one run not counted (what a session still does after an exit
    event is charged to its next exec, not to the other kind)."""
    for _ in range(10):  # warm up every path
        for _, fn, _ in kinds:
            fn()
    while any(len(times) < runs for _, _, times in kinds):
        for _, fn, times in kinds:
            n = min(block, runs - len(times))
            if n <= 0:
                continue
            time.sleep(0.05)
            fn()  # not counted: the first run after a switch
            for _ in range(n):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)


def main_cli(argv):
    cordon, name, runs = argv[0], argv[1], int(argv[2])
    block = int(argv[3]) if len(argv) == 4 else 25
    if runs <= 0 or block <= 0:
        raise ValueError("RUNS and BLOCK must be positive")
    env = dict(os.environ)
    devnull = os.open(os.devnull, os.O_WRONLY)
    cli = [cordon, "exec", name, "--", "true"]
    kinds = (("cli", lambda: spawn_ok(cli, env, devnull), []),
             ("bash", lambda: spawn_ok(["/bin/bash", "-c", "true"], env, devnull), []))
    alternate(kinds, runs, block)
    print(json.dumps({"cli_exec": summary(kinds[0][2]), "bash": summary(kinds[1][2]), "block": block}))
    return 0


def summary(xs):
    ms = [x * 1e3 for x in xs]
    return {"median": statistics.median(ms), "mean": statistics.fmean(ms), "min": min(ms), "max": max(ms),
            "runs": len(ms)}


def main():
    if len(sys.argv) in (5, 6) and sys.argv[1] == "--cli":
        return main_cli(sys.argv[2:])
    if len(sys.argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    path, runs = sys.argv[1], int(sys.argv[2])
    block = int(sys.argv[3]) if len(sys.argv) == 4 else 25
    if runs <= 0 or block <= 0:
        raise ValueError("RUNS and BLOCK must be positive")
    env = dict(os.environ)
    conn = Conn(path)
    kinds = (("api", conn.exec_true, []), ("spawn", lambda: spawn_bash_true(env), []))
    alternate(kinds, runs, block)
    print(json.dumps({"api_exec": summary(kinds[0][2]), "spawn_bash": summary(kinds[1][2]), "block": block}))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, RuntimeError, ValueError) as e:
        sys.stderr.write("session_client.py: %s\n" % e)
        sys.exit(1)
