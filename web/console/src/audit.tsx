import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, download, get, q, Session } from './api';
import { Badge, Empty, ErrorBox, Field, time } from './ui';

export interface AuditRecord {
  seq: number;
  time: string;
  action: string;
  phase: string;
  actor?: string;
  tenant?: string;
  sandbox?: string;
  request?: string;
  args?: Record<string, unknown>;
  result?: Record<string, unknown>;
  status?: number;
  code?: string;
  error?: string;
  duration_ns?: number;
  hash?: string;
}

interface Page {
  records: AuditRecord[];
  next_cursor: number;
  has_more: boolean;
}

export type Filters = Record<string, string | number | undefined>;

const keepRecords = 2000;

// useAuditFollow shows the last records matching filters, then follows
// new ones with the API's long-poll (GET /v1/audit?cursor=N&wait=25s).
export function useAuditFollow(filters: Filters, tail = 200): { records: AuditRecord[]; error: unknown } {
  const [records, setRecords] = useState<AuditRecord[]>([]);
  const [error, setError] = useState<unknown>(null);
  const key = JSON.stringify(filters);
  useEffect(() => {
    const ctl = new AbortController();
    let live = true;
    setRecords([]);
    setError(null);
    (async () => {
      let cursor = 0;
      try {
        const first = await get<Page>(`/v1/audit${q({ ...filters, tail })}`, { signal: ctl.signal });
        if (!live) return;
        setRecords(first.records);
        cursor = first.next_cursor;
        while (live) {
          const p = await get<Page>(`/v1/audit${q({ ...filters, cursor, limit: 500, wait: '25s' })}`, { signal: ctl.signal });
          if (!live) return;
          cursor = p.next_cursor || cursor;
          if (p.records.length) setRecords((old) => [...old, ...p.records].slice(-keepRecords));
        }
      } catch (e) {
        if (live && !ctl.signal.aborted) setError(e);
      }
    })();
    return () => {
      live = false;
      ctl.abort();
    };
  }, [key]);
  return { records, error };
}

export function outcome(r: AuditRecord): [string, string] {
  if (r.error || r.code) return ['error', r.code || 'error'];
  if (r.status && r.status >= 400) return ['error', String(r.status)];
  if (r.args && r.args.allowed === false) return ['denied', 'denied'];
  if (r.args && r.args.allowed === true) return ['ok', 'allowed'];
  if (r.phase === 'intent') return ['intent', 'intent'];
  return ['ok', r.status ? String(r.status) : 'ok'];
}

