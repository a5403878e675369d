// Paddock's wire models, generated from the OpenAPI document by
// sdk/codegen/generate.py. Do not edit: run `make sdk-models`.

export interface APIKey {
  /** public id, key_... */
  id: string;
  tenant: string;
  name?: string;
  description?: string;
  scopes: ("read" | "write" | "exec" | "admin")[];
  format: string;
  /** the key's first 8 characters */
  hint: string;
  created_at: string;
  /** to the minute */
  last_used_at?: string;
  expires_at?: string;
  revoked_at?: string;
  revoked: boolean;
}

/** A new key, with the key itself (shown once). */
export interface APIKeyCreated {
  /** public id, key_... */
  id: string;
  tenant: string;
  name?: string;
  description?: string;
  scopes: ("read" | "write" | "exec" | "admin")[];
  format: string;
  /** the key's first 8 characters */
  hint: string;
  created_at: string;
  /** to the minute */
  last_used_at?: string;
  expires_at?: string;
  revoked_at?: string;
  revoked: boolean;
  /** the key; shown once */
  key: string;
}

export interface APIKeyList {
  keys: APIKey[];
}

export interface APIKeyRequest {
  tenant: string;
  scopes: ("read" | "write" | "exec" | "admin")[];
  name?: string;
  description?: string;
  expires_at?: string;
  /** instead of expires_at */
  expires_in_s?: number;
  /** paddock: pdk_ + 32 base32; e2b: e2b_ + 40 hex (for E2B SDKs) */
  format?: "paddock" | "e2b";
}

export interface AuditPage {
  records: AuditRecord[];
  /** pass as `cursor` to continue (the last seq examined) */
  next_cursor: number;
  /** another matching record follows */
  has_more: boolean;
}

/** One audit record. `hash` is SHA-256 (hex) of the record's canonical JSON without `hash`; `prev` is the hash of the record before (zeros for the first). */
export interface AuditRecord {
  /** 1, 2, 3, ... with no gaps */
  seq: number;
  /** UTC, nanoseconds, fixed width */
  time: string;
  /** http, exec, sandbox.create, sandbox.delete, sandbox.expire, sandbox.fail, file.*, process.*, audit.* */
  action: string;
  phase: "intent" | "result" | "event";
  /** key id */
  actor?: string;
  tenant?: string;
  sandbox?: string;
  /** the API request id (X-Request-Id) */
  request?: string;
  /** what was asked (secrets redacted) */
  args?: Record<string, unknown>;
  /** how it ended */
  result?: Record<string, unknown>;
  /** HTTP status, for http records */
  status?: number;
  /** error code */
  code?: string;
  error?: string;
  duration_ns?: number;
  prev: string;
  hash: string;
}

