// index.d.ts — the types of @cordon/client (index.js), the TypeScript/JavaScript client of a
// cordon session's control API (docs/session-api.md: HTTP/1.1 over the session's Unix socket).
// Owns the declarations of every export of index.js; index.js is checked against them
// (spec/04-engine/session_clients_spec.lua runs tsc with checkJs over it and asks that its exports
// be assignable to these). Must never: declare what index.js does not do.

/// <reference types="node" />

export type ApprovalAnswer = "once" | "session" | "deny";

/** GET /v1/session. */
export interface SessionInfo {
  name: string;
  /** the controller's host pid */
  pid: number;
  profile: string;
  workspace: string;
  socket: string;
  /** Unix seconds */
  started: number;
  /** null with --detach */
  ownerPid: number | null;
  detached: boolean;
  jobsRunning: number;
  /** false when every exec gets a sandbox of its own (--session-exec=false) */
  sessionExec: boolean;
  stopping: boolean;
  raw: Record<string, unknown>;
}

/** Something the sandbox refused, as the `refusal` hook found it in a command's output. */
export interface Refusal {
  kind: string;
  path: string | null;
  line: string | null;
  reason: string | null;
  raw: Record<string, unknown>;
}

/** A pending question for a person: "network" (host, port) or "rerun" (command). */
export interface Approval {
  id: number;
  kind: string;
  question: string;
  command: string | null;
  host: string | null;
  port: number | null;
  /** the exec's pid, when known */
  job: number | null;
  asked: number | null;
  expires: number | null;
  raw: Record<string, unknown>;
}

export interface Answer {
  id: number;
  answer: string;
  message: string;
  raw: Record<string, unknown>;
}

/** A grant in force (GET /v1/grants): kind "network" (id "gN", host, port, open connections) or
 * "rerun" (id "rN", command); scope "session", "timed" (ends at expires, Unix seconds) or "command". */
/** A review session's snapshot (POST/GET /v1/snapshots): changes and entries are -1 when unknown. */
export interface Snapshot {
  label: string;
  taken: number;
  changes: number;
  entries: number;
  raw: Record<string, unknown>;
}

/** POST /v1/rollback's answer: the processes still holding the old workspace, and the line naming them. */
export interface Rollback {
  label: string;
  holders: { pid: number; comm: string }[];
  message: string | null;
  raw: Record<string, unknown>;
}

export interface Grant {
  id: string;
  kind: string;
  scope: string;
  target: string;
  host: string | null;
  port: number | null;
  command: string | null;
  open: number | null;
  by: string;
  granted: number;
  expires: number | null;
  raw: Record<string, unknown>;
}

/** One line of GET /v1/approvals?watch=1. */
export interface ApprovalEvent {
  /** "subscribed" (first), "question" (with approval) or "settled" (answered, timed out, or
   * denied because the last approver left) */
  event: string;
  approval: Approval | null;
  id: number | null;
  answer: string | null;
  /** who answered (or "timeout"), on "settled" */
  by: string | null;
  session: string | null;
  /** on "expiring": why the session will end ("idle" or "lifetime") */
  reason: string | null;
  raw: Record<string, unknown>;
}

/** A job of GET /v1/jobs. */
export interface Job {
  /** as seen inside the sandbox */
  pid: number;
  command: string;
  turn: string | null;
  background: boolean;
  state: "running" | "restarting" | "exited" | "stopped" | string;
  exitCode: number | null;
  signal: number | null;
  started: number | null;
  ended: number | null;
  durationMs: number | null;
  timedOut: boolean;
  sandboxRunning: boolean;
  log: string | null;
  /** with --session-exec=false, a sandbox its command left processes in: the leader's end and
   * what is left (null when the session does not say) */
  leaderRunning: boolean | null;
  leaderExitCode: number | null;
  leaderSignal: number | null;
  left: number | null;
  leftPids: number[] | null;
  /** a supervised job's (exec --restart): its policy and backoff (seconds) as given, restarts so
   * far, the status its last run ended with, when it starts again (Unix seconds, while
   * "restarting"), the pid of the run now (`pid` stays its first run's, which names its log) */
  restart: string | null;
  backoff: number | null;
  restarts: number;
  lastExit: number | null;
  nextStart: number | null;
  currentPid: number | null;
  raw: Record<string, unknown>;
}

