import { useEffect, useRef, useState } from 'preact/hooks';
import { call, enc, get, lines, send } from './api';
import { ago, Badge, Empty, ErrorBox } from './ui';

interface ProcessInfo {
  id: string;
  pid: number;
  tag?: string;
  cmd?: string[];
  state: string;
  exit_code?: number;
  signal?: string;
  started_at?: string;
  pty?: boolean;
}

const maxLog = 512 << 10; // characters kept of a process's output

export function ProcessesPanel({ id, canExec }: { id: string; canExec: boolean }) {
  const base = `/v1/sandboxes/${enc(id)}/processes`;
  const [list, setList] = useState<ProcessInfo[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [logs, setLogs] = useState<string | null>(null);
  const [n, setN] = useState(0);
  const reload = () => setN((x) => x + 1);
  useEffect(() => {
    get<{ processes: ProcessInfo[] }>(base).then((r) => (setList(r.processes || []), setError(null)), (e) => (setError(e), setList([])));
  }, [id, n]);
  const start = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const f = new FormData(form);
    const cmd = String(f.get('cmd') || '').trim();
    if (!cmd) return;
    try {
      const p = await send<ProcessInfo>('POST', base, { cmd: ['sh', '-c', cmd], tag: String(f.get('tag') || '') || undefined });
      form.reset();
      reload();
      if (p) setLogs(p.id);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="processes">
      {canExec ? (
        <form class="inline" onSubmit={start} aria-label="Start a background process">
          <label class="field grow">
            <span class="label">Command (sh -c)</span>
            <input name="cmd" type="text" placeholder="python3 -m http.server 8000" />
          </label>
          <label class="field">
            <span class="label">Tag</span>
            <input name="tag" type="text" />
          </label>
          <button type="submit">Start</button>
        </form>
      ) : null}
      <div class="toolbar">
        <button type="button" class="secondary small" onClick={reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={error} />
      {list === null ? (
        <p>Loading…</p>
      ) : list.length === 0 ? (
        <Empty>No background processes.</Empty>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">ID</th>
              <th scope="col">PID</th>
              <th scope="col">Tag</th>
              <th scope="col">Command</th>
              <th scope="col">State</th>
              <th scope="col">Started</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((p) => (
              <tr>
                <td class="mono">{p.id}</td>
                <td>{p.pid}</td>
                <td>{p.tag || ''}</td>
                <td class="mono cmd">{(p.cmd || []).join(' ')}</td>
                <td>
                  <Badge kind={p.state}>{p.state}</Badge>
                  {p.exit_code !== undefined && p.state !== 'running' ? ` ${p.exit_code}` : ''}
                  {p.signal ? ` ${p.signal}` : ''}
                </td>
                <td>{ago(p.started_at)}</td>
                <td class="actions">
                  <button type="button" class="secondary small" aria-label={`Logs of ${p.id}`} onClick={() => setLogs(p.id)}>
                    Logs
                  </button>
                  {canExec && p.state === 'running' ? (
                    <button type="button" class="danger small" aria-label={`Kill ${p.id}`} onClick={() => send('DELETE', `${base}/${enc(p.id)}`).then(reload, setError)}>
                      Kill
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {logs ? <Logs base={base} ref_={logs} onClose={() => setLogs(null)} onEnd={reload} /> : null}
    </div>
  );
}

// Logs follows a process's output (NDJSON) and shows it as text.
function Logs({ base, ref_, onClose, onEnd }: { base: string; ref_: string; onClose: () => void; onEnd: () => void }) {
  const [text, setText] = useState('');
  const [state, setState] = useState('following…');
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const ctl = new AbortController();
    let buf = '';
    let flush = 0;
    setText('');
    (async () => {
      try {
        const res = await call(`${base}/${enc(ref_)}/output?follow=1`, { signal: ctl.signal });
        for await (const line of lines(res, ctl.signal)) {
          if (!line) continue;
          const ev = JSON.parse(line);
          if (typeof ev.data === 'string') buf += ev.data;
          else if (ev.data_b64) buf += atob(ev.data_b64);
          else if (ev.dropped) buf += `\n[${ev.dropped} bytes dropped]\n`;
          else if (ev.process) setState(`ended: ${ev.process.state}${ev.process.exit_code !== undefined ? ' ' + ev.process.exit_code : ''}`);
          else if (ev.error) setState(`error: ${ev.error.message}`);
          if (buf.length > maxLog) buf = buf.slice(buf.length - maxLog);
          if (!flush) flush = requestAnimationFrame(() => ((flush = 0), setText(buf)));
        }
        setText(buf);
        onEnd();
      } catch (e) {
        if (!ctl.signal.aborted) setState(`error: ${(e as Error).message}`);
      }
    })();
    return () => ctl.abort();
  }, [ref_]);
  useEffect(() => {
    if (pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text]);
  return (
    <section class="card" aria-label={`Output of ${ref_}`}>
      <div class="toolbar">
        <h3>
          Output of <span class="mono">{ref_}</span>
        </h3>
        <span role="status">{state}</span>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <pre class="log" ref={pre} data-testid="process-log" tabIndex={0}>
        {text}
      </pre>
    </section>
  );
}
