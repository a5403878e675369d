import { useEffect, useState } from 'preact/hooks';
import { ApiError, enc, get, send, Session } from './api';
import { useAuditFollow, RecordTable, AuditRecord } from './audit';
import { BrowserPanel } from './browserview';
import { caps, Caps } from './caps';
import { FilesPanel } from './files';
import { StatsPanel } from './graphs';
import { ProcessesPanel } from './processes';
import { go } from './router';
import { TerminalPanel } from './terminal';
import type { Network, Sandbox } from './types';
import { ago, Badge, bytes, ErrorBox, Tabs, time, useAsync } from './ui';

type Tab = 'overview' | 'terminal' | 'files' | 'processes' | 'browser' | 'network' | 'audit';

export function SandboxPage({ id, session }: { id: string; session: Session }) {
  const sb = useAsync(() => get<Sandbox>(`/v1/sandboxes/${enc(id)}`), [id]);
  const [tab, setTab] = useState<Tab>(() => (new URLSearchParams(location.hash.split('?')[1] || '').get('tab') as Tab) || 'overview');
  const [c, setCaps] = useState<Caps | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    caps().then(setCaps);
  }, []);
  const has = (s: string) => session.scopes.includes(s) || session.scopes.includes('admin');
  if (sb.error) {
    return (
      <section>
        <h1>Sandbox {id}</h1>
        <ErrorBox error={sb.error} />
        <a href="#/sandboxes">Back to the list</a>
      </section>
    );
  }
  const s = sb.data;
  const act = (method: string, path: string, body?: unknown) =>
    send(method, `/v1/sandboxes/${enc(id)}${path}`, body).then(() => sb.reload(), setError);
  return (
    <section aria-labelledby="sbx-title">
      <div class="pagehead">
        <h1 id="sbx-title">
          Sandbox <span class="mono">{id}</span>
        </h1>
        {s ? <Badge kind={s.state}>{s.state}</Badge> : null}
        <div class="grow" />
        {s && has('write') && c?.pause && s.state === 'running' ? (
          <button type="button" class="secondary" onClick={() => act('POST', '/pause')}>
            Pause
          </button>
        ) : null}
        {s && has('write') && c?.resume && s.state === 'paused' ? (
          <button type="button" class="secondary" onClick={() => act('POST', '/resume')}>
            Resume
          </button>
        ) : null}
        {s && has('write') && c?.snapshot ? (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              const name = prompt('Snapshot name');
              if (name) act('POST', '/snapshots', { name });
            }}
          >
            Snapshot
          </button>
        ) : null}
        {s && has('write') && c?.fork ? (
          <button type="button" class="secondary" onClick={() => act('POST', '/fork', { count: 1 })}>
            Fork
          </button>
        ) : null}
        {s && has('write') ? (
          <button
            type="button"
            class="danger"
            onClick={() => {
              if (confirm(`Delete sandbox ${id}?`)) send('DELETE', `/v1/sandboxes/${enc(id)}`).then(() => go('sandboxes'), setError);
            }}
          >
            Delete
          </button>
        ) : null}
      </div>
      <ErrorBox error={error} />
      <Tabs<Tab>
        label="Sandbox views"
        value={tab}
        onChange={setTab}
        tabs={[
          ['overview', 'Overview'],
          ['terminal', 'Terminal'],
          ['files', 'Files'],
          ['processes', 'Processes'],
          ['browser', 'Browser'],
          ['network', 'Network'],
          ['audit', 'Audit'],
        ]}
      />
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} class="panel">
        {!s ? <p>Loading…</p> : null}
        {s && tab === 'overview' ? <Overview sb={s} canExec={has('exec')} /> : null}
        {s && tab === 'terminal' ? (has('exec') ? <TerminalPanel id={id} /> : <NeedScope scope="exec" />) : null}
        {s && tab === 'files' ? <FilesPanel id={id} canWrite={has('write')} /> : null}
        {s && tab === 'processes' ? <ProcessesPanel id={id} canExec={has('exec')} /> : null}
        {s && tab === 'browser' ? <BrowserPanel id={id} canExec={has('exec')} /> : null}
        {s && tab === 'network' ? <NetworkPanel id={id} /> : null}
        {s && tab === 'audit' ? <TimelinePanel id={id} /> : null}
      </div>
    </section>
  );
}

function NeedScope({ scope }: { scope: string }) {
  return <p class="muted">This needs a key with the {scope} scope.</p>;
}