export interface StartedEvent {
  event: "started";
  pid: number;
  raw: Record<string, unknown>;
}
export interface OutputEvent {
  event: "output";
  stream: "stdout" | "stderr" | string;
  /** the exact bytes */
  data: Buffer;
  /** data decoded as UTF-8 (invalid bytes replaced) */
  text: string;
  raw: Record<string, unknown>;
}
/** A question about this command was asked of the session's approvers: for information (the
 * exec's client is not the one to answer; an approver is, see watchApprovals). */
export interface ApprovalAskedEvent {
  event: "approval";
  session: string | null;
  approval: Approval;
  raw: Record<string, unknown>;
}
/** The outcome of a question asked about this command. */
export interface SettledEvent {
  event: "settled";
  id: number;
  answer: string;
  /** who answered, or "timeout" */
  by: string | null;
  raw: Record<string, unknown>;
}
export interface ExitEvent {
  event: "exit";
  pid: number;
  exitCode: number;
  signal: number;
  timedOut: boolean;
  stopped: boolean;
  durationMs: number;
  ranOutside: boolean;
  refusals: Refusal[];
  raw: Record<string, unknown>;
}
/** A followed log's bytes not yet sent were dropped by its cap (session.log_cap). */
export interface DroppedEvent {
  event: "dropped";
  bytes: number;
  raw: Record<string, unknown>;
}
/** The last line of a stream the session's end closed; the collecting calls reject with
 * SessionEnded instead. */
export interface SessionEndedEvent {
  event: "session_ended";
  session: string | null;
  /** "idle", "lifetime", "stopped", "owner exited", ... */
  reason: string;
  raw: Record<string, unknown>;
}
/** An event this client does not know (a newer session): `name` is its "event". */
export interface UnknownEvent {
  event: "unknown";
  name: string;
  raw: Record<string, unknown>;
}
export type ExecEvent = StartedEvent | OutputEvent | ApprovalAskedEvent | SettledEvent | ExitEvent | DroppedEvent
  | SessionEndedEvent | UnknownEvent;

/** A foreground exec, collected. */
export interface ExecResult {
  command: string;
  pid: number;
  exitCode: number;
  signal: number;
  timedOut: boolean;
  stopped: boolean;
  ranOutside: boolean;
  durationMs: number;
  refusals: Refusal[];
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
  stderrBytes: Buffer;
  /** the questions asked about this command, and their outcomes */
  approvals: Approval[];
  settled: SettledEvent[];
  raw: Record<string, unknown>;
}

/** The options of `cordon session start` (docs/session-api.md), one for each of its flags. An
 * unset option leaves the profile's value; `false` turns a boolean one off. An unknown key is a
 * TypeError. */
