// The HTTP layer: one request with safe retries, streamed answers, errors
// as PaddockError. Uses the runtime's fetch (or an injected one).
import { AbortedError, APIConnectionError, PaddockError, StreamInterruptedError, TimeoutError, errorFrom, errorFromResponse } from "./errors.js";

export const DEFAULT_URL = "http://127.0.0.1:7070";
/** The server's default --max-upload (16 GiB). */
export const DEFAULT_MAX_UPLOAD = 16 * 1024 ** 3;

/** A WebSocket constructor: the runtime's global one, or the `ws` package's on Node 20. */
export type WebSocketCtor = new (url: string, protocols?: string | string[]) => WebSocketLike;
export interface WebSocketLike {
  binaryType: string;
  readyState: number;
  send(data: string | ArrayBufferLike | Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
}

export interface ClientOptions {
  /** Default: PADDOCK_URL, else http://127.0.0.1:7070. */
  url?: string;
  /** Default: PADDOCK_API_KEY. */
  apiKey?: string;
  /** Per-request timeout for ordinary calls, ms (streams have none). Default 60 s. */
  timeoutMs?: number;
  /** Retries of calls that are safe to repeat. Default 3. */
  maxRetries?: number;
  /** The longest Retry-After honoured, seconds; longer ones raise at once. Default 60. */
  maxRetryWait?: number;
  /** The server's --max-upload: larger uploads are refused before sending. Default 16 GiB. */
  maxUploadBytes?: number;
  fetch?: typeof fetch;
  /** For terminals on runtimes without a global WebSocket (Node 20: `import WebSocket from "ws"`). */
  WebSocket?: WebSocketCtor;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface RequestInit2 extends CallOptions {
  query?: Record<string, string | number | boolean | undefined | null> | [string, string][];
  json?: unknown;
  body?: BodyInit | Uint8Array;
  headers?: Record<string, string>;
  /** Repeat on connection failures and 502/503/504 (default: by method). */
  retry?: boolean;
  timeoutMs?: number | null;
}

const env = (k: string): string | undefined => (typeof process !== "undefined" ? process.env?.[k] : undefined) || undefined;
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

export class Transport {
  readonly url: string;
  readonly apiKey?: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly maxRetryWait: number;
  readonly maxUploadBytes: number;
  readonly WebSocket?: WebSocketCtor;
  private readonly fetch: typeof fetch;
  private readonly baseHeaders: Record<string, string>;

