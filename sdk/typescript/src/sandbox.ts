// One sandbox and what it does.
import { Browser } from "./browser.js";
import * as check from "./checks.js";
import { CodeStream, Contexts, executeBody, runCode, type Execution, type RunCodeCallbacks, type RunCodeOptions } from "./code.js";
import { StreamInterruptedError } from "./errors.js";
import { Files } from "./files.js";
import { ndjson, type CallOptions, type Transport } from "./http.js";
import type * as m from "./models.js";
import { Processes } from "./processes.js";
import { Terminal } from "./terminal.js";

export interface ExecOptions extends CallOptions {
  env?: Record<string, string>;
  cwd?: string;
  user?: "root" | "user";
  /** Kill the command after this long (ms). */
  timeoutMs?: number;
  stdin?: string;
  maxOutputBytes?: number;
}

export interface OutputChunk {
  stream: "stdout" | "stderr";
  data: string;
}

/** A running exec's output as it arrives; `result` holds the exit status once iteration ends. */
export class ExecStream implements AsyncIterable<OutputChunk> {
  result?: m.ExecEvent;
  constructor(private readonly open: () => Promise<Response>, private readonly signal?: AbortSignal) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<OutputChunk> {
    const resp = await this.open();
    for await (const ev of ndjson(resp, this.signal)) {
      const keys = Object.keys(ev);
      if (keys.length === 1 && typeof ev.stdout === "string") yield { stream: "stdout", data: ev.stdout };
      else if (keys.length === 1 && typeof ev.stderr === "string") yield { stream: "stderr", data: ev.stderr };
      else if ("exit_code" in ev) this.result = ev as unknown as m.ExecEvent;
    }
    if (!this.result) throw new StreamInterruptedError("stream_interrupted", "the exec stream ended without the command's result");
  }

  /** Drain the output and return the result. */
  async wait(): Promise<m.ExecEvent> {
    for await (const _ of this) void _;
    return this.result!;
  }
}

export class Sandbox {
  readonly id: string;
  info: m.Sandbox;
  readonly files: Files;
  readonly processes: Processes;
  readonly browser: Browser;
  /** Code contexts: stateful interpreters (docs/code.md). */
  readonly contexts: Contexts;
  private readonly path: string;
  /** Called after kill() (a client the sandbox owns closes here). */
  onKill?: () => void;

  constructor(private readonly t: Transport, info: m.Sandbox) {
    this.id = info.id;
    this.info = info;
    this.path = `/v1/sandboxes/${check.seg(info.id)}`;
    this.files = new Files(t, info.id);
    this.processes = new Processes(t, info.id);
    this.browser = new Browser(t, info.id, (scopes, ttl) => this.createToken(scopes, { ttlS: ttl }));
    this.contexts = new Contexts(t, info.id);
  }

  /** Destroy the sandbox (one already gone is not an error). */
  async kill(o: CallOptions = {}): Promise<void> {
    try {
      await this.t.request("DELETE", this.path, { signal: o.signal });
    } catch (e) {
      if ((e as { code?: string }).code !== "not_found") throw e;
    } finally {
      this.onKill?.();
    }
  }

  /** `await using sb = await client.sandboxes.create()` destroys it at the end of the scope. */
  async [Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose")](): Promise<void> {
    await this.kill();
  }

  async refresh(o: CallOptions = {}): Promise<m.Sandbox> {
    this.info = await this.t.json("GET", this.path, { signal: o.signal });
    return this.info;
  }

  async setTimeout(seconds: number, o: CallOptions = {}): Promise<m.Sandbox> {
    this.info = await this.t.json("POST", this.path + "/timeout", { json: { timeout_s: Math.trunc(seconds) } satisfies m.TimeoutRequest, retry: true, signal: o.signal });
    return this.info;
  }

  stats(o: CallOptions = {}): Promise<m.Stats> {
    return this.t.json("GET", this.path + "/stats", { signal: o.signal });
  }

  /** Freeze the sandbox (processes, memory and files kept; its clock stops).
   * Pausing a paused sandbox answers it as it is. */
  async pause(o: CallOptions = {}): Promise<m.Sandbox> {
    this.info = await this.t.json("POST", this.path + "/pause", { retry: true, signal: o.signal });
    return this.info;
  }

  /** Thaw a paused sandbox; resuming a running one answers it as it is. */
  async resume(o: CallOptions = {}): Promise<m.Sandbox> {
    this.info = await this.t.json("POST", this.path + "/resume", { retry: true, signal: o.signal });
    return this.info;
  }

  /** Checkpoint the sandbox to disk and release its RAM (gVisor; native
   * answers unsupported); resume() restores it, processes included. */
  async hibernate(o: CallOptions = {}): Promise<m.Sandbox> {
    this.info = await this.t.json("POST", this.path + "/hibernate", { retry: true, timeoutMs: 600_000, signal: o.signal });
    return this.info;
  }

  /** Save the sandbox's filesystem changes as the tenant's snapshot `name`
   * (create a sandbox from it with `{ snapshot: name }`). memory (gVisor):
   * also its processes and memory, which a sandbox made from it continues. */
  async snapshot(name: string, o: CallOptions & { memory?: boolean } = {}): Promise<m.Snapshot> {
    const json: m.CreateSnapshotRequest = { name: check.snapshotName(name) };
    if (o.memory) json.memory = true;
    return this.t.json("POST", this.path + "/snapshots", { json, retry: false, timeoutMs: 600_000, signal: o.signal });
  }

