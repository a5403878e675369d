import { memo } from 'preact/compat';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, enc, get, send, Session } from './api';
import { caps, Caps } from './caps';
import { openFeed } from './feed';
import { go, href } from './router';
import { perf, Sandbox } from './types';
import { ago, Badge, Empty, ErrorBox, Field } from './ui';

function labelText(l?: Record<string, string>): string {
  return l ? Object.entries(l).map(([k, v]) => `${k}=${v}`).join(' ') : '';
}

const Row = memo(function Row({ sb, canWrite, caps, onError }: { sb: Sandbox; canWrite: boolean; caps: Caps | null; onError: (e: unknown) => void }) {
  const act = (method: string, path: string, body?: unknown) => send(method, path, body).catch(onError);
  return (
    <tr data-id={sb.id}>
      <td>
        <a href={href('sandboxes', sb.id)} class="mono">
          {sb.id}
        </a>
      </td>
      <td>
        <Badge kind={sb.state}>{sb.state}</Badge>
      </td>
      <td>{sb.spec.template || 'default'}</td>
      <td class="labels">{labelText(sb.spec.labels)}</td>
      <td>{sb.spec.network?.mode || 'none'}</td>
      <td title={sb.created_at}>{ago(sb.created_at)}</td>
      <td title={sb.expires_at}>{ago(sb.expires_at)}</td>
      <td class="actions">
        {canWrite && caps?.pause && sb.state === 'running' ? (
          <button type="button" class="secondary small" onClick={() => act('POST', `/v1/sandboxes/${enc(sb.id)}/pause`)}>
            Pause
          </button>
        ) : null}
        {canWrite && caps?.resume && sb.state === 'paused' ? (
          <button type="button" class="secondary small" onClick={() => act('POST', `/v1/sandboxes/${enc(sb.id)}/resume`)}>
            Resume
          </button>
        ) : null}
        {canWrite ? (
          <button
            type="button"
            class="danger small"
            aria-label={`Delete ${sb.id}`}
            onClick={() => {
              if (confirm(`Delete sandbox ${sb.id}? Its processes and files are gone for good.`)) act('DELETE', `/v1/sandboxes/${enc(sb.id)}`);
            }}
          >
            Delete
          </button>
        ) : null}
      </td>
    </tr>
  );
});

