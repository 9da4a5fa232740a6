// @ts-check
// index.js — @cordon/client, the TypeScript/JavaScript client of a cordon session's control API
// (docs/session-api.md): start or attach to a session, run commands in its sandbox, manage its
// background jobs and answer its questions, over HTTP/1.1 on the session's Unix socket.
// Owns the Session and BackgroundJob classes, the error classes, where a session's socket is,
// running `cordon session start` with its typed options (START_OPTIONS: every flag of
// `cordon session start --help`, checked by spec/04-engine/session_clients_spec.lua), the
// ownership of a session it starts (this process's: `session start` watches its starter with a
// pidfd, so the session ends when this process exits, SIGKILL included, unless detach: true),
// and AbortSignal on every call that waits (an aborted exec is stopped, then rejects with an
// AbortError). Uses only Node's own modules (node:http with socketPath
// and a keep-alive Agent, node:child_process, node:fs). Types: index.d.ts, which this file is
// checked against (tsc --checkJs). Must never: stop a session it attached to, send a request
// twice once any of its answer has arrived, connect anywhere but the session's socket, or pass
// an option of `session start` it does not know (an unknown key is a TypeError).

import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

/** @typedef {import("./index.js").SessionInfo} SessionInfo */
/** @typedef {import("./index.js").Job} Job */
/** @typedef {import("./index.js").Approval} Approval */
/** @typedef {import("./index.js").ApprovalEvent} ApprovalEvent */
/** @typedef {import("./index.js").Answer} Answer */
/** @typedef {import("./index.js").Grant} Grant */
/** @typedef {import("./index.js").Snapshot} Snapshot */
/** @typedef {import("./index.js").Rollback} Rollback */
/** @typedef {import("./index.js").ApprovalAnswer} ApprovalAnswer */
/** @typedef {import("./index.js").Refusal} Refusal */
/** @typedef {import("./index.js").ExecEvent} ExecEvent */
/** @typedef {import("./index.js").ExecResult} ExecResult */
/** @typedef {import("./index.js").ExecOptions} ExecOptions */
/** @typedef {import("./index.js").RunOptions} RunOptions */
/** @typedef {import("./index.js").StartOptions} StartOptions */
/** @typedef {import("./index.js").LogOptions} LogOptions */
/** @typedef {import("./index.js").Waits} Waits */
/** @typedef {Record<string, unknown>} Json */

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;

/** This client's version: cordon's own (package.json, kept equal to the engine's by a spec). */
export const version = String(JSON.parse(fs.readFileSync(new URL("./package.json", import.meta.url), "utf8")).version);

// The typed options of `cordon session start`: [key, flag, kind]. Kinds: "str" (a non-empty
// string), "strs" (an array of them, the flag once each), "ports" (integers 1..65535), "bool"
// (true: --flag, false: --flag=false, overriding the profile), "duration" (seconds as a number,
// or a string such as "30s"), "home" (overlay, readonly, tmpfs). `--json` is left out: it
// changes what session start prints, which no client reads; detach and owner decide the owner.
/** @type {ReadonlyArray<readonly [string, string, string]>} */
const START_OPTIONS = [
  ["workspace", "--workspace", "str"],
  ["profile", "--profile", "str"],
  ["allowHomeWorkspace", "--allow-home-workspace", "bool"],
  ["allowWrite", "--allow-write", "strs"],
  ["hide", "--hide", "strs"],
  ["unrestrictedNetwork", "--unrestricted-network", "bool"],
  ["allowLoopback", "--allow-loopback", "bool"],
  ["allowDocker", "--allow-docker", "bool"],
  ["networkAllow", "--network-allow", "strs"],
  ["networkDeny", "--network-deny", "strs"],
  ["allowHostPort", "--allow-host-port", "ports"],
  ["publish", "--publish", "strs"],
  ["askSandboxOff", "--ask-sandbox-off", "bool"],
  ["plan", "--plan", "bool"],
  ["permissionTimeout", "--permission-timeout", "duration"],
  ["policy", "--policy", "str"],
  ["home", "--home", "home"],
  ["sessionExec", "--session-exec", "bool"],
  ["allowSshAgent", "--allow-ssh-agent", "bool"],
  ["allowGpgAgent", "--allow-gpg-agent", "bool"],
  ["idleTimeout", "--idle-timeout", "duration"],
  ["maxLifetime", "--max-lifetime", "duration"],
  ["expiryWarning", "--expiry-warning", "duration"],
  ["review", "--review", "bool"],
  ["credential", "--credential", "strs"],
  ["upstreamCa", "--upstream-ca", "str"],
];
const CLIENT_KEYS = ["detach", "owner", "extraArgs", "cordonBin", "env", "timeoutMs", "signal"];
const HOMES = ["overlay", "readonly", "tmpfs"];

/**
 * `cordon session start NAME` with options, each checked. Not detached, the session's owner is
 * the process that runs it (this one), or options.owner.
 * @param {string} bin @param {string} name @param {StartOptions} options @returns {string[]}
 */
