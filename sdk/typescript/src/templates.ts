// Templates (docs/templates.md): the built-in ones, and images pulled,
// imported or built, with their progress as an NDJSON stream.
import * as check from "./checks.js";
import { invalid, StreamInterruptedError } from "./errors.js";
import { checkUpload, uploadBody, type UploadData } from "./files.js";
import { byteStream, ndjson, type CallOptions, type Transport } from "./http.js";
import type * as m from "./models.js";
import { tarOf } from "./tar.js";

/** A pull, import or build as it happens: iterate over its progress events
 * (build steps, RUN output, messages); `template` holds the result once the
 * iteration has ended. A failure throws its PaddockError (the server's last
 * line), a stream cut before it StreamInterruptedError. */
export class TemplateStream implements AsyncIterable<m.TemplateEvent> {
  template?: m.Template;
  constructor(private readonly open: () => Promise<Response>, private readonly signal?: AbortSignal) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<m.TemplateEvent> {
    const resp = await this.open();
    for await (const d of ndjson(resp, this.signal)) {
      const ev = d as unknown as m.TemplateEvent;
      if (ev.template) {
        this.template = ev.template;
        continue;
      }
      yield ev;
    }
    if (!this.template) throw new StreamInterruptedError("stream_interrupted", "the template stream ended without the template");
  }

  /** Drain the events (each to onEvent, if given) and return the template. */
  async wait(onEvent?: (e: m.TemplateEvent) => unknown): Promise<m.Template> {
    for await (const e of this) await onEvent?.(e);
    return this.template!;
  }
}

export interface ProgressOptions extends CallOptions {
  /** Each progress event as it comes. */
  onEvent?: (e: m.TemplateEvent) => unknown;
}

export interface PullOptions extends CallOptions {
  /** Default: the repository's last path element. */
  name?: string;
  replace?: boolean;
  /** Publish for every tenant (admin). */
  shared?: boolean;
  startCmd?: readonly string[];
  readyCmd?: readonly string[];
}

export interface ImportOptions extends CallOptions {
  name: string;
  /** Which image of a multi-image archive. */
  tag?: string;
  shared?: boolean;
  replace?: boolean;
}

export interface BuildOptions extends CallOptions {
  name: string;
  /** The Dockerfile's path in the context (default Dockerfile). */
  dockerfile?: string;
  buildArgs?: Record<string, string>;
  target?: string;
  /** "none" (default) or "allowlist" (with allow). */
  network?: "none" | "allowlist";
  allow?: readonly string[];
  noCache?: boolean;
  replace?: boolean;
  shared?: boolean;
}

/** A build context: a map of path -> contents (the Dockerfile among them), or a tar. */
export type BuildContext = Record<string, string | Uint8Array> | UploadData;

function isFileMap(c: BuildContext): c is Record<string, string | Uint8Array> {
  if (typeof c !== "object" || c === null) return false;
  if (c instanceof Uint8Array || c instanceof ArrayBuffer || c instanceof ReadableStream) return false;
  if (typeof Blob !== "undefined" && c instanceof Blob) return false;
  return !(Symbol.iterator in c) && !(Symbol.asyncIterator in c);
}

const NDJSON = { Accept: "application/x-ndjson" };
const TAR = { Accept: "application/x-ndjson", "Content-Type": "application/x-tar" };

/** Templates; calling the area lists them (`await client.templates()`).
 * pull, importArchive and build resolve to the template; their *Stream
 * twins iterate over the progress. */
export class Templates {
  constructor(private readonly t: Transport) {}

