// The console end to end, in a real browser (Debian's chromium, driven by
// playwright-core) against a real `paddock serve` (started by
// internal/console's TestConsoleE2E). Prints "ok STEP" per step, "KEY
// tenant key" for every key it makes (the Go test cleans up with them),
// and "ALL OK" at the end; writes its measurements to $RESULTS and its
// screenshots to $SCREENSHOTS.
import { chromium } from 'playwright-core';
import AxeBuilder from '@axe-core/playwright';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const BASE = process.env.PADDOCK_URL;
const ADMIN = process.env.PADDOCK_ADMIN_KEY;
const SHOTS = process.env.SCREENSHOTS;
const RESULTS = process.env.RESULTS;
// make test lists 50; the performance run (docs/console.md) sets PERF_SANDBOXES=500.
// Each asks for 16 MiB of disk: on a host whose layers are tmpfs the default
// 256 MiB reservation would stop the list at ~90 sandboxes (RAM admission).
const PERF_SANDBOXES = Number(process.env.PERF_SANDBOXES || 50);

let passed = 0;
const a11y = {};
const results = {};

async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
  } catch (e) {
    console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    throw e;
  }
  passed++;
  console.log(`ok ${name} (${Date.now() - t0} ms)`);
}

function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function api(key, method, path, body, raw) {
  const headers = { Authorization: 'Bearer ' + key };
  let payload;
  if (raw !== undefined) payload = raw;
  else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const r = await fetch(BASE + path, { method, headers, body: payload });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

const enc = encodeURIComponent;

async function pool(items, n, fn) {
  let i = 0;
  const out = [];
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) {
        const k = i++;
        out[k] = await fn(items[k], k);
      }
    }),
  );
  return out;
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
}

async function shot(page, name) {
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(SHOTS, name + '.png') });
}

