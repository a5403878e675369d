// Volumes (docs/state.md, "Volumes"): ext4 images with a hard size,
// mounted at create and outliving their sandboxes; their files without one.
import * as check from "./checks.js";
import { checkUpload, uploadBody, type UploadData } from "./files.js";
import type { CallOptions, Transport } from "./http.js";
import type * as m from "./models.js";

/** A volume's files without a sandbox; paths are relative to its root.
 * Writes are refused (409) while a sandbox mounts the volume read-write. */
export class VolumeFiles {
  private readonly p: string;
  constructor(private readonly t: Transport, name: string) {
    this.p = `/v1/volumes/${check.seg(check.volumeName(name))}/files`;
  }
  async read(path: string, o: CallOptions = {}): Promise<Uint8Array> {
    return this.t.bytes("GET", this.p, { query: { path }, signal: o.signal });
  }
  async readText(path: string, o: CallOptions = {}): Promise<string> {
    return new TextDecoder().decode(await this.read(path, o));
  }
  /** Write data, streamed; user "user" makes the file the sandbox user's. */
  async write(path: string, data: UploadData, o: CallOptions & { mode?: number | string; user?: "root" | "user" } = {}): Promise<m.FileInfo> {
    const query = { path, mode: check.mode(o.mode), user: check.user(o.user) };
    checkUpload(this.t, data);
    return this.t.json("PUT", this.p, { query, body: uploadBody(data), headers: { "Content-Type": "application/octet-stream" }, signal: o.signal });
  }
  async list(path = "/", o: CallOptions & { limit?: number } = {}): Promise<m.ListResult> {
    return this.t.json("GET", this.p + "/list", { query: { path, limit: o.limit }, signal: o.signal });
  }
  async stat(path: string, o: CallOptions = {}): Promise<m.FileInfo> {
    return this.t.json("GET", this.p + "/stat", { query: { path }, signal: o.signal });
  }
  async exists(path: string, o: CallOptions = {}): Promise<boolean> {
    try {
      await this.stat(path, o);
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === "not_found") return false;
      throw e;
    }
  }
  async mkdir(path: string, o: CallOptions & { parents?: boolean; mode?: number | string; user?: "root" | "user" } = {}): Promise<m.FileInfo> {
    const json: m.MkdirRequest = { path, parents: o.parents, mode: check.mode(o.mode), user: check.user(o.user) };
    return this.t.json("POST", this.p + "/mkdir", { json, signal: o.signal });
  }
  async remove(path: string, o: CallOptions & { recursive?: boolean; user?: "root" | "user" } = {}): Promise<m.RemoveResult> {
    return this.t.json("DELETE", this.p, { query: { path, recursive: o.recursive, user: check.user(o.user) }, signal: o.signal });
  }
}

/** The tenant's volumes; mount one at create with `volumes: [[name, "/data"]]`. */
export class Volumes {
  constructor(private readonly t: Transport) {}
  /** A new volume of sizeMb MiB (default 1024; at least 16). */
  async create(name: string, o: CallOptions & { sizeMb?: number } = {}): Promise<m.Volume> {
    const json: m.CreateVolumeRequest = { name: check.volumeName(name), size_mb: o.sizeMb };
    return this.t.json("POST", "/v1/volumes", { json, retry: false, timeoutMs: 300_000, signal: o.signal });
  }
  async list(o: CallOptions = {}): Promise<m.Volume[]> {
    return (await this.t.json<m.VolumeList>("GET", "/v1/volumes", { signal: o.signal })).volumes;
  }
  async get(name: string | m.Volume, o: CallOptions = {}): Promise<m.Volume> {
    return this.t.json("GET", `/v1/volumes/${check.seg(check.volumeName(name))}`, { signal: o.signal });
  }
  /** Delete a volume and its files (409 while a sandbox mounts it). */
  async delete(name: string | m.Volume, o: CallOptions = {}): Promise<void> {
    await this.t.request("DELETE", `/v1/volumes/${check.seg(check.volumeName(name))}`, { signal: o.signal });
  }
  files(name: string | m.Volume): VolumeFiles {
    return new VolumeFiles(this.t, check.volumeName(name));
  }
}
