// What this server can do beyond the basics, read from its published API
// document: buttons for features that have not landed stay hidden, and
// appear once the server serves their routes.
export interface Caps {
  pause: boolean;
  resume: boolean;
  snapshot: boolean;
  fork: boolean;
  browser: boolean;
  secrets: boolean;
}

let cached: Promise<Caps> | null = null;

export function caps(): Promise<Caps> {
  if (!cached) {
    cached = fetch('/openapi.json', { credentials: 'omit' })
      .then((r) => (r.ok ? r.json() : { paths: {} }))
      .catch(() => ({ paths: {} }))
      .then((doc: { paths?: Record<string, Record<string, unknown>> }) => {
        const paths = doc.paths || {};
        const has = (p: string, m: string) => !!(paths[p] && paths[p][m]);
        return {
          pause: has('/v1/sandboxes/{id}/pause', 'post'),
          resume: has('/v1/sandboxes/{id}/resume', 'post'),
          snapshot: has('/v1/sandboxes/{id}/snapshots', 'post'),
          fork: has('/v1/sandboxes/{id}/fork', 'post'),
          browser: has('/v1/sandboxes/{id}/browser/start', 'post'),
          secrets: has('/v1/secrets', 'get'),
        };
      });
  }
  return cached;
}
