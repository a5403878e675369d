// The page's only way to the server: /ui/api/v1/... with the session
// cookie (sent by the browser, HttpOnly: never readable here) and the
// session's CSRF token. The API key itself is never in the page after
// sign-in.

export interface Session {
  key_id: string;
  tenant: string;
  scopes: string[];
  csrf: string;
  expires_at: string;
}

export class ApiError extends Error {
  constructor(public status: number, public code: string, message: string) {
    super(message);
  }
}

let csrf = '';
let onSignedOut: (why: string) => void = () => {};

export function setSession(s: Session | null): void {
  csrf = s ? s.csrf : '';
}

export function onSignOut(fn: (why: string) => void): void {
  onSignedOut = fn;
}

export function signedOut(why: string): void {
  csrf = '';
  onSignedOut(why);
}

async function errorOf(res: Response): Promise<ApiError> {
  let code = 'http_' + res.status;
  let msg = res.statusText || 'request failed';
  try {
    const b = await res.json();
    if (b && b.error) {
      code = String(b.error.code);
      msg = String(b.error.message);
    }
  } catch {
    /* not JSON */
  }
  return new ApiError(res.status, code, msg);
}

export interface CallOptions {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

// call returns the raw response of a successful call; errors throw.
export async function call(path: string, o: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'X-Paddock-CSRF': csrf, ...(o.headers || {}) };
  let body = o.body;
  if (o.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(o.json);
  }
  const res = await fetch(path.startsWith('/ui/') ? path : '/ui/api' + path, {
    method: o.method || 'GET',
    headers,
    body,
    credentials: 'same-origin',
    cache: 'no-store',
    signal: o.signal,
  });
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401) signedOut(err.message);
    throw err;
  }
  return res;
}

export async function get<T>(path: string, o: CallOptions = {}): Promise<T> {
  const res = await call(path, o);
  return (await res.json()) as T;
}

export async function send<T>(method: string, path: string, json?: unknown): Promise<T | null> {
  const res = await call(path, { method, json });
  if (res.status === 204) return null;
  const text = await res.text();
  return text ? (JSON.parse(text) as T) : null;
}

export async function sessionInfo(): Promise<Session | null> {
  const res = await fetch('/ui/session', { credentials: 'same-origin', cache: 'no-store' });
  if (res.status === 401) return null;
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as Session;
}

export async function signIn(key: string): Promise<Session> {
  const res = await fetch('/ui/session', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ key }),
    credentials: 'same-origin',
  });
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as Session;
}

export async function signOutNow(): Promise<void> {
  try {
    await fetch('/ui/session', { method: 'DELETE', headers: { 'X-Paddock-CSRF': csrf }, credentials: 'same-origin' });
  } finally {
    signedOut('signed out');
  }
}

// socket opens one of the API's WebSockets through the console: the CSRF
// token travels as a subprotocol (a browser cannot set headers on a
// WebSocket); the server strips it and selects paddock.v1.
export function socket(path: string): WebSocket {
  const proto = location.protocol === 'https:' ? 'wss://' : 'ws://';
  const ws = new WebSocket(proto + location.host + '/ui/api' + path, ['paddock.v1', 'csrf.' + csrf]);
  ws.binaryType = 'arraybuffer';
  return ws;
}

// download saves what a call returns as a file. The bytes become an
// octet-stream blob and are saved, never opened: a sandbox's file must
// not become a document of the console's origin.
export async function download(path: string, filename: string): Promise<void> {
  const res = await call(path);
  const blob = new Blob([await res.arrayBuffer()], { type: 'application/octet-stream' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename || 'download';
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// Raster image types the file browser previews (never SVG: an SVG is a
// document that can carry script).
const imageTypes: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', bmp: 'image/bmp',
};

export function imageType(name: string): string | null {
  const ext = name.toLowerCase().split('.').pop() || '';
  return imageTypes[ext] || null;
}

export function q(params: Record<string, string | number | boolean | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
  }
  const s = u.toString();
  return s ? '?' + s : '';
}

export function enc(s: string): string {
  return encodeURIComponent(s);
}

// lines reads a response body as text lines (NDJSON streams, SSE).
export async function* lines(res: Response, signal?: AbortSignal): AsyncGenerator<string> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      if (signal?.aborted) return;
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        yield buf.slice(0, i);
        buf = buf.slice(i + 1);
      }
    }
    if (buf) yield buf;
  } finally {
    reader.cancel().catch(() => {});
  }
}