// axe: no serious or critical violation on the page as it is now.
async function axe(page, name) {
  const r = await new AxeBuilder({ page }).analyze();
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  a11y[name] = { serious_or_critical: bad.length, other: r.violations.length - bad.length };
  if (bad.length) {
    throw new Error(`axe on ${name}: ` + bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`).join(' | '));
  }
}

// Every page starts with a CSP-violation counter and an XSS witness that
// hostile payloads would set.
async function newContext(browser) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  await ctx.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return ctx;
}

async function newPage(ctx, errors) {
  const page = await ctx.newPage();
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => d.accept());
  return page;
}

async function noScriptRan(page) {
  const st = await page.evaluate(() => ({ xss: window.__xss, csp: window.__csp }));
  assert(st.xss === undefined, `a hostile payload ran: window.__xss = ${st.xss}`);
  assert(st.csp.length === 0, `CSP violations: ${st.csp.join(', ')}`);
}

async function signIn(page, key) {
  await page.goto(BASE + '/ui/');
  await page.fill('input[name=key]', key);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-testid=whoami]');
}

async function tab(page, name) {
  await page.click(`role=tab[name="${name}"]`);
}

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAKElEQVR4nGNkaPjPQApgIkn1qIZRDaMaRjWMahjVMKphVMOohlENQ0QDAH/JAh+Wr6HQAAAAAElFTkSuQmCC',
  'base64',
);

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const errors = [];
try {
  // Identities: the bootstrap admin (tenant default) drives the console;
  // "rival" is another tenant; "doomed" is a key to revoke; "perf" holds
  // the 500 sandboxes.
  const keys = {};
  await step('setup tenants and keys', async () => {
    for (const t of ['rival', 'perf']) await api(ADMIN, 'POST', '/v1/tenants', { name: t, quotas: {} });
    for (const [name, tenant, scopes] of [
      ['rival', 'rival', ['read', 'write', 'exec']],
      ['perf', 'perf', ['read', 'write', 'exec']],
      ['doomed', 'default', ['read']],
    ]) {
      const k = await api(ADMIN, 'POST', '/v1/keys', { tenant, scopes, name });
      keys[name] = k;
      console.log(`KEY ${tenant} ${k.key}`);
    }
  });

  // Attacker-controlled data: labels, file names, process output, a page
  // title, all of which the console shows.
  const XSS = {
    label: '<img src=x onerror="window.__xss=1">',
    script: '</script><script>window.__xss=2</script>',
    file: '<img src=x onerror=window.__xss=3>.txt',
    file2: '"><svg onload=window.__xss=4>',
    output: '<img src=x onerror=window.__xss=5></script><script>window.__xss=5</script>',
    title: '<img src=x onerror=window.__xss=6>',
  };
  let hostile, rivalBox;
  await step('hostile sandbox and a second tenant', async () => {
    hostile = await api(ADMIN, 'POST', '/v1/sandboxes', { labels: { note: XSS.label, other: XSS.script } });
    const f = (p) => `/v1/sandboxes/${hostile.id}/files?path=${enc(p)}`;
    await api(ADMIN, 'PUT', f('/tmp/' + XSS.file), undefined, 'x');
    await api(ADMIN, 'PUT', f('/tmp/' + XSS.file2), undefined, XSS.script);
    await api(ADMIN, 'POST', `/v1/sandboxes/${hostile.id}/processes`, { cmd: ['printf', '%s\\n', XSS.output], tag: 'hostile' });
    rivalBox = await api(keys.rival.key, 'POST', '/v1/sandboxes', { labels: { owner: 'rival' } });
  });

  const ctx = await newContext(browser);
  const page = await newPage(ctx, errors);

  await step('sign-in page', async () => {
    await page.goto(BASE + '/ui/');
    await page.waitForSelector('input[name=key]');
    await shot(page, 'signin');
    await axe(page, 'signin');
    await page.fill('input[name=key]', 'pdk_notakey');
    await page.click('button[type=submit]');
    await page.waitForSelector('.error');
    assert((await page.textContent('.error')).includes('invalid'), 'a wrong key is refused');
  });

  await step('sign in: the key is exchanged for an HttpOnly, SameSite=Strict cookie and leaves the page', async () => {
    await page.fill('input[name=key]', ADMIN);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=whoami]');
    const cookies = await ctx.cookies();
    const c = cookies.find((x) => x.name === 'paddock_console');
    assert(c && c.httpOnly && c.sameSite === 'Strict' && c.path === '/ui', `cookie: ${JSON.stringify(c)}`);
    assert(c.value !== ADMIN, 'the cookie is not the key');
    const seen = await page.evaluate(() => document.documentElement.outerHTML + JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie);
    assert(!seen.includes(ADMIN), 'the key is still in the page');
    // A call without the CSRF token is refused, with the cookie.
    const r = await page.evaluate(async () => (await fetch('/ui/api/v1/sandboxes')).status);
    assert(r === 403, `a call without the CSRF token answered ${r}`);
  });

  await step('sandbox list: live, hostile labels shown as text, other tenants absent', async () => {
    await page.waitForSelector(`tr[data-id="${hostile.id}"]`);
    await page.waitForSelector('[data-testid=feed-state]:has-text("live")');
    const row = await page.textContent(`tr[data-id="${hostile.id}"]`);
    assert(row.includes(XSS.label) && row.includes(XSS.script), `labels are not shown as text: ${row}`);
    assert(!(await page.content()).includes(rivalBox.id), "another tenant's sandbox is listed");
    await noScriptRan(page);
  });

  await step('filters by label, state and template', async () => {
    await page.fill('input[placeholder="key or key=value"]', 'note');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=sandbox-table] tbody tr').length === 1);
    await page.fill('input[placeholder="key or key=value"]', '');
    await page.selectOption('select >> nth=0', 'running');
    await page.selectOption('select >> nth=1', 'host');
    await page.waitForSelector(`tr[data-id="${hostile.id}"]`);
    await page.selectOption('select >> nth=0', '');
    await page.selectOption('select >> nth=1', '');
  });

  await step("another tenant's sandbox page answers not found", async () => {
    await page.goto(BASE + `/ui/#/sandboxes/${rivalBox.id}`);
    await page.waitForSelector('.error');
    assert((await page.textContent('.error')).includes('not_found'), 'rival sandbox: ' + (await page.textContent('.error')));
  });

  let id;
  await step('create a sandbox (template, limits, allowlist network, browser, labels)', async () => {
    await page.goto(BASE + '/ui/#/sandboxes');
    await page.waitForSelector(`tr[data-id="${hostile.id}"]`);
    await page.click('text=New sandbox');
    await page.selectOption('select[name=template]', 'host');
    await page.fill('input[name=cpu]', '1');
    await page.fill('input[name=memory_mb]', '1024');
    await page.fill('input[name=timeout_s]', '1800');
    await page.selectOption('select[name=mode]', 'allowlist');
    await page.fill('textarea[name=allow]', 'allowed.paddock.test');
    await page.fill('textarea[name=labels]', 'team=console\npurpose=e2e');
    await page.check('input[name=browser]');
    await shot(page, 'create');
    await axe(page, 'create');
    await page.click('form.create button[type=submit]');
    await page.waitForSelector('#sbx-title', { timeout: 60000 });
    id = decodeURIComponent(new URL(page.url()).hash.split('/').pop());
    assert(id.startsWith('sb-'), 'landed on ' + page.url());
    const sb = await api(ADMIN, 'GET', `/v1/sandboxes/${id}`);
    assert(sb.spec.network.mode === 'allowlist' && sb.spec.browser && sb.spec.labels.team === 'console', JSON.stringify(sb.spec));
  });

  await step('overview: facts and resource graphs', async () => {
    await page.waitForFunction(() => document.querySelectorAll('.graph polyline').length >= 4, null, { timeout: 20000 });
    await shot(page, 'sandbox-overview');
    await axe(page, 'sandbox-overview');
  });

  await step('terminal: echo hi reads back hi; keystroke echo measured', async () => {
    await tab(page, 'Terminal');
    await page.waitForSelector('[data-testid=terminal-status]:has-text("connected")');
    await page.waitForFunction(() => (document.querySelector('.xterm-rows')?.textContent || '').includes('#'), null, { timeout: 15000 });
    await page.click('[data-testid=terminal]');
    await page.keyboard.type('echo hi\n');
    await page.waitForFunction(() => [...document.querySelectorAll('.xterm-rows > div')].some((d) => d.textContent.trim() === 'hi'));
    await page.evaluate(() => (window.__paddockPerf.echo.length = 0));
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('a');
      await page.waitForTimeout(40);
    }
    await page.keyboard.press('Control+U');
    const echo = await page.evaluate(() => window.__paddockPerf.echo.slice());
    assert(echo.length >= 30, `only ${echo.length} echoes measured`);
    results.echo_p50_ms = pct(echo, 50);
    results.echo_p90_ms = pct(echo, 90);
    results.echo_samples = echo.length;
    await page.keyboard.type(`printf '%s\\n' '${XSS.output}'\n`);
    await page.keyboard.type('curl -sS -m 5 http://refused.example/; echo rc=$?\n');
    await page.waitForFunction(() => (document.querySelector('.xterm-rows')?.textContent || '').includes('rc='), null, { timeout: 20000 });
    await shot(page, 'terminal');
    await axe(page, 'terminal');
    await noScriptRan(page);
  });

  await step('network: the refused request shows as denied', async () => {
    await tab(page, 'Network');
    await page.waitForSelector('[data-testid=net-decisions]:has-text("refused.example")', { timeout: 20000 });
    const t = await page.textContent('[data-testid=net-decisions]');
    assert(t.includes('denied'), 'no denied decision: ' + t);
    await shot(page, 'network');
    await axe(page, 'network');
  });

  await step('files: upload (picker and drag and drop), download, edit, image preview', async () => {
    await tab(page, 'Files');
    await page.waitForSelector('[data-testid=files]');
    await page.setInputFiles('[data-testid=upload-input]', [
      { name: 'hello.txt', mimeType: 'text/plain', buffer: Buffer.from('hello from the console\n') },
      { name: 'dot.png', mimeType: 'image/png', buffer: PNG },
    ]);
    await page.waitForSelector('tr[data-name="hello.txt"]');
    const dt = await page.evaluateHandle(() => {
      const d = new DataTransfer();
      d.items.add(new File(['dropped by drag and drop\n'], 'dropped.txt', { type: 'text/plain' }));
      return d;
    });
    await page.dispatchEvent('[data-testid=files]', 'dragover', { dataTransfer: dt });
    await page.dispatchEvent('[data-testid=files]', 'drop', { dataTransfer: dt });
    await page.waitForSelector('tr[data-name="dropped.txt"]');
    const dropped = await api(ADMIN, 'GET', `/v1/sandboxes/${id}/files?path=${enc('/tmp/dropped.txt')}`);
    assert(dropped === 'dropped by drag and drop\n', 'dropped file: ' + JSON.stringify(dropped));
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('button[aria-label="Download hello.txt"]')]);
    assert(readFileSync(await dl.path(), 'utf8') === 'hello from the console\n', 'downloaded content differs');
    await page.click('tr[data-name="hello.txt"] .file-name');
    await page.waitForSelector('textarea.editor');
    assert((await page.inputValue('textarea.editor')) === 'hello from the console\n', 'editor content');
    await page.fill('textarea.editor', 'edited in the console\n');
    await page.click('[data-testid=viewer] button:has-text("Save")');
    await page.waitForSelector('[data-testid=viewer] :text("saved")');
    const edited = await api(ADMIN, 'GET', `/v1/sandboxes/${id}/files?path=${enc('/tmp/hello.txt')}`);
    assert(edited === 'edited in the console\n', 'edit not saved: ' + JSON.stringify(edited));
    await page.click('[data-testid=viewer] button:has-text("Close")');
    await page.click('tr[data-name="dot.png"] .file-name');
    await page.waitForFunction(() => document.querySelector('img.preview')?.naturalWidth === 16);
    await shot(page, 'files');
    await axe(page, 'files');
  });

  await step('processes: start one in the background and follow its logs', async () => {
    await tab(page, 'Processes');
    await page.fill('input[name=cmd]', 'for i in 1 2 3; do echo line$i; sleep 0.3; done');
    await page.fill('input[name=tag]', 'counter');
    await page.click('form[aria-label="Start a background process"] button[type=submit]');
    await page.waitForSelector('[data-testid=process-log]:has-text("line3")', { timeout: 15000 });
    await page.waitForSelector('text=ended: exited');
    await shot(page, 'processes');
    await axe(page, 'processes');
  });

  await step("browser: the live view shows the sandbox's browser; a hostile title stays text", async () => {
    await api(ADMIN, 'PUT', `/v1/sandboxes/${id}/files?path=${enc('/tmp/title.html')}`, undefined,
      `<!doctype html><title>${XSS.title}</title><body style="font:40px sans-serif"><h1>Hello from the sandbox</h1></body>`);
    await tab(page, 'Browser');
    await page.waitForSelector('text=Browser: running', { timeout: 60000 });
    await page.waitForFunction(() => document.querySelector('[data-testid=liveview-frame]')?.naturalWidth > 0, null, { timeout: 30000 });
    await page.fill('input[name=url]', 'file:///tmp/title.html');
    await page.click('.browser form button[type=submit]');
    await page.waitForFunction((t) => document.querySelector('[data-testid=tab-title]')?.textContent === t, XSS.title, { timeout: 30000 });
    await page.waitForTimeout(800);
    await shot(page, 'browser');
    await axe(page, 'browser');
    await noScriptRan(page);
  });

  await step("sandbox audit timeline", async () => {
    await tab(page, 'Audit');
    await page.waitForSelector('[data-testid=audit-table]:has-text("sandbox.create")', { timeout: 15000 });
    await shot(page, 'sandbox-audit');
    await axe(page, 'sandbox-audit');
  });

  await step('hostile names and output render as text, and run nothing', async () => {
    await page.goto(BASE + `/ui/#/sandboxes/${hostile.id}`);
    await tab(page, 'Files');
    await page.waitForSelector('[data-testid=files]');
    await page.waitForSelector(`tr[data-name="${XSS.file.replace(/"/g, '\\"')}"]`);
    const files = await page.textContent('[data-testid=files]');
    assert(files.includes(XSS.file) && files.includes(XSS.file2), 'file names not shown as text');
    await page.click(`tr[data-name="${XSS.file2.replace(/"/g, '\\"')}"] .file-name`);
    await page.waitForSelector('textarea.editor');
    assert((await page.inputValue('textarea.editor')) === XSS.script, 'hostile content not shown as text');
    await tab(page, 'Processes');
    await page.click('button[aria-label^="Logs of"]');
    await page.waitForSelector('[data-testid=process-log]:has-text("onerror")');
    assert((await page.textContent('[data-testid=process-log]')).includes(XSS.output), 'output not shown as text');
    await tab(page, 'Overview');
    await page.waitForSelector('.label-chip');
    await tab(page, 'Audit');
    await page.waitForSelector('[data-testid=audit-table]');
    await page.waitForTimeout(300);
    await noScriptRan(page);
    // Positive control: the same payloads do run when written as HTML
    // into a page (one of no origin of ours): the checks above could fail.
    const control = await ctx.newPage();
    await control.setContent('<div id="c"></div>');
    await control.evaluate((x) => {
      document.getElementById('c').innerHTML = x.label + x.file;
    }, XSS);
    await control.waitForFunction(() => window.__xss !== undefined, null, { timeout: 5000 });
    await control.close();
  });

  await step('audit explorer: chain verified and re-checkable, filters, JSONL export', async () => {
    await page.goto(BASE + '/ui/#/audit');
    await page.waitForSelector('[data-testid=verify-status]:has-text("Verified")', { timeout: 30000 });
    const first = await page.textContent('[data-testid=verify-status]');
    await page.waitForTimeout(1100);
    await page.click('button:has-text("Verify again")');
    await page.waitForFunction((f) => {
      const t = document.querySelector('[data-testid=verify-status]')?.textContent || '';
      return t.includes('Verified') && t !== f;
    }, first, { timeout: 30000 });
    await page.fill('input[name=action]', 'sandbox.');
    await page.fill('input[name=sandbox]', id);
    await page.click('form[aria-label="Filter audit records"] button[type=submit]');
    await page.waitForSelector('[data-testid=audit-table]:has-text("sandbox.create")');
    const actions = await page.$$eval('[data-testid=audit-table] tbody tr td:nth-child(3)', (tds) => tds.map((t) => t.textContent));
    assert(actions.length > 0 && actions.every((a) => a.startsWith('sandbox.')), 'filter: ' + actions.join(','));
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('button:has-text("Export JSONL")')]);
    const lines = readFileSync(await dl.path(), 'utf8').trim().split('\n');
    assert(lines.length > 0 && lines.every((l) => { const r = JSON.parse(l); return r.hash && r.action.startsWith('sandbox.') && r.sandbox === id; }), 'export');
    await shot(page, 'audit');
    await axe(page, 'audit');
    await noScriptRan(page);
  });

  await step('admin: tenants with usage, keys (a new key shown once), secret names only, server overview', async () => {
    await api(ADMIN, 'PUT', '/v1/secrets/GITHUB_TOKEN', { value: 'ghp_supersecretvalue' });
    await page.goto(BASE + '/ui/#/admin');
    await page.waitForSelector('[data-testid=tenants]:has-text("rival")');
    await page.waitForSelector('[data-testid=keys]:has-text("doomed")');
    await page.waitForSelector('[data-testid=secrets]:has-text("GITHUB_TOKEN")');
    await page.waitForSelector('[data-testid=admin-overview] dd:has-text("running")');
    assert(!(await page.content()).includes('ghp_supersecretvalue'), 'a secret value reached the page');
    const form = page.locator('form[aria-label="New key"]');
    await form.locator('input[name=tenant]').fill('default');
    await form.locator('input[name=name]').fill('shown-once');
    await form.locator('button[type=submit]').click();
    await page.waitForSelector('[data-testid=new-key]');
    const shown = await page.inputValue('[data-testid=new-key] input');
    assert(shown.startsWith('pdk_'), 'new key: ' + shown);
    console.log(`KEY default ${shown}`);
    await shot(page, 'admin');
    await axe(page, 'admin');
    await page.click('[data-testid=new-key] button:has-text("Done")');
    assert(!(await page.content()).includes(shown), 'the new key is still shown');
  });

  await step('revoking a key signs its console out', async () => {
    const ctxB = await newContext(browser);
    const pageB = await newPage(ctxB, errors);
    await signIn(pageB, keys.doomed.key);
    await pageB.waitForSelector('[data-testid=feed-state]:has-text("live")');
    await page.click(`tr[data-key="${keys.doomed.id}"] button:has-text("Revoke")`);
    await page.waitForSelector(`tr[data-key="${keys.doomed.id}"] :text("revoked")`);
    await pageB.waitForSelector('input[name=key]', { timeout: 20000 });
    assert((await pageB.textContent('main')).includes('Signed out'), 'no sign-out notice');
    const st = await pageB.evaluate(async () => (await fetch('/ui/session')).status);
    assert(st === 401, `the revoked key's session answered ${st}`);
    await ctxB.close();
  });

  await step('sign out', async () => {
    await page.click('button:has-text("Sign out")');
    await page.waitForSelector('input[name=key]');
    const st = await page.evaluate(async () => (await fetch('/ui/session')).status);
    assert(st === 401, `after sign-out /ui/session answered ${st}`);
  });

  await step(`performance: a list of ${PERF_SANDBOXES} sandboxes, and updates pushed to it`, async () => {
    const made = await pool(Array.from({ length: PERF_SANDBOXES }, (_, i) => i), 8, (i) =>
      api(keys.perf.key, 'POST', '/v1/sandboxes', { labels: { batch: 'perf', n: String(i) }, timeout_s: 3600, disk_mb: 16 }),
    );
    const ctxC = await newContext(browser);
    const pageC = await newPage(ctxC, errors);
    await signIn(pageC, keys.perf.key);
    await pageC.reload();
    await pageC.waitForFunction((n) => document.querySelectorAll('[data-testid=sandbox-table] tbody tr').length === n, PERF_SANDBOXES, { polling: 'raf', timeout: 30000 });
    results.list_render_ms = await pageC.evaluate(() => performance.now()); // since navigation
    results.sandboxes = PERF_SANDBOXES;
    const snap = await pageC.evaluate(() => window.__paddockPerf.snapshot);
    results.snapshot_dom_ms = snap.dom;
    results.snapshot_paint_ms = snap.paint;
    await shot(pageC, 'sandboxes');
    await axe(pageC, 'sandboxes');
    await pageC.evaluate(() => (window.__paddockPerf.updates.length = 0));
    const rows = () => pageC.evaluate(() => document.querySelectorAll('[data-testid=sandbox-table] tbody tr').length);
    const extra = [];
    for (let i = 0; i < 10; i++) {
      const sb = await api(keys.perf.key, 'POST', '/v1/sandboxes', { labels: { batch: 'update' }, disk_mb: 16 });
      extra.push(sb.id);
      await pageC.waitForSelector(`tr[data-id="${sb.id}"]`, { timeout: 10000 });
    }
    for (const x of extra) {
      await api(keys.perf.key, 'DELETE', `/v1/sandboxes/${x}`);
      await pageC.waitForSelector(`tr[data-id="${x}"]`, { state: 'detached', timeout: 10000 });
    }
    assert((await rows()) === PERF_SANDBOXES, 'rows after the updates');
    const ups = await pageC.evaluate(() => window.__paddockPerf.updates.slice());
    assert(ups.length >= 10, `only ${ups.length} updates measured`);
    results.update_p50_ms = pct(ups.map((u) => u.dom), 50);
    results.update_max_ms = Math.max(...ups.map((u) => u.dom));
    results.update_paint_p50_ms = pct(ups.map((u) => u.paint), 50);
    results.updates = ups.length;
    await ctxC.close();
    await pool(made, 8, (sb) => api(keys.perf.key, 'DELETE', `/v1/sandboxes/${sb.id}`));
  });

  await step('no page error anywhere', async () => {
    assert(errors.length === 0, 'page errors: ' + errors.join(' | '));
  });
  results.a11y = a11y;
  writeFileSync(RESULTS, JSON.stringify(results, null, 2));
  console.log(JSON.stringify(results));
  console.log(`${passed} steps passed`);
  console.log('ALL OK');
} finally {
  await browser.close();
}
