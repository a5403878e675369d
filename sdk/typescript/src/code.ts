// The code interpreter of a sandbox (docs/code.md): cells run in stateful
// contexts, streamed as NDJSON events and gathered into an Execution.
import * as check from "./checks.js";
import { StreamInterruptedError, invalid, TooLargeError } from "./errors.js";
import { ndjson, type CallOptions, type Transport } from "./http.js";
import type * as m from "./models.js";

export const MAX_CODE_BYTES = 1 << 20;
export const MAX_CODE_TIMEOUT_MS = 24 * 3600 * 1000;
const LANGUAGES = new Set(["", "python", "python3", "py", "ipython", "javascript", "js", "node", "nodejs", "typescript", "ts", "bash", "sh", "shell"]);

/** One rich result of a cell: its MIME bundle (binary types base64, as Jupyter sends them). */
export class Result {
  readonly bundle: Record<string, unknown>;
  readonly isMainResult: boolean;
  readonly executionCount?: number;
  readonly chart?: Record<string, unknown>;
  readonly data?: Record<string, unknown>;
  readonly omitted: m.CodeOmission[];
  constructor(r: m.CodeResult) {
    this.bundle = r.bundle ?? {};
    this.isMainResult = r.is_main_result === true;
    this.executionCount = r.execution_count;
    this.chart = r.chart;
    this.data = r.data;
    this.omitted = r.omitted ?? [];
  }
  /** The MIME types present. */
  formats(): string[] {
    return Object.keys(this.bundle).sort();
  }
  private s(mime: string): string | undefined {
    const v = this.bundle[mime];
    return v === undefined ? undefined : typeof v === "string" ? v : JSON.stringify(v);
  }
  private b(mime: string): Uint8Array | undefined {
    const v = this.bundle[mime];
    if (typeof v !== "string") return undefined;
    const bin = atob(v);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  get text() { return this.s("text/plain"); }
  get html() { return this.s("text/html"); }
  get markdown() { return this.s("text/markdown"); }
  get svg() { return this.s("image/svg+xml"); }
  get latex() { return this.s("text/latex"); }
  get json(): unknown { return this.bundle["application/json"]; }
  /** The PNG's bytes (decoded). */
  get png() { return this.b("image/png"); }
  get jpeg() { return this.b("image/jpeg"); }
  get pdf() { return this.b("application/pdf"); }
}

/** A cell's outcome. status: ok, error (the code raised: see error), timeout, cancelled or died. */
export class Execution {
  results: Result[] = [];
  logs: { stdout: string[]; stderr: string[] } = { stdout: [], stderr: [] };
  error?: m.CodeError;
  executionCount?: number;
  status?: "ok" | "error" | "timeout" | "cancelled" | "died" | string;
  contextId?: string;
  language?: string;
  exitCode?: number;
  durationMs?: number;
  message?: string;
  stateLost = false;
  truncated = false;
  restarted = false;

  /** The final value's text (the main result's text/plain). */
  get text(): string | undefined {
    return this.results.find((r) => r.isMainResult)?.text;
  }
  get stdout(): string { return this.logs.stdout.join(""); }
  get stderr(): string { return this.logs.stderr.join(""); }
  get ended(): boolean { return this.status !== undefined; }

