// The client: sandboxes, snapshots, templates, volumes, and the admin areas.
import * as check from "./checks.js";
import { Transport, ndjson, type CallOptions, type ClientOptions } from "./http.js";
import type * as m from "./models.js";
import { Sandbox } from "./sandbox.js";
import { templatesArea, type TemplatesArea } from "./templates.js";
import { Volumes } from "./volumes.js";

export interface CreateOptions extends CallOptions {
  template?: string;
  cpu?: number;
  memoryMb?: number;
  diskMb?: number;
  pids?: number;
  /** Seconds the sandbox lives (then it is destroyed). */
  timeoutS?: number;
  labels?: Record<string, string>;
  env?: Record<string, string>;
  network?: m.Network;
  browser?: boolean;
  /** Start with a snapshot's files (and its template). */
  snapshot?: string | m.Snapshot;
  /** Calls resume a paused sandbox instead of failing with sandbox_paused. */
  autoResume?: boolean;
  /** At the timeout: "kill" (default), "pause" or (gVisor) "hibernate". */
  onTimeout?: "kill" | "pause" | "hibernate";
  /** Pause after this many seconds without traffic (0: never). */
  idlePauseAfterS?: number;
  /** How long it may stay paused, seconds (default 7 days). */
  pausedTimeoutS?: number;
  /** "native" (default) or "gvisor" (docs/gvisor.md). */
  runtime?: "native" | "gvisor";
  /** Volumes mounted at create: {name, path, read_only} or [name, path, readOnly?]. */
  volumes?: readonly (m.VolumeMount | { name: string; path: string; readOnly?: boolean } | readonly [string, string] | readonly [string, string, boolean])[];
}

class Sandboxes {
  constructor(private readonly t: Transport) {}
  /** Create a sandbox. A rate quota's 429 is waited out (Retry-After): a refused create did nothing. */
  async create(o: CreateOptions = {}): Promise<Sandbox> {
    const spec: m.Spec = {
      template: o.template, cpu: o.cpu, memory_mb: o.memoryMb, disk_mb: o.diskMb, pids: o.pids, timeout_s: o.timeoutS,
      labels: o.labels, env: o.env, network: o.network, browser: o.browser,
      snapshot: o.snapshot === undefined ? undefined : check.snapshotName(o.snapshot), auto_resume: o.autoResume,
      on_timeout: check.onTimeout(o.onTimeout), idle_pause_after_s: check.idlePauseAfter(o.idlePauseAfterS),
      paused_timeout_s: check.pausedTimeout(o.pausedTimeoutS), runtime: o.runtime, volumes: check.volumeMounts(o.volumes),
    };
    return new Sandbox(this.t, await this.t.json("POST", "/v1/sandboxes", { json: spec, retry: false, timeoutMs: 120_000, signal: o.signal }));
  }
  async get(id: string, o: CallOptions = {}): Promise<Sandbox> {
    return new Sandbox(this.t, await this.t.json("GET", `/v1/sandboxes/${check.seg(id)}`, { signal: o.signal }));
  }
  connect(info: m.Sandbox): Sandbox {
    return new Sandbox(this.t, info);
  }
  async list(o: CallOptions & { labels?: Record<string, string> } = {}): Promise<m.Sandbox[]> {
    const q: [string, string][] = Object.entries(o.labels ?? {}).map(([k, v]) => ["label", `${k}=${v}`]);
    return (await this.t.json<m.SandboxList>("GET", "/v1/sandboxes", { query: q, signal: o.signal })).sandboxes;
  }
  async delete(id: string, o: CallOptions = {}): Promise<void> {
    await this.t.request("DELETE", `/v1/sandboxes/${check.seg(id)}`, { signal: o.signal });
  }
}

/** The tenant's snapshots (docs/state.md). */
class Snapshots {
  constructor(private readonly t: Transport) {}
  async list(o: CallOptions = {}): Promise<m.Snapshot[]> {
    return (await this.t.json<m.SnapshotList>("GET", "/v1/snapshots", { signal: o.signal })).snapshots;
  }
  get(name: string, o: CallOptions = {}): Promise<m.Snapshot> {
    return this.t.json("GET", `/v1/snapshots/${check.seg(check.snapshotName(name))}`, { signal: o.signal });
  }
  async delete(name: string | m.Snapshot, o: CallOptions = {}): Promise<void> {
    await this.t.request("DELETE", `/v1/snapshots/${check.seg(check.snapshotName(name))}`, { signal: o.signal });
  }
}

class Keys {
  constructor(private readonly t: Transport) {}
  create(req: m.APIKeyRequest, o: CallOptions = {}): Promise<m.APIKeyCreated> {
    return this.t.json("POST", "/v1/keys", { json: req, signal: o.signal });
  }
  async list(o: CallOptions & { tenant?: string } = {}): Promise<m.APIKey[]> {
    return (await this.t.json<m.APIKeyList>("GET", "/v1/keys", { query: { tenant: o.tenant }, signal: o.signal })).keys;
  }
  async revoke(id: string, o: CallOptions = {}): Promise<void> {
    await this.t.request("DELETE", `/v1/keys/${check.seg(id)}`, { signal: o.signal });
  }
}

