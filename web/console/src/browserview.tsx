import { useEffect, useState } from 'preact/hooks';
import { enc, get, send, socket } from './api';
import { ErrorBox } from './ui';

interface Status {
  state: string;
  error?: string;
  restarts: number;
  connected: boolean;
}

// The browser's live view: the screencast of .../browser/view/ws drawn
// from JPEG frames (blob URLs of our own type), and the tab's URL and
// title — the page's, so text only.
export function BrowserPanel({ id, canExec }: { id: string; canExec: boolean }) {
  const base = `/v1/sandboxes/${enc(id)}/browser`;
  const [status, setStatus] = useState<Status | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [n, setN] = useState(0);
  const reload = () => setN((x) => x + 1);
  useEffect(() => {
    get<Status>(base).then((s) => (setStatus(s), setError(null)), setError);
  }, [id, n]);
  const act = (what: string, body?: unknown) => send('POST', `${base}/${what}`, body).then(reload, setError);
  return (
    <div class="browser">
      <div class="toolbar">
        <span role="status">Browser: {status ? status.state : '…'}</span>
        {canExec && status && status.state !== 'running' ? (
          <button type="button" onClick={() => act('start')}>
            Start browser
          </button>
        ) : null}
        {canExec && status && status.state === 'running' ? (
          <button type="button" class="secondary" onClick={() => act('stop')}>
            Stop browser
          </button>
        ) : null}
      </div>
      {canExec && status?.state === 'running' ? (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            const url = String(new FormData(e.currentTarget as HTMLFormElement).get('url') || '').trim();
            if (url) act('navigate', { url, wait_until: 'domcontentloaded' });
          }}
        >
          <label class="field grow">
            <span class="label">Go to URL</span>
            <input name="url" type="text" placeholder="https://example.com or file:///tmp/page.html" />
          </label>
          <button type="submit">Go</button>
        </form>
      ) : null}
      <ErrorBox error={error || (status?.error ? new Error(status.error) : null)} />
      {status?.state === 'running' ? <LiveView id={id} /> : null}
    </div>
  );
}

function LiveView({ id }: { id: string }) {
  const [src, setSrc] = useState('');
  const [tab, setTab] = useState<{ url: string; title: string } | null>(null);
  const [state, setState] = useState('connecting…');
  useEffect(() => {
    let last = '';
    let closed = false;
    let ws: WebSocket;
    let retry = 500;
    const connect = () => {
      ws = socket(`/v1/sandboxes/${enc(id)}/browser/view/ws`);
      ws.onopen = () => setState('live');
      ws.onmessage = (m) => {
        if (typeof m.data === 'string') {
          try {
            const ev = JSON.parse(m.data);
            if (ev.type === 'tab') setTab({ url: String(ev.url || ''), title: String(ev.title || '') });
            if (ev.type === 'error') setState(`error: ${ev.message}`);
          } catch {
            /* ignore */
          }
          return;
        }
        const u = URL.createObjectURL(new Blob([m.data as ArrayBuffer], { type: 'image/jpeg' }));
        setSrc(u);
        if (last) URL.revokeObjectURL(last);
        last = u;
        retry = 500;
      };
      ws.onclose = () => {
        if (closed) return;
        setState('reconnecting…');
        setTimeout(connect, retry);
        retry = Math.min(retry * 2, 10000);
      };
    };
    connect();
    return () => {
      closed = true;
      ws.close();
      if (last) URL.revokeObjectURL(last);
    };
  }, [id]);
  return (
    <figure class="liveview" data-testid="liveview">
      <figcaption>
        <span role="status">{state}</span> · <span data-testid="tab-title">{tab?.title || 'untitled'}</span> · <span class="mono">{tab?.url || ''}</span>
      </figcaption>
      {src ? <img src={src} alt={`The sandbox's browser showing ${tab?.title || 'a page'}`} data-testid="liveview-frame" /> : <p class="muted">Waiting for the first frame…</p>}
    </figure>
  );
}