function Overview({ sb, canExec }: { sb: Sandbox; canExec: boolean }) {
  const sp = sb.spec;
  return (
    <div class="overview">
      <dl class="facts">
        <dt>Tenant</dt>
        <dd>{sb.tenant}</dd>
        <dt>Template</dt>
        <dd>{sp.template || 'default'}</dd>
        <dt>Created</dt>
        <dd>
          {time(sb.created_at)} ({ago(sb.created_at)})
        </dd>
        <dt>Expires</dt>
        <dd>
          {time(sb.expires_at)} ({ago(sb.expires_at)})
        </dd>
        <dt>Limits</dt>
        <dd>
          {sp.cpu ?? '—'} CPU · {sp.memory_mb ? bytes(sp.memory_mb * 1048576) : '—'} memory · {sp.disk_mb ? bytes(sp.disk_mb * 1048576) : '—'} disk · {sp.pids ?? '—'} pids
        </dd>
        <dt>Network</dt>
        <dd>
          {sp.network?.mode || 'none'}
          {sp.network?.allow?.length ? `: ${sp.network.allow.join(', ')}` : ''}
        </dd>
        <dt>Browser</dt>
        <dd>{sp.browser ? 'yes' : 'no'}</dd>
        <dt>Labels</dt>
        <dd class="labels">
          {Object.entries(sp.labels || {}).map(([k, v]) => (
            <span class="label-chip">
              {k}={v}
            </span>
          ))}
        </dd>
        {sb.reason ? (
          <>
            <dt>Reason</dt>
            <dd>{sb.reason}</dd>
          </>
        ) : null}
      </dl>
      <h2>Resources</h2>
      <StatsPanel id={sb.id} memLimitMB={sp.memory_mb} diskLimitMB={sp.disk_mb} />
      <h2>Ports</h2>
      {canExec ? <Ports id={sb.id} /> : <NeedScope scope="exec" />}
    </div>
  );
}

// Ports open on their own origin. A port URL on the server's own host
// (a server without --ports-domain) is not linked: a sandbox's page there
// would share the console's origin, and could act as the person
// watching it.
function Ports({ id }: { id: string }) {
  const [links, setLinks] = useState<{ port: number; url: string }[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [warn, setWarn] = useState('');
  const open = async (e: Event) => {
    e.preventDefault();
    const port = Number(new FormData(e.currentTarget as HTMLFormElement).get('port'));
    setError(null);
    setWarn('');
    try {
      const r = await send<{ url: string; port: number }>('POST', `/v1/sandboxes/${enc(id)}/ports/${port}/url`, { ttl_s: 3600 });
      const u = new URL(r!.url, location.href);
      if (u.host === location.host || (u.protocol !== 'https:' && u.protocol !== 'http:')) {
        setWarn(`Port ${port} would open on this server's own origin; the console does not link it. Serve with --ports-domain to give ports hosts of their own.`);
        return;
      }
      setLinks((l) => [...l.filter((x) => x.port !== port), { port, url: u.toString() }]);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="ports">
      <form class="inline" onSubmit={open}>
        <label class="field">
          <span class="label">Port</span>
          <input name="port" type="number" min="1" max="65535" required />
        </label>
        <button type="submit" class="secondary">
          Get link
        </button>
      </form>
      <ErrorBox error={error} />
      {warn ? (
        <p class="warn" role="status">
          {warn}
        </p>
      ) : null}
      <ul>
        {links.map((l) => (
          <li>
            <a href={l.url} target="_blank" rel="noopener noreferrer">
              port {l.port}: {l.url.replace(/paddock_token=[^&]+/, 'paddock_token=…')}
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}

function NetworkPanel({ id }: { id: string }) {
  const pol = useAsync(() => get<Network>(`/v1/sandboxes/${enc(id)}/network`), [id]);
  const { records, error } = useAuditFollow({ sandbox: id, action: 'net.' });
  return (
    <div class="network">
      <ErrorBox error={pol.error} />
      {pol.data ? (
        <p>
          Policy: <strong>{pol.data.mode}</strong>
          {pol.data.allow?.length ? ` — allowed: ${pol.data.allow.join(', ')}` : ''}
          {pol.data.allow_cidr?.length ? ` — CIDRs: ${pol.data.allow_cidr.join(', ')}` : ''}
        </p>
      ) : null}
      <h2>Decisions</h2>
      {error instanceof ApiError && error.status === 403 ? (
        <p class="muted">Network decisions are read from the audit log, which needs a key with the admin scope.</p>
      ) : (
        <>
          <ErrorBox error={error} />
          <Decisions records={records} />
        </>
      )}
    </div>
  );
}

function Decisions({ records }: { records: AuditRecord[] }) {
  if (!records.length) return <p class="muted">No connections or lookups recorded yet.</p>;
  return (
    <table class="list" data-testid="net-decisions">
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Kind</th>
          <th scope="col">Decision</th>
          <th scope="col">Host</th>
          <th scope="col">Port</th>
          <th scope="col">Bytes up / down</th>
          <th scope="col">Reason</th>
        </tr>
      </thead>
      <tbody>
        {[...records].reverse().map((r) => {
          const a = (r.args || {}) as Record<string, unknown>;
          const allowed = a.allowed === true;
          return (
            <tr>
              <td>{time(r.time)}</td>
              <td>{r.action === 'net.dns' ? 'DNS' : 'connect'}</td>
              <td>
                <Badge kind={allowed ? 'ok' : 'denied'}>{allowed ? 'allowed' : 'denied'}</Badge>
              </td>
              <td class="mono">{String(a.name || a.addr || '')}</td>
              <td>{a.port !== undefined ? String(a.port) : ''}</td>
              <td>{a.bytes_up !== undefined ? `${bytes(Number(a.bytes_up))} / ${bytes(Number(a.bytes_down))}` : ''}</td>
              <td>{String(a.reason || '')}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function TimelinePanel({ id }: { id: string }) {
  const { records, error } = useAuditFollow({ sandbox: id });
  if (error instanceof ApiError && error.status === 403) return <p class="muted">The audit timeline needs a key with the admin scope.</p>;
  return (
    <div>
      <ErrorBox error={error} />
      <RecordTable records={records} showSandbox={false} />
    </div>
  );
}
