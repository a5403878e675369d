import { useEffect, useRef, useState } from 'preact/hooks';
import { enc, get } from './api';
import { bytes, ErrorBox } from './ui';

interface Stats {
  memory_bytes: number;
  memory_peak_bytes: number;
  oom_kills: number;
  pids: number;
  cpu_usage_ns: number;
  cpu_throttled_ns: number;
  disk_bytes: number;
  disk_inodes: number;
}

interface Sample {
  t: number;
  cpu: number; // cores in use since the previous sample
  mem: number;
  disk: number;
  pids: number;
}

const every = 2000;
const keep = 150; // five minutes at one sample per 2 s

// Stats samples GET .../stats while the page is open and keeps a bounded
// history.
export function StatsPanel({ id, memLimitMB, diskLimitMB }: { id: string; memLimitMB?: number; diskLimitMB?: number }) {
  const [samples, setSamples] = useState<Sample[]>([]);
  const [last, setLast] = useState<Stats | null>(null);
  const [error, setError] = useState<unknown>(null);
  const prev = useRef<{ t: number; cpu: number } | null>(null);
  useEffect(() => {
    let live = true;
    let timer = 0;
    const tick = async () => {
      try {
        const s = await get<Stats>(`/v1/sandboxes/${enc(id)}/stats`);
        if (!live) return;
        const t = Date.now();
        const p = prev.current;
        const cpu = p ? Math.max(0, (s.cpu_usage_ns - p.cpu) / 1e6 / (t - p.t)) : 0;
        prev.current = { t, cpu: s.cpu_usage_ns };
        setLast(s);
        setError(null);
        setSamples((old) => {
          const next = [...old, { t, cpu, mem: s.memory_bytes, disk: s.disk_bytes, pids: s.pids }];
          return next.length > keep ? next.slice(next.length - keep) : next;
        });
      } catch (e) {
        if (live) setError(e);
      }
      if (live) timer = window.setTimeout(tick, every);
    };
    tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id]);
  return (
    <div class="stats">
      <ErrorBox error={error} />
      <div class="graphs">
        <Graph title="CPU (cores)" values={samples.map((s) => s.cpu)} fmt={(v) => v.toFixed(2)} />
        <Graph title="Memory" values={samples.map((s) => s.mem)} fmt={bytes} max={memLimitMB ? memLimitMB * 1048576 : undefined} />
        <Graph title="Disk" values={samples.map((s) => s.disk)} fmt={bytes} max={diskLimitMB ? diskLimitMB * 1048576 : undefined} />
        <Graph title="Processes" values={samples.map((s) => s.pids)} fmt={(v) => String(v)} />
      </div>
      {last ? (
        <p class="muted">
          memory peak {bytes(last.memory_peak_bytes)} · OOM kills {last.oom_kills} · CPU throttled {(last.cpu_throttled_ns / 1e9).toFixed(1)} s · inodes {last.disk_inodes}
        </p>
      ) : null}
    </div>
  );
}

function Graph({ title, values, fmt, max }: { title: string; values: number[]; fmt: (v: number) => string; max?: number }) {
  const w = 300;
  const h = 80;
  const top = Math.max(max || 0, ...values, 1e-9);
  const pts = values.map((v, i) => `${((i / Math.max(keep - 1, 1)) * w).toFixed(1)},${(h - (v / top) * h).toFixed(1)}`).join(' ');
  const cur = values.length ? fmt(values[values.length - 1]) : '—';
  return (
    <figure class="graph">
      <figcaption>
        {title}: <strong>{cur}</strong>
        {max ? <span class="muted"> of {fmt(max)}</span> : null}
      </figcaption>
      <svg viewBox={`0 0 ${w} ${h}`} width={w} height={h} role="img" aria-label={`${title} over the last ${values.length} samples, now ${cur}`}>
        <rect x="0" y="0" width={w} height={h} class="graph-bg" />
        {values.length > 1 ? <polyline points={pts} class="graph-line" /> : null}
      </svg>
    </figure>
  );
}