function startArgs(bin, name, options) {
  const o = /** @type {Record<string, unknown>} */ (options);
  const known = new Set([...START_OPTIONS.map((x) => x[0]), ...CLIENT_KEYS]);
  const unknown = Object.keys(o).filter((k) => !known.has(k));
  if (unknown.length) throw new TypeError(`unknown session start option(s): ${unknown.join(", ")}`);
  /** @param {string} key @param {string} want @param {unknown} v */
  const bad = (key, want, v) => new TypeError(`session start option ${key} takes ${want}, not ${JSON.stringify(v)}`);
  /** @param {string} key @param {unknown} v @returns {string} */
  const text = (key, v) => {
    if (typeof v !== "string" || !v) throw bad(key, "a non-empty string", v);
    return v;
  };
  /** @param {string} key @param {unknown} v @returns {unknown[]} */
  const list = (key, v) => {
    if (!Array.isArray(v)) throw bad(key, "an array", v);
    return v;
  };
  const args = ["session", "start", name];
  for (const [key, flag, kind] of START_OPTIONS) {
    const v = o[key];
    if (v === undefined || v === null) continue;
    if (kind === "bool") {
      if (typeof v !== "boolean") throw bad(key, "true or false", v);
      args.push(v ? flag : `${flag}=false`);
    } else if (kind === "str") {
      args.push(flag, text(key, v));
    } else if (kind === "strs") {
      for (const item of list(key, v)) args.push(flag, text(key, item));
    } else if (kind === "ports") {
      for (const port of list(key, v)) {
        if (!Number.isInteger(port) || /** @type {number} */ (port) < 1 || /** @type {number} */ (port) > 65535) {
          throw bad(key, "port numbers 1..65535", port);
        }
        args.push(flag, String(port));
      }
    } else if (kind === "duration") {
      if (typeof v === "number" && v > 0) args.push(flag, `${v}s`);
      else if (typeof v === "string" && v) args.push(flag, v);
      else throw bad(key, "seconds (a number > 0) or a duration such as \"30s\"", v);
    } else if (kind === "home") {
      if (typeof v !== "string" || !HOMES.includes(v)) throw bad(key, HOMES.join(" or "), v);
      args.push(flag, v);
    }
  }
  if (options.detach !== undefined && typeof options.detach !== "boolean") throw bad("detach", "true or false", options.detach);
  if (options.owner !== undefined) {
    if (options.detach) throw new TypeError("session start: detach: true and owner exclude each other");
    if (!Number.isInteger(options.owner) || options.owner <= 0) throw bad("owner", "a process id", options.owner);
    args.push("--owner", String(options.owner));
  } else if (options.detach === true) {
    args.push("--detach");
  }
  const extra = options.extraArgs ?? [];
  if (!Array.isArray(extra) || extra.some((a) => typeof a !== "string")) throw bad("extraArgs", "an array of strings", extra);
  return [...args, ...extra];
}
const ANSWERS = ["once", "session", "deny"];
const SUN_PATH_MAX = 108; // sizeof(struct sockaddr_un.sun_path)

export class CordonError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "CordonError";
  }
}

const RECORD_KEPT_MS = 24 * 3600 * 1000; // how long a session's record says why it ended

/** Why the session of socketPath ended and when, from its record NAME.record.json beside the
 * socket (a day after its end), or null.
 * @param {string} socketPath @returns {{ reason: string, ended: number | null } | null} */
function endedReason(socketPath) {
  if (!socketPath.endsWith(".sock")) return null;
  const file = socketPath.slice(0, -".sock".length) + ".record.json";
  try {
    const rec = JSON.parse(fs.readFileSync(file, "utf8"));
    const since = typeof rec.ended === "number" ? rec.ended * 1000 : fs.statSync(file).mtimeMs;
    if (Date.now() - since > RECORD_KEPT_MS) return null;
    if (typeof rec.reason !== "string") return { reason: "controller killed", ended: null };
    return { reason: rec.reason, ended: typeof rec.ended === "number" ? rec.ended : null };
  } catch {
    return null;
  }
}

export class SessionNotFound extends CordonError {
  /** @param {string} name @param {string} socketPath */
  constructor(name, socketPath) {
    const end = endedReason(socketPath);
    const when = end && end.ended ? ` at ${new Date(end.ended * 1000).toISOString()}` : "";
    super(end
      ? `no session named '${name}': it ended${when} (${end.reason})`
      : `no session named '${name}' (no controller answers on ${socketPath}; cordon session list shows the running ones)`);
    this.name = "SessionNotFound";
    this.sessionName = name;
    this.socketPath = socketPath;
    /** why it ended ("idle", "lifetime", "stopped", "owner exited", "controller killed"), or null */
    this.reason = end ? end.reason : null;
    /** when it ended (Unix seconds), or null */
    this.ended = end ? end.ended : null;
  }
}

/** The session ended while this client was connected (an exec, a followed log, a watch of
 * approvals); `reason` is why, as the stream's last event said. */
export class SessionEnded extends CordonError {
  /** @param {string} name @param {string} reason @param {string} during */
  constructor(name, reason, during) {
    super(`session '${name}' ended (${reason}) while ${during}`);
    this.name = "SessionEnded";
    this.sessionName = name;
    /** "idle", "lifetime", "stopped", "owner exited", ... */
    this.reason = reason;
  }
}