export interface StartOptions {
  /** writable workspace (default: the current directory) */
  workspace?: string;
  /** profile to use (default: coding) */
  profile?: string;
  /** let the workspace be your home directory or an ancestor of it */
  allowHomeWorkspace?: boolean;
  /** more writable paths */
  allowWrite?: string[];
  /** paths that look missing */
  hide?: string[];
  /** keep the host network (filesystem rules still apply) */
  unrestrictedNetwork?: boolean;
  /** commands may serve and use TCP on the sandbox loopback */
  allowLoopback?: boolean;
  /** bind the Docker socket into the sandbox */
  allowDocker?: boolean;
  /** rules commands may reach through the proxy ("HOST", "HOST:PORT", "*.NAME", "tcp://HOST:PORT") */
  networkAllow?: string[];
  /** rules commands never reach (win over allows) */
  networkDeny?: string[];
  /** the host's own 127.0.0.1:PORT reachable inside at the same port */
  allowHostPort?: number[];
  /** "[HOSTADDR:]HOSTPORT:PORT": the sandbox's PORT reachable from the host */
  publish?: string[];
  /** when the sandbox refused a command, ask the approvers whether to run it outside */
  askSandboxOff?: boolean;
  /** plan mode: never run anything outside the sandbox */
  plan?: boolean;
  /** how long a question waits for its answer: seconds, or a duration such as "30s", "5m" */
  permissionTimeout?: number | string;
  /** one more policy layer on top (a file you name yourself: not trust-checked) */
  policy?: string;
  /** the home directory's mode */
  home?: "overlay" | "readonly" | "tmpfs";
  /** false: each exec gets a fresh sandbox of its own */
  sessionExec?: boolean;
  /** your ssh-agent is reachable inside */
  allowSshAgent?: boolean;
  /** your gpg-agent signs inside (never exports the private keys) */
  allowGpgAgent?: boolean;
  /** end the session once no exec, no job and no client was there for this long */
  idleTimeout?: number | string;
  /** end the session this long after its start, whatever runs */
  maxLifetime?: number | string;
  /** announce either end this long before it comes (default 60 s) */
  expiryWarning?: number | string;
  /** the workspace copy-on-write: writes wait for `cordon review` / `apply` (docs/review.md) */
  review?: boolean;
  /** "NAME=HOST[,HOST...]": NAME holds a placeholder inside; the proxy puts the value in for those hosts */
  credential?: string[];
  /** a PEM file of CA certificates the proxy also trusts upstream (network.upstream_ca) */
  upstreamCa?: string;
  /** default false: the session is owned by this process and ends when it exits, however it
   * exits (SIGKILL too), or when dispose() is called; true lets it outlive this process */
  detach?: boolean;
  /** tie the session to process `owner` instead (--owner PID; not with detach: true) */
  owner?: number;
  /** more arguments for `cordon session start`, as they are (for a flag newer than this client) */
  extraArgs?: string[];
  /** the cordon binary (default: $CORDON_BIN, else `cordon` on PATH) */
  cordonBin?: string;
  /** the environment of `cordon` (default: process.env); XDG_RUNTIME_DIR decides the socket's directory */
  env?: NodeJS.ProcessEnv;
  /** give up on `session start` after this many ms (default 60000) */
  timeoutMs?: number;
  /** aborting rejects with an AbortError once `session start` has returned, after stopping the
   * session it started (it is not interrupted half-way) */
  signal?: AbortSignal;
}

export interface ExecOptions {
  /** seconds, then TERM and KILL (result.timedOut, exit code 124) */
  timeout?: number;
  /** a tag for cancel() */
  turn?: string;
  /** aborting ends the wait (stream: closes the connection, the command runs on; exec: stops
   * the command first), rejecting with an AbortError */
  signal?: AbortSignal;
}

export interface RunOptions extends ExecOptions {
  onStdout?: (text: string) => void;
  onStderr?: (text: string) => void;
}

/** Any call that waits takes a signal: aborting ends the wait, rejecting with an AbortError. */
export interface Waits {
  signal?: AbortSignal;
}

export interface LogOptions {
  /** only the last `tail` lines */
  tail?: number;
  /** logs(): go on with what the job writes, resolving once it has ended */
  follow?: boolean;
  /** aborting ends the wait, rejecting with an AbortError */
  signal?: AbortSignal;
}

/** This client's version: cordon's own. */
export declare const version: string;

