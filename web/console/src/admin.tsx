import { useState } from 'preact/hooks';
import { call, enc, get, q, send, Session } from './api';
import { Badge, Empty, ErrorBox, Field, time, useAsync } from './ui';

interface Tenant {
  name: string;
  quotas: Record<string, unknown>;
  created_at: string;
  usage?: { sandboxes: number; cpu: number; memory_mb: number };
}

interface Key {
  id: string;
  tenant: string;
  name?: string;
  scopes: string[];
  format: string;
  hint: string;
  created_at: string;
  last_used_at?: string;
  expires_at?: string;
  revoked: boolean;
}

function quotaText(qs: Record<string, unknown>): string {
  const parts = Object.entries(qs || {})
    .filter(([, v]) => v !== undefined && v !== null && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0))
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('|') : typeof v === 'object' ? JSON.stringify(v) : v}`);
  return parts.length ? parts.join(' · ') : 'no quotas (server limits apply)';
}

// Admin pages: what an admin key may see and do through the API. A key
// without admin gets the API's refusals, shown as they come.
export function AdminPage({ session }: { session: Session }) {
  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">Admin</h1>
      <Overview />
      <Tenants />
      <Keys me={session.key_id} />
      <Secrets />
    </section>
  );
}

function metric(text: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = line.match(/^([a-z_]+)(\{([^}]*)\})?\s+([0-9.eE+-]+)/);
    if (!m || m[1] !== name) continue;
    const lbl = (m[3] || '').replace(/"/g, '');
    out[lbl || 'value'] = (out[lbl || 'value'] || 0) + Number(m[4]);
  }
  return out;
}

function Overview() {
  const m = useAsync(async () => {
    const res = await call('/ui/api/metrics');
    return res.text();
  }, []);
  const h = useAsync(() => fetch('/healthz').then((r) => r.json() as Promise<{ version: string }>), []);
  const states = m.data ? metric(m.data, 'paddock_sandboxes') : {};
  const inflight = m.data ? metric(m.data, 'paddock_http_requests_in_flight').value : undefined;
  const egress = m.data ? metric(m.data, 'paddock_egress_decisions_total') : {};
  const denied = Object.entries(egress).filter(([k]) => k.includes('decision=deny')).reduce((a, [, v]) => a + v, 0);
  const allowed = Object.entries(egress).filter(([k]) => k.includes('decision=allow')).reduce((a, [, v]) => a + v, 0);
  return (
    <section class="card" aria-labelledby="ov-title" data-testid="admin-overview">
      <h2 id="ov-title">Server</h2>
      <ErrorBox error={m.error || h.error} />
      <dl class="facts">
        <dt>Version</dt>
        <dd>{h.data?.version || '—'}</dd>
        <dt>Sandboxes</dt>
        <dd>
          {Object.keys(states).length
            ? Object.entries(states)
                .filter(([k]) => k !== 'state=pooled')
                .map(([k, v]) => `${v} ${k.replace('state=', '')}`)
                .join(', ') || '0'
            : '—'}
        </dd>
        <dt>Warm pool</dt>
        <dd>{states['state=pooled'] ?? (m.data ? 0 : '—')}</dd>
        <dt>Requests in flight</dt>
        <dd>{inflight ?? '—'}</dd>
        <dt>Egress decisions</dt>
        <dd>
          {allowed} allowed, {denied} denied
        </dd>
      </dl>
      <button type="button" class="secondary small" onClick={() => (m.reload(), h.reload())}>
        Refresh
      </button>
    </section>
  );
}

function Tenants() {
  const t = useAsync(() => get<{ tenants: Tenant[] }>('/v1/tenants'), []);
  const [error, setError] = useState<unknown>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get('name') || '').trim();
    const max = String(new FormData(form).get('max_sandboxes') || '').trim();
    try {
      await send('POST', '/v1/tenants', { name, quotas: max ? { max_sandboxes: Number(max) } : {} });
      form.reset();
      t.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section class="card" aria-labelledby="tn-title">
      <h2 id="tn-title">Tenants</h2>
      <ErrorBox error={t.error || error} />
      {t.data && t.data.tenants.length ? (
        <table class="list" data-testid="tenants">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Sandboxes</th>
              <th scope="col">CPU in use</th>
              <th scope="col">Memory in use</th>
              <th scope="col">Quotas</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {t.data.tenants.map((x) => (
              <tr>
                <td>{x.name}</td>
                <td>{x.usage?.sandboxes ?? '—'}</td>
                <td>{x.usage?.cpu ?? '—'}</td>
                <td>{x.usage ? `${x.usage.memory_mb} MiB` : '—'}</td>
                <td class="details">{quotaText(x.quotas)}</td>
                <td>{time(x.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : t.data ? (
        <Empty>No tenants.</Empty>
      ) : null}
      <form class="inline" onSubmit={create} aria-label="New tenant">
        <Field label="New tenant">
          <input name="name" type="text" required pattern="[a-z0-9][a-z0-9-]*" />
        </Field>
        <Field label="Max sandboxes">
          <input name="max_sandboxes" type="number" min="0" />
        </Field>
        <button type="submit" class="secondary">
          Create tenant
        </button>
      </form>
    </section>
  );
}

function Keys({ me }: { me: string }) {
  const k = useAsync(() => get<{ keys: Key[] }>('/v1/keys'), []);
  const [error, setError] = useState<unknown>(null);
  const [made, setMade] = useState<{ id: string; key: string } | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const scopes = ['read', 'write', 'exec', 'admin'].filter((s) => f.get('scope-' + s) === 'on');
    try {
      const r = await send<{ id: string; key: string }>('POST', '/v1/keys', {
        tenant: String(f.get('tenant') || '').trim(),
        name: String(f.get('name') || '').trim(),
        scopes,
      });
      setMade(r);
      form.reset();
      k.reload();
    } catch (err) {
      setError(err);
    }
  };
  const revoke = async (key: Key) => {
    if (!confirm(`Revoke key ${key.id}${key.name ? ' (' + key.name + ')' : ''}? Everything using it, consoles included, loses access at once.`)) return;
    try {
      await send('DELETE', `/v1/keys/${enc(key.id)}`);
      k.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section class="card" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <ErrorBox error={k.error || error} />
      {made ? (
        <div class="notice" role="status" data-testid="new-key">
          <p>
            Key <span class="mono">{made.id}</span> created. Copy it now: it is shown only this once.
          </p>
          <input class="mono wide" readOnly value={made.key} aria-label="The new key" onFocus={(e) => (e.target as HTMLInputElement).select()} />
          <button type="button" class="secondary small" onClick={() => setMade(null)}>
            Done
          </button>
        </div>
      ) : null}
      <form class="inline" onSubmit={create} aria-label="New key">
        <Field label="Tenant">
          <input name="tenant" type="text" required />
        </Field>
        <Field label="Name">
          <input name="name" type="text" />
        </Field>
        <fieldset class="scopes">
          <legend>Scopes</legend>
          {['read', 'write', 'exec', 'admin'].map((s) => (
            <label class="check">
              <input type="checkbox" name={'scope-' + s} defaultChecked={s !== 'admin'} /> {s}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="secondary">
          Create key
        </button>
      </form>
      {k.data && k.data.keys.length ? (
        <table class="list" data-testid="keys">
          <thead>
            <tr>
              <th scope="col">ID</th>
              <th scope="col">Tenant</th>
              <th scope="col">Name</th>
              <th scope="col">Scopes</th>
              <th scope="col">Starts with</th>
              <th scope="col">Last used</th>
              <th scope="col">State</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {k.data.keys.map((x) => (
              <tr data-key={x.id}>
                <td class="mono">{x.id}</td>
                <td>{x.tenant}</td>
                <td>{x.name || ''}</td>
                <td>{x.scopes.join(', ')}</td>
                <td class="mono">{x.hint}…</td>
                <td>{time(x.last_used_at)}</td>
                <td>{x.revoked ? <Badge kind="error">revoked</Badge> : <Badge kind="ok">active</Badge>}</td>
                <td class="actions">
                  {!x.revoked && x.id !== me ? (
                    <button type="button" class="danger small" aria-label={`Revoke ${x.id}`} onClick={() => revoke(x)}>
                      Revoke
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : k.data ? (
        <Empty>No stored keys (only the bootstrap admin key).</Empty>
      ) : null}
    </section>
  );
}

function Secrets() {
  const [tenant, setTenant] = useState('');
  const s = useAsync(() => get<{ secrets: { name: string; created_at: string; updated_at: string }[] }>(`/v1/secrets${q({ tenant })}`), [tenant]);
  return (
    <section class="card" aria-labelledby="sec-title">
      <h2 id="sec-title">Secrets</h2>
      <p class="muted">Names only: values never leave the server.</p>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          setTenant(String(new FormData(e.currentTarget as HTMLFormElement).get('tenant') || '').trim());
        }}
      >
        <Field label="Tenant">
          <input name="tenant" type="text" placeholder="(this key's tenant)" />
        </Field>
        <button type="submit" class="secondary">
          Show
        </button>
      </form>
      <ErrorBox error={s.error} />
      {s.data && s.data.secrets.length ? (
        <table class="list" data-testid="secrets">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {s.data.secrets.map((x) => (
              <tr>
                <td class="mono">{x.name}</td>
                <td>{time(x.created_at)}</td>
                <td>{time(x.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : s.data ? (
        <Empty>No secrets in this tenant.</Empty>
      ) : null}
    </section>
  );
}