  add(ev: m.CodeEvent): void {
    switch (ev.type) {
      case "start":
        this.contextId = ev.start?.context_id;
        this.language = ev.start?.language;
        this.restarted = ev.start?.restarted === true;
        this.stateLost = ev.start?.state_lost === true;
        break;
      case "stdout":
        if (ev.text !== undefined) this.logs.stdout.push(ev.text);
        break;
      case "stderr":
        if (ev.text !== undefined) this.logs.stderr.push(ev.text);
        break;
      case "result":
        if (ev.result) this.results.push(new Result(ev.result));
        break;
      case "error":
        this.error = ev.error;
        break;
      case "end": {
        const e = ev.end ?? {};
        this.status = e.status ?? "ok";
        this.executionCount = e.execution_count;
        this.exitCode = e.exit_code;
        this.durationMs = e.duration_ms;
        this.message = e.message;
        this.stateLost = this.stateLost || e.state_lost === true;
        this.truncated = e.truncated === true;
      }
    }
  }
}

export interface RunCodeOptions extends CallOptions {
  /** python (default), javascript, typescript or bash (or an alias); not with context. */
  language?: string;
  /** A context (or its id); default: the language's default context. */
  context?: string | m.CodeContext;
  /** Environment of this cell only. */
  env?: Record<string, string>;
  /** Interrupt the cell after this long (ms; default 10 minutes); the context keeps its state. */
  timeoutMs?: number;
  user?: "root" | "user";
}

export interface RunCodeCallbacks {
  onStdout?: (text: string) => unknown;
  onStderr?: (text: string) => unknown;
  onResult?: (r: Result) => unknown;
  onError?: (e: m.CodeError) => unknown;
}

const ctxId = (c: string | m.CodeContext | undefined) => (typeof c === "string" || c === undefined ? c : c.id);

function language(l: string | undefined): string | undefined {
  if (l === undefined) return undefined;
  if (!LANGUAGES.has(l.trim().toLowerCase())) {
    throw invalid(`unknown language ${JSON.stringify(l.length > 64 ? l.slice(0, 64) + "…" : l)}: Paddock runs python, javascript, typescript and bash`);
  }
  return l;
}

export function executeBody(code: string, o: RunCodeOptions): m.CodeExecuteRequest {
  if (typeof code !== "string") throw invalid("code must be a string");
  if (new TextEncoder().encode(code).length > MAX_CODE_BYTES) throw new TooLargeError("too_large", `the code of one cell is at most ${MAX_CODE_BYTES} bytes`);
  const cid = ctxId(o.context);
  if (cid !== undefined && o.language !== undefined) throw invalid("give context_id or language, not both (a context has its language)");
  const ms = check.timeoutMs(o.timeoutMs);
  if (ms !== undefined && ms > MAX_CODE_TIMEOUT_MS) throw invalid(`timeout_ms must be at most ${MAX_CODE_TIMEOUT_MS}`);
  const req: m.CodeExecuteRequest = { code };
  if (o.language !== undefined) req.language = language(o.language);
  if (cid !== undefined) req.context_id = cid;
  if (o.env) req.env = o.env;
  if (ms !== undefined) req.timeout_ms = ms;
  if (o.user !== undefined) req.user = check.user(o.user);
  return req;
}

/** A running cell's events as they arrive; `execution` gathers them. Ending
 * the iteration early (break) or aborting the signal ends the request, and
 * the server interrupts the cell (the context keeps its state). */
export class CodeStream implements AsyncIterable<m.CodeEvent> {
  readonly execution = new Execution();
  constructor(private readonly open: () => Promise<Response>, private readonly signal?: AbortSignal) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<m.CodeEvent> {
    const resp = await this.open();
    for await (const d of ndjson(resp, this.signal)) {
      const ev = d as unknown as m.CodeEvent;
      this.execution.add(ev);
      yield ev;
    }
    if (!this.execution.ended) throw new StreamInterruptedError("stream_interrupted", "the code stream ended before the cell's end event");
  }

  /** Drain the events and return the execution. */
  async wait(): Promise<Execution> {
    for await (const _ of this) void _;
    return this.execution;
  }
}

/** The sandbox's code contexts: each a stateful interpreter whose cells share variables. */
export class Contexts {
  private readonly p: string;
  constructor(private readonly t: Transport, sandboxId: string) {
    this.p = `/v1/sandboxes/${check.seg(sandboxId)}/code/contexts`;
  }
  private ref(c: string | m.CodeContext): string {
    return `${this.p}/${check.seg(ctxId(c) ?? "")}`;
  }
  /** Start a context (answers when its kernel is ready). */
  create(o: CallOptions & { language?: string; cwd?: string; env?: Record<string, string>; user?: "root" | "user" } = {}): Promise<m.CodeContext> {
    const json: m.CodeContextRequest = {};
    if (o.language !== undefined) json.language = language(o.language);
    if (o.cwd !== undefined) json.cwd = o.cwd;
    if (o.env) json.env = o.env;
    if (o.user !== undefined) json.user = check.user(o.user);
    return this.t.json("POST", this.p, { json, retry: false, timeoutMs: 180_000, signal: o.signal });
  }
  async list(o: CallOptions = {}): Promise<m.CodeContext[]> {
    return (await this.t.json<m.CodeContextList>("GET", this.p, { signal: o.signal })).contexts ?? [];
  }
  get(c: string | m.CodeContext, o: CallOptions = {}): Promise<m.CodeContext> {
    return this.t.json("GET", this.ref(c), { signal: o.signal });
  }
  /** A new kernel for the context: its state is lost, as asked. */
  restart(c: string | m.CodeContext, o: CallOptions = {}): Promise<m.CodeContext> {
    return this.t.json("POST", this.ref(c) + "/restart", { retry: false, timeoutMs: 180_000, signal: o.signal });
  }
  async delete(c: string | m.CodeContext, o: CallOptions = {}): Promise<void> {
    await this.t.request("DELETE", this.ref(c), { signal: o.signal });
  }
}

/** runCode: the stream, with callbacks, gathered. */
export async function runCode(s: CodeStream, cb: RunCodeCallbacks): Promise<Execution> {
  for await (const ev of s) {
    const ex = s.execution;
    if (ev.type === "stdout" && cb.onStdout) await cb.onStdout(ev.text ?? "");
    else if (ev.type === "stderr" && cb.onStderr) await cb.onStderr(ev.text ?? "");
    else if (ev.type === "result" && cb.onResult && ex.results.length) await cb.onResult(ex.results[ex.results.length - 1]);
    else if (ev.type === "error" && cb.onError && ev.error) await cb.onError(ev.error);
  }
  return s.execution;
}
