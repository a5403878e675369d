// Interactive terminals over the PTY WebSocket (docs/processes.md). The key
// travels as the subprotocol "bearer.KEY", which browsers' WebSocket (no
// custom headers) and the `ws` package both can send.
import { APIConnectionError, StreamInterruptedError, UnsupportedError, errorFrom } from "./errors.js";
import type { WebSocketCtor, WebSocketLike } from "./http.js";

export interface TerminalExit {
  exit_code?: number;
  signal?: string;
}

export class Terminal {
  pid?: number;
  id?: string;
  exit?: TerminalExit;
  dropped = 0;
  private ws: WebSocketLike;
  private queue: (Uint8Array | null)[] = [];
  private waiters: ((v: Uint8Array | null) => void)[] = [];
  private failure?: Error;
  private closed = false;

  private constructor(ws: WebSocketLike) {
    this.ws = ws;
  }

  static open(url: string, apiKey: string | undefined, WS: WebSocketCtor | undefined, signal?: AbortSignal): Promise<Terminal> {
    if (!WS) {
      throw new UnsupportedError("unsupported", "this runtime has no WebSocket: pass options.WebSocket (on Node 20: import WebSocket from \"ws\")");
    }
    const ws = new WS(url, apiKey ? ["paddock.v1", `bearer.${apiKey}`] : ["paddock.v1"]);
    ws.binaryType = "arraybuffer";
    const t = new Terminal(ws);
    return new Promise((resolve, reject) => {
      let started = false;
      const fail = (e: Error) => {
        if (!started) reject(e);
        t.fail(e);
      };
      signal?.addEventListener("abort", () => { ws.close(); fail(errorFrom("aborted", "the terminal was aborted")); }, { once: true });
      ws.onerror = () => fail(new APIConnectionError("connection_error", "the terminal WebSocket failed (refused, or the key lacks the exec scope)"));
      ws.onclose = (ev) => {
        t.closed = true;
        if (!started) reject(new APIConnectionError("connection_error", `the terminal closed before it started (${ev.code} ${ev.reason})`));
        else if (!t.exit) t.fail(new StreamInterruptedError("stream_interrupted", `the terminal connection was cut (${ev.code})`));
        t.push(null);
      };
      ws.onmessage = (ev) => {
        const d = ev.data;
        if (typeof d === "string") {
          const m = JSON.parse(d);
          if (m.type === "started") {
            t.pid = m.pid;
            t.id = m.id;
            started = true;
            resolve(t);
          } else if (m.type === "exit") {
            t.exit = { exit_code: m.exit_code, signal: m.signal || undefined };
          } else if (m.type === "dropped") {
            t.dropped += Number(m.bytes ?? 0);
          } else if (m.type === "error") {
            fail(errorFrom(String(m.code ?? "internal"), String(m.message ?? "")));
          }
          return;
        }
        const bytes = d instanceof ArrayBuffer ? new Uint8Array(d) : ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : new Uint8Array(d as ArrayBuffer);
        t.push(bytes);
      };
    });
  }

  private push(v: Uint8Array | null) {
    const w = this.waiters.shift();
    if (w) w(v);
    else this.queue.push(v);
  }

  private fail(e: Error) {
    if (!this.failure) this.failure = e;
    this.push(null);
  }

  /** The next screen bytes; null once the terminal has closed. */
  async recv(): Promise<Uint8Array | null> {
    const v = this.queue.length ? this.queue.shift()! : await new Promise<Uint8Array | null>((r) => this.waiters.push(r));
    if (v === null) {
      this.queue.unshift(null);
      if (this.failure) throw this.failure;
    }
    return v;
  }

  async readUntil(needle: string, timeoutMs = 30_000): Promise<string> {
    const dec = new TextDecoder();
    let buf = "";
    const deadline = Date.now() + timeoutMs;
    while (!buf.includes(needle)) {
      const left = deadline - Date.now();
      if (left <= 0) throw errorFrom("timeout", `${JSON.stringify(needle)} did not appear in ${timeoutMs} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const b = await Promise.race([this.recv(), new Promise<"t">((r) => { timer = setTimeout(() => r("t"), left); })]);
      clearTimeout(timer);
      if (b === "t") continue;
      if (b === null) throw new StreamInterruptedError("stream_interrupted", `the terminal ended before ${JSON.stringify(needle)} appeared`);
      buf += dec.decode(b, { stream: true });
    }
    return buf;
  }

  send(data: string | Uint8Array): void {
    this.ws.send(typeof data === "string" ? new TextEncoder().encode(data) : data);
  }

  resize(rows: number, cols: number): void {
    this.ws.send(JSON.stringify({ type: "resize", rows, cols }));
  }

  signal(signal = "SIGINT", tree = false): void {
    this.ws.send(JSON.stringify({ type: "signal", signal, tree }));
  }

  eof(): void {
    this.ws.send(JSON.stringify({ type: "eof" }));
  }

  /** Read until the process exits. */
  async wait(timeoutMs = 60_000): Promise<TerminalExit> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed || this.queue.length > 1) {
      if (Date.now() > deadline) throw errorFrom("timeout", "the terminal did not exit in time");
      const b = await this.recv().catch((e) => { if (this.exit) return null; throw e; });
      if (b === null) break;
    }
    if (!this.exit) throw new StreamInterruptedError("stream_interrupted", "the terminal closed without an exit status");
    return this.exit;
  }

  close(): void {
    this.ws.close(1000);
  }
}
