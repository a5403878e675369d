// Client-side argument checks, worded as the server words them (so an
// error reads the same whether it was caught here or there).
import { invalid } from "./errors.js";

export const MAX_ARGS = 4096;
export const MAX_ARGV_BYTES = 1 << 20;
export const MAX_PATH = 4096;
export const MAX_NAME = 255;
export const MAX_OUTPUT_BYTES = 64 << 20;
export const MIN_PROCESS_BUFFER = 4 << 10;
export const MAX_PROCESS_BUFFER = 16 << 20;

const enc = new TextEncoder();
const blen = (s: string) => enc.encode(s).length;

/** A command as an argv: a string runs through sh -c, an array directly. */
export function argv(cmd: string | readonly string[]): string[] {
  if (typeof cmd === "string") return ["sh", "-c", cmd];
  const out = [...cmd];
  if (out.length === 0 || typeof out[0] !== "string" || out[0] === "") {
    throw invalid('cmd must name a program (it is run directly, not through a shell; use ["sh","-c","..."] for shell syntax)');
  }
  if (out.length > MAX_ARGS) throw invalid(`at most ${MAX_ARGS} arguments`);
  let n = 0;
  for (const a of out) {
    if (typeof a !== "string") throw invalid("arguments must be strings");
    if (a.includes("\0")) throw invalid("arguments must not contain NUL bytes");
    n += blen(a);
  }
  if (n > MAX_ARGV_BYTES) throw invalid(`arguments exceed ${MAX_ARGV_BYTES} bytes`);
  return out;
}

export function user(u: string | undefined): "root" | "user" | undefined {
  if (u !== undefined && u !== "root" && u !== "user") throw invalid('user must be "root" or "user"');
  return u;
}

export function timeoutMs(ms: number | undefined): number | undefined {
  if (ms === undefined) return undefined;
  if (ms < 0) throw invalid("timeout_ms must not be negative");
  return Math.round(ms);
}

export function maxOutput(n: number | undefined): number | undefined {
  if (n !== undefined && !(n >= 0 && n <= MAX_OUTPUT_BYTES)) throw invalid(`max_output_bytes must be between 0 and ${MAX_OUTPUT_BYTES}`);
  return n;
}

export function bufferBytes(n: number | undefined): number | undefined {
  if (n !== undefined && !(n >= MIN_PROCESS_BUFFER && n <= MAX_PROCESS_BUFFER)) {
    throw invalid(`buffer_bytes must be ${MIN_PROCESS_BUFFER}..${MAX_PROCESS_BUFFER}`);
  }
  return n;
}

const clip = (s: string) => (s.length > 64 ? s.slice(0, 64) + "…" : s);
const q = (s: string) => JSON.stringify(clip(s));

/** Check a sandbox path the way the server does. */
export function path(p: string): string {
  if (typeof p !== "string") throw invalid("path must be a string");
  if (p === "") throw invalid("path is empty");
  if (blen(p) > MAX_PATH) throw invalid(`path is longer than ${MAX_PATH} bytes`);
  if (p.includes("\0")) throw invalid(`path ${q(p)} contains a NUL byte`);
  for (const part of p.split("/")) {
    if (part === "..") throw invalid(`path ${q(p)} contains a ".." component; give the path without it`);
    if (blen(part) > MAX_NAME) throw invalid(`path ${q(p)} has a name longer than ${MAX_NAME} bytes`);
  }
  return p;
}

export function mode(m: number | string | undefined): string | undefined {
  if (m === undefined) return undefined;
  const s = typeof m === "number" ? m.toString(8).padStart(4, "0") : m;
  if (!/^[0-7]+$/.test(s)) throw invalid(`mode ${q(s)} is not an octal number such as 0644`);
  const v = parseInt(s, 8);
  if (v & ~0o7777) throw invalid(`mode ${q(s)} has bits outside 07777`);
  if (v & 0o6000) throw invalid(`mode ${q(s)} sets setuid/setgid bits, which the files API does not create`);
  return s;
}