export class APIError extends CordonError {
  /** @param {number} status @param {string} message @param {string} [method] @param {string} [path] */
  constructor(status, message, method = "", path = "") {
    super(message);
    this.name = "APIError";
    this.status = status;
    this.method = method;
    this.path = path;
  }
}

/** A wait ended by its AbortSignal; `cause` is the signal's reason. */
export class AbortError extends CordonError {
  /** @param {string} message @param {unknown} [cause] */
  constructor(message, cause) {
    super(message);
    this.name = "AbortError";
    this.cause = cause;
  }
}

/** @param {AbortSignal} signal @param {string} what @returns {AbortError} */
function abortError(signal, what) {
  return new AbortError(`${what} was aborted`, signal.reason);
}

/** @param {AbortSignal | undefined} signal @param {string} what */
function checkAborted(signal, what) {
  if (signal?.aborted) throw abortError(signal, what);
}

export class StartError extends CordonError {
  /** @param {string} message @param {number | null} exitCode @param {string} stderr */
  constructor(message, exitCode, stderr) {
    super(message);
    this.name = "StartError";
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** @param {string} name */
function checkName(name) {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new CordonError(`invalid session name ${JSON.stringify(name)}: 1 to 64 characters of A-Z a-z 0-9 _ . -, not starting with '.' or '-'`);
  }
}

/** @param {NodeJS.ProcessEnv} [env] @returns {string} */
export function socketDir(env = process.env) {
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg) return path.join(xdg, "cordon");
  return `/tmp/cordon-${process.getuid ? process.getuid() : 0}`;
}

/** @param {string} name @param {NodeJS.ProcessEnv} [env] @returns {string} */
export function socketPath(name, env = process.env) {
  checkName(name);
  const p = path.join(socketDir(env), `${name}.sock`);
  if (Buffer.byteLength(p) >= SUN_PATH_MAX) {
    throw new CordonError(`the socket path of session '${name}' is too long for a Unix socket (set XDG_RUNTIME_DIR to a shorter directory): ${p}`);
  }
  return p;
}

/** @param {string} [cordonBin] @returns {string} */
export function findCordon(cordonBin) {
  if (cordonBin) return cordonBin;
  if (process.env.CORDON_BIN) return process.env.CORDON_BIN;
  for (const dir of (process.env.PATH || "").split(":")) {
    if (!dir) continue;
    const p = path.join(dir, "cordon");
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not there: the next directory
    }
  }
  throw new CordonError("cannot find the cordon binary: put it on PATH, set CORDON_BIN or pass cordonBin");
}

// A socket nobody answers on (its controller died): removed with NAME.jobs.json, as the CLI
// does, so the name is free again. Only if it is a socket.
/** @param {string} p */
function removeStale(p) {
  try {
    if (!fs.lstatSync(p).isSocket()) return;
    fs.unlinkSync(p);
    if (p.endsWith(".sock")) fs.unlinkSync(`${p.slice(0, -5)}.jobs.json`);
  } catch {
    // gone already, or not ours to remove
  }
}

/** @param {unknown} v @returns {number | null} */
const optNum = (v) => (typeof v === "number" ? v : null);
/** @param {unknown} v @returns {string | null} */
const optStr = (v) => (typeof v === "string" ? v : null);

/** @param {Json} d @returns {Grant} */
const grant = (d) => ({
  id: String(d.id ?? ""), kind: String(d.kind ?? ""), scope: String(d.scope ?? ""), target: String(d.target ?? ""),
  host: optStr(d.host), port: typeof d.port === "number" ? d.port : null, command: optStr(d.command),
  open: typeof d.open === "number" ? d.open : null, by: String(d.by ?? ""), granted: Number(d.granted ?? 0),
  expires: typeof d.expires === "number" ? d.expires : null, raw: d,
});
/** @param {Json} d @returns {Snapshot} */
const snapshotOf = (d) => ({
  label: String(d.label ?? ""), taken: Number(d.taken ?? 0),
  changes: typeof d.changes === "number" ? d.changes : -1, entries: typeof d.entries === "number" ? d.entries : -1,
  raw: d,
});
/** @param {unknown} v @returns {Json} */
const obj = (v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? /** @type {Json} */ (v) : {});

/** @param {Json} d @returns {SessionInfo} */
function sessionInfo(d) {
  return {
    name: String(d.name ?? ""), pid: Number(d.pid ?? 0), profile: String(d.profile ?? ""),
    workspace: String(d.workspace ?? ""), socket: String(d.socket ?? ""), started: Number(d.started ?? 0),
    ownerPid: optNum(d.owner_pid), detached: Boolean(d.detached), jobsRunning: Number(d.jobs_running ?? 0),
    sessionExec: d.session_exec !== false, stopping: Boolean(d.stopping), raw: d,
  };
}

/** @param {Json} d @returns {Refusal} */
function refusal(d) {
  return { kind: String(d.kind ?? ""), path: optStr(d.path), line: optStr(d.line), reason: optStr(d.reason), raw: d };
}

/** @param {Json} d @returns {Approval} */
function approval(d) {
  return {
    id: Number(d.id ?? 0), kind: String(d.kind ?? ""), question: String(d.question ?? ""),
    command: optStr(d.command), host: optStr(d.host), port: optNum(d.port), job: optNum(d.job),
    asked: optNum(d.asked), expires: optNum(d.expires), raw: d,
  };
}

