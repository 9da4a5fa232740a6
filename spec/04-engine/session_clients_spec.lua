-- spec/04-engine/session_clients_spec.lua — the Python (clients/python) and TypeScript
-- (clients/typescript) clients of the session control API, driven through real interpreters:
-- /usr/bin/python3 with the package installed by `pip install --no-index --target`, and node
-- with the tarball of `npm pack` installed offline into a scratch project. Each fact is checked
-- from what a script using the client prints (one JSON line) and, where it matters, from the
-- session itself (curl on its socket). The README's two examples are extracted from README.md
-- between their markers and run as written. tsc (make client-deps puts it in build-deps/)
-- checks index.js against index.d.ts and the README's TypeScript example; without it those
-- checks are skipped (h.skip, saying why).
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
local readme_path = src .. "/README.md"
local tsc = src .. "/build-deps/node_modules/.bin/tsc"
local types_root = src .. "/build-deps/node_modules/@types"

-- Made once for the file (lazy_setup): the installed Python package and the node project.
local scratch, pylib, nodeproj

local function have(cmd)
    return h.sh("command -v " .. h.quote(cmd)).code == 0
end

-- The code of README.md's example for lang, between its markers.
local function readme_example(lang)
    local text = assert(h.read_file(readme_path), "cannot read " .. readme_path)
    local fence = lang == "python" and "python" or "ts"
    local body = text:match("<!%-%- clients%-example:" .. lang .. " %-%->\n```" .. fence
        .. "\n(.-)```\n<!%-%- /clients%-example:" .. lang .. " %-%->")
    assert(body, "README.md has no " .. lang .. " example between its clients-example markers")
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
-- session runtime directory; args are passed as one JSON argument. Returns the h.sh result
-- plus .json, the decoded last line.
local function run(kind, script, runtime, cwd, args)
    local file
    if kind == "py" then
        file = scratch .. "/" .. h.token() .. ".py"
    else
        file = nodeproj .. "/" .. h.token() .. ".mjs" -- in the project: "@cordon/client" resolves
    end
    h.write_file(file, script)
    local env = { HOME = h.home(), PATH = h.path, XDG_RUNTIME_DIR = runtime, CORDON_BIN = h.bin,
        PYTHONPATH = pylib }
    local words = { "env" }
    for k, v in pairs(env) do words[#words + 1] = k .. "=" .. v end
    words[#words + 1] = kind == "py" and h.python or "node"
    words[#words + 1] = file
    words[#words + 1] = cjson.encode(args or {})
    local cmd = ("cd %s && timeout -k 5 90 %s"):format(h.quote(cwd), h.join(words))
    local r = h.sh(cmd)
    r.cmd = cmd
    r.json = h.last_json(r.stdout)
    return r
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
s = Session.start(a["name"], workspace=a["ws"], extra_args=a.get("extra", []))
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
const s = await Session.start(a.name, { workspace: a.ws });
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

-- The two clients answer with the same facts; these check them for either.
local function check_work(w, kind)
    local e = w.exec
    assert.are.equal("out\n", e.stdout)
    assert.are.same({ 101, 114, 114, 10, 255 }, kind == "py" and e.stderr_bytes or e.stderrBytes)
    assert.are.equal(3, kind == "py" and e.exit_code or e.exitCode)
    assert.is_true(kind == "py" and w.timeout.timed_out or w.timeout.timedOut)
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
            h.sh_ok(("cd %s && npm install --offline --silent --no-audit --no-fund %s"):format(
                h.quote(nodeproj), h.quote(scratch .. "/" .. tgz:match("[^\n]+$"))))
        end
    end)
    lazy_teardown(function()
        if scratch then os.execute("rm -rf " .. h.quote(scratch)) end
    end)
    after_each(h.cleanup)

    for _, kind in ipairs({ "py", "node" }) do
        local S = kind == "py" and { start = PY_START, work = PY_WORK, approvals = PY_APPROVALS,
            errors = PY_ERRORS, keepalive = PY_KEEPALIVE } or { start = NODE_START, work = NODE_WORK,
            approvals = NODE_APPROVALS, errors = NODE_ERRORS, keepalive = NODE_KEEPALIVE }
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
        assert.is_true(h.sh("test -f " .. h.quote(pylib .. "/cordon-0.1.0.dist-info/METADATA")).code == 0)
    end)

    it("README's Python example runs as written", function()
        local runtime, ws = h.runtime_dir(), h.workspace()
        session_for("demo", runtime, ws)
        local code = readme_example("python")
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

    it("README's TypeScript example runs as written", function()
        if not nodeproj then
            h.skip("node and npm are not installed")
        end
        local runtime, ws = h.runtime_dir(), h.workspace()
        session_for("demo-ts", runtime, ws)
        h.write_file(nodeproj .. "/readme_example.mjs", readme_example("typescript")) -- also JavaScript
        local r = h.sh(("cd %s && timeout -k 5 90 env HOME=%s PATH=%s XDG_RUNTIME_DIR=%s CORDON_BIN=%s node %s")
            :format(h.quote(ws), h.quote(h.home()), h.quote(h.path), h.quote(runtime), h.quote(h.bin),
                h.quote(nodeproj .. "/readme_example.mjs")))
        assert.are.equal(0, r.code, h.describe(r))
        assert.truthy(r.stdout:find("^2 hello\n"), h.describe(r))
        assert.truthy(r.stdout:find("true 404 no pending approval 12345", 1, true), h.describe(r))
        assert.is_false(alive({ socket = h.session_socket(runtime, "demo-ts") }), "dispose() left it running")
    end)

    it("README's TypeScript example type-checks against the installed package", function()
        if not nodeproj then
            h.skip("node and npm are not installed")
        end
        if h.sh("test -x " .. h.quote(tsc)).code ~= 0 then
            h.skip("no tsc in build-deps/ (make client-deps installs it)")
        end
        h.write_file(nodeproj .. "/readme_example.mts", readme_example("typescript"))
        local flags = ("--strict --noEmit --target ES2022 --module NodeNext --moduleResolution NodeNext "
            .. "--typeRoots %s --types node"):format(h.quote(types_root))
        local t = h.sh(("%s %s %s"):format(h.quote(tsc), flags, h.quote(nodeproj .. "/readme_example.mts")))
        assert.are.equal(0, t.code, "the README's TypeScript example does not type-check\n" .. h.describe(t))
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