class Tenants {
  constructor(private readonly t: Transport) {}
  create(name: string, o: CallOptions & { quotas?: m.TenantQuotas } = {}): Promise<m.Tenant> {
    return this.t.json("POST", "/v1/tenants", { json: { name, quotas: o.quotas } satisfies m.TenantCreateRequest, signal: o.signal });
  }
  async list(o: CallOptions = {}): Promise<m.Tenant[]> {
    return (await this.t.json<m.TenantList>("GET", "/v1/tenants", { signal: o.signal })).tenants;
  }
  get(name: string, o: CallOptions = {}): Promise<m.Tenant> {
    return this.t.json("GET", `/v1/tenants/${check.seg(name)}`, { signal: o.signal });
  }
  update(name: string, quotas: m.TenantQuotas, o: CallOptions = {}): Promise<m.Tenant> {
    return this.t.json("PUT", `/v1/tenants/${check.seg(name)}`, { json: { quotas } satisfies m.TenantUpdateRequest, signal: o.signal });
  }
}

class Secrets {
  constructor(private readonly t: Transport) {}
  async list(o: CallOptions & { tenant?: string } = {}): Promise<m.SecretInfo[]> {
    return (await this.t.json<m.SecretList>("GET", "/v1/secrets", { query: { tenant: o.tenant }, signal: o.signal })).secrets;
  }
  get(name: string, o: CallOptions & { tenant?: string } = {}): Promise<m.SecretInfo> {
    return this.t.json("GET", `/v1/secrets/${check.seg(name)}`, { query: { tenant: o.tenant }, signal: o.signal });
  }
  /** Create or replace a secret; hosts (if given) are where it may be sent. */
  set(name: string, value: string, o: CallOptions & { tenant?: string; hosts?: string[] } = {}): Promise<m.SecretInfo> {
    const json: m.SecretValue = o.hosts ? { value, hosts: o.hosts } : { value };
    return this.t.json("PUT", `/v1/secrets/${check.seg(name)}`, { query: { tenant: o.tenant }, json, signal: o.signal });
  }
  /** Replace the hosts a secret may be sent to, keeping its value. */
  bind(name: string, hosts: string[], o: CallOptions & { tenant?: string } = {}): Promise<m.SecretInfo> {
    return this.t.json("PUT", `/v1/secrets/${check.seg(name)}`, { query: { tenant: o.tenant }, json: { hosts } satisfies m.SecretValue, signal: o.signal });
  }
  async delete(name: string, o: CallOptions & { tenant?: string } = {}): Promise<void> {
    await this.t.request("DELETE", `/v1/secrets/${check.seg(name)}`, { query: { tenant: o.tenant }, signal: o.signal });
  }
}

export interface AuditFilter extends CallOptions {
  sandbox?: string;
  actor?: string;
  tenant?: string;
  action?: string;
  since?: string;
  until?: string;
}

class Audit {
  constructor(private readonly t: Transport) {}
  query(o: AuditFilter & { cursor?: number; limit?: number; tail?: number; wait?: string } = {}): Promise<m.AuditPage> {
    const { signal, ...q } = o;
    return this.t.json("GET", "/v1/audit", { query: q, timeoutMs: 120_000, signal });
  }
  /** Every matching record, page after page. */
  async *records(o: AuditFilter & { limit?: number } = {}): AsyncGenerator<m.AuditRecord> {
    let cursor: number | undefined;
    for (;;) {
      const page = await this.query({ ...o, cursor });
      yield* page.records;
      if (!page.has_more) return;
      cursor = page.next_cursor;
    }
  }
  async *export(o: AuditFilter = {}): AsyncGenerator<m.AuditRecord> {
    const { signal, ...q } = o;
    const resp = await this.t.stream("GET", "/v1/audit/export", { query: q, signal });
    for await (const r of ndjson(resp, signal)) yield r as unknown as m.AuditRecord;
  }
}

/** A Paddock server. url and apiKey default to PADDOCK_URL (else
 * http://127.0.0.1:7070) and PADDOCK_API_KEY. */
export class Paddock {
  readonly transport: Transport;
  readonly sandboxes: Sandboxes;
  readonly snapshots: Snapshots;
  /** Templates; `await client.templates()` lists them, as `client.templates.list()`. */
  readonly templates: TemplatesArea;
  readonly volumes: Volumes;
  readonly keys: Keys;
  readonly tenants: Tenants;
  readonly secrets: Secrets;
  readonly audit: Audit;

  constructor(o: ClientOptions = {}) {
    this.transport = new Transport(o);
    this.sandboxes = new Sandboxes(this.transport);
    this.snapshots = new Snapshots(this.transport);
    this.templates = templatesArea(this.transport);
    this.volumes = new Volumes(this.transport);
    this.keys = new Keys(this.transport);
    this.tenants = new Tenants(this.transport);
    this.secrets = new Secrets(this.transport);
    this.audit = new Audit(this.transport);
  }

  health(o: CallOptions = {}): Promise<m.Health> {
    return this.transport.json("GET", "/healthz", { signal: o.signal });
  }
  openapi(o: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.transport.json("GET", "/openapi.json", { signal: o.signal });
  }
}

/** Create a sandbox with a client of its own (options or PADDOCK_URL / PADDOCK_API_KEY). */
export async function createSandbox(o: ClientOptions & CreateOptions = {}): Promise<Sandbox> {
  return new Paddock(o).sandboxes.create(o);
}

/** Run fn with a new sandbox and destroy it afterwards, whatever happens. */
export async function withSandbox<T>(o: ClientOptions & CreateOptions, fn: (sb: Sandbox) => Promise<T>): Promise<T> {
  const sb = await createSandbox(o);
  try {
    return await fn(sb);
  } finally {
    await sb.kill();
  }
}