/** @param {Json} d @returns {Job} */
function job(d) {
  return {
    pid: Number(d.pid ?? 0), command: String(d.command ?? ""), turn: optStr(d.turn),
    background: Boolean(d.background), state: String(d.state ?? ""), exitCode: optNum(d.exit_code),
    signal: optNum(d.signal), started: optNum(d.started), ended: optNum(d.ended),
    durationMs: optNum(d.duration_ms), timedOut: Boolean(d.timed_out),
    sandboxRunning: Boolean(d.sandbox_running), log: optStr(d.log),
    leaderRunning: typeof d.leader_running === "boolean" ? d.leader_running : null,
    leaderExitCode: optNum(d.leader_exit_code), leaderSignal: optNum(d.leader_signal), left: optNum(d.left),
    leftPids: Array.isArray(d.left_pids) ? d.left_pids.map(Number) : null,
    restart: optStr(d.restart), backoff: optNum(d.backoff), restarts: Number(d.restarts ?? 0),
    lastExit: optNum(d.last_exit), nextStart: optNum(d.next_start), currentPid: optNum(d.current_pid),
    raw: d,
  };
}

/** @param {Json} d @returns {ExecEvent} */
function execEvent(d) {
  switch (d.event) {
    case "started":
      return { event: "started", pid: Number(d.pid ?? 0), raw: d };
    case "output": {
      const data = typeof d.data === "string" ? Buffer.from(d.data, "utf8")
        : Buffer.from(String(d.data_base64 ?? ""), "base64");
      return { event: "output", stream: String(d.stream ?? "log"), data, text: data.toString("utf8"), raw: d };
    }
    case "approval":
      if (d.approval && typeof d.approval === "object") {
        return { event: "approval", session: optStr(d.session), approval: approval(obj(d.approval)), raw: d };
      }
      break;
    case "settled":
      return { event: "settled", id: Number(d.id ?? 0), answer: String(d.answer ?? ""), by: optStr(d.by), raw: d };
    case "exit":
      return {
        event: "exit", pid: Number(d.pid ?? 0), exitCode: Number(d.exit_code ?? 0), signal: Number(d.signal ?? 0),
        timedOut: Boolean(d.timed_out), stopped: Boolean(d.stopped), durationMs: Number(d.duration_ms ?? 0),
        ranOutside: Boolean(d.ran_outside),
        refusals: (Array.isArray(d.refusals) ? d.refusals : []).map((r) => refusal(obj(r))), raw: d,
      };
    case "dropped":
      return { event: "dropped", bytes: Number(d.bytes ?? 0), raw: d };
    case "session_ended":
      return { event: "session_ended", session: optStr(d.session), reason: String(d.reason ?? ""), raw: d };
    default:
      break;
  }
  return { event: "unknown", name: String(d.event), raw: d };
}

/** @param {Json} d @returns {ApprovalEvent} */
function approvalEvent(d) {
  const a = d.approval && typeof d.approval === "object" ? approval(obj(d.approval)) : null;
  const id = optNum(d.id) ?? (a ? a.id : null);
  return { event: String(d.event ?? ""), approval: a, id, answer: optStr(d.answer), by: optStr(d.by),
    session: optStr(d.session), reason: optStr(d.reason), raw: d };
}

/**
 * The lines of a streamed answer, without their newline, as they arrive. Leaving early
 * destroys the answer (its connection is not reused).
 * @param {http.IncomingMessage} res
 * @param {string} name
 * @returns {AsyncGenerator<string>}
 */
async function* lines(res, name) {
  let buf = "";
  let done = false;
  try {
    res.setEncoding("utf8");
    for await (const chunk of res) {
      buf += chunk;
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line) yield line;
      }
    }
    if (!res.complete) throw new CordonError(`lost the connection to session '${name}' during a stream`);
    if (buf) yield buf;
    done = true;
  } finally {
    if (!done) res.destroy();
  }
}

/** @param {string} line @param {string} name @returns {Json} */
function parseLine(line, name) {
  try {
    return obj(JSON.parse(line));
  } catch {
    throw new CordonError(`session '${name}' sent a line that is not JSON: ${line.slice(0, 200)}`);
  }
}

export class BackgroundJob {
  /** @param {Session} session @param {number} pid @param {string} log @param {string} message @param {string} command */
  constructor(session, pid, log, message, command) {
    this.session = session;
    this.pid = pid;
    this.log = log;
    this.message = message;
    this.command = command;
  }

  /** @param {LogOptions} [options] */
  logs(options) {
    return this.session.logs(this.pid, options);
  }

  /** @param {LogOptions} [options] */
  follow(options) {
    return this.session.followLogs(this.pid, options);
  }

  /** @param {Waits} [options] */
  stop(options) {
    return this.session.stop(this.pid, options);
  }

  /** @param {Waits} [options] @returns {Promise<Job | null>} */
  async info(options) {
    return (await this.session.jobs(options)).find((j) => j.pid === this.pid) ?? null;
  }
}