export interface BrowserClick {
  /** CSS selector, or text=Visible text, or ref=e12 (give one of selector, text and ref) */
  selector?: string;
  /** visible text of the element */
  text?: string;
  /** a reference from the snapshot, e.g. e12 */
  ref?: string;
  button?: "left" | "right" | "middle";
  /** 1..3 */
  click_count?: number;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface BrowserDownload {
  url: string;
  filename: string;
  path?: string;
  /** inProgress, completed or canceled */
  state: string;
  bytes: number;
  total_bytes?: number;
}

export interface BrowserDownloads {
  dir: string;
  downloads: BrowserDownload[];
}

export interface BrowserEval {
  tab: string;
  /** JavaScript type of the value */
  type: string;
  /** the value as JSON */
  value: unknown;
  truncated?: boolean;
}

export interface BrowserEvalRequest {
  expression: string;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface BrowserNavigate {
  url: string;
  wait_until?: "load" | "domcontentloaded" | "none";
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface BrowserOpenTab {
  /** default about:blank */
  url?: string;
  timeout_ms?: number;
}

export interface BrowserPage {
  tab: string;
  url: string;
  title: string;
  /** HTTP status of the document a navigation loaded */
  status?: number;
  duration_ms: number;
  downloads?: BrowserDownload[];
  new_tabs?: BrowserTab[];
}

export interface BrowserPress {
  /** CSS selector, or text=Visible text, or ref=e12 (give one of selector, text and ref) */
  selector?: string;
  /** visible text of the element */
  text?: string;
  /** a reference from the snapshot, e.g. e12 */
  ref?: string;
  /** Enter, Tab, Escape, ArrowDown, a, Control+A... */
  key: string;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface BrowserScroll {
  tab: string;
  url: string;
  title: string;
  /** HTTP status of the document a navigation loaded */
  status?: number;
  duration_ms: number;
  downloads?: BrowserDownload[];
  new_tabs?: BrowserTab[];
  x: number;
  y: number;
  max_x: number;
  max_y: number;
  at_end: boolean;
  scrolled_x: number;
  scrolled_y: number;
}

export interface BrowserScrollRequest {
  /** CSS selector, or text=Visible text, or ref=e12 (give one of selector, text and ref) */
  selector?: string;
  /** visible text of the element */
  text?: string;
  /** a reference from the snapshot, e.g. e12 */
  ref?: string;
  direction?: "down" | "up" | "left" | "right";
  /** pixels */
  amount?: number;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface BrowserSnapshot {
  tab: string;
  url: string;
  title: string;
  snapshot: string;
  refs: number;
  truncated?: boolean;
}

export interface BrowserStatus {
  state: "stopped" | "starting" | "running" | "failed";
  pid?: number;
  started_at?: string;
  restarts: number;
  last_exit?: string;
  oom_kills?: number;
  error?: string;
  start_ms?: number;
  connected: boolean;
  tabs?: BrowserTab[];
}

export interface BrowserTab {
  id: string;
  url: string;
  title: string;
  current?: boolean;
}

export interface BrowserTabs {
  tabs: BrowserTab[];
}

export interface BrowserText {
  tab: string;
  url: string;
  title: string;
  format: string;
  text: string;
  bytes: number;
  truncated?: boolean;
}

export interface BrowserType {
  /** CSS selector, or text=Visible text, or ref=e12 (give one of selector, text and ref) */
  selector?: string;
  /** what to type */
  text: string;
  /** a reference from the snapshot, e.g. e12 */
  ref?: string;
  clear?: boolean;
  submit?: boolean;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface EditRequest {
  path: string;
  old_string?: string;
  new_string?: string;
  replace_all?: boolean;
  /** from 1 */
  start_line?: number;
  /** inclusive; start_line-1 inserts */
  end_line?: number;
  content?: string;
  /** root (default) or user */
  user?: "root" | "user";
}

export interface EditResult {
  replacements: number;
  file: FileInfo;
}

/** Every error answer. 429 answers of rate quotas carry Retry-After (seconds). */
export interface Error {
  error: ErrorDetail;
}

export interface ErrorDetail {
  /** stable, machine-readable (docs/api.md) */
  code: "invalid_argument" | "command_not_found" | "unauthenticated" | "forbidden" | "not_found" | "method_not_allowed" | "conflict" | "sandbox_not_running" | "too_large" | "limit_exceeded" | "rate_limited" | "unsupported" | "unavailable" | "timeout" | "internal";
  /** for people; never a host path or a trace */
  message: string;
}

/** One line of a streamed exec: a chunk of output ({"stdout"} or {"stderr"}), then the result (an ExecResponse's fields without stdout/stderr) or {"error"}. */
export interface ExecEvent {
  stdout?: string;
  stderr?: string;
  error?: ErrorDetail;
  exit_code?: number;
  duration_ms?: number;
  signal?: string;
  oom_killed?: boolean;
  timed_out?: boolean;
  stdout_bytes?: number;
  stderr_bytes?: number;
  stdout_truncated?: boolean;
  stderr_truncated?: boolean;
  pid?: number;
}

export interface ExecRequest {
  cmd: string[];
  env?: Record<string, string>;
  cwd?: string;
  user?: "root" | "user";
  timeout_ms?: number;
  stdin?: string;
  max_output_bytes?: number;
}

export interface ExecResponse {
  exit_code: number;
  stdout: string;
  stderr: string;
  duration_ms: number;
  signal?: string;
  oom_killed?: boolean;
  timed_out?: boolean;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_truncated?: boolean;
  stderr_truncated?: boolean;
  pid?: number;
}

export interface ExtractResult {
  path: string;
  files: number;
  dirs: number;
  symlinks: number;
  hardlinks: number;
  bytes: number;
  stripped_setid: number;
}

export interface FileEvent {
  type: "ready" | "create" | "write" | "remove" | "rename" | "overflow" | "error";
  path?: string;
  old_path?: string;
  entry?: "file" | "dir" | "symlink" | "other";
  error?: string;
}

export interface FileInfo {
  name: string;
  path: string;
  type: "file" | "dir" | "symlink" | "other";
  size: number;
  /** octal, e.g. 0644 */
  mode: string;
  mtime: string;
  /** symlink target */
  target?: string;
  uid: number;
  gid: number;
}

export interface FindResult {
  matches: FileInfo[];
  truncated: boolean;
}

export interface Health {
  ok: boolean;
  version: string;
}

/** For HTTPS requests the sandbox sends to host, the egress proxy sets header to value, whose {secret:NAME} placeholders are the tenant's secrets. The host must be allowed by the policy; the secrets must exist. */
export interface InjectRule {
  /** exact host name, e.g. api.github.com */
  host: string;
  /** header name, e.g. Authorization (not Host, Content-Length, Transfer-Encoding, Connection, Upgrade, Proxy-*...) */
  header: string;
  /** template, e.g. "Bearer {secret:GITHUB_TOKEN}" (1 to 8 placeholders) */
  value: string;
}

export interface ListResult {
  path: string;
  entries: FileInfo[];
  truncated: boolean;
}

export interface MkdirRequest {
  path: string;
  /** create parents; no error if it exists */
  parents?: boolean;
  /** octal, default 0755 */
  mode?: string;
  /** root (default) or user */
  user?: "root" | "user";
}

export interface MoveRequest {
  from: string;
  to: string;
  overwrite?: boolean;
  parents?: boolean;
  /** root (default) or user */
  user?: "root" | "user";
}

/** Egress policy. none: loopback only (the default). allowlist: the names in allow (and the addresses in allow_cidr). open: any public destination. Private, loopback, link-local and metadata addresses and the host itself are refused in every mode unless the server's admin allowed a CIDR. */
export interface Network {
  mode?: "none" | "allowlist" | "open";
  /** host names ("api.example.com") or wildcards over a registrable domain ("*.example.com": names below it), each with an optional ":port" */
  allow?: string[];
  /** IP destinations allowlist mode may reach as such (IP literals), e.g. 203.0.113.0/24 */
  allow_cidr?: string[];
  /** secrets the egress proxy adds to HTTPS requests for named hosts (docs/network.md, Secrets); the sandbox never sees them */
  inject?: InjectRule[];
}

export interface OK {
  ok: true;
}

export interface OutputLine {
  stream?: "stdout" | "stderr" | "pty";
  offset?: number;
  dropped?: number;
  data?: string;
  data_b64?: string;
  process?: ProcessInfo;
  error?: ErrorDetail;
}

export interface PTYSize {
  rows: number;
  cols: number;
}

export interface PortURL {
  sandbox: string;
  port: number;
  url: string;
  /** the URL's token (pdt_...), also usable as a bearer token for this port only */
  token: string;
  expires_at: string;
}

export interface PortURLRequest {
  ttl_s?: number;
}

export interface ProcessInfo {
  id: string;
  pid: number;
  tag?: string;
  cmd: string[];
  env?: Record<string, string>;
  cwd: string;
  user: string;
  pty?: PTYSize;
  stdin: boolean;
  state: "running" | "exited";
  exit_code?: number;
  signal?: string;
  oom_killed?: boolean;
  started_at: string;
  ended_at?: string;
  streams: Record<string, { written: number; dropped: number; buffer_bytes: number }>;
}

export interface ProcessList {
  processes: ProcessInfo[];
}

export interface ProcessRequest {
  /** argv, run directly; may be empty with pty (the login shell) */
  cmd?: string[];
  env?: Record<string, string>;
  cwd?: string;
  user?: "root" | "user";
  /** unique among running processes; no control characters or '/' */
  tag?: string;
  pty?: PTYSize;
  /** keep stdin open for writing (otherwise /dev/null) */
  stdin?: boolean;
  /** output kept per stream */
  buffer_bytes?: number;
}

export interface RemoveResult {
  removed: number;
}

export interface Sandbox {
  id: string;
  tenant: string;
  state: "running" | "failed";
  spec: Spec;
  created_at: string;
  expires_at: string;
  reason?: string;
  from_pool?: boolean;
}

export interface SandboxList {
  sandboxes: Sandbox[];
}

export interface SandboxToken {
  /** pdt_...; use as a bearer token */
  token: string;
  /** tok_..., recorded in the audit log */
  id: string;
  sandbox: string;
  scopes: string[];
  expires_at: string;
}

export interface SandboxTokenRequest {
  scopes: ("read" | "write" | "exec")[];
  ttl_s?: number;
}

export interface SearchResult {
  matches: { path?: string; line?: number; text?: string; truncated?: boolean }[];
  truncated: boolean;
  files_scanned: number;
  files_skipped: number;
}

export interface SecretInfo {
  name: string;
  created_at: string;
  updated_at: string;
}

export interface SecretList {
  secrets: SecretInfo[];
}

export interface SecretValue {
  /** The value: text without control characters other than tab (it is sent in HTTP headers) */
  value: string;
}

export interface SignalRequest {
  /** name (SIGTERM, TERM, RTMIN+1) or number */
  signal?: string;
  /** to every process of the process's tree */
  tree?: boolean;
}

export interface SignalResult {
  /** processes signalled */
  signalled: number;
}

export interface Spec {
  template?: string;
  cpu?: number;
  memory_mb?: number;
  disk_mb?: number;
  pids?: number;
  timeout_s?: number;
  labels?: Record<string, string>;
  env?: Record<string, string>;
  network?: Network;
  /** Start a headless Chromium in the sandbox at create (docs/browser.md); unset limits default to a browser's needs (1024 MiB, 1024 pids) */
  browser?: boolean;
}

export interface Stats {
  memory_bytes: number;
  memory_peak_bytes: number;
  oom_kills: number;
  pids: number;
  cpu_usage_ns: number;
  cpu_throttled_ns: number;
  disk_bytes: number;
  disk_inodes: number;
}

export interface StdinResult {
  /** bytes written */
  bytes: number;
}

export interface Template {
  name: string;
  description: string;
  created_at: string;
  size_bytes: number;
  ready: boolean;
}

export interface TemplateList {
  templates: Template[];
}

export interface Tenant {
  name: string;
  quotas: TenantQuotas;
  created_at: string;
  usage?: TenantUsage;
}

export interface TenantCreateRequest {
  name: string;
  quotas?: TenantQuotas;
}

export interface TenantList {
  tenants: Tenant[];
}

/** 0 or absent: no tenant limit (the server's limits still apply). */
export interface TenantQuotas {
  /** running at once (429) */
  max_sandboxes?: number;
  /** cores across running sandboxes (429) */
  max_total_cpu?: number;
  /** MiB across running sandboxes (429) */
  max_total_memory_mb?: number;
  /** create rate; 429 with Retry-After beyond it */
  create_per_minute?: number;
  /** token bucket size (default: create_per_minute, at least 1) */
  create_burst?: number;
  /** per sandbox (403) */
  max_cpu?: number;
  max_memory_mb?: number;
  max_disk_mb?: number;
  max_pids?: number;
  max_timeout_s?: number;
  /** allowed modes (none always is); empty: any */
  network_modes?: ("none" | "allowlist" | "open")[];
  /** example.com or *.example.com; when set, every allow entry must be covered and mode open is refused */
  allowed_domains?: string[];
  deny_secrets?: boolean;
  deny_exposed_ports?: boolean;
  /** fill what a spec leaves unset, before the server's defaults */
  defaults?: { template?: string; cpu?: number; memory_mb?: number; disk_mb?: number; pids?: number; timeout_s?: number };
}

export interface TenantUpdateRequest {
  quotas?: TenantQuotas;
}

/** what the tenant's running sandboxes hold now */
export interface TenantUsage {
  sandboxes: number;
  cpu: number;
  memory_mb: number;
}

export interface TimeoutRequest {
  /** seconds from now */
  timeout_s: number;
}

export interface WaitRequest {
  timeout_ms?: number;
}

/** Every error code the server answers with (docs/api.md). */
export const ERROR_CODES = ["invalid_argument", "command_not_found", "unauthenticated", "forbidden", "not_found", "method_not_allowed", "conflict", "sandbox_not_running", "too_large", "limit_exceeded", "rate_limited", "unsupported", "unavailable", "timeout", "internal"] as const;

/** Every operation of the API, by operationId: method and path. */
export const OPERATIONS = {
  createKey: ["POST", "/v1/keys"],
  createSandbox: ["POST", "/v1/sandboxes"],
  createSandboxBrowserTab: ["POST", "/v1/sandboxes/{id}/browser/tabs"],
  createSandboxProcess: ["POST", "/v1/sandboxes/{id}/processes"],
  createSandboxToken: ["POST", "/v1/sandboxes/{id}/tokens"],
  createTenant: ["POST", "/v1/tenants"],
  deleteKey: ["DELETE", "/v1/keys/{id}"],
  deleteSandbox: ["DELETE", "/v1/sandboxes/{id}"],
  deleteSandboxBrowserTab: ["DELETE", "/v1/sandboxes/{id}/browser/tabs/{tab}"],
  deleteSandboxFiles: ["DELETE", "/v1/sandboxes/{id}/files"],
  deleteSandboxProcess: ["DELETE", "/v1/sandboxes/{id}/processes/{pid}"],
  deleteSecret: ["DELETE", "/v1/secrets/{name}"],
  getAudit: ["GET", "/v1/audit"],
  getAuditExport: ["GET", "/v1/audit/export"],
  getHealthz: ["GET", "/healthz"],
  getMetrics: ["GET", "/metrics"],
  getOpenapiJson: ["GET", "/openapi.json"],
  getSandbox: ["GET", "/v1/sandboxes/{id}"],
  getSandboxBrowser: ["GET", "/v1/sandboxes/{id}/browser"],
  getSandboxBrowserCdp: ["GET", "/v1/sandboxes/{id}/browser/cdp"],
  getSandboxBrowserCdpPage: ["GET", "/v1/sandboxes/{id}/browser/cdp/page/{target}"],
  getSandboxBrowserDownloads: ["GET", "/v1/sandboxes/{id}/browser/downloads"],
  getSandboxBrowserJsonList: ["GET", "/v1/sandboxes/{id}/browser/json/list"],
  getSandboxBrowserJsonListSlash: ["GET", "/v1/sandboxes/{id}/browser/json/list/"],
  getSandboxBrowserJsonVersion: ["GET", "/v1/sandboxes/{id}/browser/json/version"],
  getSandboxBrowserJsonVersionSlash: ["GET", "/v1/sandboxes/{id}/browser/json/version/"],
  getSandboxBrowserScreenshot: ["GET", "/v1/sandboxes/{id}/browser/screenshot"],
  getSandboxBrowserSnapshot: ["GET", "/v1/sandboxes/{id}/browser/snapshot"],
  getSandboxBrowserText: ["GET", "/v1/sandboxes/{id}/browser/text"],
  getSandboxBrowserView: ["GET", "/v1/sandboxes/{id}/browser/view"],
  getSandboxBrowserViewWs: ["GET", "/v1/sandboxes/{id}/browser/view/ws"],
  getSandboxExecWs: ["GET", "/v1/sandboxes/{id}/exec/ws"],
  getSandboxFiles: ["GET", "/v1/sandboxes/{id}/files"],
  getSandboxFilesArchive: ["GET", "/v1/sandboxes/{id}/files/archive"],
  getSandboxFilesFind: ["GET", "/v1/sandboxes/{id}/files/find"],
  getSandboxFilesList: ["GET", "/v1/sandboxes/{id}/files/list"],
  getSandboxFilesSearch: ["GET", "/v1/sandboxes/{id}/files/search"],
  getSandboxFilesStat: ["GET", "/v1/sandboxes/{id}/files/stat"],
  getSandboxFilesWatch: ["GET", "/v1/sandboxes/{id}/files/watch"],
  getSandboxNetwork: ["GET", "/v1/sandboxes/{id}/network"],
  getSandboxProcess: ["GET", "/v1/sandboxes/{id}/processes/{pid}"],
  getSandboxProcessOutput: ["GET", "/v1/sandboxes/{id}/processes/{pid}/output"],
  getSandboxPty: ["GET", "/v1/sandboxes/{id}/pty"],
  getSandboxStats: ["GET", "/v1/sandboxes/{id}/stats"],
  getSecret: ["GET", "/v1/secrets/{name}"],
  getTenant: ["GET", "/v1/tenants/{name}"],
  listKeys: ["GET", "/v1/keys"],
  listSandboxBrowserTabs: ["GET", "/v1/sandboxes/{id}/browser/tabs"],
  listSandboxProcesses: ["GET", "/v1/sandboxes/{id}/processes"],
  listSandboxes: ["GET", "/v1/sandboxes"],
  listSecrets: ["GET", "/v1/secrets"],
  listTemplates: ["GET", "/v1/templates"],
  listTenants: ["GET", "/v1/tenants"],
  postSandboxBrowserClick: ["POST", "/v1/sandboxes/{id}/browser/click"],
  postSandboxBrowserEval: ["POST", "/v1/sandboxes/{id}/browser/eval"],
  postSandboxBrowserNavigate: ["POST", "/v1/sandboxes/{id}/browser/navigate"],
  postSandboxBrowserPress: ["POST", "/v1/sandboxes/{id}/browser/press"],
  postSandboxBrowserScroll: ["POST", "/v1/sandboxes/{id}/browser/scroll"],
  postSandboxBrowserStart: ["POST", "/v1/sandboxes/{id}/browser/start"],
  postSandboxBrowserStop: ["POST", "/v1/sandboxes/{id}/browser/stop"],
  postSandboxBrowserTabActivate: ["POST", "/v1/sandboxes/{id}/browser/tabs/{tab}/activate"],
  postSandboxBrowserType: ["POST", "/v1/sandboxes/{id}/browser/type"],
  postSandboxExec: ["POST", "/v1/sandboxes/{id}/exec"],
  postSandboxFilesArchive: ["POST", "/v1/sandboxes/{id}/files/archive"],
  postSandboxFilesEdit: ["POST", "/v1/sandboxes/{id}/files/edit"],
  postSandboxFilesMkdir: ["POST", "/v1/sandboxes/{id}/files/mkdir"],
  postSandboxFilesMove: ["POST", "/v1/sandboxes/{id}/files/move"],
  postSandboxPortUrl: ["POST", "/v1/sandboxes/{id}/ports/{port}/url"],
  postSandboxProcessCloseStdin: ["POST", "/v1/sandboxes/{id}/processes/{pid}/close-stdin"],
  postSandboxProcessResize: ["POST", "/v1/sandboxes/{id}/processes/{pid}/resize"],
  postSandboxProcessSignal: ["POST", "/v1/sandboxes/{id}/processes/{pid}/signal"],
  postSandboxProcessStdin: ["POST", "/v1/sandboxes/{id}/processes/{pid}/stdin"],
  postSandboxProcessWait: ["POST", "/v1/sandboxes/{id}/processes/{pid}/wait"],
  postSandboxTimeout: ["POST", "/v1/sandboxes/{id}/timeout"],
  proxyDeleteSandboxPort: ["DELETE", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyGetSandboxPort: ["GET", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyHeadSandboxPort: ["HEAD", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyOptionsSandboxPort: ["OPTIONS", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyPatchSandboxPort: ["PATCH", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyPostSandboxPort: ["POST", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyPutSandboxPort: ["PUT", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  putSandboxFiles: ["PUT", "/v1/sandboxes/{id}/files"],
  putSandboxNetwork: ["PUT", "/v1/sandboxes/{id}/network"],
  putSecret: ["PUT", "/v1/secrets/{name}"],
  putTenant: ["PUT", "/v1/tenants/{name}"],
} as const;
