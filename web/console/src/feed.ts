import { ApiError, call, lines, signedOut } from './api';
import type { Sandbox } from './types';

export interface FeedHandlers {
  snapshot(list: Sandbox[]): void;
  changes(upsert: Sandbox[], remove: string[]): void;
  error(e: unknown): void;
  live(on: boolean): void;
}

// openFeed follows /ui/feed, the server-pushed sandbox list, and
// reconnects (with backoff) when the connection drops. The server sends
// the whole list once, then only what changed: the page never polls.
export function openFeed(h: FeedHandlers): () => void {
  const ctl = new AbortController();
  let retry = 500;
  const run = async () => {
    while (!ctl.signal.aborted) {
      try {
        const res = await call('/ui/feed', { signal: ctl.signal, headers: { Accept: 'text/event-stream' } });
        h.live(true);
        retry = 500;
        let ev = '';
        let data = '';
        for await (const line of lines(res, ctl.signal)) {
          if (line.startsWith('event: ')) ev = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
          else if (line === '') {
            if (ev && data) {
              const v = JSON.parse(data);
              if (ev === 'snapshot') h.snapshot(v.sandboxes || []);
              else if (ev === 'changes') h.changes(v.upsert || [], v.remove || []);
              else if (ev === 'signedout') {
                signedOut(v.message || 'the session ended');
                return;
              } else if (ev === 'error') {
                h.error(new ApiError(0, v.error?.code || 'error', v.error?.message || 'the list cannot be read'));
                if (v.error?.code === 'forbidden') return;
              }
            }
            ev = '';
            data = '';
          }
        }
      } catch (e) {
        if (ctl.signal.aborted) return;
        if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
          h.error(e);
          return;
        }
      }
      h.live(false);
      await new Promise((r) => setTimeout(r, retry));
      retry = Math.min(retry * 2, 10000);
    }
  };
  run();
  return () => ctl.abort();
}
