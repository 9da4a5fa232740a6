#!/usr/bin/env python3
"""bench/output_run.py — one `cordon run --json` for bench/output.sh, measured from outside.

    output_run.py [--time GNU_TIME] CORDON_BIN ARGS...    (stdin from /dev/null)
    output_run.py [--time GNU_TIME] --plain PROGRAM ARGS...

cordon's stdout (the command's output, relayed, then the --json object on its own last line)
is read and thrown away here, keeping only its last bytes: the result object must be read, so
stdout cannot simply be /dev/null. stderr goes to a temporary file. While cordon runs, a thread
reads VmHWM (the peak RSS of that one process, the controller) from /proc/PID/status every
2 ms; it cannot see the last moments before exit. With --time, cordon runs under GNU time
(`-f %M`), whose figure covers those too: it is the peak of cordon, of any process cordon
reaped (the sandbox's init, which reaped the command's processes) and of time's own copy
before the exec, so an upper bound for the controller. (wait4 here would not do: a child
spawned by this Python process starts with Python's RSS as its peak.) Prints one line:

    detect_ms duration_ms wall_ms vmhwm_kib time_maxrss_kib exit_code refusals relayed_bytes

time_maxrss_kib is -1 without --time; relayed_bytes counts what reached stdout before the
result line. Exits 2 when the last line is not a result object (cordon's stderr is shown).
--plain runs a program that prints no result object (the baseline without cordon): the
fields that come from the result are -1 and relayed_bytes is all of stdout.
"""
import fcntl
import json
import os
import sys
import tempfile
import threading
import time

F_SETPIPE_SZ = 1031


def main():
    argv = sys.argv[1:]
    time_out, plain = None, False
    if argv[:1] == ["--time"] and len(argv) > 2:
        time_out = tempfile.NamedTemporaryFile(prefix="cordon-bench-time.")
        argv = [argv[1], "-f", "%M", "-o", time_out.name] + argv[2:]
    if argv[:1] == ["--plain"]:
        plain, argv = True, argv[1:]
    if not argv or argv[0].startswith("-"):
        sys.exit("usage: output_run.py [--time GNU_TIME] [--plain] PROGRAM ARGS...")

    def maxrss():
        if not time_out:
            return -1
        with open(time_out.name) as f:  # "Command exited with ..." lines, then %M
            return int(f.read().split()[-1])

    r, w = os.pipe()
    try:
        fcntl.fcntl(r, F_SETPIPE_SZ, 1 << 20)  # fewer, larger reads here
    except OSError:
        pass
    err = tempfile.TemporaryFile()
    null = os.open("/dev/null", os.O_RDONLY)
    actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, w, 1),
               (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]
    t0 = time.monotonic()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
    os.close(w)
    os.close(null)

    hwm = [0]
    done = threading.Event()

    def cordon_pid():
        if not time_out:
            return pid
        try:  # GNU time's one child
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = f.read().split()
            return int(kids[0]) if kids else None
        except OSError:
            return None

    def poll():
        target = None
        while not done.is_set():
            target = target or cordon_pid()
            if target is None:
                done.wait(0.001)
                continue
            path = "/proc/%d/status" % target
            try:
                with open(path) as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            hwm[0] = max(hwm[0], int(line.split()[1]))
                            break
            except OSError:
                pass
            done.wait(0.002)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    total, tail = 0, b""
    buf = bytearray(1 << 20)
    with os.fdopen(r, "rb", buffering=0) as out:
        while True:
            n = out.readinto(buf)  # no new object per read: this loop must keep up with cordon
            if not n:
                break
            total += n
            tail = bytes(buf[n - 8192:n]) if n >= 8192 else (tail + bytes(buf[:n]))[-8192:]
    _, status = os.waitpid(pid, 0)
    wall_ms = (time.monotonic() - t0) * 1e3
    done.set()
    poller.join()

    if plain:
        print("-1 -1 %.1f %d %d %d -1 %d" % (wall_ms, hwm[0], maxrss(), os.waitstatus_to_exitcode(status),
                                            total))
        return
    stripped = tail.rstrip(b"\n")
    start = stripped.rfind(b"\n") + 1  # where the last line begins in tail
    last = stripped[start:]
    try:
        res = json.loads(last)
        detect_ms, duration_ms = float(res["detect_ms"]), float(res["duration_ms"])
    except (ValueError, KeyError, TypeError):
        err.seek(0)
        sys.stderr.write("output_run.py: no result object on the last line of stdout; stderr:\n")
        sys.stderr.write(err.read().decode(errors="replace")[-4000:])
        sys.exit(2)
    relayed = total - (len(tail) - start)
    print("%.3f %.3f %.1f %d %d %d %d %d" % (detect_ms, duration_ms, wall_ms, hwm[0], maxrss(),
                                          os.waitstatus_to_exitcode(status), len(res.get("refusals", [])),
                                          relayed))


if __name__ == "__main__":
    main()
