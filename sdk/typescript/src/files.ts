// Files in the sandbox (docs/files.md). Paths are absolute or relative to
// /workspace; user is "root" (default) or "user".
import * as check from "./checks.js";
import { StreamInterruptedError, TooLargeError } from "./errors.js";
import { byteStream, ndjson, type CallOptions, type Transport } from "./http.js";
import type * as m from "./models.js";

export type UploadData = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

export interface UserOption extends CallOptions {
  user?: "root" | "user";
}

/** An upload's size, when it is known before sending. */
export function uploadSize(d: UploadData): number | undefined {
  if (typeof d === "string") return new TextEncoder().encode(d).length;
  if (d instanceof Uint8Array || d instanceof ArrayBuffer) return d.byteLength;
  if (typeof Blob !== "undefined" && d instanceof Blob) return d.size;
  return undefined;
}

/** An upload as a fetch body (iterables become a ReadableStream). */
export function uploadBody(d: UploadData): BodyInit {
  if (typeof d === "string" || d instanceof Uint8Array || d instanceof ArrayBuffer) return d as BodyInit;
  if (typeof Blob !== "undefined" && d instanceof Blob) return d;
  if (d instanceof ReadableStream) return d;
  const it = d as AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  const iter = Symbol.asyncIterator in it ? (it as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]() : (it as Iterable<Uint8Array>)[Symbol.iterator]();
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      const r = await iter.next();
      if (r.done) c.close();
      else c.enqueue(r.value);
    },
    async cancel() {
      await iter.return?.();
    },
  });
}

/** Refuse an upload known to be over maxUploadBytes before anything is sent. */
export function checkUpload(t: Transport, d: UploadData): void {
  const n = uploadSize(d);
  if (n !== undefined && n > t.maxUploadBytes) {
    throw new TooLargeError("too_large", `the upload is ${n} bytes, over the ${t.maxUploadBytes}-byte limit (maxUploadBytes); nothing was sent`);
  }
}

export class Files {
  private readonly p: string;
  constructor(private readonly t: Transport, id: string) {
    this.p = `/v1/sandboxes/${check.seg(id)}/files`;
  }

  private checkUpload(d: UploadData) {
    checkUpload(this.t, d);
  }

  read(path: string, o: UserOption & { offset?: number; length?: number } = {}): Promise<Uint8Array> {
    return this.t.bytes("GET", this.p, { query: { path: check.path(path), offset: o.offset, length: o.length, user: check.user(o.user) }, signal: o.signal });
  }

  async readText(path: string, o: UserOption = {}): Promise<string> {
    return new TextDecoder().decode(await this.read(path, o));
  }

  /** A file's bytes as they arrive (nothing held whole). */
  async *readStream(path: string, o: UserOption = {}): AsyncGenerator<Uint8Array> {
    const resp = await this.t.stream("GET", this.p, { query: { path: check.path(path), user: check.user(o.user) }, signal: o.signal });
    const want = Number(resp.headers.get("content-length") ?? NaN);
    let got = 0;
    for await (const b of byteStream(resp, o.signal)) {
      got += b.byteLength;
      yield b;
    }
    if (!Number.isNaN(want) && got !== want) throw new StreamInterruptedError("stream_interrupted", `the download ended after ${got} of ${want} bytes`);
  }

  /** Write data atomically, streamed (strings, bytes, Blobs, ReadableStreams, (async) iterables of bytes).
   * An upload known to be over maxUploadBytes is refused before anything is sent. */
  async write(path: string, data: UploadData, o: UserOption & { mode?: number | string; parents?: boolean } = {}): Promise<m.FileInfo> {
    const query = { path: check.path(path), mode: check.mode(o.mode), parents: o.parents, user: check.user(o.user) };
    this.checkUpload(data);
    return this.t.json("PUT", this.p, { query, body: uploadBody(data) as BodyInit, headers: { "Content-Type": "application/octet-stream" }, signal: o.signal });
  }

  list(path = "/workspace", o: UserOption & { depth?: number; limit?: number } = {}): Promise<m.ListResult> {
    return this.t.json("GET", this.p + "/list", { query: { path: check.path(path), depth: o.depth, limit: o.limit, user: check.user(o.user) }, signal: o.signal });
  }

