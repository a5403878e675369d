// A small ustar writer: a build context given as a map of path -> contents
// becomes the tar the build route takes.
import { invalid } from "./errors.js";

const enc = new TextEncoder();

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, "0") + "\0";
}

function put(h: Uint8Array, off: number, width: number, s: string | Uint8Array): void {
  const b = typeof s === "string" ? enc.encode(s) : s;
  h.set(b.subarray(0, width), off);
}

/** Split a path into ustar's name (≤100 bytes) and prefix (≤155 bytes). */
function names(path: string): [string, string] {
  const b = enc.encode(path);
  if (b.length <= 100) return [path, ""];
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i), name = path.slice(i + 1);
    if (enc.encode(prefix).length <= 155 && enc.encode(name).length <= 100 && name) return [name, prefix];
  }
  throw invalid(`a build context path is too long for a tar header: ${JSON.stringify(path.slice(0, 64))}`);
}

function header(path: string, size: number, type: "0" | "5", mode: number): Uint8Array {
  const h = new Uint8Array(512);
  const [name, prefix] = names(path);
  put(h, 0, 100, name);
  put(h, 100, 8, octal(mode, 8));
  put(h, 108, 8, octal(0, 8));
  put(h, 116, 8, octal(0, 8));
  put(h, 124, 12, octal(size, 12));
  put(h, 136, 12, octal(0, 12));
  put(h, 148, 8, "        ");
  put(h, 156, 1, type);
  put(h, 257, 6, "ustar\0");
  put(h, 263, 2, "00");
  put(h, 345, 155, prefix);
  let sum = 0;
  for (const x of h) sum += x;
  put(h, 148, 8, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

/** A tar of files (path -> contents), parent directories included; paths
 * must be relative with no "..". */
export function tarOf(files: Record<string, string | Uint8Array>): Uint8Array {
  const parts: Uint8Array[] = [];
  const dirs = new Set<string>();
  for (const raw of Object.keys(files).sort()) {
    const path = raw.replace(/^\/+/, "");
    if (!path || path.split("/").includes("..")) throw invalid(`a build context path must be relative with no ".." (got ${JSON.stringify(raw.slice(0, 64))})`);
    const segs = path.split("/");
    for (let i = 1; i < segs.length; i++) {
      const d = segs.slice(0, i).join("/") + "/";
      if (!dirs.has(d)) {
        dirs.add(d);
        parts.push(header(d, 0, "5", 0o755));
      }
    }
    const v = files[raw];
    const data = typeof v === "string" ? enc.encode(v) : v;
    parts.push(header(path, data.byteLength, "0", 0o644), data);
    const pad = (512 - (data.byteLength % 512)) % 512;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.byteLength;
  }
  return out;
}
