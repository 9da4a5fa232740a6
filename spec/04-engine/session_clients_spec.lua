-- spec/04-engine/session_clients_spec.lua — the Python (clients/python) and TypeScript
-- (clients/typescript) clients of the session control API, driven through real interpreters:
-- /usr/bin/python3 with the package installed by `pip install --no-index --target`, and node
-- with the tarball of `npm pack` installed offline into a scratch project. Each fact is checked
-- from what a script using the client prints (one JSON line) and, where it matters, from the
-- session itself (curl on its socket). The two examples of docs/agents.md are extracted from it
-- between their markers and run as written. tsc (make client-deps puts it in build-deps/)
-- checks index.js against index.d.ts and that TypeScript example; without it those
-- checks are skipped (h.skip, saying why).
--
-- Ownership: a session a program starts is the program's unless it asks for detach; a Python
-- and a Node program that start one and then die by SIGKILL or an uncaught exception leave no
-- session (no controller, no socket, no process of the session's), as root and as uid 65534;
-- the same program with detach leaves it running (so the check can fail). Also: the asyncio
-- API, AbortSignal, the typed options of `session start` (every flag of its --help has one in
-- both clients), a timeout's exit status 124 through the API and both clients, and both
-- packages carrying the engine's version.
--
-- Every session lives in a private XDG_RUNTIME_DIR and is reaped at clean-up
-- (h.session_reap). Waits are bounded; no time is asserted.
local h = require("spec.helpers")
local cjson = require("cjson")

local function abs(p)
    if p:sub(1, 1) == "/" then return p end
    return (os.getenv("PWD") or ".") .. "/" .. p
end

local src = abs(h.source_dir)
local examples_path = src .. "/docs/agents.md"
local tsc = src .. "/build-deps/node_modules/.bin/tsc"
local types_root = src .. "/build-deps/node_modules/@types"

-- Made once for the file (lazy_setup): the installed Python package and the node project,
-- and the name of the tarball npm pack made.
local scratch, pylib, nodeproj, tarball
local NOBODY = 65534

local function have(cmd)
    return h.sh("command -v " .. h.quote(cmd)).code == 0
end

-- The code of docs/agents.md's example for lang, between its markers.
local function doc_example(lang)
    local text = assert(h.read_file(examples_path), "cannot read " .. examples_path)
    local fence = lang == "python" and "python" or "ts"
    local body = text:match("<!%-%- clients%-example:" .. lang .. " %-%->\n```" .. fence
        .. "\n(.-)```\n<!%-%- /clients%-example:" .. lang .. " %-%->")
    assert(body, "docs/agents.md has no " .. lang .. " example between its clients-example markers")
    return body
end

-- A session s (as h.session_start would return it) for a name a script starts itself.
local function session_for(name, runtime, cwd)
    local s = { name = name, runtime = runtime, socket = h.session_socket(runtime, name), cwd = cwd,
        env = { XDG_RUNTIME_DIR = runtime } }
    h.defer(function()
        local info = h.api(s.socket, "GET", "/v1/session", nil, { timeout = 5 })
        if info.json then s.pid = math.tointeger(info.json.pid) end
        h.session_reap(s)
    end)
    return s
end

-- Runs a script with the interpreter for kind ("py" or "node") in directory cwd, with the
-- session runtime directory; args are passed as one JSON argument; with uid, as that user
-- (setpriv), with h.unprivileged_copy's cordon and a home of its own. Returns the h.sh result
-- plus .json, the decoded last line.
local function run(kind, script, runtime, cwd, args, uid)
    local file
    if kind == "py" then
        file = scratch .. "/" .. h.token() .. ".py"
    else
        file = nodeproj .. "/" .. h.token() .. ".mjs" -- in the project: "@cordon/client" resolves
    end
    h.write_file(file, script, "644")
    local env = { HOME = h.home(), PATH = h.path, XDG_RUNTIME_DIR = runtime, CORDON_BIN = h.bin,
        PYTHONPATH = pylib }
    local words = { "env" }
    if uid then
        local copy, why = h.unprivileged_copy(uid)
        if not copy then h.skip(why) end
        env.CORDON_BIN, env.CORDON_DATADIR, env.HOME = copy.bin, copy.datadir, h.secret_home(uid)
        table.insert(words, 1, ("setpriv --reuid=%d --regid=%d --clear-groups"):format(uid, uid))
    end
    for k, v in pairs(env) do words[#words + 1] = k .. "=" .. v end
    words[#words + 1] = kind == "py" and h.python or "node"
    words[#words + 1] = file
    words[#words + 1] = cjson.encode(args or {})
    local cmd = ("cd %s && timeout -k 5 90 %s"):format(h.quote(cwd),
        uid and (words[1] .. " " .. h.join({ table.unpack(words, 2) })) or h.join(words))
    local r = h.sh(cmd)
    r.cmd = cmd
    r.json = h.last_json(r.stdout)
    return r
end

-- Runs script S (PY_OWN or NODE_OWN) as `uid` (nil: root), which starts a session (detach) and
-- dies (how). Returns the session s, the program's JSON line, the run and the job's command.
local function own(kind, script, uid, detach, how)
    local runtime = h.runtime_dir()
    if uid then h.sh_ok(h.join({ "chown", tostring(uid), runtime })) end
    local ws = h.workspace(nil, uid)
    local sleep = ("sleep 300.%d"):format(math.random(1, 1e6))
    local s = { name = "own-" .. h.token(), runtime = runtime, cwd = ws, env = { XDG_RUNTIME_DIR = runtime } }
    s.socket = h.session_socket(runtime, s.name)
    h.defer(function() -- a backstop only: kills the controller this case's program started, by pid
        if s.pid and h.is_controller(s.pid) then os.execute("kill -9 " .. s.pid .. " 2>/dev/null") end
    end)
    local r = run(kind, script, runtime, ws,
        { name = s.name, ws = ws, detach = detach, how = how, sleep = sleep:match("%S+$") }, uid)
    assert(r.json, "the program printed nothing\n" .. h.describe(r))
    s.pid = math.tointeger(r.json.pid)
    assert(s.pid, "no controller pid\n" .. h.describe(r))
    return s, r.json, r, sleep
end

-- `cordon session list` as who, in s's runtime directory.
local function list(s, who)
    return h.cordon({ "session", "list" }, { cwd = s.cwd, env = s.env, uid = who.uid,
        home = who.uid and h.secret_home(who.uid) or nil }).stdout
end

-- Host processes whose command line is `sleep`'s (the word "[s]leep" in the pattern keeps it
-- from matching the shell that runs pgrep, whose command line holds the pattern).
local function processes(sleep)
    return #h.pgrep("[s]" .. sleep:sub(2))
end

-- Session s is gone: its controller, every process it ran (the job `sleep`), its socket, and
-- its line in `session list`. Waits up to 30 s for each.
local function gone(s, sleep, who)
    assert.truthy(h.wait_for(function() return not h.is_controller(s.pid) end, 30),
        "the session's controller outlived the program that owned it")
    assert.truthy(h.wait_for(function() return processes(sleep) == 0 end, 30),
        "a process of the session outlived it: " .. sleep)
    assert.truthy(h.wait_for(function() return h.sh("test -e " .. h.quote(s.socket)).code ~= 0 end, 30),
        "its socket is left: " .. s.socket)
    assert.is_nil(list(s, who):find(s.name, 1, true), "session list still shows it")
end

local function ok(r)
    assert.are.equal(0, r.code, h.describe(r))
    assert(r.json, "no JSON line\n" .. h.describe(r))
    return r.json
end

local function alive(s)
    return h.api(s.socket, "GET", "/v1/session", nil, { timeout = 10 }).status == 200
end

-- Scripts ----------------------------------------------------------------------------------
-- Each reads its JSON argument, does one scenario through the client and prints one JSON line.
-- Questions go to approvers (docs/session-api.md, "Approvals"): the approvals scripts subscribe
-- one with watch_approvals before the exec that wants an unlisted destination.

local PY_START = [==[
import json, sys
from cordon import Session
a = json.loads(sys.argv[1])
s = Session.start(a["name"], workspace=a["ws"], detach=True, extra_args=a.get("extra", []))
st = s.status()
print(json.dumps({"pid": st.pid, "detached": st.detached, "owner_pid": st.owner_pid, "owned": s.owned}))
]==]

local PY_WORK = [==[
import json, sys, time
from cordon import Session, Job
a = json.loads(sys.argv[1])
out = {}
with Session.attach(a["name"]) as s:          # attached: leaving the block must not stop it
    r = s.exec("echo out; printf 'err\\n' >&2; printf '\\377' >&2; exit 3")
    out["exec"] = {"stdout": r.stdout, "stderr_bytes": list(r.stderr_bytes), "exit_code": r.exit_code,
                   "timed_out": r.timed_out, "refusals": len(r.refusals)}
    t = s.exec("sleep 30", timeout=0.5)
    out["timeout"] = {"timed_out": t.timed_out, "exit_code": t.exit_code}
    events = [type(e).__name__ for e in s.stream("echo a; echo b >&2")]
    out["events"] = events
    j = s.background("for i in 1 2 3 4; do echo line$i; done; sleep 300", turn="t1")
    k = s.background("sleep 301", turn="t2")
    out["job"] = {"pid": j.pid, "log": j.log, "message": j.message}
    for _ in range(100):
        if s.logs(j.pid).count("\n") >= 4:
            break
        time.sleep(0.1)
    out["logs"] = s.logs(j.pid)
    out["tail"] = s.logs(j.pid, tail=2)
    out["running"] = sorted(x.pid for x in s.jobs() if x.state == "running")
    out["cancel"] = s.cancel("t1")
    stopped = s.stop(k.pid)
    out["stop"] = {"pid": stopped.pid, "state": stopped.state, "is_job": isinstance(stopped, Job)}
    out["states"] = {str(x.pid): x.state for x in s.jobs() if x.pid in (j.pid, k.pid)}
    out["session"] = s.status().name
print(json.dumps(out))
]==]

local PY_STOP = [==[
import json, sys, os
from cordon import Session
a = json.loads(sys.argv[1])
s = Session.attach(a["name"])
s.stop_session()
print(json.dumps({"socket_left": os.path.exists(s.socket_path)}))
]==]

local PY_APPROVALS = [==[
import json, sys, threading
from cordon import Session
a = json.loads(sys.argv[1])
s = Session.attach(a["name"])
fetch = "curl -sS --noproxy '' --max-time 30 http://127.0.0.1:%d/x" % a["port"]
out = {"events": [], "listed": []}
answers = ["once", "deny"]
subscribed = threading.Event()
def approver():
    it = s.watch_approvals()          # subscribes: questions come here, not to the exec
    try:
        for ev in it:
            out["events"].append(ev.event)
            if ev.event == "subscribed":
                subscribed.set()
            elif ev.event == "question" and ev.approval is not None:
                out["kind"], out["host"] = ev.approval.kind, ev.approval.host
                out["listed"].append(ev.approval.id in [x.id for x in s.approvals()])
                s.answer(ev.approval.id, answers[len(out["listed"]) - 1], by="clients-spec")
            elif ev.event == "settled":
                out.setdefault("by", ev.by)
                if out["events"].count("settled") == len(answers):
                    break
    finally:
        it.close()                    # unsubscribes
t = threading.Thread(target=approver)
t.start()
subscribed.wait(30)
def result(r):
    return {"stdout": r.stdout, "asked": [x.kind for x in r.approvals], "settled": [x.answer for x in r.settled]}
out["first"] = result(s.exec(fetch))   # answered "once"
out["second"] = result(s.exec(fetch))  # "once" ended with that command: asked again, "deny"
t.join(60)
out["third"] = result(s.exec(fetch))   # nobody subscribed: denied at once, nobody asked
out["pending_after"] = len(s.approvals())
print(json.dumps(out))
]==]

local PY_ERRORS = [==[
import json, sys
from cordon import Session, CordonError, SessionNotFound, APIError
a = json.loads(sys.argv[1])
out = {}
try:
    Session.attach(a["missing"])
except SessionNotFound as e:
    out["missing"] = {"cls": type(e).__name__, "base": isinstance(e, CordonError), "msg": str(e)}
s = Session.attach(a["name"])
pids = [s.background("sleep %s" % a["sleep"], turn="bg").pid for _ in range(8)]
try:
    s.background("sleep 1")
except APIError as e:
    out["ninth"] = {"status": e.status, "msg": e.message, "base": isinstance(e, CordonError)}
try:
    s.logs(99999)
except APIError as e:
    out["nolog"] = e.status
try:
    s.answer(1, "maybe")
except ValueError as e:
    out["badanswer"] = "ValueError"
out["cancelled"] = sorted(s.cancel("bg")) == sorted(pids)
print(json.dumps(out))
]==]

-- The process's connected sockets (their inodes) after each of 5 rounds of requests.
local PY_KEEPALIVE = [==[
import json, os, sys
from cordon import Session
a = json.loads(sys.argv[1])
def socks():
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if link.startswith("socket:"):
            out.add(link)
    return sorted(out)
s = Session.attach(a["name"])
seen = []
for _ in range(5):
    s.exec("true"); s.jobs(); s.status(); s.logs(a["pid"])
    seen.append(socks())
print(json.dumps({"seen": seen}))
]==]

local PY_OWNED = [==[
import json, os, sys
from cordon import Session
a = json.loads(sys.argv[1])
s = Session.start(a["name"], workspace=a["ws"], detach=False)
st = s.status()
print(json.dumps({"owner_pid": st.owner_pid, "me": os.getpid(), "detached": st.detached}))
]==]

local NODE_KEEPALIVE = [==[
import fs from "node:fs";
import { Session } from "@cordon/client";
const a = JSON.parse(process.argv[2]);
const socks = () => fs.readdirSync("/proc/self/fd").map((fd) => {
  try { return fs.readlinkSync(`/proc/self/fd/${fd}`); } catch { return ""; }
}).filter((l) => l.startsWith("socket:")).sort();
const s = await Session.attach(a.name);
const seen = [];
for (let i = 0; i < 5; i++) {
  await s.exec("true"); await s.jobs(); await s.status(); await s.logs(a.pid);
  seen.push(socks());
}
console.log(JSON.stringify({ seen }));
]==]

local NODE_START = [==[
import { Session } from "@cordon/client";
const a = JSON.parse(process.argv[2]);
const s = await Session.start(a.name, { workspace: a.ws, detach: true });
const st = await s.status();
console.log(JSON.stringify({ pid: st.pid, detached: st.detached, ownerPid: st.ownerPid, owned: s.owned }));
]==]

local NODE_WORK = [==[
import { Session } from "@cordon/client";
const a = JSON.parse(process.argv[2]);
const out = {};
const s = await Session.attach(a.name);
const r = await s.exec("echo out; printf 'err\\n' >&2; printf '\\377' >&2; exit 3");
out.exec = { stdout: r.stdout, stderrBytes: [...r.stderrBytes], exitCode: r.exitCode, timedOut: r.timedOut };
const t = await s.exec("sleep 30", { timeout: 0.5 });
out.timeout = { timedOut: t.timedOut, exitCode: t.exitCode };
out.events = [];
for await (const ev of s.stream("echo a; echo b >&2")) out.events.push(ev.event);
const j = await s.background("for i in 1 2 3 4; do echo line$i; done; sleep 300", { turn: "t1" });
const k = await s.background("sleep 301", { turn: "t2" });
out.job = { pid: j.pid, log: j.log, message: j.message };
for (let i = 0; i < 100 && (await s.logs(j.pid)).split("\n").length < 5; i++) {
  await new Promise((r) => setTimeout(r, 100));
}
out.logs = await s.logs(j.pid);
out.tail = await j.logs({ tail: 2 });
out.running = (await s.jobs()).filter((x) => x.state === "running").map((x) => x.pid).sort((x, y) => x - y);
out.cancel = await s.cancel("t1");
const stopped = await s.stop(k.pid);
out.stop = { pid: stopped.pid, state: stopped.state };
out.states = Object.fromEntries((await s.jobs()).filter((x) => x.pid === j.pid || x.pid === k.pid)
  .map((x) => [x.pid, x.state]));
await s.dispose(); // attached: must not stop the session
console.log(JSON.stringify(out));
]==]

local NODE_APPROVALS = [==[
import { Session } from "@cordon/client";
const a = JSON.parse(process.argv[2]);
const s = await Session.attach(a.name);
const fetch = `curl -sS --noproxy '' --max-time 30 http://127.0.0.1:${a.port}/x`;
const out = { events: [], listed: [] };
const answers = ["once", "deny"];
let subscribed;
const ready = new Promise((r) => { subscribed = r; });
const approver = (async () => {
  for await (const ev of s.watchApprovals()) { // leaving the loop unsubscribes
    out.events.push(ev.event);
    if (ev.event === "subscribed") subscribed();
    else if (ev.event === "question" && ev.approval) {
      out.kind = ev.approval.kind; out.host = ev.approval.host;
      out.listed.push((await s.approvals()).some((x) => x.id === ev.approval.id));
      await s.answer(ev.approval.id, answers[out.listed.length - 1], { by: "clients-spec" });
    } else if (ev.event === "settled") {
      out.by ??= ev.by;
      if (out.events.filter((e) => e === "settled").length === answers.length) break;
    }
  }
})();
await ready;
const result = (r) => ({ stdout: r.stdout, asked: r.approvals.map((x) => x.kind),
  settled: r.settled.map((x) => x.answer) });
out.first = result(await s.exec(fetch));
out.second = result(await s.exec(fetch));
await approver;
out.third = result(await s.exec(fetch));
out.pending_after = (await s.approvals()).length;
console.log(JSON.stringify(out));
]==]

local NODE_ERRORS = [==[
import { Session, CordonError, SessionNotFound, APIError } from "@cordon/client";
const a = JSON.parse(process.argv[2]);
const out = {};
try { await Session.attach(a.missing); } catch (e) {
  out.missing = { cls: e.constructor.name, nf: e instanceof SessionNotFound, base: e instanceof CordonError,
    msg: e.message };
}
const s = await Session.attach(a.name);
const pids = [];
for (let i = 0; i < 8; i++) pids.push((await s.background(`sleep ${a.sleep}`, { turn: "bg" })).pid);
try { await s.background("sleep 1"); } catch (e) {
  out.ninth = { api: e instanceof APIError, status: e.status, msg: e.message, base: e instanceof CordonError };
}
try { await s.logs(99999); } catch (e) { out.nolog = e.status; }
try { await s.answer(1, /** @type {any} */ ("maybe")); } catch (e) { out.badanswer = e.constructor.name; }
const c = await s.cancel("bg");
out.cancelled = JSON.stringify([...c].sort()) === JSON.stringify([...pids].sort());
console.log(JSON.stringify(out));
]==]

-- Starts a session (owned, or detached with a.detach), a background job `sleep a.sleep` in it,
-- prints what it knows, then dies: by SIGKILL (a.how == "kill": no code of it runs after) or
-- by an uncaught exception.
local PY_OWN = [==[
import json, os, signal, sys
from cordon import Session
a = json.loads(sys.argv[1])
s = Session.start(a["name"], workspace=a["ws"], detach=a["detach"])
st = s.status()
j = s.background("sleep %s" % a["sleep"])
print(json.dumps({"pid": st.pid, "owner_pid": st.owner_pid, "me": os.getpid(), "detached": st.detached,
                  "job": j.pid}), flush=True)
if a["how"] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
raise RuntimeError("an uncaught exception")
]==]

local NODE_OWN = [==[
import { Session } from "@cordon/client";
const a = JSON.parse(process.argv[2]);
const s = await Session.start(a.name, { workspace: a.ws, detach: a.detach });
const st = await s.status();
const j = await s.background(`sleep ${a.sleep}`);
process.stdout.write(JSON.stringify({ pid: st.pid, owner_pid: st.ownerPid, me: process.pid, detached: st.detached,
  job: j.pid }) + "\n", () => {
  if (a.how === "kill") process.kill(process.pid, "SIGKILL");
  else throw new Error("an uncaught exception");
});
]==]

-- The asyncio API: exec, a timeout, stream, background and its log, two execs at once, a
-- cancelled exec (the command must be gone), watch_approvals, and `async with` stopping it.
local PY_ASYNC = [==[
import asyncio, json, os, sys
from cordon import AsyncSession
a = json.loads(sys.argv[1])
long = "sleep %s" % a["sleep"]

async def running(s, cmd):
    return [x.pid for x in await s.jobs() if x.command == cmd and x.state == "running"]

async def main():
    out = {}
    async with await AsyncSession.start(a["name"], workspace=a["ws"]) as s:
        out["owned"] = s.owned
        r = await s.exec("echo out; echo err >&2; exit 3")
        out["exec"] = [r.stdout, r.stderr, r.exit_code]
        t = await s.exec("sleep 30", timeout=0.5)
        out["timeout"] = [t.timed_out, t.exit_code]
        out["events"] = [type(e).__name__ async for e in s.stream("echo a; echo b >&2")]
        j = await s.background("echo line1; echo line2; sleep 300")
        for _ in range(100):
            if (await j.logs()).count("\n") >= 2:
                break
            await asyncio.sleep(0.1)
        out["logs"] = await j.logs()
        out["tail"] = await s.logs(j.pid, tail=1)
        r1, r2 = await asyncio.gather(s.exec("sleep 0.3; echo one"), s.exec("echo two"))
        out["gather"] = [r1.stdout, r2.stdout]
        task = asyncio.create_task(s.exec(long))
        for _ in range(100):
            if await running(s, long):
                break
            await asyncio.sleep(0.1)
        out["running_before"] = len(await running(s, long))
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            out["cancelled"] = True
        out["running_after"] = len(await running(s, long))
        out["stop"] = (await j.stop()).state
        w = s.watch_approvals()
        out["watch"] = (await w.__anext__()).event
        await w.aclose()
        out["status"] = (await s.status()).name
    out["socket_left"] = os.path.exists(s.socket_path)
    print(json.dumps(out))

asyncio.run(main())
]==]

-- AbortSignal: an exec of a long sleep aborted (the command must be gone), an exec with a
-- signal aborted already, a watchApprovals loop aborted.
local NODE_ABORT = [==[
import { Session, CordonError } from "@cordon/client";
const a = JSON.parse(process.argv[2]);
const s = await Session.start(a.name, { workspace: a.ws });
const cmd = `sleep ${a.sleep}`;
const running = async () => (await s.jobs()).filter((x) => x.command === cmd && x.state === "running").length;
const out = {};
const ac = new AbortController();
const p = s.exec(cmd, { signal: ac.signal });
for (let i = 0; i < 100 && (await running()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
out.runningBefore = await running();
ac.abort();
try { await p; out.result = "resolved"; } catch (e) { out.result = e.name; out.cordon = e instanceof CordonError; }
out.runningAfter = await running();
try { await s.exec("echo never", { signal: AbortSignal.abort() }); out.pre = "resolved"; } catch (e) { out.pre = e.name; }
const ac3 = new AbortController();
try {
  for await (const ev of s.watchApprovals({ signal: ac3.signal })) if (ev.event === "subscribed") ac3.abort();
  out.watch = "ended";
} catch (e) { out.watch = e.name; }
await s.dispose();
const ac4 = new AbortController();
const started = Session.start(a.other, { workspace: a.ws, signal: ac4.signal }); // spawns at once
ac4.abort();
try { await started; out.start = "resolved"; } catch (e) { out.start = e.name; }
console.log(JSON.stringify(out));
]==]

-- Typed options reach the session: a profile, a network rule, session_exec off; an unknown
-- option is refused before anything starts.
local PY_OPTIONS = [==[
import json, sys
from cordon import Session
a = json.loads(sys.argv[1])
out = {}
try:
    Session.start(a["name"], workspace=a["ws"], network_alow=["x"])
except TypeError as e:
    out["unknown"] = str(e)
try:
    Session.start(a["name"], workspace=a["ws"], home="elsewhere")
except TypeError as e:
    out["badvalue"] = str(e)
with Session.start(a["name"], workspace=a["ws"], profile="ops", network_allow=["127.0.0.1:%d" % a["port"]],
                   session_exec=False, permission_timeout=20) as s:
    st = s.status()
    out["profile"], out["session_exec"] = st.profile, st.session_exec
    r = s.exec("curl -sS --noproxy '' --max-time 30 http://127.0.0.1:%d/x" % a["port"])
    out["fetch"] = r.stdout
print(json.dumps(out))
]==]

local NODE_OPTIONS = [==[
import { Session } from "@cordon/client";
const a = JSON.parse(process.argv[2]);
const out = {};
try { await Session.start(a.name, { workspace: a.ws, networkAlow: ["x"] }); } catch (e) { out.unknown = `${e.name}: ${e.message}`; }
try { await Session.start(a.name, { workspace: a.ws, home: "elsewhere" }); } catch (e) { out.badvalue = `${e.name}: ${e.message}`; }
const s = await Session.start(a.name, { workspace: a.ws, profile: "ops", networkAllow: [`127.0.0.1:${a.port}`],
  sessionExec: false, permissionTimeout: 20 });
try {
  const st = await s.status();
  out.profile = st.profile; out.session_exec = st.sessionExec;
  out.fetch = (await s.exec(`curl -sS --noproxy '' --max-time 30 http://127.0.0.1:${a.port}/x`)).stdout;
} finally {
  await s.dispose();
}
console.log(JSON.stringify(out));
]==]

-- The two clients answer with the same facts; these check them for either.
local function check_work(w, kind)
    local e = w.exec
    assert.are.equal("out\n", e.stdout)
    assert.are.same({ 101, 114, 114, 10, 255 }, kind == "py" and e.stderr_bytes or e.stderrBytes)
    assert.are.equal(3, kind == "py" and e.exit_code or e.exitCode)
    assert.is_true(kind == "py" and w.timeout.timed_out or w.timeout.timedOut)
    -- a timeout's status is 124, as `cordon exec --timeout` and GNU timeout say
    assert.are.equal(124, kind == "py" and w.timeout.exit_code or w.timeout.exitCode)
    if kind == "py" then
        assert.are.same({ "Started", "Output", "Output", "Exit" }, w.events)
    else
        assert.are.same({ "started", "output", "output", "exit" }, w.events)
    end
    local pid = math.tointeger(w.job.pid)
    assert.are.equal(("/tmp/cordon/processes/%d.log"):format(pid), w.job.log)
    assert.truthy(w.job.message:find("Background command started.", 1, true), w.job.message)
    assert.are.equal("line1\nline2\nline3\nline4\n", w.logs)
    assert.are.equal("line3\nline4\n", w.tail)
    assert.are.equal(2, #w.running)
    assert.are.same({ pid }, w.cancel)
    assert.are.equal("stopped", w.stop.state)
    assert.are.equal("stopped", w.states[tostring(pid)])
end

local function check_approvals(r, marker)
    local all = cjson.encode(r)
    assert.are.equal("subscribed", r.events[1], all)
    assert.are.equal("network", r.kind, all)
    assert.are.equal("127.0.0.1", r.host, all)
    assert.are.same({ true, true }, r.listed, all)
    assert.are.equal("clients-spec", r.by, all)
    assert.truthy(r.first.stdout:find(marker, 1, true), "'once' did not let the first fetch through\n" .. all)
    assert.are.same({ "network" }, r.first.asked, all)
    assert.are.same({ "once" }, r.first.settled, all)
    assert.is_nil(r.second.stdout:find(marker, 1, true), "a denied destination was reached\n" .. all)
    assert.are.same({ "deny" }, r.second.settled, all)
    assert.is_nil(r.third.stdout:find(marker, 1, true), all)
    assert.are.same({}, r.third.asked, "asked with no approver subscribed\n" .. all)
    assert.are.equal(0, r.pending_after, all)
end

local function check_errors(r, name)
    assert.truthy(r.missing, "attaching to an unknown session did not fail")
    assert.is_true(r.missing.base)
    assert.truthy(r.missing.msg:find(name, 1, true), r.missing.msg)
    assert.truthy(r.ninth, "a ninth background job was not refused")
    assert.are.equal(409, r.ninth.status)
    assert.is_true(r.ninth.base)
    assert.truthy(r.ninth.msg ~= "", "the 409 carries no message")
    assert.are.equal(404, r.nolog)
    assert.truthy(r.badanswer, "a bad answer was sent")
    assert.is_true(r.cancelled)
end

describe("session clients", function()
    lazy_setup(function()
        assert(h.have_binary(), "CORDON_BIN is not an executable: " .. h.bin)
        scratch = h.chomp(h.sh_ok("mktemp -d /var/tmp/cordon-spec-clients.XXXXXX"))
        h.sh_ok("chmod 755 " .. h.quote(scratch)) -- the uid 65534 cases read the scripts and packages
        -- installed as a user would, offline; without pip, the package's source tree itself
        if h.sh(h.python .. " -m pip --version").code == 0 then
            pylib = scratch .. "/pylib"
            h.sh_ok(("%s -m pip install --quiet --no-index --disable-pip-version-check --target %s %s"):format(
                h.python, h.quote(pylib), h.quote(src .. "/clients/python")))
        else
            pylib = src .. "/clients/python/src"
        end
        if have("node") and have("npm") then
            nodeproj = scratch .. "/node"
            h.sh_ok("mkdir " .. h.quote(nodeproj))
            h.write_file(nodeproj .. "/package.json", '{"name":"clients-spec","private":true,"type":"module"}\n')
            local tgz = h.chomp(h.sh_ok(("cd %s && npm pack --silent --pack-destination %s %s"):format(
                h.quote(scratch), h.quote(scratch), h.quote(src .. "/clients/typescript"))))
            tarball = tgz:match("[^\n]+$")
            h.sh_ok(("cd %s && npm install --offline --silent --no-audit --no-fund %s"):format(
                h.quote(nodeproj), h.quote(scratch .. "/" .. tarball)))
        end
    end)
    lazy_teardown(function()
        if scratch then os.execute("rm -rf " .. h.quote(scratch)) end
    end)
    after_each(h.cleanup)

    for _, kind in ipairs({ "py", "node" }) do
        local S = kind == "py" and { start = PY_START, work = PY_WORK, approvals = PY_APPROVALS,
            errors = PY_ERRORS, keepalive = PY_KEEPALIVE, own = PY_OWN, options = PY_OPTIONS } or {
            start = NODE_START, work = NODE_WORK, approvals = NODE_APPROVALS, errors = NODE_ERRORS,
            keepalive = NODE_KEEPALIVE, own = NODE_OWN, options = NODE_OPTIONS }
        local label = kind == "py" and "Python" or "TypeScript"
        local function need()
            if kind == "node" and not nodeproj then
                h.skip("node and npm are not installed")
            end
        end

        it(label .. ": a session started detached by one process is driven from another", function()
            need()
            local runtime, ws = h.runtime_dir(), h.workspace()
            local s = session_for("cl-" .. h.token(), runtime, ws)
            local st = ok(run(kind, S.start, runtime, ws, { name = s.name, ws = ws }))
            assert.is_true(st.detached)
            assert.is_true(st.owned)
            assert.is_true(alive(s), "the detached session ended with the process that started it")
            local w = ok(run(kind, S.work, runtime, ws, { name = s.name }))
            check_work(w, kind)
            assert.is_true(alive(s), "leaving an attached session stopped it")
            -- one connection, kept alive across execs, job lists, status and logs
            local ka = ok(run(kind, S.keepalive, runtime, ws, { name = s.name, pid = w.job.pid }))
            assert.are.equal(5, #ka.seen)
            assert.are.equal(1, #ka.seen[1], cjson.encode(ka))
            for i = 2, 5 do assert.are.same(ka.seen[1], ka.seen[i], cjson.encode(ka)) end
            if kind == "py" then
                local r = ok(run(kind, PY_STOP, runtime, ws, { name = s.name }))
                assert.is_false(r.socket_left)
                assert.is_false(alive(s))
            end
        end)

        if kind == "py" then
            it("Python: without detach the session is owned by the starting process and ends with it", function()
                local runtime, ws = h.runtime_dir(), h.workspace()
                local s = session_for("cl-" .. h.token(), runtime, ws)
                local r = ok(run(kind, PY_OWNED, runtime, ws, { name = s.name, ws = ws }))
                assert.are.equal(r.me, r.owner_pid)
                assert.is_false(r.detached)
                assert.truthy(h.wait_for(function() return not alive(s) end, 30),
                    "the session outlived the process that owned it")
            end)
        end

        -- Ownership, as root and as uid 65534.
        for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
            for _, how in ipairs({ "kill", "raise" }) do
                it(("%s (%s): a program that starts a session and dies by %s leaves no session and no "
                    .. "process of it"):format(label, who.name, how == "kill" and "SIGKILL" or "an uncaught exception"),
                    function()
                    need()
                    local s, j, r, sleep = own(kind, S.own, who.uid, false, how)
                    assert.are.equal(how == "kill" and 137 or 1, r.code, h.describe(r))
                    assert.are.equal(j.me, j.owner_pid, cjson.encode(j))
                    assert.is_false(j.detached)
                    gone(s, sleep, who)
                end)
            end

            it(("%s (%s): with detach the session outlives its starter's SIGKILL"):format(label, who.name), function()
                need()
                local s, j, r, sleep = own(kind, S.own, who.uid, true, "kill")
                assert.are.equal(137, r.code, h.describe(r))
                assert.is_true(j.detached)
                assert.is_true(h.is_controller(s.pid), "a detached session ended with its starter")
                assert.are.equal(1, processes(sleep), "the detached session's job is gone")
                assert.truthy(list(s, who):find(s.name, 1, true), "session list does not show it")
                local stop = h.cordon({ "session", "stop", s.name }, { cwd = s.cwd, env = s.env, uid = who.uid,
                    home = who.uid and h.secret_home(who.uid) or nil, timeout = 60 })
                assert.are.equal(0, stop.code, h.describe(stop))
                gone(s, sleep, who)
            end)
        end

        it(label .. ": typed options reach the session (profile, network rule, session_exec); an unknown "
            .. "one is refused", function()
            need()
            local o = h.origin()
            local runtime, ws = h.runtime_dir(), h.workspace()
            local s = session_for("opt-" .. h.token(), runtime, ws)
            local r = ok(run(kind, S.options, runtime, ws, { name = s.name, ws = ws, port = o.port }))
            assert.truthy(r.unknown and r.unknown:find("networkAlow", 1, true)
                or r.unknown and r.unknown:find("network_alow", 1, true), cjson.encode(r))
            assert.truthy(r.unknown:find("TypeError", 1, true) or kind == "py", cjson.encode(r))
            assert.truthy(r.badvalue and r.badvalue:find("elsewhere", 1, true), cjson.encode(r))
            assert.are.equal("ops", r.profile)
            assert.is_false(r.session_exec)
            assert.truthy(r.fetch:find(o.marker, 1, true), "the allowed destination was not reached\n" .. cjson.encode(r))
            assert.is_false(alive(s), "the session outlived its with block / dispose()")
        end)

        it(label .. ": an approver subscribed with watch_approvals gets, lists and answers a question; "
            .. "none subscribed: denied at once", function()
            need()
            local o = h.origin()
            local s = h.session_start("cl-" .. h.token(), { flags = { "--permission-timeout", "20s" } })
            local r = ok(run(kind, S.approvals, s.runtime, s.cwd, { name = s.name, port = o.port }))
            check_approvals(r, o.marker)
        end)

        it(label .. ": errors carry the API's line (an unknown session, a ninth background job)", function()
            need()
            local s = h.session_start("cl-" .. h.token())
            local missing = "nosuch-" .. h.token()
            local r = ok(run(kind, S.errors, s.runtime, s.cwd,
                { name = s.name, missing = missing, sleep = ("300.%d"):format(math.random(1, 1e6)) }))
            check_errors(r, missing)
        end)
    end

    it("Python: pip installs the package offline, with its type marker", function()
        if pylib == src .. "/clients/python/src" then
            h.skip("no pip for " .. h.python .. ": the specs used the source tree")
        end
        for _, f in ipairs({ "__init__.py", "session.py", "_http.py", "types.py", "errors.py", "py.typed" }) do
            assert.is_true(h.sh("test -f " .. h.quote(pylib .. "/cordon/" .. f)).code == 0, f .. " was not installed")
        end
        local version = h.sh_ok(h.quote(h.bin) .. " --version"):match("^cordon ([%w.+-]+)")
        assert.truthy(version, "cordon --version printed no version")
        local meta = h.read_file(pylib .. "/cordon-" .. version .. ".dist-info/METADATA")
        assert.truthy(meta, "no cordon-" .. version .. ".dist-info: the package's version is not cordon's")
        assert.truthy(meta:find("\nVersion: " .. version:gsub("%p", "%%%0") .. "\n"), meta:sub(1, 300))
        local v = h.sh_ok(("PYTHONPATH=%s %s -c 'import cordon; print(cordon.__version__)'"):format(
            h.quote(pylib), h.python))
        assert.are.equal(version .. "\n", v)
    end)

    for _, who in ipairs({ { name = "root" }, { name = "uid 65534", uid = NOBODY } }) do
        it("Python (" .. who.name .. "): AsyncSession runs exec, stream, background and logs, and a "
            .. "cancelled exec stops its command", function()
            local runtime = h.runtime_dir()
            if who.uid then h.sh_ok(h.join({ "chown", tostring(who.uid), runtime })) end
            local ws = h.workspace(nil, who.uid)
            local sleep = ("sleep 30.%d"):format(math.random(1, 1e6))
            local s = session_for("aio-" .. h.token(), runtime, ws)
            local r = ok(run("py", PY_ASYNC, runtime, ws, { name = s.name, ws = ws, sleep = sleep:match("%S+$") },
                who.uid))
            local all = cjson.encode(r)
            assert.is_true(r.owned, all)
            assert.are.same({ "out\n", "err\n", 3 }, r.exec, all)
            assert.are.same({ true, 124 }, r.timeout, all)
            assert.are.same({ "Started", "Output", "Output", "Exit" }, r.events, all)
            assert.are.equal("line1\nline2\n", r.logs, all)
            assert.are.equal("line2\n", r.tail, all)
            assert.are.same({ "one\n", "two\n" }, r.gather, all)
            assert.are.equal(1, r.running_before, "the exec to cancel never ran\n" .. all)
            assert.is_true(r.cancelled, all)
            assert.are.equal(0, r.running_after, "the cancelled exec's command still runs\n" .. all)
            assert.are.equal(0, processes(sleep), "the cancelled exec's command is still there")
            assert.are.equal("stopped", r.stop, all)
            assert.are.equal("subscribed", r.watch, all)
            assert.are.equal(s.name, r.status, all)
            assert.is_false(r.socket_left, "async with left the session running\n" .. all)
        end)

        it("TypeScript (" .. who.name .. "): an AbortSignal ends an exec, stopping its command, and a "
            .. "watchApprovals loop and a start, with an AbortError", function()
            if not nodeproj then h.skip("node and npm are not installed") end
            local runtime = h.runtime_dir()
            if who.uid then h.sh_ok(h.join({ "chown", tostring(who.uid), runtime })) end
            local ws = h.workspace(nil, who.uid)
            local sleep = ("sleep 30.%d"):format(math.random(1, 1e6))
            local s = session_for("abort-" .. h.token(), runtime, ws)
            local other = session_for("abort-" .. h.token(), runtime, ws)
            local r = ok(run("node", NODE_ABORT, runtime, ws, { name = s.name, other = other.name, ws = ws,
                sleep = sleep:match("%S+$") }, who.uid))
            local all = cjson.encode(r)
            assert.are.equal(1, r.runningBefore, "the exec to abort never ran\n" .. all)
            assert.are.equal("AbortError", r.result, all)
            assert.is_true(r.cordon, all)
            assert.are.equal(0, r.runningAfter, "the aborted exec's command still runs\n" .. all)
            assert.are.equal(0, processes(sleep), "the aborted exec's command is still there")
            assert.are.equal("AbortError", r.pre, all)
            assert.are.equal("AbortError", r.watch, all)
            -- a start aborted while `session start` ran: the session it made is stopped
            assert.are.equal("AbortError", r.start, all)
            assert.are.equal(1, h.sh("test -e " .. h.quote(other.socket)).code, "the aborted start left a session")
        end)
    end

    it("the API reports a command its timeout ended as exit status 124 (signal: the TERM)", function()
        local s = h.session_start("to-" .. h.token())
        local r = h.api(s.socket, "POST", "/v1/exec", cjson.encode({ command = "sleep 30", timeout = 0.5 }))
        assert.are.equal(200, r.status, h.describe_api(r))
        local exit = h.last_json(r.body)
        assert.truthy(exit and exit.event == "exit", h.describe_api(r))
        assert.is_true(exit.timed_out, r.body)
        assert.are.equal(124, exit.exit_code, r.body)
        assert.are.equal(15, exit.signal, r.body)
        -- what the command itself returns is passed as it is: 124 means a timeout only with timed_out
        r = h.api(s.socket, "POST", "/v1/exec", cjson.encode({ command = "kill -TERM $$", timeout = 30 }))
        exit = h.last_json(r.body)
        assert.are.equal(143, exit.exit_code, r.body)
        assert.is_false(exit.timed_out, r.body)
    end)

    it("every flag of `cordon session start --help` is a typed option of both clients", function()
        local help = h.cordon({ "session", "start", "--help" })
        assert.are.equal(0, help.code, h.describe(help))
        local py = assert(h.read_file(src .. "/clients/python/src/cordon/_options.py"))
        local js = assert(h.read_file(src .. "/clients/typescript/index.js"))
        local dts = assert(h.read_file(src .. "/clients/typescript/index.d.ts"))
        local pysig = h.sh_ok(("PYTHONPATH=%s %s -c %s"):format(h.quote(src .. "/clients/python/src"), h.python,
            h.quote("import inspect, cordon; print(sorted(inspect.signature(cordon.Session.start).parameters)); "
                .. "print(sorted(inspect.signature(cordon.AsyncSession.start).parameters))")))
        local flags = {}
        for flag in help.stdout:gmatch("\n  (%-%-[a-z][a-z-]*)") do
            -- --json: what session start prints, which no client reads; --detach and --owner:
            -- the clients' detach and owner (ownership, checked above); --review-fork: what
            -- POST /v1/fork starts a fork with, the clients' fork()
            if flag ~= "--json" and flag ~= "--detach" and flag ~= "--owner" and flag ~= "--help"
                and flag ~= "--review-fork" then
                flags[#flags + 1] = flag
            end
        end
        assert.truthy(#flags >= 15, "too few flags in the usage text\n" .. help.stdout)
        for _, flag in ipairs(flags) do
            local snake = flag:sub(3):gsub("-", "_")
            local camel = flag:sub(3):gsub("-(%l)", string.upper)
            assert.truthy(py:find('"' .. flag .. '"', 1, true), flag .. " is not in the Python client's table")
            assert.truthy(js:find('"' .. flag .. '"', 1, true), flag .. " is not in the TypeScript client's table")
            assert.truthy(dts:find("\n  " .. camel .. "?:", 1, true), camel .. " is not in index.d.ts's StartOptions")
            local n = select(2, pysig:gsub("'" .. snake .. "'", ""))
            assert.are.equal(2, n, snake .. " is not a keyword of Session.start and AsyncSession.start\n" .. pysig)
        end
    end)

    it("Python: the installed package type-checks (mypy --strict), and a misspelt or mistyped "
        .. "option is a type error", function()
        if not have("mypy") then h.skip("mypy is not installed (apt-get install mypy)") end
        if pylib == src .. "/clients/python/src" then h.skip("no pip: the package was not installed") end
        local r = h.sh(("cd %s && mypy --strict --no-incremental -p cordon"):format(h.quote(pylib)))
        assert.are.equal(0, r.code, h.describe(r))
        local good, bad = scratch .. "/typed_good.py", scratch .. "/typed_bad.py"
        h.write_file(good, [==[
import asyncio
from cordon import AsyncSession, Session
s = Session.start("x", profile="ops", network_allow=["a.example"], allow_host_port=[5432], home="tmpfs",
                  session_exec=False, permission_timeout="30s", detach=True)
code: int = s.exec("true", timeout=5).exit_code
async def main() -> None:
    a = await AsyncSession.start("y", allow_write=["/tmp/x"], plan=True)
    async for ev in a.stream("true"):
        print(ev)
]==])
        h.write_file(bad, [==[
from cordon import Session
Session.start("x", network_alow=["a.example"])
Session.start("x", home="elsewhere")
Session.start("x", allow_host_port=["5432"])
]==])
        local env = ("MYPYPATH=%s "):format(h.quote(pylib))
        r = h.sh(env .. "mypy --strict --no-incremental " .. h.quote(good))
        assert.are.equal(0, r.code, h.describe(r))
        r = h.sh(env .. "mypy --strict --no-incremental " .. h.quote(bad))
        assert.are.equal(1, r.code, h.describe(r))
        assert.truthy(r.stdout:find("typed_bad.py:2: error: Unexpected keyword argument \"network_alow\"", 1, true),
            h.describe(r))
        assert.truthy(r.stdout:find("typed_bad.py:3: error", 1, true), h.describe(r))
        assert.truthy(r.stdout:find("typed_bad.py:4: error", 1, true), h.describe(r))
    end)

    it("TypeScript: npm pack makes the package of cordon's version", function()
        if not nodeproj then h.skip("node and npm are not installed") end
        local version = h.sh_ok(h.quote(h.bin) .. " --version"):match("^cordon ([%w.+-]+)")
        assert.are.equal("cordon-client-" .. version .. ".tgz", tarball)
        h.write_file(nodeproj .. "/version.mjs", 'import { version } from "@cordon/client";\nconsole.log(version);\n')
        local r = h.sh(("cd %s && node version.mjs"):format(h.quote(nodeproj)))
        assert.are.equal(version .. "\n", r.stdout, h.describe(r))
    end)

    it("docs/agents.md's Python example runs as written", function()
        local runtime, ws = h.runtime_dir(), h.workspace()
        session_for("demo", runtime, ws)
        local code = doc_example("python")
        local file = scratch .. "/readme_example.py"
        h.write_file(file, code)
        local r = h.sh(("cd %s && timeout -k 5 90 env HOME=%s PATH=%s XDG_RUNTIME_DIR=%s CORDON_BIN=%s "
            .. "PYTHONPATH=%s %s %s")
            :format(h.quote(ws), h.quote(h.home()), h.quote(h.path), h.quote(runtime), h.quote(h.bin),
                h.quote(pylib), h.python, h.quote(file)))
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("^2 hello\n"), h.describe(r))
        assert.truthy(r.stdout:find("Exit(", 1, true), h.describe(r))
        assert.truthy(r.stdout:find("404 no pending approval 12345", 1, true), h.describe(r))
        assert.is_false(alive({ socket = h.session_socket(runtime, "demo") }), "the with block left it running")
    end)

    it("docs/agents.md's TypeScript example runs as written", function()
        if not nodeproj then
            h.skip("node and npm are not installed")
        end
        local runtime, ws = h.runtime_dir(), h.workspace()
        session_for("demo-ts", runtime, ws)
        h.write_file(nodeproj .. "/readme_example.mjs", doc_example("typescript")) -- also JavaScript
        local r = h.sh(("cd %s && timeout -k 5 90 env HOME=%s PATH=%s XDG_RUNTIME_DIR=%s CORDON_BIN=%s node %s")
            :format(h.quote(ws), h.quote(h.home()), h.quote(h.path), h.quote(runtime), h.quote(h.bin),
                h.quote(nodeproj .. "/readme_example.mjs")))
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("^2 hello\n"), h.describe(r))
        assert.truthy(r.stdout:find("true 404 no pending approval 12345", 1, true), h.describe(r))
        assert.is_false(alive({ socket = h.session_socket(runtime, "demo-ts") }), "dispose() left it running")
    end)

    it("docs/agents.md's TypeScript example type-checks against the installed package", function()
        if not nodeproj then
            h.skip("node and npm are not installed")
        end
        if h.sh("test -x " .. h.quote(tsc)).code ~= 0 then
            h.skip("no tsc in build-deps/ (make client-deps installs it)")
        end
        h.write_file(nodeproj .. "/readme_example.mts", doc_example("typescript"))
        local flags = ("--strict --noEmit --target ES2022 --module NodeNext --moduleResolution NodeNext "
            .. "--typeRoots %s --types node"):format(h.quote(types_root))
        local t = h.sh(("%s %s %s"):format(h.quote(tsc), flags, h.quote(nodeproj .. "/readme_example.mts")))
        assert.are.equal(0, t.code, "docs/agents.md's TypeScript example does not type-check\n" .. h.describe(t))
    end)

    it("TypeScript: index.js type-checks against index.d.ts and its exports match the declarations", function()
        if h.sh("test -x " .. h.quote(tsc)).code ~= 0 then
            h.skip("no tsc in build-deps/ (make client-deps installs it)")
        end
        local ts = src .. "/clients/typescript"
        local r = h.sh(("%s -p %s --typeRoots %s"):format(h.quote(tsc), h.quote(ts .. "/tsconfig.json"),
            h.quote(types_root)))
        assert.are.equal(0, r.code, h.describe(r))
        -- the implementation under another name beside the declarations: its exports (types
        -- inferred from the code and its JSDoc) must be assignable to what index.d.ts declares
        local d = h.tmpdir()
        h.sh_ok(("cp %s %s/impl.js && cp %s %s/"):format(h.quote(ts .. "/index.js"), h.quote(d),
            h.quote(ts .. "/index.d.ts"), h.quote(d)))
        h.write_file(d .. "/package.json", '{"type":"module"}\n')
        h.write_file(d .. "/check.ts", 'import * as impl from "./impl.js";\nimport * as decl from "./index.js";\n'
            .. "const exportsMatch: typeof decl = impl;\nvoid exportsMatch;\n")
        r = h.sh(("%s --strict --allowJs --checkJs --noEmit --target ES2022 --module NodeNext --moduleResolution "
            .. "NodeNext --typeRoots %s --types node %s"):format(h.quote(tsc), h.quote(types_root),
            h.quote(d .. "/check.ts")))
        assert.are.equal(0, r.code, "index.js's exports differ from index.d.ts\n" .. h.describe(r))
    end)
end)