export function SandboxList({ session }: { session: Session }) {
  const items = useRef(new Map<string, Sandbox>());
  const [version, setVersion] = useState(0);
  const [live, setLive] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [state, setState] = useState('');
  const [template, setTemplate] = useState('');
  const [label, setLabel] = useState('');
  const [text, setText] = useState('');
  const [c, setCaps] = useState<Caps | null>(null);
  const [creating, setCreating] = useState(false);
  const pending = useRef<{ t0: number; count: number; snapshot: boolean } | null>(null);
  const canWrite = session.scopes.includes('write') || session.scopes.includes('admin');

  useEffect(() => {
    caps().then(setCaps);
    return openFeed({
      snapshot(list) {
        const m = new Map<string, Sandbox>();
        for (const s of list) m.set(s.id, s);
        items.current = m;
        pending.current = { t0: performance.now(), count: list.length, snapshot: true };
        setLoaded(true);
        setVersion((v) => v + 1);
      },
      changes(upsert, remove) {
        for (const s of upsert) items.current.set(s.id, s);
        for (const id of remove) items.current.delete(id);
        pending.current = { t0: performance.now(), count: upsert.length + remove.length, snapshot: false };
        setVersion((v) => v + 1);
      },
      error: setError,
      live: setLive,
    });
  }, []);

  // Render timings, for the performance test: from a feed message to the
  // DOM holding it, and to the next frame.
  useLayoutEffect(() => {
    const p = pending.current;
    if (!p) return;
    pending.current = null;
    const dom = performance.now() - p.t0;
    requestAnimationFrame(() => {
      const paint = performance.now() - p.t0;
      if (p.snapshot) perf.snapshot = { count: p.count, receivedAt: p.t0, dom, paint };
      else perf.updates.push({ count: p.count, dom, paint });
      if (perf.updates.length > 1000) perf.updates.shift();
    });
  }, [version]);

  const all = useMemo(() => [...items.current.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1)), [version]);
  const states = useMemo(() => [...new Set(all.map((s) => s.state))].sort(), [all]);
  const templates = useMemo(() => [...new Set(all.map((s) => s.spec.template || 'default'))].sort(), [all]);
  const shown = useMemo(() => {
    const [lk, lv] = label.includes('=') ? label.split(/=(.*)/s) : [label, undefined];
    return all.filter(
      (s) =>
        (!state || s.state === state) &&
        (!template || (s.spec.template || 'default') === template) &&
        (!lk || (s.spec.labels && lk in s.spec.labels && (lv === undefined || s.spec.labels[lk] === lv))) &&
        (!text || s.id.includes(text)),
    );
  }, [all, state, template, label, text]);

  return (
    <section aria-labelledby="sb-title">
      <div class="pagehead">
        <h1 id="sb-title">Sandboxes</h1>
        <span class={live ? 'live on' : 'live'} role="status" data-testid="feed-state">
          {live ? 'live' : 'reconnecting…'}
        </span>
        {canWrite ? (
          <button type="button" onClick={() => setCreating(!creating)} aria-expanded={creating}>
            {creating ? 'Close' : 'New sandbox'}
          </button>
        ) : null}
      </div>
      {creating ? <CreateForm onDone={(id) => (setCreating(false), go('sandboxes', id))} /> : null}
      <ErrorBox error={error} />
      <div class="filters" role="search" aria-label="Filter sandboxes">
        <Field label="State">
          <select value={state} onChange={(e) => setState((e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {states.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Template">
          <select value={template} onChange={(e) => setTemplate((e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {templates.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Label">
          <input type="text" placeholder="key or key=value" value={label} onInput={(e) => setLabel((e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="ID contains">
          <input type="text" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        </Field>
        <p class="count" data-testid="sandbox-count">
          {shown.length} of {all.length}
        </p>
      </div>
      {!loaded ? (
        <p>Loading…</p>
      ) : all.length === 0 ? (
        <Empty>No sandboxes in tenant {session.tenant}.</Empty>
      ) : (
        <table class="list" data-testid="sandbox-table">
          <thead>
            <tr>
              <th scope="col">ID</th>
              <th scope="col">State</th>
              <th scope="col">Template</th>
              <th scope="col">Labels</th>
              <th scope="col">Network</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((sb) => (
              <Row key={sb.id} sb={sb} canWrite={canWrite} caps={c} onError={setError} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function parseLabels(s: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const part of s.split(/[\n,]/)) {
    const t = part.trim();
    if (!t) continue;
    const i = t.indexOf('=');
    if (i <= 0) throw new ApiError(0, 'invalid_argument', `label "${t}" is not key=value`);
    out[t.slice(0, i)] = t.slice(i + 1);
  }
  return Object.keys(out).length ? out : undefined;
}

function CreateForm({ onDone }: { onDone: (id: string) => void }) {
  const [templates, setTemplates] = useState<{ name: string }[]>([]);
  const [mode, setMode] = useState('none');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    get<{ templates: { name: string }[] }>('/v1/templates').then((r) => setTemplates(r.templates || []), setError);
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const num = (k: string) => {
      const v = String(f.get(k) || '').trim();
      return v ? Number(v) : undefined;
    };
    setBusy(true);
    setError(null);
    try {
      const spec: Record<string, unknown> = {
        template: f.get('template') || undefined,
        cpu: num('cpu'),
        memory_mb: num('memory_mb'),
        disk_mb: num('disk_mb'),
        timeout_s: num('timeout_s'),
        browser: f.get('browser') === 'on' || undefined,
        labels: parseLabels(String(f.get('labels') || '')),
      };
      if (mode !== 'none') {
        const allow = String(f.get('allow') || '')
          .split(/[\s,]+/)
          .filter(Boolean);
        spec.network = { mode, allow: mode === 'allowlist' ? allow : undefined };
      }
      const sb = await send<Sandbox>('POST', '/v1/sandboxes', spec);
      onDone(sb!.id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card create" onSubmit={submit} aria-label="New sandbox">
      <h2>New sandbox</h2>
      <div class="grid">
        <Field label="Template">
          <select name="template">
            <option value="">server default</option>
            {templates.map((t) => (
              <option value={t.name}>{t.name}</option>
            ))}
          </select>
        </Field>
        <Field label="CPU (cores)">
          <input name="cpu" type="number" min="0.1" step="0.1" inputMode="decimal" />
        </Field>
        <Field label="Memory (MiB)">
          <input name="memory_mb" type="number" min="16" step="1" />
        </Field>
        <Field label="Disk (MiB)">
          <input name="disk_mb" type="number" min="16" step="1" />
        </Field>
        <Field label="Timeout (seconds)">
          <input name="timeout_s" type="number" min="1" step="1" />
        </Field>
        <Field label="Network">
          <select name="mode" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)}>
            <option value="none">none (loopback only)</option>
            <option value="allowlist">allowlist</option>
            <option value="open">open</option>
          </select>
        </Field>
        {mode === 'allowlist' ? (
          <Field label="Allowed domains" hint="space or comma separated, e.g. api.github.com *.pypi.org:443">
            <textarea name="allow" rows={2} />
          </Field>
        ) : null}
        <Field label="Labels" hint="key=value, one per line or comma separated">
          <textarea name="labels" rows={2} />
        </Field>
        <label class="check">
          <input name="browser" type="checkbox" /> Start a browser
        </label>
      </div>
      <ErrorBox error={error} />
      <button type="submit" disabled={busy}>
        {busy ? 'Creating…' : 'Create'}
      </button>
    </form>
  );
}