  constructor(o: ClientOptions = {}) {
    const url = (o.url ?? env("PADDOCK_URL") ?? DEFAULT_URL).replace(/\/+$/, "");
    if (!/^https?:\/\//.test(url)) throw errorFrom("invalid_argument", `url must start with http:// or https:// (got ${JSON.stringify(url.slice(0, 80))})`);
    this.url = url;
    this.apiKey = o.apiKey ?? env("PADDOCK_API_KEY");
    this.timeoutMs = o.timeoutMs ?? 60_000;
    this.maxRetries = o.maxRetries ?? 3;
    this.maxRetryWait = o.maxRetryWait ?? 60;
    this.maxUploadBytes = o.maxUploadBytes ?? DEFAULT_MAX_UPLOAD;
    this.WebSocket = o.WebSocket ?? ((globalThis as { WebSocket?: WebSocketCtor }).WebSocket);
    const f = o.fetch ?? globalThis.fetch;
    if (!f) throw errorFrom("unsupported", "this runtime has no fetch; pass options.fetch");
    this.fetch = f.bind(globalThis);
    this.baseHeaders = { Accept: "application/json" };
    if (this.apiKey) this.baseHeaders.Authorization = `Bearer ${this.apiKey}`;
  }

  wsUrl(path: string): string {
    return "ws" + this.url.slice("http".length) + path;
  }

  private buildUrl(path: string, query?: RequestInit2["query"]): string {
    let u = this.url + path;
    if (query) {
      const p = new URLSearchParams();
      const entries = Array.isArray(query) ? query : Object.entries(query);
      for (const [k, v] of entries) {
        if (v === undefined || v === null) continue;
        p.append(k, String(v));
      }
      const s = p.toString();
      if (s) u += "?" + s;
    }
    return u;
  }

  private async send(method: string, path: string, init: RequestInit2, stream: boolean): Promise<Response> {
    const headers: Record<string, string> = { ...this.baseHeaders, ...init.headers };
    let body: BodyInit | undefined = init.body as BodyInit | undefined;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers["Content-Type"] = "application/json";
    }
    const replayable = body === undefined || typeof body === "string" || body instanceof Uint8Array || body instanceof ArrayBuffer || (typeof Blob !== "undefined" && body instanceof Blob);
    const idem = init.retry ?? IDEMPOTENT.has(method);
    const url = this.buildUrl(path, init.query);
    const timeout = init.timeoutMs === undefined ? (stream ? null : this.timeoutMs) : init.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (init.signal?.aborted) throw new AbortedError("aborted", "the call was aborted", { cause: init.signal.reason });
      const signals: AbortSignal[] = [];
      if (init.signal) signals.push(init.signal);
      let timer: AbortController | undefined;
      let t: ReturnType<typeof setTimeout> | undefined;
      if (timeout !== null && timeout !== undefined) {
        timer = new AbortController();
        t = setTimeout(() => timer!.abort(), timeout);
        // A pending timeout must never keep a finished program alive.
        (t as { unref?: () => void }).unref?.();
        signals.push(timer.signal);
      }
      const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : anySignal(signals);
      let resp: Response;
      try {
        const ri: RequestInit & { duplex?: string } = { method, headers, body, signal };
        if (body !== undefined && !replayable) ri.duplex = "half";
        resp = await this.fetch(url, ri);
      } catch (e) {
        if (t) clearTimeout(t);
        if (init.signal?.aborted) throw new AbortedError("aborted", "the call was aborted", { cause: e });
        if (timer?.signal.aborted) throw new TimeoutError("timeout", `no answer from Paddock in time (${method} ${path})`, { cause: e });
        const refused = isConnectRefusal(e);
        if (replayable && (refused || idem) && attempt < this.maxRetries) {
          await sleep(backoff(attempt), init.signal);
          continue;
        }
        throw new APIConnectionError("connection_error", `cannot reach Paddock at ${this.url}: ${describe(e)}`, { cause: e });
      }
      if (!stream && t) {
        // Keep the timer for the body read of ordinary answers; cleared by the reader.
        (resp as Response & { _t?: unknown })._t = t;
      } else if (t) {
        clearTimeout(t);
      }
      if (resp.status < 400) return resp;
      const text = await resp.text().catch(() => "");
      if (t) clearTimeout(t);
      const err = errorFromResponse(resp.status, text, resp.headers);
      if (replayable && attempt < this.maxRetries && retryable(resp.status, idem, err)) {
        const wait = err.retryAfter !== undefined ? err.retryAfter : backoff(attempt) / 1000;
        if (wait <= this.maxRetryWait) {
          await sleep(wait * 1000, init.signal);
          continue;
        }
      }
      throw err;
    }
  }

  /** A call whose answer body is not needed (it is drained). */
  async request(method: string, path: string, init: RequestInit2 = {}): Promise<Response> {
    const resp = await this.send(method, path, init, false);
    try {
      await resp.arrayBuffer();
    } finally {
      const t = (resp as Response & { _t?: ReturnType<typeof setTimeout> })._t;
      if (t) clearTimeout(t);
    }
    return resp;
  }

  async json<T>(method: string, path: string, init: RequestInit2 = {}): Promise<T> {
    const resp = await this.send(method, path, init, false);
    try {
      if (resp.status === 204) return undefined as T;
      const text = await resp.text();
      return (text ? JSON.parse(text) : undefined) as T;
    } finally {
      const t = (resp as Response & { _t?: ReturnType<typeof setTimeout> })._t;
      if (t) clearTimeout(t);
    }
  }

