// Paddock's wire models, generated from the OpenAPI document by
// sdk/codegen/generate.py. Do not edit: run `make sdk-models`.

export interface APIKey {
  created_at: string;
  description?: string;
  expires_at?: string;
  format: string;
  /** the key's first 8 characters */
  hint: string;
  /** public id, key_... */
  id: string;
  /** to the minute */
  last_used_at?: string;
  name?: string;
  revoked: boolean;
  revoked_at?: string;
  scopes: ("read" | "write" | "exec" | "admin")[];
  tenant: string;
}

/** A new key, with the key itself (shown once). */
export interface APIKeyCreated {
  created_at: string;
  description?: string;
  expires_at?: string;
  format: string;
  /** the key's first 8 characters */
  hint: string;
  /** public id, key_... */
  id: string;
  /** the key; shown once */
  key: string;
  /** to the minute */
  last_used_at?: string;
  name?: string;
  revoked: boolean;
  revoked_at?: string;
  scopes: ("read" | "write" | "exec" | "admin")[];
  tenant: string;
}

export interface APIKeyList {
  keys: APIKey[];
}

export interface APIKeyRequest {
  description?: string;
  expires_at?: string;
  /** instead of expires_at */
  expires_in_s?: number;
  /** paddock: pdk_ + 32 base32; e2b: e2b_ + 40 hex (for E2B SDKs) */
  format?: "paddock" | "e2b";
  name?: string;
  scopes: ("read" | "write" | "exec" | "admin")[];
  tenant: string;
}

export interface AuditPage {
  /** another matching record follows */
  has_more: boolean;
  /** pass as `cursor` to continue (the last seq examined) */
  next_cursor: number;
  records: AuditRecord[];
}

/** One audit record. `hash` is SHA-256 (hex) of the record's canonical JSON without `hash`; `prev` is the hash of the record before (zeros for the first). */
export interface AuditRecord {
  /** http, exec, sandbox.create, sandbox.delete, sandbox.expire, sandbox.fail, file.*, process.*, audit.* */
  action: string;
  /** key id */
  actor?: string;
  /** what was asked (secrets redacted) */
  args?: Record<string, unknown>;
  /** error code */
  code?: string;
  duration_ns?: number;
  error?: string;
  hash: string;
  phase: "intent" | "result" | "event";
  prev: string;
  /** the API request id (X-Request-Id) */
  request?: string;
  /** how it ended */
  result?: Record<string, unknown>;
  sandbox?: string;
  /** 1, 2, 3, ... with no gaps */
  seq: number;
  /** HTTP status, for http records */
  status?: number;
  tenant?: string;
  /** UTC, nanoseconds, fixed width */
  time: string;
}