export declare class CordonError extends Error {
  constructor(message: string);
}
/** No session of that name answers on its socket. */
export declare class SessionNotFound extends CordonError {
  constructor(name: string, socketPath: string);
  sessionName: string;
  socketPath: string;
  /** why it ended in the last day ("idle", "lifetime", "stopped", "owner exited", "controller killed"), or null */
  reason: string | null;
  /** when it ended (Unix seconds), or null when unknown */
  ended: number | null;
}
/** The session ended while this client was connected (an exec, a followed log, a watch of
 * approvals): `reason` is why. */
export declare class SessionEnded extends CordonError {
  constructor(name: string, reason: string, during: string);
  sessionName: string;
  /** "idle", "lifetime", "stopped", "owner exited", ... */
  reason: string;
}
/** The session answered a 4xx/5xx status with its one-line message (e.g. 409 for a ninth background job). */
export declare class APIError extends CordonError {
  constructor(status: number, message: string, method?: string, path?: string);
  status: number;
  method: string;
  path: string;
}
/** A wait ended by its AbortSignal (name "AbortError"); `cause` is the signal's reason. */
export declare class AbortError extends CordonError {
  constructor(message: string, cause?: unknown);
  cause: unknown;
}
/** `cordon session start` failed: its last line of stderr, its exit code and all of stderr. */
export declare class StartError extends CordonError {
  constructor(message: string, exitCode: number | null, stderr: string);
  exitCode: number | null;
  stderr: string;
}

/** A job started by Session.background. */
export declare class BackgroundJob {
  constructor(session: Session, pid: number, log: string, message: string, command: string);
  readonly session: Session;
  readonly pid: number;
  /** its log's path inside the sandbox */
  readonly log: string;
  readonly message: string;
  readonly command: string;
  logs(options?: LogOptions): Promise<string>;
  /** Session.followLogs of this job. */
  follow(options?: LogOptions): AsyncIterableIterator<ExecEvent>;
  stop(options?: Waits): Promise<Job>;
  /** this job as GET /v1/jobs lists it now (null once the session forgot it) */
  info(options?: Waits): Promise<Job | null>;
}

/** One cordon session. Requests reuse keep-alive connections to its socket. */
export declare class Session {
  constructor(name: string, socketPath?: string, options?: { owned?: boolean });
  readonly name: string;
  readonly socketPath: string;
  /** true when this object started the session (dispose() then stops it) */
  readonly owned: boolean;

  /** Runs `cordon session start NAME` and resolves once the session answers. The session is
   * owned by this process unless options.detach is true. */
  static start(name: string, options?: StartOptions): Promise<Session>;
  /** Connects to running session NAME; rejects with SessionNotFound when none answers. */
  static attach(name: string, options?: { socket?: string }): Promise<Session>;

  /** Closes the idle connections (the session keeps running). */
  close(): void;
  /** Stops the session if this object started it, then closes. */
  dispose(): Promise<void>;

  status(options?: Waits): Promise<SessionInfo>;
  /** POST /v1/session/stop; with wait (default), resolves once the socket is gone. */
  stopSession(options?: { wait?: boolean; timeoutMs?: number; signal?: AbortSignal }): Promise<void>;