  async list(o: CallOptions = {}): Promise<m.Template[]> {
    return (await this.t.json<m.TemplateList>("GET", "/v1/templates", { signal: o.signal })).templates;
  }
  async get(name: string, o: CallOptions = {}): Promise<m.Template> {
    return this.t.json("GET", `/v1/templates/${check.seg(name)}`, { signal: o.signal });
  }
  async exists(name: string, o: CallOptions = {}): Promise<boolean> {
    try {
      await this.get(name, o);
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === "not_found") return false;
      throw e;
    }
  }
  /** Remove a template (409 while sandboxes use it). */
  async delete(name: string | m.Template, o: CallOptions = {}): Promise<void> {
    await this.t.request("DELETE", `/v1/templates/${check.seg(typeof name === "string" ? name : name.name)}`, { signal: o.signal });
  }

  /** Pull an image ([REGISTRY/]REPO[:TAG|@DIGEST]) as a template, with its progress. */
  pullStream(ref: string, o: PullOptions = {}): TemplateStream {
    if (typeof ref !== "string" || !ref) throw invalid("ref is required");
    const json: m.TemplatePullRequest = {
      ref, name: o.name, replace: o.replace || undefined, shared: o.shared || undefined,
      start_cmd: o.startCmd ? check.argv(o.startCmd) : undefined, ready_cmd: o.readyCmd ? check.argv(o.readyCmd) : undefined,
    };
    return new TemplateStream(() => this.t.stream("POST", "/v1/templates/pull", { json, headers: NDJSON, signal: o.signal }), o.signal);
  }
  async pull(ref: string, o: PullOptions & ProgressOptions = {}): Promise<m.Template> {
    return this.pullStream(ref, o).wait(o.onEvent);
  }

  /** Import an image archive (docker save, an OCI layout as a tar, an oci-archive as export writes), streamed. */
  importStream(archive: UploadData, o: ImportOptions): TemplateStream {
    if (!o?.name) throw invalid("name is required");
    checkUpload(this.t, archive);
    const query: [string, string][] = [["name", o.name]];
    if (o.tag) query.push(["tag", o.tag]);
    if (o.shared) query.push(["shared", "true"]);
    if (o.replace) query.push(["replace", "true"]);
    const body = uploadBody(archive);
    return new TemplateStream(() => this.t.stream("POST", "/v1/templates/import", { query, body, headers: TAR, retry: false, signal: o.signal }), o.signal);
  }
  async importArchive(archive: UploadData, o: ImportOptions & ProgressOptions): Promise<m.Template> {
    return this.importStream(archive, o).wait(o.onEvent);
  }

  /** Build a Dockerfile into template `name`, streaming its steps and RUN output. */
  buildStream(context: BuildContext, o: BuildOptions): TemplateStream {
    if (!o?.name) throw invalid("name is required");
    const query: [string, string][] = [["name", o.name]];
    if (o.dockerfile) query.push(["dockerfile", o.dockerfile]);
    if (o.target) query.push(["target", o.target]);
    if (o.network) query.push(["net", o.network]);
    for (const h of o.allow ?? []) query.push(["allow", h]);
    const args = Object.entries(o.buildArgs ?? {});
    if ((o.allow?.length ?? 0) > 256 || args.length > 256) throw invalid("at most 256 allow and build_arg parameters");
    for (const [k, v] of args) {
      if (!k) throw invalid("build_arg must be KEY=VALUE");
      query.push(["build_arg", `${k}=${v}`]);
    }
    if (o.noCache) query.push(["no_cache", "true"]);
    if (o.replace) query.push(["replace", "true"]);
    if (o.shared) query.push(["shared", "true"]);
    const data: UploadData = isFileMap(context) ? tarOf(context) : context;
    checkUpload(this.t, data);
    const body = uploadBody(data);
    return new TemplateStream(() => this.t.stream("POST", "/v1/templates/build", { query, body, headers: TAR, retry: false, signal: o.signal }), o.signal);
  }
  async build(context: BuildContext, o: BuildOptions & ProgressOptions): Promise<m.Template> {
    return this.buildStream(context, o).wait(o.onEvent);
  }

  /** A template as an oci-archive, as its bytes arrive. */
  async *export(name: string, o: CallOptions = {}): AsyncGenerator<Uint8Array> {
    const resp = await this.t.stream("GET", `/v1/templates/${check.seg(name)}/export`, { signal: o.signal });
    yield* byteStream(resp, o.signal);
  }

  /** Push a template to a registry reference. */
  async push(name: string, ref: string, o: CallOptions = {}): Promise<void> {
    await this.t.request("POST", `/v1/templates/${check.seg(name)}/push`, { json: { ref } satisfies m.TemplatePushRequest, retry: false, timeoutMs: null, signal: o.signal });
  }
}

/** The templates area, callable as before: `await client.templates()` lists. */
export type TemplatesArea = Templates & ((o?: CallOptions) => Promise<m.Template[]>);

export function templatesArea(t: Transport): TemplatesArea {
  const area = new Templates(t);
  const f = (o: CallOptions = {}) => area.list(o);
  Object.setPrototypeOf(f, Templates.prototype);
  Object.defineProperty(f, "t", { value: t });
  return f as unknown as TemplatesArea;
}
