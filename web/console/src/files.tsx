import { useEffect, useState } from 'preact/hooks';
import { call, download, enc, get, imageType, q, send } from './api';
import { bytes, Empty, ErrorBox, time } from './ui';

interface FileInfo {
  name: string;
  path: string;
  type: string;
  size: number;
  mode: string;
  mtime: string;
  target?: string;
}

const maxView = 1 << 20; // text opened in the editor

function join(dir: string, name: string): string {
  return (dir.endsWith('/') ? dir : dir + '/') + name;
}

function parent(p: string): string {
  const i = p.replace(/\/+$/, '').lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

// The file browser: list, open (text editor or image preview), download,
// upload by drag and drop (or the file picker), remove. File names and
// contents are the sandbox's: shown as text only.
export function FilesPanel({ id, canWrite }: { id: string; canWrite: boolean }) {
  const base = `/v1/sandboxes/${enc(id)}/files`;
  const [dir, setDir] = useState('/tmp');
  const [entries, setEntries] = useState<FileInfo[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState<FileInfo | null>(null);
  const [drag, setDrag] = useState(false);
  const [status, setStatus] = useState('');
  const [n, setN] = useState(0);
  const reload = () => setN((x) => x + 1);
  useEffect(() => {
    let live = true;
    setEntries(null);
    get<{ entries: FileInfo[]; truncated: boolean }>(`${base}/list${q({ path: dir, depth: 1, limit: 2000 })}`).then(
      (r) => {
        if (!live) return;
        const list = (r.entries || []).filter((e) => parent(e.path) === dir.replace(/\/+$/, '') || (dir === '/' && parent(e.path) === '/'));
        list.sort((a, b) => (a.type === 'dir') === (b.type === 'dir') ? a.name.localeCompare(b.name) : a.type === 'dir' ? -1 : 1);
        setEntries(list);
        setError(null);
      },
      (e) => live && (setError(e), setEntries([])),
    );
    return () => {
      live = false;
    };
  }, [id, dir, n]);

  const upload = async (files: FileList | File[]) => {
    setError(null);
    for (const f of Array.from(files)) {
      setStatus(`uploading ${f.name}…`);
      try {
        await call(`${base}${q({ path: join(dir, f.name) })}`, { method: 'PUT', body: f, headers: { 'Content-Type': 'application/octet-stream' } });
        setStatus(`uploaded ${f.name} (${bytes(f.size)})`);
      } catch (e) {
        setError(e);
        setStatus('');
        break;
      }
    }
    reload();
  };
  const remove = async (e: FileInfo) => {
    if (!confirm(`Remove ${e.path}${e.type === 'dir' ? ' and everything in it' : ''}?`)) return;
    try {
      await send('DELETE', `${base}${q({ path: e.path, recursive: e.type === 'dir' ? true : undefined })}`);
      reload();
    } catch (err) {
      setError(err);
    }
  };
  const crumbs = dir.split('/').filter(Boolean);
  return (
    <div
      class={drag ? 'files dragging' : 'files'}
      data-testid="files"
      onDragOver={(e) => {
        if (!canWrite) return;
        e.preventDefault();
        setDrag(true);
      }}
      onDragLeave={() => setDrag(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDrag(false);
        if (canWrite && e.dataTransfer?.files?.length) upload(e.dataTransfer.files);
      }}
    >
      <div class="toolbar">
        <nav aria-label="Folder" class="crumbs">
          <button type="button" class="link" onClick={() => setDir('/')}>
            /
          </button>
          {crumbs.map((c, i) => (
            <>
              <button type="button" class="link" onClick={() => setDir('/' + crumbs.slice(0, i + 1).join('/'))}>
                {c}
              </button>
              {i < crumbs.length - 1 ? '/' : ''}
            </>
          ))}
        </nav>
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            const v = String(new FormData(e.currentTarget as HTMLFormElement).get('path') || '').trim();
            if (v.startsWith('/')) setDir(v);
          }}
        >
          <label class="sr-only" for="goto-path">
            Go to folder
          </label>
          <input id="goto-path" name="path" type="text" placeholder="/path/to/folder" />
          <button type="submit" class="secondary small">
            Go
          </button>
        </form>
        <button type="button" class="secondary small" onClick={reload}>
          Refresh
        </button>
        <button type="button" class="secondary small" onClick={() => download(`${base}/archive${q({ path: dir, gzip: true })}`, (crumbs[crumbs.length - 1] || 'root') + '.tar.gz').catch(setError)}>
          Download folder
        </button>
        {canWrite ? (
          <label class="button secondary small">
            Upload files
            <input type="file" multiple class="sr-only" data-testid="upload-input" onChange={(e) => upload((e.target as HTMLInputElement).files || [])} />
          </label>
        ) : null}
      </div>
      {canWrite ? <p class="muted">Drop files here to upload them into {dir}.</p> : null}
      {status ? (
        <p role="status" class="muted" data-testid="upload-status">
          {status}
        </p>
      ) : null}
      <ErrorBox error={error} />
      {entries === null ? (
        <p>Loading…</p>
      ) : entries.length === 0 ? (
        <Empty>This folder is empty.</Empty>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Size</th>
              <th scope="col">Mode</th>
              <th scope="col">Modified</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {dir !== '/' ? (
              <tr>
                <td colSpan={5}>
                  <button type="button" class="link" onClick={() => setDir(parent(dir))}>
                    ..
                  </button>
                </td>
              </tr>
            ) : null}
            {entries.map((e) => (
              <tr data-name={e.name}>
                <td>
                  <button type="button" class="link file-name" onClick={() => (e.type === 'dir' ? setDir(e.path) : setOpen(e))}>
                    {e.name}
                    {e.type === 'dir' ? '/' : ''}
                  </button>
                  {e.type === 'symlink' ? <span class="muted"> → {e.target}</span> : null}
                </td>
                <td>{e.type === 'dir' ? '' : bytes(e.size)}</td>
                <td class="mono">{e.mode}</td>
                <td>{time(e.mtime)}</td>
                <td class="actions">
                  {e.type !== 'dir' ? (
                    <button type="button" class="secondary small" aria-label={`Download ${e.name}`} onClick={() => download(`${base}${q({ path: e.path })}`, e.name).catch(setError)}>
                      Download
                    </button>
                  ) : null}
                  {canWrite ? (
                    <button type="button" class="danger small" aria-label={`Remove ${e.name}`} onClick={() => remove(e)}>
                      Remove
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open ? <Viewer base={base} file={open} canWrite={canWrite} onClose={() => setOpen(null)} onSaved={reload} /> : null}
    </div>
  );
}

function Viewer({ base, file, canWrite, onClose, onSaved }: { base: string; file: FileInfo; canWrite: boolean; onClose: () => void; onSaved: () => void }) {
  const img = imageType(file.name);
  const [text, setText] = useState<string | null>(null);
  const [url, setUrl] = useState('');
  const [binary, setBinary] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState('');
  useEffect(() => {
    let live = true;
    let made = '';
    (async () => {
      try {
        if (img) {
          const res = await call(`${base}${q({ path: file.path, length: 32 << 20 })}`);
          // The blob's type is ours, from the name: never the sandbox's.
          const blob = new Blob([await res.arrayBuffer()], { type: img });
          made = URL.createObjectURL(blob);
          if (live) setUrl(made);
          return;
        }
        if (file.size > maxView) {
          setBinary(true);
          return;
        }
        const res = await call(`${base}${q({ path: file.path, length: maxView })}`);
        const buf = new Uint8Array(await res.arrayBuffer());
        if (buf.includes(0)) {
          if (live) setBinary(true);
          return;
        }
        if (live) setText(new TextDecoder().decode(buf));
      } catch (e) {
        if (live) setError(e);
      }
    })();
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [file.path]);
  const save = async () => {
    try {
      await call(`${base}${q({ path: file.path })}`, { method: 'PUT', body: text ?? '', headers: { 'Content-Type': 'application/octet-stream' } });
      setSaved('saved');
      onSaved();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section class="card viewer" aria-label={`File ${file.path}`} data-testid="viewer">
      <div class="toolbar">
        <h3 class="mono">{file.path}</h3>
        {text !== null && canWrite ? (
          <button type="button" onClick={save}>
            Save
          </button>
        ) : null}
        {saved ? <span role="status">{saved}</span> : null}
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorBox error={error} />
      {url ? <img class="preview" src={url} alt={`preview of ${file.name}`} /> : null}
      {binary ? <p class="muted">Binary or large file ({bytes(file.size)}): download it instead.</p> : null}
      {text !== null ? (
        <textarea
          class="editor mono"
          aria-label={`Contents of ${file.name}`}
          value={text}
          readOnly={!canWrite}
          spellcheck={false}
          onInput={(e) => (setText((e.target as HTMLTextAreaElement).value), setSaved(''))}
        />
      ) : null}
    </section>
  );
}
