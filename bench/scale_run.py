#!/usr/bin/python3
"""bench/scale_run.py — the ceiling of one machine: N sessions started at once and kept, each
running a command every second. Run by bench/scale.sh (which says what it prints); alone:

    scale_run.py CORDON DURATION N [N...]

For each N, in a private XDG_RUNTIME_DIR and N fresh workspaces under /var/tmp:
  start     N `cordon session start sI --detach` spawned at once; each one's time until it
            returned (the session answers), and the wall time until the last did;
  memory    once all are up and have run one command: per session, the PSS of its processes
            (the controller from `session status --json` and everything under it, from
            /proc/PID/smaps_rollup), and the drop of the machine's MemAvailable since before the
            start divided by N (what a session costs the machine: page tables, namespaces,
            tmpfs, kernel memory that no PSS shows);
  load      DURATION seconds in which every session runs `true` once a second (POST /v1/exec
            on one kept-alive connection per session, as an agent platform talks to it; a
            thread per session, the second's start spread over the second), each exec timed to
            its exit event; beside them, in the same seconds, one thread spawning `bash -c true`
            every second (posix_spawn + waitpid): the floor, which sees the same load; and the
            CPU the sessions' processes used meanwhile (utime+stime, with the reaped commands'),
            per exec and in cores;
  stop      every session stopped (`cordon session stop`), bounded by a 30 s timeout each.
Prints one line of JSON per N. Exits 1 when a session does not start or an exec fails.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session_client import Conn, spawn_bash_true  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * (len(xs) - 1)))))
    return xs[k]


def mem_available_kib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


def children_map():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_pss_kib(root, kids):
    total, todo, seen = 0, [root], 0
    while todo and seen < 10000:
        pid = todo.pop()
        seen += 1
        total += pss_kib(pid)
        todo.extend(kids.get(pid, []))
    return total


def tree_cpu_s(root, kids):
    """utime+stime of the tree's processes, with what their reaped children used (cutime,
    cstime: the commands init reaped), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo, seen = 0, [root], 0
    while todo and seen < 10000:
        pid = todo.pop()
        seen += 1
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            total += sum(int(x) for x in fields[11:15])
        except (OSError, ValueError):
            pass
        todo.extend(kids.get(pid, []))
    return total / tick


def run_n(cordon, n, duration, base):
    run = os.path.join(base, f"run-{n}")
    os.mkdir(run, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=run)
    names = [f"s{i}" for i in range(n)]
    for name in names:
        os.mkdir(os.path.join(base, f"ws-{n}-{name}"))
    avail0 = mem_available_kib()
    procs, t0 = [], time.monotonic()
    for name in names:
        p = subprocess.Popen([cordon, "session", "start", name, "--detach"], env=env,
                             cwd=os.path.join(base, f"ws-{n}-{name}"),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append((name, p, time.monotonic()))
    starts, failed = [], []
    for name, p, began in procs:
        _, err = p.communicate(timeout=300)
        starts.append(time.monotonic() - began)
        if p.returncode != 0:
            failed.append(f"{name}: {err.decode(errors='replace').strip()}")
    wall = time.monotonic() - t0
    result = {"n": n}
    try:
        if failed:
            raise RuntimeError("sessions did not start: " + "; ".join(failed[:3]))
        socks = [os.path.join(run, "cordon", f"{name}.sock") for name in names]
        conns = [Conn(s) for s in socks]
        for c in conns:
            c.exec_true()
        pids = []
        for name in names:
            out = subprocess.run([cordon, "session", "status", name, "--json"], env=env,
                                 capture_output=True, timeout=30, check=True).stdout
            pids.append(json.loads(out)["pid"])
        kids = children_map()
        pss = [tree_pss_kib(pid, kids) for pid in pids]
        avail1 = mem_available_kib()

        lat, floor, errors = [], [], []
        lock = threading.Lock()
        stop_at = time.monotonic() + duration

        def session_loop(i, conn):
            mine = []
            nxt = time.monotonic() + (i % 100) / 100.0
            try:
                while nxt < stop_at:
                    time.sleep(max(0.0, nxt - time.monotonic()))
                    a = time.perf_counter()
                    conn.exec_true()
                    mine.append(time.perf_counter() - a)
                    nxt += 1.0
            except Exception as e:  # a failed exec ends the run with its cause
                with lock:
                    errors.append(f"s{i}: {e}")
            with lock:
                lat.extend(mine)

        def floor_loop():
            env_f = dict(os.environ)
            nxt = time.monotonic() + 0.5
            while nxt < stop_at:
                time.sleep(max(0.0, nxt - time.monotonic()))
                a = time.perf_counter()
                spawn_bash_true(env_f)
                floor.append(time.perf_counter() - a)
                nxt += 1.0

        threads = [threading.Thread(target=session_loop, args=(i, c)) for i, c in enumerate(conns)]
        threads.append(threading.Thread(target=floor_loop))
        load0 = os.getloadavg()[0]
        kids = children_map()
        cpu0 = sum(tree_cpu_s(pid, kids) for pid in pids)
        t_load = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(duration + 120)
        t_load = time.monotonic() - t_load
        kids = children_map()
        cpu1 = sum(tree_cpu_s(pid, kids) for pid in pids)
        if errors:
            raise RuntimeError("execs failed: " + "; ".join(errors[:3]))
        ms = lambda x: None if x is None else round(x * 1000, 2)  # noqa: E731
        result.update({
            "start_wall_s": round(wall, 2),
            "start_p50_s": round(statistics.median(starts), 3),
            "start_max_s": round(max(starts), 3),
            "pss_per_session_mib": round(statistics.mean(pss) / 1024, 2),
            "memavailable_drop_per_session_mib": round((avail0 - avail1) / 1024 / n, 2),
            "execs": len(lat),
            "exec_p50_ms": ms(pct(lat, 50)), "exec_p99_ms": ms(pct(lat, 99)),
            "floor_p50_ms": ms(pct(floor, 50)), "floor_p99_ms": ms(pct(floor, 99)),
            "session_cpu_ms_per_exec": round((cpu1 - cpu0) * 1000 / max(1, len(lat)), 2),
            "session_cpu_cores": round((cpu1 - cpu0) / t_load, 3),
            "loadavg_1m_before": round(load0, 2), "loadavg_1m_after": round(os.getloadavg()[0], 2),
        })
        if result["floor_p50_ms"]:
            result["exec_p50_over_floor"] = round(result["exec_p50_ms"] / result["floor_p50_ms"], 2)
            result["exec_p99_over_floor"] = round(result["exec_p99_ms"] / result["floor_p99_ms"], 2)
        for c in conns:
            try:
                c.sock.close()
            except (AttributeError, OSError):
                pass
    finally:
        for name in names:
            subprocess.run([cordon, "session", "stop", name], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=30, check=False)
    return result


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: scale_run.py CORDON DURATION N [N...]")
    cordon, duration = sys.argv[1], int(sys.argv[2])
    base = tempfile.mkdtemp(prefix="cordon-bench-scale.", dir="/var/tmp")
    try:
        for n in map(int, sys.argv[3:]):
            print(json.dumps(run_n(cordon, n, duration, base)), flush=True)
    finally:
        subprocess.run(["rm", "-rf", base], check=False)


if __name__ == "__main__":
    main()