  /** POST /v1/exec: the events as they happen. Leaving the loop early closes the connection. */
  stream(command: string, options?: ExecOptions): AsyncIterableIterator<ExecEvent>;
  /** Runs command (a `bash -c` string) and resolves at its end. */
  exec(command: string, options?: RunOptions): Promise<ExecResult>;
  /** Starts a background job; rejects with a 409 APIError when eight are running. restart
   * ("on-failure", "on-failure:N", "always", "always:N") has the session start the same command
   * again when it ends, waiting backoff seconds (default 1) doubled at each restart up to 300;
   * stop() ends it and its restarts. */
  background(command: string, options?: { turn?: string; restart?: string; backoff?: number; signal?: AbortSignal }): Promise<BackgroundJob>;
  jobs(options?: Waits): Promise<Job[]>;
  /** A background job's log as it is now; with tail, its last `tail` lines; with follow, and
   * what the job writes next, resolved once it has ended (SessionEnded if the session ends first). */
  logs(pid: number, options?: LogOptions): Promise<string>;
  /** GET /v1/jobs/PID/log?follow=1&format=ndjson: output events (stream "log") as the job writes,
   * "dropped" where its cap dropped unsent bytes, its "exit" last; the session's end rejects
   * with SessionEnded. Leaving the loop early closes the connection. */
  followLogs(pid: number, options?: LogOptions): AsyncIterableIterator<ExecEvent>;
  logsBytes(pid: number, options?: LogOptions): Promise<Buffer>;
  /** Stops a job's process group (TERM, then KILL after the grace period). */
  stop(pid: number, options?: Waits): Promise<Job>;
  /** Stops every process group that commands of this turn started; resolves to their pids. */
  cancel(turn: string, options?: Waits): Promise<number[]>;
  approvals(options?: Waits): Promise<Approval[]>;
  /** Answers a pending question; `by` (1 to 200 bytes) names who answered, for the settled events. */
  /** forSeconds (with "session"): the allow ends that many seconds from now. */
  answer(id: number, answer: ApprovalAnswer, options?: { by?: string; forSeconds?: number; signal?: AbortSignal }): Promise<Answer>;
  /** POST /v1/snapshots: a --review session's pending changes recorded under label (or s1, s2, ...). */
  snapshot(label?: string, options?: { signal?: AbortSignal }): Promise<Snapshot>;
  /** GET /v1/snapshots: the session's snapshots, oldest first. */
  snapshots(options?: { signal?: AbortSignal }): Promise<Snapshot[]>;
  /** POST /v1/rollback: the session's workspace back to a snapshot; holders still see the old one. */
  rollback(label: string, options?: { signal?: AbortSignal }): Promise<Rollback>;
  /** GET /v1/grants: destinations a person allowed (gN) and commands allowed outside for the session (rN). */
  grants(options?: { signal?: AbortSignal }): Promise<Grant[]>;
  /** POST /v1/grants: allow "HOST:PORT" ahead of any question, for forSeconds or the session. */
  grantNetwork(target: string, options?: { forSeconds?: number; by?: string; signal?: AbortSignal }): Promise<Grant>;
  /** DELETE /v1/grants/ID: ends a grant now; resolves to the connections it let through that were closed. */
  revoke(id: string, options?: { signal?: AbortSignal }): Promise<number>;
  /** GET /v1/review: the pending changes of a session in review mode, as `cordon review --json`
   * prints them ({workspace, changes: [{path, change, host_trusted, why, kind, mode, host_mode,
   * link}]}); a 409 APIError when the session is not in review mode. */
  review(options?: Waits): Promise<Record<string, unknown>>;
  /** POST /v1/fork: starts session newName over this one's workspace, its pending changes
   * included, in review mode with a layer of its own (`cordon review --fork newName`), with this
   * session's start options and owner; resolves to it, owned as this one is. */
  fork(newName: string, options?: Waits): Promise<Session>;
  /** GET /v1/approvals?watch=1: subscribes as an approver ("subscribed" first, then each question
   * and its outcome) until the loop is left, or the session ends (SessionEnded with its reason).
   * With no approver subscribed, questions are denied at once. */
  watchApprovals(options?: { signal?: AbortSignal }): AsyncIterableIterator<ApprovalEvent>;
  /** `await using s = await Session.start(...)`: dispose(). */
  [Symbol.asyncDispose](): Promise<void>;
}

/** $XDG_RUNTIME_DIR/cordon when XDG_RUNTIME_DIR is set, else /tmp/cordon-UID. */
export declare function socketDir(env?: NodeJS.ProcessEnv): string;
/** The control socket of session NAME, as the CLI finds it. */
export declare function socketPath(name: string, env?: NodeJS.ProcessEnv): string;
/** cordonBin, else $CORDON_BIN, else `cordon` on PATH. */
export declare function findCordon(cordonBin?: string): string;