function summary(r: AuditRecord): string {
  const a = r.args || {};
  const res = r.result || {};
  if (r.action === 'http') return `${a.method || res.method || ''} ${a.path || a.route || res.route || ''}`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(r.phase === 'result' ? res : a)) {
    if (parts.length >= 6) break;
    parts.push(`${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  if (r.error) parts.push(`error: ${r.error}`);
  return parts.join(' ');
}

export function RecordTable({ records, showSandbox = true }: { records: AuditRecord[]; showSandbox?: boolean }) {
  if (!records.length) return <Empty>No matching records.</Empty>;
  return (
    <table class="list audit" data-testid="audit-table">
      <thead>
        <tr>
          <th scope="col">Seq</th>
          <th scope="col">Time</th>
          <th scope="col">Action</th>
          <th scope="col">Outcome</th>
          <th scope="col">Tenant</th>
          <th scope="col">Actor</th>
          {showSandbox ? <th scope="col">Sandbox</th> : null}
          <th scope="col">Details</th>
        </tr>
      </thead>
      <tbody>
        {[...records].reverse().map((r) => {
          const [kind, text] = outcome(r);
          return (
            <tr>
              <td>{r.seq}</td>
              <td>{time(r.time)}</td>
              <td class="mono">
                {r.action}
                {r.phase !== 'event' ? <span class="muted"> {r.phase}</span> : null}
              </td>
              <td>
                <Badge kind={kind}>{text}</Badge>
              </td>
              <td>{r.tenant || ''}</td>
              <td class="mono">{r.actor || ''}</td>
              {showSandbox ? <td class="mono">{r.sandbox || ''}</td> : null}
              <td class="details">{summary(r)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

interface VerifyResult {
  ok: boolean;
  problem?: string;
  report?: { records: number; first_seq: number; last_seq: number; segments: number; checkpoints: number; last_checkpoint_seq: number; signer: string; unsigned_tail: number };
}

function Verify() {
  const [res, setRes] = useState<VerifyResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [at, setAt] = useState('');
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await call('/ui/audit/verify', { method: 'POST' });
      setRes(await r.json());
      setAt(new Date().toLocaleTimeString(undefined, { hour12: false }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    run();
  }, []);
  return (
    <section class="card verify" aria-labelledby="verify-title" data-testid="verify">
      <div class="toolbar">
        <h2 id="verify-title">Chain verification</h2>
        <button type="button" class="secondary" onClick={run} disabled={busy}>
          {busy ? 'Verifying…' : 'Verify again'}
        </button>
      </div>
      <ErrorBox error={error} />
      {res ? (
        res.ok ? (
          <p class="ok" role="status" data-testid="verify-status">
            Verified at {at}: {res.report?.records} records (seq {res.report?.first_seq}–{res.report?.last_seq}) in {res.report?.segments} segment(s), {res.report?.checkpoints} signed checkpoint(s), signer {res.report?.signer}
            {res.report?.unsigned_tail ? `; ${res.report.unsigned_tail} newest record(s) not yet under a signature` : ''}.
          </p>
        ) : (
          <p class="error" role="alert" data-testid="verify-status">
            Verification FAILED at {at}: {res.problem}
          </p>
        )
      ) : null}
    </section>
  );
}

export function AuditPage({ session }: { session: Session }) {
  const [filters, setFilters] = useState<Filters>({});
  const [outcomeFilter, setOutcome] = useState('');
  const admin = session.scopes.includes('admin');
  const { records, error } = useAuditFollow(admin ? filters : { sandbox: '__none__' });
  const [exportErr, setExportErr] = useState<unknown>(null);
  if (!admin) {
    return (
      <section aria-labelledby="audit-title">
        <h1 id="audit-title">Audit</h1>
        <ErrorBox error={error instanceof ApiError ? error : new ApiError(403, 'forbidden', 'reading the audit log needs a key with the admin scope')} />
      </section>
    );
  }
  const shown = outcomeFilter ? records.filter((r) => outcome(r)[0] === outcomeFilter) : records;
  const apply = (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const v = (k: string) => String(f.get(k) || '').trim() || undefined;
    const iso = (k: string) => {
      const s = v(k);
      return s ? new Date(s).toISOString() : undefined;
    };
    setFilters({ tenant: v('tenant'), actor: v('actor'), sandbox: v('sandbox'), action: v('action'), since: iso('since'), until: iso('until') });
    setOutcome(String(f.get('outcome') || ''));
  };
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit</h1>
      <Verify />
      <form class="filters" onSubmit={apply} role="search" aria-label="Filter audit records">
        <Field label="Tenant">
          <input name="tenant" type="text" />
        </Field>
        <Field label="Actor (key id)">
          <input name="actor" type="text" />
        </Field>
        <Field label="Sandbox">
          <input name="sandbox" type="text" />
        </Field>
        <Field label="Action" hint="exact, or a prefix ending in . or *">
          <input name="action" type="text" placeholder="sandbox.* or net." />
        </Field>
        <Field label="Outcome">
          <select name="outcome">
            <option value="">any</option>
            <option value="ok">ok</option>
            <option value="error">error</option>
            <option value="denied">denied</option>
            <option value="intent">intent</option>
          </select>
        </Field>
        <Field label="Since">
          <input name="since" type="datetime-local" />
        </Field>
        <Field label="Until">
          <input name="until" type="datetime-local" />
        </Field>
        <button type="submit">Apply</button>
        <button
          type="button"
          class="secondary"
          onClick={() => download(`/v1/audit/export${q(filters as Record<string, string>)}`, 'paddock-audit.jsonl').catch(setExportErr)}
        >
          Export JSONL
        </button>
      </form>
      <ErrorBox error={error || exportErr} />
      <p class="muted">
        Showing the newest {shown.length} matching records, following new ones as they are written.
      </p>
      <RecordTable records={shown} />
    </section>
  );
}