export function port(p: number): number {
  if (!Number.isInteger(p) || p < 1 || p > 65535) throw invalid("port must be 1..65535");
  return p;
}

export function seg(s: string): string {
  if (!s) throw invalid("an id must not be empty");
  return encodeURIComponent(s);
}

export const MAX_SNAPSHOT_NAME = 63;
export const MAX_FORKS = 100;
export const MAX_PAUSED_TIMEOUT_S = 30 * 24 * 3600;

/** A snapshot name, checked as the server checks it: it becomes a file
 * name on the host, so no separator or ".." may reach a path (path traversal). */
export function snapshotName(n: string | { name: string }): string {
  const name = typeof n === "object" && n !== null ? n.name : n;
  if (typeof name !== "string" || name === "") throw invalid("a snapshot needs a name");
  if (name.length > MAX_SNAPSHOT_NAME) throw invalid(`a snapshot name is at most ${MAX_SNAPSHOT_NAME} characters`);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) || name.includes("..")) {
    throw invalid(`a snapshot name has only letters, digits, '.', '_' and '-', starts with a letter or digit and has no ".."`);
  }
  return name;
}

export function forkCount(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_FORKS) throw invalid(`count must be between 1 and ${MAX_FORKS}`);
  return n;
}

export function onTimeout(v: string | undefined): "kill" | "pause" | "hibernate" | undefined {
  if (v !== undefined && v !== "kill" && v !== "pause" && v !== "hibernate") throw invalid('on_timeout must be "kill", "pause" or "hibernate"');
  return v;
}

export function pausedTimeout(s: number | undefined): number | undefined {
  if (s !== undefined && !(Number.isInteger(s) && s >= 1 && s <= MAX_PAUSED_TIMEOUT_S)) {
    throw invalid(`paused_timeout_s must be between 1 and ${MAX_PAUSED_TIMEOUT_S}`);
  }
  return s;
}

export function idlePauseAfter(s: number | undefined): number | undefined {
  if (s !== undefined && !(Number.isInteger(s) && s >= 0)) throw invalid("idle_pause_after_s must not be negative (0 is never)");
  return s;
}

export const MAX_VOLUME_NAME = 63;
export const MAX_VOLUME_MOUNTS = 16;

/** A volume name, checked as the server checks it (it becomes a file name on the host). */
export function volumeName(n: string | { name: string }): string {
  const name = typeof n === "object" && n !== null ? n.name : n;
  if (typeof name !== "string" || name === "") throw invalid("a volume needs a name");
  if (name.length > MAX_VOLUME_NAME) throw invalid(`a volume name is at most ${MAX_VOLUME_NAME} characters`);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) || name.includes("..")) {
    throw invalid(`a volume name has only letters, digits, '.', '_' and '-', starts with a letter or digit and has no ".."`);
  }
  return name;
}

/** A create's volumes: {name, path, read_only} or [name, path, readOnly?]. */
export function volumeMounts(
  v: readonly ({ name: string; path: string; read_only?: boolean; readOnly?: boolean } | readonly [string, string] | readonly [string, string, boolean])[] | undefined,
): { name: string; path: string; read_only?: boolean }[] | undefined {
  if (v === undefined) return undefined;
  const out = v.map((m) => {
    if (Array.isArray(m)) {
      const [name, path, ro] = m as [string, string, boolean?];
      return ro ? { name: volumeName(name), path, read_only: true } : { name: volumeName(name), path };
    }
    if (typeof m !== "object" || m === null) throw invalid("a volume mount is {name, path, read_only} or [name, path, readOnly]");
    const o = m as { name: string; path: string; read_only?: boolean; readOnly?: boolean };
    const ro = o.read_only ?? o.readOnly;
    return ro ? { name: volumeName(o.name), path: o.path, read_only: true } : { name: volumeName(o.name), path: o.path };
  });
  if (out.length > MAX_VOLUME_MOUNTS) throw invalid(`at most ${MAX_VOLUME_MOUNTS} volumes per sandbox`);
  return out;
}
