// Paddock's JavaScript/TypeScript context driver, run as
//   node --expose-internals -e <this file>
// Cells arrive as JSON lines on fd 3; events leave as JSON lines on fd 4
// (written synchronously, so they stay in order). The cell code runs in
// this process's main context, so its top-level declarations persist
// from cell to cell. Everything is inside one function so that none of
// the driver's names is a global a cell could collide with.
(function paddockDriver() {
  'use strict';
  const fs = require('fs');
  const vm = require('vm');
  const util = require('util');
  const path = require('path');
  const Module = require('module');
  const { Console } = require('console');

  const IN = 3, OUT = 4;
  const stringify = JSON.stringify, parse = JSON.parse;
  const writeSync = fs.writeSync;
  const MAX_JSON = 1 << 20; // an application/json result larger than this is left out

  let acorn = null, processTopLevelAwait = null;
  try { acorn = require('internal/deps/acorn/acorn/dist/acorn'); } catch (e) { /* no rewrite of let/const */ }
  try { processTopLevelAwait = require('internal/repl/await').processTopLevelAwait; } catch (e) { /* no top-level await */ }

  function emit(ev) {
    const line = stringify(ev) + '\n';
    let buf = Buffer.from(line, 'utf8');
    while (buf.length > 0) {
      try {
        const n = writeSync(OUT, buf);
        buf = buf.subarray(n);
      } catch (e) {
        if (e.code === 'EAGAIN') continue;
        process.exit(70); // the supervisor went away
      }
    }
  }

  // Output of the running cell goes out as events, in order. The guest
  // caps a cell's output; past the cap (plus one byte, so that the guest
  // sees it was cut) this drops it here, sparing the pipe a gigabyte.
  const outCap = Number(process.env.PADDOCK_OUTPUT_CAP || 0);
  let outBytes = 0;
  function streamWriter(name) {
    return function write(chunk, encoding, cb) {
      if (typeof encoding === 'function') { cb = encoding; encoding = undefined; }
      if (outCap > 0 && outBytes > outCap) {
        if (typeof cb === 'function') process.nextTick(cb, null);
        return true;
      }
      let text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      if (outCap > 0) {
        if (outBytes > outCap) text = '';
        else if (outBytes + text.length > outCap) text = text.slice(0, outCap - outBytes + 1);
        outBytes += text.length;
      }
      if (text.length > 0) emit({ t: 'stream', name, text });
      if (typeof cb === 'function') process.nextTick(cb, null);
      return true;
    };
  }
  const outWrite = streamWriter('stdout'), errWrite = streamWriter('stderr');
  process.stdout.write = outWrite;
  process.stderr.write = errWrite;
  // Console takes any object with write(): strings then reach the writer
  // without a detour through Buffers.
  const EventEmitter = require('events');
  function sink(write) {
    const e = new EventEmitter();
    e.write = write;
    return e;
  }
  globalThis.console = new Console({ stdout: sink(outWrite), stderr: sink(errWrite), colorMode: false });

  // require() resolves from the working directory, like a script there.
  function setRequire() {
    const req = Module.createRequire(path.join(process.cwd(), '<cell>'));
    globalThis.require = req;
    globalThis.module = { exports: {}, require: req };
    globalThis.exports = globalThis.module.exports;
    globalThis.__filename = path.join(process.cwd(), '<cell>');
    globalThis.__dirname = process.cwd();
  }
  setRequire();

  const displaySym = Symbol.for('Jupyter.display');
  function bundleOf(v) {
    if (v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v[displaySym] === 'function') {
      try {
        const b = v[displaySym]();
        if (b && typeof b === 'object') return b;
      } catch (e) { /* fall back to inspect */ }
    }
    const b = { 'text/plain': util.inspect(v, { depth: 4, colors: false, maxArrayLength: 100, maxStringLength: 10000, breakLength: 100 }) };
    if (v !== null && typeof v === 'object' && (Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype)) {
      try {
        const s = stringify(v);
        if (s !== undefined && s.length <= MAX_JSON) b['application/json'] = parse(s);
      } catch (e) { /* circular or BigInt: text only */ }
    }
    return b;
  }
  // display(value) shows a value (or a raw MIME bundle with {raw: true})
  // without ending the cell, as IPython's display() does.
  if (typeof globalThis.display === 'undefined') {
    globalThis.display = function display(v, opts) {
      emit({ t: 'result', main: false, bundle: opts && opts.raw ? v : bundleOf(v) });
    };
  }

  function errorOf(e) {
    if (e instanceof Error || (e && typeof e === 'object' && 'stack' in e)) {
      let stack = String(e.stack || '');
      // Frames of the driver itself say nothing to the cell's author.
      stack = stack.split('\n').filter((l) => !/paddockDriver|\[eval\]|\(node:|at node:/.test(l)).join('\n');
      return { name: String(e.name || 'Error'), value: String(e.message || ''), traceback: stack };
    }
    return { name: 'Error', value: util.inspect(e), traceback: 'Uncaught ' + util.inspect(e) };
  }

  // rewrite turns top-level let/const into var (and class C into
  // var C = class C) so that a cell may run again, or redeclare a name an
  // earlier cell declared, as notebook users expect.
  function rewrite(code) {
    if (!acorn) return code;
    let ast;
    try {
      ast = acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true, allowReturnOutsideFunction: false });
    } catch (e) {
      return code; // let vm report the syntax error with its own message
    }
    const edits = [];
    for (const node of ast.body) {
      if (node.type === 'VariableDeclaration' && (node.kind === 'let' || node.kind === 'const')) {
        edits.push([node.start, node.start + node.kind.length, 'var']);
      } else if (node.type === 'ClassDeclaration' && node.id) {
        edits.push([node.start, node.start, 'var ' + node.id.name + ' = ']);
        edits.push([node.end, node.end, ';']);
      }
    }
    for (let i = edits.length - 1; i >= 0; i--) {
      const [s, e, t] = edits[i];
      code = code.slice(0, s) + t + code.slice(e);
    }
    return code;
  }

  let ts = null;
  function stripTypes(code) {
    if (!ts) {
      // Debian's node-typescript, a global npm install, or the cwd's.
      const dirs = ['/usr/share/nodejs', '/usr/lib/nodejs', '/usr/lib/node_modules', '/usr/local/lib/node_modules'];
      let where;
      for (const d of dirs) {
        try { where = require.resolve(path.join(d, 'typescript')); break; } catch (e) { /* next */ }
      }
      if (!where) {
        try { where = require.resolve('typescript', { paths: [process.cwd()] }); } catch (e) { /* none */ }
      }
      if (!where) {
        const err = new Error('TypeScript needs the typescript package in the sandbox (Debian: apt-get install node-typescript)');
        err.name = 'TypeScriptUnavailable';
        throw err;
      }
      ts = require(where);
    }
    const out = ts.transpileModule(code, {
      reportDiagnostics: true,
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, removeComments: false, esModuleInterop: true },
    });
    const diags = (out.diagnostics || []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (diags.length > 0) {
      const d = diags[0];
      const msg = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      let where = '';
      if (d.file && d.start !== undefined) {
        const lc = d.file.getLineAndCharacterOfPosition(d.start);
        where = 'cell.ts:' + (lc.line + 1) + ':' + (lc.character + 1) + ' ';
      }
      const err = new SyntaxError(msg);
      err.stack = 'SyntaxError: ' + msg + '\n    at ' + where.trim();
      throw err;
    }
    // transpileModule marks a file with imports as a module; the marker
    // needs an exports object, which setRequire provides.
    return out.outputText.replace(/^"use strict";\s*/, '');
  }

  let count = 0;
  let current = null; // the running cell: { id, interrupt }

  process.on('SIGINT', () => {
    // Outside synchronous code (vm's breakOnSigint handles that): a cell
    // waiting on a promise is abandoned; its context stays.
    if (current && current.interrupt) current.interrupt();
  });

  async function run(cell) {
    count++;
    outBytes = 0;
    const saved = {};
    const env = cell.env || {};
    for (const k of Object.keys(env)) {
      saved[k] = Object.prototype.hasOwnProperty.call(process.env, k) ? process.env[k] : undefined;
      process.env[k] = env[k];
    }
    let status = 'ok';
    try {
      let code = cell.code;
      if (cell.lang === 'typescript') code = stripTypes(code);
      code = rewrite(code);
      let wrapped = null;
      if (processTopLevelAwait && code.includes('await')) {
        try { wrapped = processTopLevelAwait(code); } catch (e) { wrapped = null; }
      }
      const opts = { filename: 'cell' + count + (cell.lang === 'typescript' ? '.ts' : '.js') };
      // import() needs a loader; Node 21+ lends vm its own.
      if (vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER) opts.importModuleDynamically = vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
      const script = new vm.Script(wrapped || code, opts);
      let value = script.runInThisContext({ breakOnSigint: true, displayErrors: false });
      if (wrapped) {
        value = await new Promise((resolve, reject) => {
          current.interrupt = () => {
            const e = new Error('execution interrupted');
            e.name = 'KeyboardInterrupt';
            e.stack = 'KeyboardInterrupt: execution interrupted';
            reject(e);
          };
          Promise.resolve(value).then(resolve, reject);
        });
        value = value && value.value; // processTopLevelAwait wraps the completion value
      }
      if (value !== undefined) emit({ t: 'result', main: true, bundle: bundleOf(value), count });
    } catch (e) {
      status = 'error';
      let err = errorOf(e);
      if (e && e.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') {
        err = { name: 'KeyboardInterrupt', value: 'execution interrupted', traceback: 'KeyboardInterrupt: execution interrupted' };
      }
      emit({ t: 'error', error: err });
    } finally {
      for (const k of Object.keys(saved)) {
        if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k];
      }
      setRequire(); // a cell may have changed the working directory
    }
    emit({ t: 'done', id: cell.id, status, count });
  }

  // Cells run one at a time, in order.
  const queue = [];
  let busy = false;
  async function pump() {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
      const cell = queue.shift();
      current = { id: cell.id, interrupt: null };
      await run(cell);
      current = null;
    }
    busy = false;
  }

  // Unhandled rejections and exceptions from callbacks of earlier cells
  // are reported on stderr instead of ending the context.
  process.on('unhandledRejection', (e) => {
    const err = errorOf(e);
    errWrite('Unhandled promise rejection: ' + (err.traceback || err.name + ': ' + err.value) + '\n');
  });
  process.on('uncaughtException', (e) => {
    const err = errorOf(e);
    errWrite('Uncaught exception: ' + (err.traceback || err.name + ': ' + err.value) + '\n');
  });

  const input = fs.createReadStream(null, { fd: IN, highWaterMark: 1 << 16 });
  let pending = '';
  input.setEncoding('utf8');
  input.on('data', (chunk) => {
    pending += chunk;
    let i;
    while ((i = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, i);
      pending = pending.slice(i + 1);
      if (line.trim() === '') continue;
      let cell;
      try { cell = parse(line); } catch (e) { continue; }
      queue.push(cell);
    }
    pump();
  });
  input.on('end', () => process.exit(0)); // the supervisor closed the channel
  input.on('error', () => process.exit(0));
  emit({ t: 'ready', node: process.version, acorn: !!acorn, tla: !!processTopLevelAwait });
})();