  async bytes(method: string, path: string, init: RequestInit2 = {}): Promise<Uint8Array> {
    const resp = await this.send(method, path, init, false);
    try {
      return new Uint8Array(await resp.arrayBuffer());
    } catch (e) {
      throw new StreamInterruptedError("stream_interrupted", `the download was cut before its end: ${describe(e)}`, { cause: e });
    } finally {
      const t = (resp as Response & { _t?: ReturnType<typeof setTimeout> })._t;
      if (t) clearTimeout(t);
    }
  }

  /** A streamed answer (no timeout unless given); errors before it starts throw here. */
  async stream(method: string, path: string, init: RequestInit2 = {}): Promise<Response> {
    return this.send(method, path, init, true);
  }
}

function retryable(status: number, idem: boolean, err: PaddockError): boolean {
  // A 429 did nothing: safe to repeat for any method when the server says
  // when (rate quotas); a count quota (no Retry-After) waits on someone else.
  if (status === 429) return err.retryAfter !== undefined;
  return idem && (status === 502 || status === 503 || status === 504);
}

function isConnectRefusal(e: unknown): boolean {
  const c = (e as { cause?: { code?: string } })?.cause?.code;
  return c === "ECONNREFUSED" || c === "ENOTFOUND" || c === "EAI_AGAIN" || c === "UND_ERR_CONNECT_TIMEOUT";
}

export function describe(e: unknown): string {
  const c = (e as { cause?: { code?: string; message?: string } })?.cause;
  if (c?.code) return c.code;
  return (e as Error)?.message ?? String(e);
}

/** Full jitter: 0..min(5 s, 0.1 s * 2^attempt), in ms. */
export function backoff(attempt: number): number {
  return Math.random() * Math.min(5000, 100 * 2 ** attempt);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError("aborted", "the call was aborted"));
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new AbortedError("aborted", "the call was aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export function anySignal(signals: AbortSignal[]): AbortSignal {
  const anyFn = (AbortSignal as unknown as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (anyFn) return anyFn(signals);
  const c = new AbortController();
  for (const s of signals) {
    if (s.aborted) {
      c.abort(s.reason);
      break;
    }
    s.addEventListener("abort", () => c.abort(s.reason), { once: true });
  }
  return c.signal;
}

/** The lines of an NDJSON answer as objects; a cut connection throws
 * StreamInterruptedError, an {"error":...} line its PaddockError. */
export async function* ndjson(resp: Response, signal?: AbortSignal): AsyncGenerator<Record<string, unknown>> {
  if (!resp.body) throw new StreamInterruptedError("stream_interrupted", "the answer has no body");
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (signal?.aborted) throw new AbortedError("aborted", "the stream was aborted", { cause: e });
        throw new StreamInterruptedError("stream_interrupted", `the stream was cut before its end: ${describe(e)}`, { cause: e });
      }
      if (chunk.done) break;
      buf += dec.decode(chunk.value, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (!line) continue;
        let obj: Record<string, unknown>;
        try {
          obj = JSON.parse(line);
        } catch (e) {
          throw new StreamInterruptedError("stream_interrupted", "the stream sent a malformed line", { cause: e });
        }
        const err = obj.error as { code?: string; message?: string } | undefined;
        if (err && typeof err === "object" && typeof err.code === "string" && Object.keys(obj).length === 1) {
          throw errorFrom(err.code, String(err.message ?? ""));
        }
        yield obj;
      }
    }
    if (buf.trim()) throw new StreamInterruptedError("stream_interrupted", "the stream ended with a partial line");
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** Raw bytes of a streamed answer. */
export async function* byteStream(resp: Response, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  if (!resp.body) return;
  const reader = resp.body.getReader();
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (signal?.aborted) throw new AbortedError("aborted", "the stream was aborted", { cause: e });
        throw new StreamInterruptedError("stream_interrupted", `the download was cut before its end: ${describe(e)}`, { cause: e });
      }
      if (chunk.done) return;
      yield chunk.value;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