  /** `count` copies of the sandbox's files, each a sandbox of its own (all
   * made, or none). memory (gVisor): each also continues the sandbox's
   * running processes from one checkpoint. Kill each (or `await using` it). */
  async fork(o: CallOptions & { count?: number; memory?: boolean } = {}): Promise<Sandbox[]> {
    const json: m.ForkRequest = { count: check.forkCount(o.count ?? 1) };
    if (o.memory) json.memory = true;
    const r = await this.t.json<m.ForkResponse>("POST", this.path + "/fork", { json, retry: false, timeoutMs: 600_000, signal: o.signal });
    return r.sandboxes.map((info) => new Sandbox(this.t, info));
  }

  /** Run a cell in a context and return its Execution; callbacks see the
   * output as it comes. A cell that raises is not an exception: look at
   * `.error`. A stream cut before the cell's end throws StreamInterruptedError. */
  async runCode(code: string, o: RunCodeOptions & RunCodeCallbacks = {}): Promise<Execution> {
    return runCode(this.runCodeStream(code, o), o);
  }

  /** Run a cell and iterate over its events; breaking out or aborting interrupts the cell. */
  runCodeStream(code: string, o: RunCodeOptions = {}): CodeStream {
    const json = executeBody(code, o);
    return new CodeStream(() => this.t.stream("POST", this.path + "/code", { json, headers: { Accept: "application/x-ndjson" }, signal: o.signal }), o.signal);
  }

  private execBody(cmd: string | readonly string[], o: ExecOptions): m.ExecRequest {
    const req: m.ExecRequest = { cmd: check.argv(cmd) };
    if (o.env) req.env = o.env;
    if (o.cwd !== undefined) req.cwd = o.cwd;
    if (o.user !== undefined) req.user = check.user(o.user);
    if (o.timeoutMs !== undefined) req.timeout_ms = check.timeoutMs(o.timeoutMs);
    if (o.stdin !== undefined) req.stdin = o.stdin;
    if (o.maxOutputBytes !== undefined) req.max_output_bytes = check.maxOutput(o.maxOutputBytes);
    return req;
  }

  /** Run a command (a string runs through sh -c, an array directly) and
   * return its buffered output and exit status. A non-zero exit is not an error. */
  exec(cmd: string | readonly string[], o: ExecOptions = {}): Promise<m.ExecResponse> {
    const body = JSON.stringify(this.execBody(cmd, o));
    return this.t.json("POST", this.path + "/exec", {
      body, headers: { "Content-Type": "application/json" }, retry: false,
      timeoutMs: o.timeoutMs === undefined ? undefined : o.timeoutMs + 30_000, signal: o.signal,
    });
  }

  /** Run a command and iterate over its output as it arrives. */
  execStream(cmd: string | readonly string[], o: ExecOptions = {}): ExecStream {
    const json = this.execBody(cmd, o);
    return new ExecStream(() => this.t.stream("POST", this.path + "/exec", { json, headers: { Accept: "application/x-ndjson" }, signal: o.signal }), o.signal);
  }

  /** An interactive terminal (WebSocket); close() hangs up. */
  terminal(o: CallOptions & { cmd?: readonly string[]; rows?: number; cols?: number; user?: "root" | "user"; cwd?: string; env?: Record<string, string> } = {}): Promise<Terminal> {
    const q = new URLSearchParams();
    q.append("rows", String(o.rows ?? 24));
    q.append("cols", String(o.cols ?? 80));
    for (const a of o.cmd ? check.argv(o.cmd) : []) q.append("cmd", a);
    if (o.user) q.append("user", check.user(o.user)!);
    if (o.cwd) q.append("cwd", o.cwd);
    for (const [k, v] of Object.entries(o.env ?? {})) q.append("env", `${k}=${v}`);
    return Terminal.open(`${this.t.wsUrl(this.path + "/pty")}?${q}`, this.t.apiKey, this.t.WebSocket, o.signal);
  }

  network(o: CallOptions = {}): Promise<m.Network> {
    return this.t.json("GET", this.path + "/network", { signal: o.signal });
  }

  /** Change the egress policy (none, allowlist, open); new connections follow it at once. */
  setNetwork(n: m.Network, o: CallOptions = {}): Promise<m.Network> {
    return this.t.json("PUT", this.path + "/network", { json: n, signal: o.signal });
  }

  /** A signed URL reaching the sandbox's port through the server. */
  portUrl(port: number, o: CallOptions & { ttlS?: number } = {}): Promise<m.PortURL> {
    return this.t.json("POST", `${this.path}/ports/${check.port(port)}/url`, { json: { ttl_s: o.ttlS } satisfies m.PortURLRequest, signal: o.signal });
  }

  /** A token limited to this sandbox (docs/auth.md). */
  createToken(scopes: string[], o: CallOptions & { ttlS?: number } = {}): Promise<m.SandboxToken> {
    return this.t.json("POST", this.path + "/tokens", { json: { scopes, ttl_s: o.ttlS } as m.SandboxTokenRequest, signal: o.signal });
  }
}
