// Background processes (docs/processes.md). ref is a pid, the id from start
// ("p7"), "tag:NAME", or a ProcessInfo.
import * as check from "./checks.js";
import { StreamInterruptedError } from "./errors.js";
import { ndjson, type CallOptions, type Transport } from "./http.js";
import type * as m from "./models.js";

export type ProcessRef = string | number | m.ProcessInfo;

export interface StartOptions extends CallOptions {
  env?: Record<string, string>;
  cwd?: string;
  user?: "root" | "user";
  tag?: string;
  stdin?: boolean;
  pty?: { rows: number; cols: number };
  bufferBytes?: number;
}

export class Processes {
  private readonly p: string;
  constructor(private readonly t: Transport, id: string) {
    this.p = `/v1/sandboxes/${check.seg(id)}/processes`;
  }

  private ref(r: ProcessRef): string {
    return `${this.p}/${check.seg(typeof r === "object" ? r.id : String(r))}`;
  }

  start(cmd: string | readonly string[] | undefined, o: StartOptions = {}): Promise<m.ProcessInfo> {
    const req: m.ProcessRequest = {
      cmd: cmd === undefined ? undefined : check.argv(cmd), env: o.env, cwd: o.cwd, user: check.user(o.user), tag: o.tag,
      stdin: o.stdin, pty: o.pty, buffer_bytes: check.bufferBytes(o.bufferBytes),
    };
    return this.t.json("POST", this.p, { json: req, signal: o.signal });
  }

  async list(o: CallOptions = {}): Promise<m.ProcessInfo[]> {
    return (await this.t.json<m.ProcessList>("GET", this.p, { signal: o.signal })).processes;
  }

  get(r: ProcessRef, o: CallOptions = {}): Promise<m.ProcessInfo> {
    return this.t.json("GET", this.ref(r), { signal: o.signal });
  }

  kill(r: ProcessRef, o: CallOptions = {}): Promise<m.ProcessInfo> {
    return this.t.json("DELETE", this.ref(r), { signal: o.signal });
  }

  /** Wait for the exit, at most timeoutMs (server default 30 s); state says which came first. */
  wait(r: ProcessRef, o: CallOptions & { timeoutMs?: number } = {}): Promise<m.ProcessInfo> {
    const req: m.WaitRequest = { timeout_ms: check.timeoutMs(o.timeoutMs) };
    return this.t.json("POST", this.ref(r) + "/wait", { json: req, retry: true, timeoutMs: (o.timeoutMs ?? 30_000) + 30_000, signal: o.signal });
  }

  async signal(r: ProcessRef, signal: string | number = "SIGTERM", o: CallOptions & { tree?: boolean } = {}): Promise<number> {
    const req: m.SignalRequest = { signal: String(signal), tree: o.tree ?? false };
    return (await this.t.json<m.SignalResult>("POST", this.ref(r) + "/signal", { json: req, signal: o.signal })).signalled;
  }

  async writeStdin(r: ProcessRef, data: string | Uint8Array, o: CallOptions = {}): Promise<number> {
    return (await this.t.json<m.StdinResult>("POST", this.ref(r) + "/stdin", {
      body: typeof data === "string" ? new TextEncoder().encode(data) : data, headers: { "Content-Type": "application/octet-stream" }, signal: o.signal,
    })).bytes;
  }

  async closeStdin(r: ProcessRef, o: CallOptions = {}): Promise<void> {
    await this.t.json("POST", this.ref(r) + "/close-stdin", { signal: o.signal });
  }

  async resize(r: ProcessRef, rows: number, cols: number, o: CallOptions = {}): Promise<void> {
    await this.t.json("POST", this.ref(r) + "/resize", { json: { rows, cols } satisfies m.PTYSize, retry: true, signal: o.signal });
  }

  /** The output lines; with follow, until the process has exited. The last line carries `process`. */
  async *output(r: ProcessRef, o: CallOptions & { follow?: boolean; from?: string | number; base64?: boolean } = {}): AsyncGenerator<m.OutputLine> {
    const resp = await this.t.stream("GET", this.ref(r) + "/output", {
      query: { follow: o.follow ? "1" : undefined, from: o.from === undefined ? undefined : String(o.from), encoding: o.base64 ? "base64" : undefined },
      signal: o.signal,
    });
    let ended = false;
    for await (const ev of ndjson(resp, o.signal)) {
      const line = ev as unknown as m.OutputLine;
      if (line.process) ended = true;
      yield line;
    }
    if (!ended) throw new StreamInterruptedError("stream_interrupted", "the output stream ended before the process's final state");
  }
}