export interface BrowserClick {
  button?: "left" | "right" | "middle";
  /** 1..3 */
  click_count?: number;
  /** a reference from the snapshot, e.g. e12 */
  ref?: string;
  /** CSS selector, or text=Visible text, or ref=e12 (give one of selector, text and ref) */
  selector?: string;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** visible text of the element */
  text?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface BrowserDownload {
  bytes: number;
  filename: string;
  path?: string;
  /** inProgress, completed or canceled */
  state: string;
  total_bytes?: number;
  url: string;
}

export interface BrowserDownloads {
  dir: string;
  downloads: BrowserDownload[];
}

export interface BrowserEval {
  tab: string;
  truncated?: boolean;
  /** JavaScript type of the value */
  type: string;
  /** the value as JSON */
  value: unknown;
}

export interface BrowserEvalRequest {
  expression: string;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface BrowserNavigate {
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
  url: string;
  wait_until?: "load" | "domcontentloaded" | "none";
}

export interface BrowserOpenTab {
  timeout_ms?: number;
  /** default about:blank */
  url?: string;
}

export interface BrowserPage {
  downloads?: BrowserDownload[];
  duration_ms: number;
  new_tabs?: BrowserTab[];
  /** HTTP status of the document a navigation loaded */
  status?: number;
  tab: string;
  title: string;
  url: string;
}

export interface BrowserPress {
  /** Enter, Tab, Escape, ArrowDown, a, Control+A... */
  key: string;
  /** a reference from the snapshot, e.g. e12 */
  ref?: string;
  /** CSS selector, or text=Visible text, or ref=e12 (give one of selector, text and ref) */
  selector?: string;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** visible text of the element */
  text?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface BrowserScroll {
  at_end: boolean;
  downloads?: BrowserDownload[];
  duration_ms: number;
  max_x: number;
  max_y: number;
  new_tabs?: BrowserTab[];
  scrolled_x: number;
  scrolled_y: number;
  /** HTTP status of the document a navigation loaded */
  status?: number;
  tab: string;
  title: string;
  url: string;
  x: number;
  y: number;
}

export interface BrowserScrollRequest {
  /** pixels */
  amount?: number;
  direction?: "down" | "up" | "left" | "right";
  /** a reference from the snapshot, e.g. e12 */
  ref?: string;
  /** CSS selector, or text=Visible text, or ref=e12 (give one of selector, text and ref) */
  selector?: string;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** visible text of the element */
  text?: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface BrowserSnapshot {
  refs: number;
  snapshot: string;
  tab: string;
  title: string;
  truncated?: boolean;
  url: string;
}

export interface BrowserStatus {
  connected: boolean;
  error?: string;
  last_exit?: string;
  oom_kills?: number;
  pid?: number;
  restarts: number;
  start_ms?: number;
  started_at?: string;
  state: "stopped" | "starting" | "running" | "failed";
  tabs?: BrowserTab[];
}

export interface BrowserTab {
  current?: boolean;
  id: string;
  title: string;
  url: string;
}

export interface BrowserTabs {
  tabs: BrowserTab[];
}

export interface BrowserText {
  bytes: number;
  format: string;
  tab: string;
  text: string;
  title: string;
  truncated?: boolean;
  url: string;
}

export interface BrowserType {
  clear?: boolean;
  /** a reference from the snapshot, e.g. e12 */
  ref?: string;
  /** CSS selector, or text=Visible text, or ref=e12 (give one of selector, text and ref) */
  selector?: string;
  submit?: boolean;
  /** tab id or index (default: the current tab) */
  tab?: string;
  /** what to type */
  text: string;
  /** bound of the action, the wait for the element included (default 15000; navigation 30000; at most 300000) */
  timeout_ms?: number;
}

export interface CodeContext {
  created_at?: string;
  cwd?: string;
  default?: boolean;
  execution_count?: number;
  id?: string;
  language?: string;
  queued?: number;
  restarts?: number;
  state?: "starting" | "idle" | "busy" | "dead";
  user?: string;
}

export interface CodeContextList {
  contexts?: CodeContext[];
}

export interface CodeContextRequest {
  cwd?: string;
  env?: Record<string, string>;
  /** python (default; py, python3), javascript (js, node), typescript (ts) or bash (sh, shell) */
  language?: string;
  /** The sandbox user the interpreter runs as; default root, as for exec */
  user?: "root" | "user";
}

export interface CodeEnd {
  duration_ms?: number;
  execution_count?: number;
  exit_code?: number;
  message?: string;
  state_lost?: boolean;
  status?: "ok" | "error" | "timeout" | "cancelled" | "died";
  truncated?: boolean;
}

export interface CodeError {
  name?: string;
  traceback?: string;
  value?: string;
}

export interface CodeEvent {
  end?: CodeEnd;
  error?: CodeError;
  result?: CodeResult;
  start?: CodeStart;
  text?: string;
  type: "start" | "stdout" | "stderr" | "result" | "error" | "end";
}

export interface CodeExecuteRequest {
  /** At most 1 MiB */
  code: string;
  context_id?: string;
  env?: Record<string, string>;
  /** python (default; py, python3), javascript (js, node), typescript (ts) or bash (sh, shell) */
  language?: string;
  /** Run time (not queue wait) before the cell is interrupted; default 10 minutes, at most 24 hours or the server's exec ceiling */
  timeout_ms?: number;
  /** The sandbox user the interpreter runs as; default root, as for exec */
  user?: "root" | "user";
}

export interface CodeExecution {
  end?: CodeEnd;
  error?: CodeError;
  results?: CodeResult[];
  start?: CodeStart;
  stderr?: string;
  stdout?: string;
}

export interface CodeOmission {
  bytes?: number;
  mime?: string;
  reason?: string;
}

export interface CodeResult {
  /** MIME type to representation: text, base64 for images and PDF, JSON for application/json */
  bundle?: Record<string, unknown>;
  /** A matplotlib figure's data, in E2B's chart shape */
  chart?: Record<string, unknown>;
  /** A DataFrame's columns: name to values */
  data?: Record<string, unknown>;
  execution_count?: number;
  is_main_result?: boolean;
  omitted?: CodeOmission[];
}

export interface CodeStart {
  context_id?: string;
  language?: string;
  reason?: string;
  restarted?: boolean;
  state_lost?: boolean;
}

export interface CreateSnapshotRequest {
  /** gVisor only: also checkpoint the sandbox's processes and memory (the sandbox keeps running); a create from the snapshot continues them. Counted against max_snapshot_mb. Native: 501 unsupported. */
  memory?: boolean;
  /** Letters, digits, '.', '_' and '-'; no ".." */
  name: string;
}

export interface CreateVolumeRequest {
  /** Letters, digits, '.', '_', '-'; first a letter or digit; at most 63; no '..' */
  name: string;
  /** 16 … the server's ceiling (default 65536); 0: 1024 */
  size_mb?: number;
}

export interface EditRequest {
  content?: string;
  /** inclusive; start_line-1 inserts */
  end_line?: number;
  new_string?: string;
  old_string?: string;
  path: string;
  replace_all?: boolean;
  /** from 1 */
  start_line?: number;
  /** root (default) or user */
  user?: "root" | "user";
}

export interface EditResult {
  file: FileInfo;
  replacements: number;
}

/** Every error answer. 429 answers of rate quotas carry Retry-After (seconds). */
export interface Error {
  error: ErrorDetail;
}

export interface ErrorDetail {
  /** stable, machine-readable (docs/api.md) */
  code: "invalid_argument" | "command_not_found" | "unauthenticated" | "forbidden" | "not_found" | "method_not_allowed" | "conflict" | "sandbox_not_running" | "sandbox_paused" | "too_large" | "limit_exceeded" | "rate_limited" | "unsupported" | "unavailable" | "timeout" | "internal";
  /** for people; never a host path or a trace */
  message: string;
}

/** One line of a streamed exec: a chunk of output ({"stdout"} or {"stderr"}), then the result (an ExecResponse's fields without stdout/stderr) or {"error"}. */
export interface ExecEvent {
  duration_ms?: number;
  error?: ErrorDetail;
  exit_code?: number;
  oom_killed?: boolean;
  pid?: number;
  signal?: string;
  stderr?: string;
  stderr_bytes?: number;
  stderr_truncated?: boolean;
  stdout?: string;
  stdout_bytes?: number;
  stdout_truncated?: boolean;
  timed_out?: boolean;
}

export interface ExecRequest {
  cmd: string[];
  cwd?: string;
  env?: Record<string, string>;
  max_output_bytes?: number;
  stdin?: string;
  timeout_ms?: number;
  user?: "root" | "user";
}

export interface ExecResponse {
  duration_ms: number;
  exit_code: number;
  oom_killed?: boolean;
  pid?: number;
  signal?: string;
  stderr: string;
  stderr_bytes: number;
  stderr_truncated?: boolean;
  stdout: string;
  stdout_bytes: number;
  stdout_truncated?: boolean;
  timed_out?: boolean;
}

export interface ExtractResult {
  bytes: number;
  dirs: number;
  files: number;
  hardlinks: number;
  path: string;
  stripped_setid: number;
  symlinks: number;
}

export interface FileEvent {
  entry?: "file" | "dir" | "symlink" | "other";
  error?: string;
  old_path?: string;
  path?: string;
  type: "ready" | "create" | "write" | "remove" | "rename" | "overflow" | "error";
}

export interface FileInfo {
  gid: number;
  /** octal, e.g. 0644 */
  mode: string;
  mtime: string;
  name: string;
  path: string;
  size: number;
  /** symlink target */
  target?: string;
  type: "file" | "dir" | "symlink" | "other";
  uid: number;
}

export interface FindResult {
  matches: FileInfo[];
  truncated: boolean;
}

export interface ForkRequest {
  /** 0 means 1 */
  count?: number;
  /** gVisor only: each fork continues the source's running processes, memory included, from one checkpoint (the source keeps running). Native: 501 unsupported. */
  memory?: boolean;
}

export interface ForkResponse {
  sandboxes: Sandbox[];
}

export interface Health {
  ok: boolean;
  /** The runtimes this server knows, available or not */
  runtimes?: RuntimeInfo[];
  version: string;
}

/** For HTTPS requests the sandbox sends to host, the egress proxy sets header to value, whose {secret:NAME} placeholders are the tenant's secrets. The host must be allowed by the policy; the secrets must exist. */
export interface InjectRule {
  /** header name, e.g. Authorization (not Host, Content-Length, Transfer-Encoding, Connection, Upgrade, Proxy-*...) */
  header: string;
  /** exact host name, e.g. api.github.com */
  host: string;
  /** template, e.g. "Bearer {secret:GITHUB_TOKEN}" (at most 8 placeholders; none: a fixed header) */
  value: string;
}

export interface LinesResult {
  /** a NUL in the range: no content */
  binary?: boolean;
  /** the lines, as in the file (invalid UTF-8 replaced, cut lines marked) */
  content: string;
  /** last line in content (start - 1 if none) */
  end: number;
  /** lines follow end */
  more?: boolean;
  path: string;
  /** the file's size in bytes */
  size: number;
  start: number;
  /** lines in the file; absent when too far past the range to count */
  total?: number;
  /** max_bytes or a line cut shortened content */
  truncated?: boolean;
}

export interface ListResult {
  entries: FileInfo[];
  path: string;
  truncated: boolean;
}

export interface MkdirRequest {
  /** octal, default 0755 */
  mode?: string;
  /** with user root: give the directories made to this user (as E2B's envd does) */
  owner?: "root" | "user";
  /** create parents; no error if it exists */
  parents?: boolean;
  path: string;
  /** root (default) or user */
  user?: "root" | "user";
}

export interface MoveRequest {
  from: string;
  overwrite?: boolean;
  parents?: boolean;
  to: string;
  /** root (default) or user */
  user?: "root" | "user";
}

/** Egress policy. none: loopback only (the default). allowlist: the names in allow (and the addresses in allow_cidr). open: any public destination. Private, loopback, link-local and metadata addresses and the host itself are refused in every mode unless the server's admin allowed a CIDR. */
export interface Network {
  /** host names ("api.example.com") or wildcards over a registrable domain ("*.example.com": names below it), each with an optional ":port" */
  allow?: string[];
  /** IP destinations allowlist mode may reach as such (IP literals), e.g. 203.0.113.0/24; in open mode with deny_cidr, exceptions to it */
  allow_cidr?: string[];
  /** open mode only: address ranges (IPs or CIDRs) refused although open; allow and allow_cidr are then exceptions to them (an allowed entry wins over a denied one) */
  deny_cidr?: string[];
  /** secrets the egress proxy adds to HTTPS requests for named hosts (docs/network.md, Secrets); the sandbox never sees them */
  inject?: InjectRule[];
  mode?: "none" | "allowlist" | "open";
}

export interface OK {
  ok: true;
}

export interface OutputLine {
  data?: string;
  data_b64?: string;
  dropped?: number;
  error?: ErrorDetail;
  offset?: number;
  process?: ProcessInfo;
  stream?: "stdout" | "stderr" | "pty";
}

export interface PTYSize {
  cols: number;
  rows: number;
}

export interface PortURL {
  expires_at: string;
  port: number;
  sandbox: string;
  /** the URL's token (pdt_...), also usable as a bearer token for this port only */
  token: string;
  url: string;
}

export interface PortURLRequest {
  ttl_s?: number;
}

export interface ProcessInfo {
  cmd: string[];
  cwd: string;
  ended_at?: string;
  env?: Record<string, string>;
  exit_code?: number;
  id: string;
  oom_killed?: boolean;
  pid: number;
  pty?: PTYSize;
  signal?: string;
  started_at: string;
  state: "running" | "exited";
  stdin: boolean;
  streams: Record<string, StreamInfo>;
  tag?: string;
  user: string;
}

export interface ProcessList {
  processes: ProcessInfo[];
}

export interface ProcessRequest {
  /** output kept per stream */
  buffer_bytes?: number;
  /** argv, run directly; may be empty with pty (the login shell) */
  cmd?: string[];
  cwd?: string;
  env?: Record<string, string>;
  pty?: PTYSize;
  /** keep stdin open for writing (otherwise /dev/null) */
  stdin?: boolean;
  /** unique among running processes; no control characters or '/' */
  tag?: string;
  /** deadline from the start (0: none): the sandbox kills the process's whole tree when it passes */
  timeout_ms?: number;
  user?: "root" | "user";
}

export interface RemoveResult {
  removed: number;
}

export interface RuntimeInfo {
  available: boolean;
  name: string;
  /** Why the runtime is not available, and how to fix it */
  reason?: string;
  /** runsc's version, for gvisor */
  version?: string;
}

export interface Sandbox {
  created_at: string;
  expires_at: string;
  /** The live sandboxes forked from this one (GET of one sandbox). */
  forks?: string[];
  from_pool?: boolean;
  id: string;
  /** When a paused sandbox was paused; while paused, expires_at is when it is destroyed unless resumed (paused_timeout_s). */
  paused_at?: string;
  reason?: string;
  /** While paused: the life the sandbox gets back when it resumes. */
  remaining_ms?: number;
  spec: Spec;
  state: "running" | "paused" | "hibernated" | "failed";
  tenant: string;
}

export interface SandboxList {
  sandboxes: Sandbox[];
}

export interface SandboxToken {
  expires_at: string;
  /** tok_..., recorded in the audit log */
  id: string;
  sandbox: string;
  scopes: string[];
  /** pdt_...; use as a bearer token */
  token: string;
}

export interface SandboxTokenRequest {
  scopes: ("read" | "write" | "exec")[];
  ttl_s?: number;
}

export interface SearchMatch {
  line: number;
  path: string;
  text: string;
  truncated?: boolean;
}

export interface SearchResult {
  files_scanned: number;
  files_skipped: number;
  matches: SearchMatch[];
  truncated: boolean;
}

export interface SecretInfo {
  created_at: string;
  /** The hosts the secret may be sent to (exact names, optionally :port for a port other than 443). Empty: it is sent nowhere until bound; a network.inject rule for any other host is refused. */
  hosts: string[];
  name: string;
  updated_at: string;
}

export interface SecretList {
  secrets: SecretInfo[];
}

/** Set a secret's value, its hosts, or both (at least one). */
export interface SecretValue {
  /** Replace the hosts the secret may be sent to (exact names, optionally :port). Without them a replaced secret keeps its hosts and a new one is sent nowhere until bound; with hosts and no value, only the binding changes. */
  hosts?: string[];
  /** The value: text without control characters other than tab (it is sent in HTTP headers) */
  value?: string;
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

export interface Snapshot {
  /** Its files' contents */
  bytes: number;
  created_at: string;
  /** Entries: files, directories, links */
  files: number;
  /** It holds a checkpoint of the sandbox's processes (a create from it continues them; gVisor). */
  memory?: boolean;
  /** Size of its memory image (counted in the snapshot quota with bytes). */
  memory_bytes?: number;
  name: string;
  /** The sandbox it was taken of */
  source: string;
  template: string;
}

export interface SnapshotList {
  snapshots: Snapshot[];
}

export interface Spec {
  /** Calls that need a paused sandbox (exec, files, processes, browser, ports) resume it first instead of answering 409 sandbox_paused. */
  auto_resume?: boolean;
  /** Start a headless Chromium in the sandbox at create (docs/browser.md); unset limits default to a browser's needs (1024 MiB, 1024 pids) */
  browser?: boolean;
  cpu?: number;
  disk_mb?: number;
  env?: Record<string, string>;
  /** The sandbox this one was forked from (set by the server; refused in a create request). */
  fork_of?: string;
  /** Pause it after this long without exec, file, process or port traffic (0: never). */
  idle_pause_after_s?: number;
  labels?: Record<string, string>;
  memory_mb?: number;
  network?: Network;
  /** What its timeout does (default kill); pause: it sleeps, and a resume gives it a whole timeout_s again; hibernate (gVisor only): the same, checkpointed to disk with its memory released. */
  on_timeout?: "kill" | "pause" | "hibernate";
  /** How long it may stay paused before it is destroyed (default 604800, 7 days). */
  paused_timeout_s?: number;
  pids?: number;
  /** Isolation: native (the default; Linux namespaces, seccomp, Landlock) or gvisor (gVisor's kernel; docs/gvisor.md). gvisor where this server cannot run it is refused with unsupported */
  runtime?: "native" | "gvisor";
  /** A snapshot (GET /v1/snapshots) the sandbox's files start from; its template is the snapshot's. */
  snapshot?: string;
  template?: string;
  timeout_s?: number;
  /** Volumes (GET /v1/volumes) mounted at create (at most 16). */
  volumes?: VolumeMount[];
}

export interface Stats {
  cpu_throttled_ns: number;
  cpu_usage_ns: number;
  disk_bytes: number;
  disk_inodes: number;
  memory_bytes: number;
  memory_peak_bytes: number;
  oom_kills: number;
  pids: number;
}

export interface StdinResult {
  /** bytes written */
  bytes: number;
}

export interface StreamInfo {
  buffer_bytes: number;
  /** bytes overwritten: the oldest offset kept */
  dropped: number;
  /** bytes written (the next offset) */
  written: number;
}

export interface Template {
  created_at: string;
  defaults?: TemplateDefaults;
  description: string;
  /** "image" for templates from OCI images and builds */
  kind?: string;
  layers?: number;
  name: string;
  ready: boolean;
  /** published by an admin for every tenant; otherwise the caller's tenant's own */
  shared: boolean;
  /** of size_bytes, in layers other templates or the build cache hold too */
  shared_bytes?: number;
  size_bytes: number;
  source?: TemplateSource;
}

/** The image's config as its sandboxes use it (docs/templates.md) */
export interface TemplateDefaults {
  cmd?: string[];
  entrypoint?: string[];
  env?: string[];
  exposed_ports?: string[];
  gid: number;
  labels?: Record<string, string>;
  ready_cmd?: string[];
  start_cmd?: string[];
  uid: number;
  user?: string;
  user_error?: string;
  working_dir?: string;
}

/** One NDJSON line of a pull, import or build; the last has template or error */
export interface TemplateEvent {
  cached?: boolean;
  error?: ErrorDetail;
  instruction?: string;
  message?: string;
  output?: string;
  stage?: string;
  step?: number;
  steps?: number;
  template?: Template;
}

export interface TemplateList {
  templates: Template[];
}

export interface TemplatePullRequest {
  name?: string;
  ready_cmd?: string[];
  /** [REGISTRY/]REPO[:TAG|@DIGEST] */
  ref: string;
  replace?: boolean;
  /** admin only */
  shared?: boolean;
  start_cmd?: string[];
}

export interface TemplatePushRequest {
  ref: string;
}

export interface TemplateSource {
  digest?: string;
  dockerfile_digest?: string;
  kind: "registry" | "docker-save" | "oci-layout" | "oci-archive" | "build";
  ref?: string;
}

export interface Tenant {
  created_at: string;
  name: string;
  quotas: TenantQuotas;
  usage?: TenantUsage;
}

export interface TenantCreateRequest {
  name: string;
  quotas?: TenantQuotas;
}

/** fill what a spec leaves unset, before the server's defaults */
export interface TenantDefaults {
  cpu?: number;
  disk_mb?: number;
  memory_mb?: number;
  pids?: number;
  runtime?: "native" | "gvisor";
  template?: string;
  timeout_s?: number;
}

export interface TenantList {
  tenants: Tenant[];
}

/** 0 or absent: no tenant limit (the server's limits still apply). */
export interface TenantQuotas {
  /** example.com or *.example.com; when set, every allow entry must be covered and mode open is refused */
  allowed_domains?: string[];
  /** token bucket size (default: create_per_minute, at least 1) */
  create_burst?: number;
  /** create rate; 429 with Retry-After beyond it */
  create_per_minute?: number;
  defaults?: TenantDefaults;
  deny_exposed_ports?: boolean;
  deny_secrets?: boolean;
  /** per sandbox (403) */
  max_cpu?: number;
  max_disk_mb?: number;
  /** The most sandboxes one fork call makes (at most 100, the server's bound); 0: 100. Each fork also counts against max_sandboxes. */
  max_forks?: number;
  max_memory_mb?: number;
  /** How many of the tenant's sandboxes may be paused at once; 0: no bound. A pause over it is 429 (an idle pause is skipped; on_timeout: pause destroys the sandbox as kill would). */
  max_paused?: number;
  max_pids?: number;
  /** running at once (429) */
  max_sandboxes?: number;
  /** The tenant's snapshots together, in MiB (each counted whole); 0: no bound. */
  max_snapshot_mb?: number;
  /** MiB the tenant's own templates' layers may take (0: unlimited) */
  max_template_mb?: number;
  /** the tenant's own templates, at most (0: unlimited) */
  max_templates?: number;
  max_timeout_s?: number;
  /** cores across running sandboxes (429) */
  max_total_cpu?: number;
  /** MiB across running sandboxes (429) */
  max_total_memory_mb?: number;
  /** The sizes of the tenant's volumes summed, in MiB; 0: no bound. */
  max_volume_mb?: number;
  /** allowed modes (none always is); empty: any */
  network_modes?: ("none" | "allowlist" | "open")[];
  /** runtimes the tenant's sandboxes may use; empty: any the server offers; ["gvisor"] requires gVisor */
  runtimes?: ("native" | "gvisor")[];
}

export interface TenantUpdateRequest {
  quotas?: TenantQuotas;
}

/** what the tenant's running sandboxes hold now */
export interface TenantUsage {
  cpu: number;
  memory_mb: number;
  sandboxes: number;
}

export interface TimeoutRequest {
  /** seconds from now */
  timeout_s: number;
}

export interface Volume {
  /** The sandboxes mounting it */
  attached: VolumeAttachment[];
  created_at: string;
  name: string;
  /** Its quota */
  size_mb: number;
  /** Bytes in use, ext4's own metadata included */
  used_bytes: number;
}

export interface VolumeAttachment {
  path: string;
  read_only?: boolean;
  sandbox: string;
}

export interface VolumeList {
  volumes: Volume[];
}

export interface VolumeMount {
  name: string;
  /** Absolute path in the sandbox; not /, /proc, /dev, /sys, /etc or the files the sandbox writes at start */
  path: string;
  /** Mount read-only (writes: EROFS). At most one sandbox mounts a volume read-write at a time. */
  read_only?: boolean;
}

export interface WaitRequest {
  timeout_ms?: number;
}

/** Every error code the server answers with (docs/api.md). */
export const ERROR_CODES = ["invalid_argument", "command_not_found", "unauthenticated", "forbidden", "not_found", "method_not_allowed", "conflict", "sandbox_not_running", "sandbox_paused", "too_large", "limit_exceeded", "rate_limited", "unsupported", "unavailable", "timeout", "internal"] as const;

/** Every operation of the API, by operationId: method and path. */
export const OPERATIONS = {
  buildTemplate: ["POST", "/v1/templates/build"],
  createKey: ["POST", "/v1/keys"],
  createSandbox: ["POST", "/v1/sandboxes"],
  createSandboxBrowserTab: ["POST", "/v1/sandboxes/{id}/browser/tabs"],
  createSandboxProcess: ["POST", "/v1/sandboxes/{id}/processes"],
  createSandboxToken: ["POST", "/v1/sandboxes/{id}/tokens"],
  createTenant: ["POST", "/v1/tenants"],
  createVolume: ["POST", "/v1/volumes"],
  deleteKey: ["DELETE", "/v1/keys/{id}"],
  deleteSandbox: ["DELETE", "/v1/sandboxes/{id}"],
  deleteSandboxBrowserTab: ["DELETE", "/v1/sandboxes/{id}/browser/tabs/{tab}"],
  deleteSandboxCodeContext: ["DELETE", "/v1/sandboxes/{id}/code/contexts/{ctx}"],
  deleteSandboxFiles: ["DELETE", "/v1/sandboxes/{id}/files"],
  deleteSandboxProcess: ["DELETE", "/v1/sandboxes/{id}/processes/{pid}"],
  deleteSecret: ["DELETE", "/v1/secrets/{name}"],
  deleteSnapshot: ["DELETE", "/v1/snapshots/{name}"],
  deleteTemplate: ["DELETE", "/v1/templates/{name}"],
  deleteVolume: ["DELETE", "/v1/volumes/{name}"],
  exportTemplate: ["GET", "/v1/templates/{name}/export"],
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
  getSandboxCodeContext: ["GET", "/v1/sandboxes/{id}/code/contexts/{ctx}"],
  getSandboxCodeContexts: ["GET", "/v1/sandboxes/{id}/code/contexts"],
  getSandboxExecWs: ["GET", "/v1/sandboxes/{id}/exec/ws"],
  getSandboxFiles: ["GET", "/v1/sandboxes/{id}/files"],
  getSandboxFilesArchive: ["GET", "/v1/sandboxes/{id}/files/archive"],
  getSandboxFilesFind: ["GET", "/v1/sandboxes/{id}/files/find"],
  getSandboxFilesLines: ["GET", "/v1/sandboxes/{id}/files/lines"],
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
  getSnapshot: ["GET", "/v1/snapshots/{name}"],
  getTemplate: ["GET", "/v1/templates/{name}"],
  getTenant: ["GET", "/v1/tenants/{name}"],
  getVolume: ["GET", "/v1/volumes/{name}"],
  importTemplate: ["POST", "/v1/templates/import"],
  listKeys: ["GET", "/v1/keys"],
  listSandboxBrowserTabs: ["GET", "/v1/sandboxes/{id}/browser/tabs"],
  listSandboxProcesses: ["GET", "/v1/sandboxes/{id}/processes"],
  listSandboxes: ["GET", "/v1/sandboxes"],
  listSecrets: ["GET", "/v1/secrets"],
  listSnapshots: ["GET", "/v1/snapshots"],
  listTemplates: ["GET", "/v1/templates"],
  listTenants: ["GET", "/v1/tenants"],
  listVolumeFiles: ["GET", "/v1/volumes/{name}/files/list"],
  listVolumes: ["GET", "/v1/volumes"],
  mkdirVolumeFile: ["POST", "/v1/volumes/{name}/files/mkdir"],
  postSandboxBrowserClick: ["POST", "/v1/sandboxes/{id}/browser/click"],
  postSandboxBrowserEval: ["POST", "/v1/sandboxes/{id}/browser/eval"],
  postSandboxBrowserNavigate: ["POST", "/v1/sandboxes/{id}/browser/navigate"],
  postSandboxBrowserPress: ["POST", "/v1/sandboxes/{id}/browser/press"],
  postSandboxBrowserScroll: ["POST", "/v1/sandboxes/{id}/browser/scroll"],
  postSandboxBrowserStart: ["POST", "/v1/sandboxes/{id}/browser/start"],
  postSandboxBrowserStop: ["POST", "/v1/sandboxes/{id}/browser/stop"],
  postSandboxBrowserTabActivate: ["POST", "/v1/sandboxes/{id}/browser/tabs/{tab}/activate"],
  postSandboxBrowserType: ["POST", "/v1/sandboxes/{id}/browser/type"],
  postSandboxCode: ["POST", "/v1/sandboxes/{id}/code"],
  postSandboxCodeContextRestart: ["POST", "/v1/sandboxes/{id}/code/contexts/{ctx}/restart"],
  postSandboxCodeContexts: ["POST", "/v1/sandboxes/{id}/code/contexts"],
  postSandboxExec: ["POST", "/v1/sandboxes/{id}/exec"],
  postSandboxFilesArchive: ["POST", "/v1/sandboxes/{id}/files/archive"],
  postSandboxFilesEdit: ["POST", "/v1/sandboxes/{id}/files/edit"],
  postSandboxFilesMkdir: ["POST", "/v1/sandboxes/{id}/files/mkdir"],
  postSandboxFilesMove: ["POST", "/v1/sandboxes/{id}/files/move"],
  postSandboxFork: ["POST", "/v1/sandboxes/{id}/fork"],
  postSandboxHibernate: ["POST", "/v1/sandboxes/{id}/hibernate"],
  postSandboxPause: ["POST", "/v1/sandboxes/{id}/pause"],
  postSandboxPortUrl: ["POST", "/v1/sandboxes/{id}/ports/{port}/url"],
  postSandboxProcessCloseStdin: ["POST", "/v1/sandboxes/{id}/processes/{pid}/close-stdin"],
  postSandboxProcessResize: ["POST", "/v1/sandboxes/{id}/processes/{pid}/resize"],
  postSandboxProcessSignal: ["POST", "/v1/sandboxes/{id}/processes/{pid}/signal"],
  postSandboxProcessStdin: ["POST", "/v1/sandboxes/{id}/processes/{pid}/stdin"],
  postSandboxProcessWait: ["POST", "/v1/sandboxes/{id}/processes/{pid}/wait"],
  postSandboxResume: ["POST", "/v1/sandboxes/{id}/resume"],
  postSandboxSnapshot: ["POST", "/v1/sandboxes/{id}/snapshots"],
  postSandboxTimeout: ["POST", "/v1/sandboxes/{id}/timeout"],
  proxyDeleteSandboxPort: ["DELETE", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyGetSandboxPort: ["GET", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyHeadSandboxPort: ["HEAD", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyOptionsSandboxPort: ["OPTIONS", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyPatchSandboxPort: ["PATCH", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyPostSandboxPort: ["POST", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  proxyPutSandboxPort: ["PUT", "/v1/sandboxes/{id}/ports/{port}/{path...}"],
  pullTemplate: ["POST", "/v1/templates/pull"],
  pushTemplate: ["POST", "/v1/templates/{name}/push"],
  putSandboxFiles: ["PUT", "/v1/sandboxes/{id}/files"],
  putSandboxNetwork: ["PUT", "/v1/sandboxes/{id}/network"],
  putSecret: ["PUT", "/v1/secrets/{name}"],
  putTenant: ["PUT", "/v1/tenants/{name}"],
  readVolumeFile: ["GET", "/v1/volumes/{name}/files"],
  removeVolumeFile: ["DELETE", "/v1/volumes/{name}/files"],
  statVolumeFile: ["GET", "/v1/volumes/{name}/files/stat"],
  writeVolumeFile: ["PUT", "/v1/volumes/{name}/files"],
} as const;
