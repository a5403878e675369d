import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { useEffect, useRef, useState } from 'preact/hooks';
import { enc, socket } from './api';
import { perf } from './types';

// The sandbox's terminal: GET /v1/sandboxes/{id}/pty through the console.
// Keystrokes go out as binary messages; the screen comes back as bytes.
export function TerminalPanel({ id }: { id: string }) {
  const el = useRef<HTMLDivElement>(null);
  const [status, setStatus] = useState('connecting…');
  const [gen, setGen] = useState(0);
  useEffect(() => {
    const term = new Terminal({ fontSize: 14, cursorBlink: true, convertEol: false, scrollback: 5000,
      fontFamily: '"DejaVu Sans Mono", "Liberation Mono", monospace', screenReaderMode: false });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el.current!);
    try {
      fit.fit();
    } catch {
      /* not laid out yet */
    }
    const ws = socket(`/v1/sandboxes/${enc(id)}/pty?rows=${term.rows}&cols=${term.cols}`);
    const encoder = new TextEncoder();
    let sentAt = 0;
    ws.onopen = () => setStatus('connected');
    ws.onmessage = (m) => {
      if (typeof m.data === 'string') {
        let ev: { type: string; message?: string; exit_code?: number; signal?: string; bytes?: number };
        try {
          ev = JSON.parse(m.data);
        } catch {
          return;
        }
        if (ev.type === 'started') setStatus('connected');
        else if (ev.type === 'exit') setStatus(`exited${ev.exit_code !== undefined ? ' with ' + ev.exit_code : ''}${ev.signal ? ' (' + ev.signal + ')' : ''}`);
        else if (ev.type === 'error') setStatus(`error: ${ev.message}`);
        else if (ev.type === 'dropped') term.write(`\r\n[${ev.bytes} bytes dropped]\r\n`);
        return;
      }
      const data = new Uint8Array(m.data as ArrayBuffer);
      const t0 = sentAt;
      sentAt = 0;
      term.write(data, () => {
        if (t0) {
          perf.echo.push(performance.now() - t0);
          if (perf.echo.length > 1000) perf.echo.shift();
        }
      });
    };
    ws.onclose = (e) => setStatus((s) => (s.startsWith('exited') || s.startsWith('error') ? s : `disconnected${e.reason ? ': ' + e.reason : ''}`));
    const d1 = term.onData((s) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (!sentAt) sentAt = performance.now();
      ws.send(encoder.encode(s));
    });
    const d2 = term.onResize(({ rows, cols }) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', rows, cols }));
    });
    const onWin = () => {
      try {
        fit.fit();
      } catch {
        /* hidden */
      }
    };
    window.addEventListener('resize', onWin);
    term.focus();
    return () => {
      window.removeEventListener('resize', onWin);
      d1.dispose();
      d2.dispose();
      ws.close();
      term.dispose();
    };
  }, [id, gen]);
  return (
    <div class="terminal-panel">
      <div class="toolbar">
        <span role="status" data-testid="terminal-status">
          Terminal: {status}
        </span>
        <button type="button" class="secondary small" onClick={() => setGen((g) => g + 1)}>
          New session
        </button>
      </div>
      <div class="terminal" ref={el} data-testid="terminal" aria-label="Terminal" />
    </div>
  );
}