  stat(path: string, o: UserOption & { follow?: boolean } = {}): Promise<m.FileInfo> {
    return this.t.json("GET", this.p + "/stat", { query: { path: check.path(path), follow: o.follow, user: check.user(o.user) }, signal: o.signal });
  }

  async exists(path: string, o: UserOption = {}): Promise<boolean> {
    try {
      await this.stat(path, o);
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === "not_found") return false;
      throw e;
    }
  }

  mkdir(path: string, o: UserOption & { parents?: boolean; mode?: number | string } = {}): Promise<m.FileInfo> {
    const req: m.MkdirRequest = { path: check.path(path), parents: o.parents, mode: check.mode(o.mode), user: check.user(o.user) };
    return this.t.json("POST", this.p + "/mkdir", { json: req, signal: o.signal });
  }

  move(from: string, to: string, o: UserOption & { overwrite?: boolean; parents?: boolean } = {}): Promise<m.FileInfo> {
    const req: m.MoveRequest = { from: check.path(from), to: check.path(to), overwrite: o.overwrite, parents: o.parents, user: check.user(o.user) };
    return this.t.json("POST", this.p + "/move", { json: req, signal: o.signal });
  }

  remove(path: string, o: UserOption & { recursive?: boolean } = {}): Promise<m.RemoveResult> {
    return this.t.json("DELETE", this.p, { query: { path: check.path(path), recursive: o.recursive, user: check.user(o.user) }, signal: o.signal });
  }

  edit(path: string, e: Omit<m.EditRequest, "path" | "user">, o: UserOption = {}): Promise<m.EditResult> {
    return this.t.json("POST", this.p + "/edit", { json: { ...e, path: check.path(path), user: check.user(o.user) }, retry: false, signal: o.signal });
  }

  find(pattern: string, o: UserOption & { path?: string; type?: string; limit?: number } = {}): Promise<m.FindResult> {
    return this.t.json("GET", this.p + "/find", {
      query: { pattern, path: o.path === undefined ? undefined : check.path(o.path), type: o.type, limit: o.limit, user: check.user(o.user) }, signal: o.signal,
    });
  }

  search(query: string, o: UserOption & { path?: string; regexp?: boolean; ignoreCase?: boolean; include?: string; limit?: number; maxFileSize?: number } = {}): Promise<m.SearchResult> {
    return this.t.json("GET", this.p + "/search", {
      query: {
        query, path: o.path === undefined ? undefined : check.path(o.path), regexp: o.regexp, ignore_case: o.ignoreCase,
        include: o.include, limit: o.limit, max_file_size: o.maxFileSize, user: check.user(o.user),
      },
      signal: o.signal,
    });
  }

  /** Changes under path as they happen; the first event is "ready". Break (or abort) to stop. */
  async *watch(path: string, o: UserOption & { recursive?: boolean } = {}): AsyncGenerator<m.FileEvent> {
    const resp = await this.t.stream("GET", this.p + "/watch", { query: { path: check.path(path), recursive: o.recursive, user: check.user(o.user) }, signal: o.signal });
    for await (const ev of ndjson(resp, o.signal)) yield ev as unknown as m.FileEvent;
  }

  /** A directory (or file) as a tar (gzip: tar.gz) stream. */
  async *downloadArchive(path: string, o: UserOption & { gzip?: boolean } = {}): AsyncGenerator<Uint8Array> {
    const resp = await this.t.stream("GET", this.p + "/archive", { query: { path: check.path(path), gzip: o.gzip, user: check.user(o.user) }, signal: o.signal });
    yield* byteStream(resp, o.signal);
  }

  /** Extract a tar (or tar.gz) stream into the directory path. */
  uploadArchive(path: string, data: UploadData, o: UserOption & { gzip?: boolean; maxEntries?: number; maxRatio?: number } = {}): Promise<m.ExtractResult> {
    this.checkUpload(data);
    return this.t.json("POST", this.p + "/archive", {
      query: { path: check.path(path), max_entries: o.maxEntries, max_ratio: o.maxRatio, user: check.user(o.user) },
      body: uploadBody(data) as BodyInit, headers: { "Content-Type": o.gzip ? "application/gzip" : "application/x-tar" }, retry: false, signal: o.signal,
    });
  }
}