export class Session {
  /** @param {string} name @param {string} [sock] @param {{ owned?: boolean }} [options] */
  constructor(name, sock, options = {}) {
    this.name = name;
    this.socketPath = sock || socketPath(name);
    this.owned = Boolean(options.owned);
    // Keep-alive: requests made one after the other reuse one connection; the Agent unrefs an
    // idle one, so it does not keep the process alive.
    this._agent = new http.Agent({ keepAlive: true });
  }

  /** @param {string} name @param {StartOptions} [options] @returns {Promise<Session>} */
  static async start(name, options = {}) {
    checkName(name);
    const bin = findCordon(options.cordonBin);
    const args = startArgs(bin, name, options);
    checkAborted(options.signal, `session start ${name}`);
    const env = options.env ?? process.env;
    const sock = socketPath(name, env);
    // stderr to a file, not a pipe: the controller `session start` leaves running keeps its
    // stderr, and a pipe would not reach its end until the session stops.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cordon-start-"));
    const errPath = path.join(dir, "stderr");
    const fd = fs.openSync(errPath, "w+", 0o600);
    /** @type {{ code: number | null, signal: string | null }} */
    let result;
    try {
      result = await new Promise((resolve, reject) => {
        const child = spawn(bin, args, { stdio: ["ignore", "ignore", fd], env });
        const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60000);
        child.on("error", (e) => {
          clearTimeout(timer);
          reject(new CordonError(`cannot run ${bin}: ${e.message} (set CORDON_BIN or pass cordonBin)`));
        });
        child.on("exit", (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal });
        });
      });
    } finally {
      fs.closeSync(fd);
    }
    const stderr = fs.readFileSync(errPath, "utf8");
    fs.rmSync(dir, { recursive: true, force: true });
    // Aborted while `session start` ran: it is not interrupted (its session would come up all
    // the same, owned by this process); once it returns, the session it started is stopped.
    if (options.signal?.aborted) {
      if (result.code === 0) await new Session(name, sock, { owned: true }).dispose().catch(() => undefined);
      throw abortError(options.signal, `session start ${name}`);
    }
    if (result.code !== 0) {
      const ls = stderr.split("\n").filter((l) => l.trim());
      const msg = ls.length ? ls[ls.length - 1]
        : `cordon session start ${name} failed (${result.signal ? `signal ${result.signal}` : `exit ${result.code}`})`;
      throw new StartError(msg, result.code, stderr);
    }
    return new Session(name, sock, { owned: true });
  }

  /** @param {string} name @param {{ socket?: string }} [options] @returns {Promise<Session>} */
  static async attach(name, options = {}) {
    const s = new Session(name, options.socket);
    await s.status();
    return s;
  }

  close() {
    this._agent.destroy();
    this._agent = new http.Agent({ keepAlive: true });
  }

  [Symbol.asyncDispose]() {
    return this.dispose();
  }

  async dispose() {
    try {
      if (this.owned) {
        try {
          await this.stopSession();
        } catch (e) {
          if (!(e instanceof SessionNotFound)) throw e;
        }
      }
    } finally {
      this.close();
    }
  }

  /**
   * Sends one request; resolves to the answer (status and headers read). An error status is
   * read and rejected as APIError. A request whose reused connection the session had closed
   * while idle is sent again on a new one (nothing of its answer had arrived).
   * With signal, aborting destroys the request or its answer, which then rejects (or its
   * stream throws) with an AbortError.
   * @param {string} method @param {string} p @param {Json} [body] @param {AbortSignal} [signal]
   * @returns {Promise<http.IncomingMessage>}
   */
  async _open(method, p, body, signal) {
    checkAborted(signal, `${method} ${p}`);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    /** @type {Record<string, string | number>} */
    const headers = { Host: "cordon" };
    if (payload) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = payload.length;
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await new Promise((resolve, reject) => {
          /** @type {http.IncomingMessage | null} */
          let answer = null;
          const req = http.request({ socketPath: this.socketPath, path: p, method, headers, agent: this._agent },
            (r) => {
              answer = r;
              if (signal) r.on("close", () => signal.removeEventListener("abort", abort));
              resolve(r);
            });
          const abort = () => {
            const e = abortError(/** @type {AbortSignal} */ (signal), `${method} ${p}`);
            if (answer) answer.destroy(e);
            else req.destroy(e);
          };
          signal?.addEventListener("abort", abort, { once: true });
          req.on("error", (e) => {
            if (!answer) signal?.removeEventListener("abort", abort);
            /** @type {any} */ (e).reusedSocket = req.reusedSocket;
            reject(e);
          });
          req.end(payload);
        });
        const status = /** @type {http.IncomingMessage} */ (res).statusCode ?? 0;
        if (status >= 400) {
          const text = await readAll(res, this.name);
          let message = "";
          try {
            const v = obj(JSON.parse(text.toString("utf8")));
            if (typeof v.error === "string") message = v.error;
          } catch {
            // not JSON: the status alone
          }
          throw new APIError(status, message || `${method} ${p}: HTTP ${status}`, method, p);
        }
        return res;
      } catch (e) {
        if (e instanceof CordonError) throw e;
        const err = /** @type {NodeJS.ErrnoException & { reusedSocket?: boolean }} */ (e);
        if (err.reusedSocket && attempt === 0 && (err.code === "ECONNRESET" || err.code === "EPIPE")) continue;
        if (err.code === "ENOENT") throw new SessionNotFound(this.name, this.socketPath);
        if (err.code === "ECONNREFUSED") {
          removeStale(this.socketPath);
          throw new SessionNotFound(this.name, this.socketPath);
        }
        throw new CordonError(`lost the connection to session '${this.name}': ${err.message}`);
      }
    }
  }

  /** @param {string} method @param {string} p @param {Json} [body] @param {AbortSignal} [signal] @returns {Promise<Json>} */
  async _json(method, p, body, signal) {
    const res = await this._open(method, p, body, signal);
    const text = (await readAll(res, this.name)).toString("utf8");
    try {
      const v = JSON.parse(text);
      if (v !== null && typeof v === "object" && !Array.isArray(v)) return v;
    } catch {
      // falls through
    }
    throw new CordonError(`session '${this.name}' answered ${method} ${p} with something not a JSON object: ${text.slice(0, 200)}`);
  }

  /** @param {Waits} [options] @returns {Promise<SessionInfo>} */
  async status(options = {}) {
    return sessionInfo(await this._json("GET", "/v1/session", undefined, options.signal));
  }

  /** @param {{ wait?: boolean, timeoutMs?: number, signal?: AbortSignal }} [options] @returns {Promise<void>} */
  async stopSession(options = {}) {
    checkAborted(options.signal, `stopping session '${this.name}'`);
    try {
      await this._json("POST", "/v1/session/stop");
    } catch (e) {
      if (!(e instanceof APIError && e.status === 409)) throw e; // 409: already stopping
    }
    this.close();
    if (options.wait === false) return;
    const deadline = Date.now() + (options.timeoutMs ?? 60000);
    while (Date.now() < deadline) {
      if (!fs.existsSync(this.socketPath)) return;
      try {
        await this._json("GET", "/v1/session");
        this.close();
      } catch (e) {
        if (e instanceof CordonError) return;
        throw e;
      }
      await new Promise((r) => setTimeout(r, 50));
      checkAborted(options.signal, `stopping session '${this.name}'`);
    }
    throw new CordonError(`session '${this.name}' did not stop within ${options.timeoutMs ?? 60000} ms`);
  }

  /** @param {string} command @param {ExecOptions} [options] @returns {AsyncGenerator<ExecEvent>} */
  async* stream(command, options = {}) {
    /** @type {Json} */
    const body = { command };
    if (options.timeout !== undefined) body.timeout = options.timeout;
    if (options.turn !== undefined) body.turn = options.turn;
    const res = await this._open("POST", "/v1/exec", body, options.signal);
    for await (const line of lines(res, this.name)) yield execEvent(parseLine(line, this.name));
  }

  /** @param {string} command @param {RunOptions} [options] @returns {Promise<ExecResult>} */
  async exec(command, options = {}) {
    /** @type {Buffer[]} */
    const out = [];
    /** @type {Buffer[]} */
    const err = [];
    /** @type {Approval[]} */
    const approvals = [];
    /** @type {import("./index.js").SettledEvent[]} */
    const settled = [];
    let pid = 0;
    /** @type {import("./index.js").ExitEvent | null} */
    let exit = null;
    /** @type {string | null} */
    let ended = null;
    // Aborted, the command is stopped (TERM, KILL after the grace period) as soon as its pid is
    // known (the started event comes first); its stream then ends with the exit event, and the
    // exec rejects with an AbortError.
    const signal = options.signal;
    checkAborted(signal, `exec of ${JSON.stringify(command)}`);
    let aborted = false;
    /** @type {Promise<unknown> | null} */
    let stopping = null;
    const stopIt = () => {
      if (aborted && pid && !stopping) stopping = this.stop(pid).catch(() => null);
    };
    const onAbort = () => {
      aborted = true;
      stopIt();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      for await (const ev of this.stream(command, { timeout: options.timeout, turn: options.turn })) {
        if (ev.event === "output") {
          if (ev.stream === "stderr") {
            err.push(ev.data);
            options.onStderr?.(ev.text);
          } else {
            out.push(ev.data);
            options.onStdout?.(ev.text);
          }
        } else if (ev.event === "exit") {
          exit = ev;
        } else if (ev.event === "started") {
          pid = ev.pid;
          stopIt();
        } else if (ev.event === "approval") {
          approvals.push(ev.approval);
        } else if (ev.event === "settled") {
          settled.push(ev);
        } else if (ev.event === "session_ended") {
          ended = ev.reason;
        }
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    if (aborted && signal) {
      await stopping;
      throw abortError(signal, `exec of ${JSON.stringify(command)}`);
    }
    // the session's end stopped the command: why, rather than its signal
    if (ended !== null && (!exit || exit.stopped)) throw new SessionEnded(this.name, ended, "the command ran");
    if (!exit) throw new CordonError(`session '${this.name}' ended the exec of ${JSON.stringify(command)} before its exit event`);
    const stdoutBytes = Buffer.concat(out);
    const stderrBytes = Buffer.concat(err);
    return {
      command, pid: exit.pid || pid, exitCode: exit.exitCode, signal: exit.signal, timedOut: exit.timedOut,
      stopped: exit.stopped, ranOutside: exit.ranOutside, durationMs: exit.durationMs, refusals: exit.refusals,
      stdout: stdoutBytes.toString("utf8"), stderr: stderrBytes.toString("utf8"), stdoutBytes, stderrBytes,
      approvals, settled, raw: exit.raw,
    };
  }

  /** @param {string} command @param {{ turn?: string, restart?: string, backoff?: number, signal?: AbortSignal }} [options] @returns {Promise<BackgroundJob>} */
  async background(command, options = {}) {
    /** @type {Json} */
    const body = { command, background: true };
    if (options.turn !== undefined) body.turn = options.turn;
    if (options.restart !== undefined) body.restart = options.restart;
    if (options.backoff !== undefined) body.backoff = options.backoff;
    const d = await this._json("POST", "/v1/exec", body, options.signal);
    return new BackgroundJob(this, Number(d.pid ?? 0), String(d.log ?? ""), String(d.message ?? ""), command);
  }

  /** @param {Waits} [options] @returns {Promise<Job[]>} */
  async jobs(options = {}) {
    const d = await this._json("GET", "/v1/jobs", undefined, options.signal);
    return (Array.isArray(d.jobs) ? d.jobs : []).map((j) => job(obj(j)));
  }

  /** @param {number} pid @param {LogOptions} [options] @returns {Promise<Buffer>} */
  async logsBytes(pid, options = {}) {
    const res = await this._open("GET", `/v1/jobs/${Math.trunc(pid)}/log`, undefined, options.signal);
    const tail = options.tail;
    if (tail === undefined || tail === null) return readAll(res, this.name);
    /** @type {Buffer[]} */
    const keep = [];
    let partial = Buffer.alloc(0);
    for await (const chunk of res) {
      const parts = [];
      let data = Buffer.concat([partial, /** @type {Buffer} */ (chunk)]);
      let i;
      while ((i = data.indexOf(10)) >= 0) {
        parts.push(data.subarray(0, i + 1));
        data = data.subarray(i + 1);
      }
      partial = data;
      keep.push(...parts);
      if (keep.length > tail) keep.splice(0, keep.length - tail);
    }
    if (!res.complete) throw new CordonError(`lost the connection to session '${this.name}' while reading a log`);
    if (partial.length) keep.push(partial);
    if (keep.length > tail) keep.splice(0, keep.length - tail);
    return Buffer.concat(tail > 0 ? keep : []);
  }

  /** @param {number} pid @param {LogOptions} [options] @returns {Promise<string>} */
  async logs(pid, options = {}) {
    if (!options.follow) return (await this.logsBytes(pid, options)).toString("utf8");
    /** @type {Buffer[]} */
    const parts = [];
    let mid = false;
    for await (const ev of this.followLogs(pid, options)) {
      if (ev.event === "output" && ev.data.length) {
        parts.push(ev.data);
        mid = ev.data[ev.data.length - 1] !== 10;
      } else if (ev.event === "dropped") {
        parts.push(Buffer.from(`${mid ? "\n" : ""}[cordon: ${ev.bytes} bytes of this log were dropped while it was read]\n`));
        mid = false;
      }
    }
    return Buffer.concat(parts).toString("utf8");
  }

  /**
   * GET /v1/jobs/PID/log?follow=1&format=ndjson: the log (from its last `tail` lines, when
   * given), then what the job writes, as output events (stream "log"); a dropped event where
   * the log's cap dropped bytes not yet sent; the job's exit event last. The session's end
   * rejects with SessionEnded. Leaving the loop early closes the connection.
   * @param {number} pid @param {LogOptions} [options] @returns {AsyncGenerator<ExecEvent>}
   */
  async* followLogs(pid, options = {}) {
    const tail = options.tail;
    if (tail !== undefined && tail !== null && !(Number.isInteger(tail) && tail >= 0)) {
      throw new TypeError(`tail must be a number of lines >= 0, not ${JSON.stringify(tail)}`);
    }
    let path = `/v1/jobs/${Math.trunc(pid)}/log?follow=1&format=ndjson`;
    if (tail !== undefined && tail !== null) path += `&tail=${tail}`;
    const res = await this._open("GET", path, undefined, options.signal);
    for await (const line of lines(res, this.name)) {
      const ev = execEvent(parseLine(line, this.name));
      if (ev.event === "session_ended") throw new SessionEnded(this.name, ev.reason, "the log was followed");
      yield ev;
    }
  }

  /** @param {number} pid @param {Waits} [options] @returns {Promise<Job>} */
  async stop(pid, options = {}) {
    return job(await this._json("POST", `/v1/jobs/${Math.trunc(pid)}/stop`, undefined, options.signal));
  }

  /** @param {string} turn @param {Waits} [options] @returns {Promise<number[]>} */
  async cancel(turn, options = {}) {
    const d = await this._json("POST", `/v1/turns/${encodeURIComponent(turn)}/cancel`, undefined, options.signal);
    return (Array.isArray(d.stopped) ? d.stopped : []).map(Number);
  }

  /** @param {Waits} [options] @returns {Promise<Approval[]>} */
  async approvals(options = {}) {
    const d = await this._json("GET", "/v1/approvals", undefined, options.signal);
    return (Array.isArray(d.approvals) ? d.approvals : []).map((a) => approval(obj(a)));
  }

  /** @param {number} id @param {ApprovalAnswer} answer @param {{ by?: string, forSeconds?: number, signal?: AbortSignal }} [options] @returns {Promise<Answer>} */
  async answer(id, answer, options = {}) {
    if (!ANSWERS.includes(answer)) throw new TypeError(`answer must be one of ${ANSWERS.join(", ")}, not ${JSON.stringify(answer)}`);
    /** @type {Json} */
    const body = { answer };
    if (options.by !== undefined) body.by = options.by;
    // with "session": the allow ends that many seconds from now
    if (options.forSeconds !== undefined) body.for = options.forSeconds;
    const d = await this._json("POST", `/v1/approvals/${Math.trunc(id)}`, body, options.signal);
    return { id: Number(d.id ?? id), answer: String(d.answer ?? answer), message: String(d.message ?? ""), raw: d };
  }

  /** @param {string | undefined} [label] @param {Waits} [options] @returns {Promise<Snapshot>} */
  async snapshot(label, options = {}) {
    return snapshotOf(await this._json("POST", "/v1/snapshots", label === undefined ? {} : { label }, options.signal));
  }

  /** @param {Waits} [options] @returns {Promise<Snapshot[]>} */
  async snapshots(options = {}) {
    const d = await this._json("GET", "/v1/snapshots", undefined, options.signal);
    return (Array.isArray(d.snapshots) ? d.snapshots : []).map((x) => snapshotOf(obj(x)));
  }

  /** @param {string} label @param {Waits} [options] @returns {Promise<Rollback>} */
  async rollback(label, options = {}) {
    const d = await this._json("POST", "/v1/rollback", { label }, options.signal);
    const holders = (Array.isArray(d.holders) ? d.holders : []).map((x) => {
      const o = obj(x);
      return { pid: Number(o.pid ?? 0), comm: String(o.comm ?? "") };
    });
    return { label: String(d.label ?? label), holders, message: optStr(d.message), raw: d };
  }

  /** @param {Waits} [options] @returns {Promise<Grant[]>} */
  async grants(options = {}) {
    const d = await this._json("GET", "/v1/grants", undefined, options.signal);
    return (Array.isArray(d.grants) ? d.grants : []).map((g) => grant(obj(g)));
  }

  /** @param {string} target @param {{ forSeconds?: number, by?: string, signal?: AbortSignal }} [options] @returns {Promise<Grant>} */
  async grantNetwork(target, options = {}) {
    /** @type {Json} */
    const body = { network: target };
    if (options.forSeconds !== undefined) body.for = options.forSeconds;
    if (options.by !== undefined) body.by = options.by;
    return grant(await this._json("POST", "/v1/grants", body, options.signal));
  }

  /** @param {string} id @param {Waits} [options] @returns {Promise<number>} */
  async revoke(id, options = {}) {
    const d = await this._json("DELETE", `/v1/grants/${encodeURIComponent(id)}`, undefined, options.signal);
    return Number(d.closed ?? 0);
  }

  /** @param {Waits} [options] @returns {Promise<Json>} */
  async review(options = {}) {
    return await this._json("GET", "/v1/review", undefined, options.signal);
  }

  /** @param {string} newName @param {Waits} [options] @returns {Promise<Session>} */
  async fork(newName, options = {}) {
    checkName(newName);
    const d = await this._json("POST", "/v1/fork", { name: newName }, options.signal);
    const sock = typeof d.socket === "string" ? d.socket : undefined;
    return new Session(String(d.name ?? newName), sock, { owned: this.owned });
  }

  /** @param {{ signal?: AbortSignal }} [options] @returns {AsyncGenerator<ApprovalEvent>} */
  async* watchApprovals(options = {}) {
    const res = await this._open("GET", "/v1/approvals?watch=1", undefined, options.signal);
    const ctype = String(res.headers["content-type"] ?? "").split(";")[0].trim();
    if (ctype !== "application/x-ndjson") {
      await readAll(res, this.name);
      throw new CordonError(`session '${this.name}' cannot be watched for approvals (GET /v1/approvals?watch=1 answered ${ctype || "?"}, not a stream): its cordon is older than this client`);
    }
    for await (const line of lines(res, this.name)) {
      const d = parseLine(line, this.name);
      if (d.event === "session_ended") throw new SessionEnded(this.name, String(d.reason ?? ""), "approvals were watched");
      yield approvalEvent(d);
    }
  }
}

/** @param {http.IncomingMessage} res @param {string} name @returns {Promise<Buffer>} */
async function readAll(res, name) {
  /** @type {Buffer[]} */
  const parts = [];
  try {
    for await (const chunk of res) parts.push(/** @type {Buffer} */ (chunk));
  } catch (e) {
    if (e instanceof AbortError) throw e;
    throw new CordonError(`lost the connection to session '${name}': ${/** @type {Error} */ (e).message}`);
  }
  if (!res.complete) throw new CordonError(`lost the connection to session '${name}' before the end of an answer`);
  return Buffer.concat(parts);
}
