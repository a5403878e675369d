// The unmodified @e2b/code-interpreter SDK running the code-interpreter
// cases against Paddock's E2B handler (E2B_SANDBOX_URL points at it; the
// sandbox object is built locally, as Sandbox.connect would after asking
// the control plane, which is not what this test is about).
import { Sandbox } from '@e2b/code-interpreter';
import assert from 'node:assert/strict';

const sbx = new Sandbox({ sandboxId: 'sbx-e2bci-test', sandboxUrl: process.env.E2B_SANDBOX_URL, apiKey: 'e2b_0000', requestTimeoutMs: 120000 });
let last = Date.now();
const ok = (name) => { console.log('ok ' + name + ' (' + (Date.now() - last) + ' ms)'); last = Date.now(); };

let ex = await sbx.runCode('x = 41\nx + 1');
assert.equal(ex.text, '42');
assert.equal(ex.error, undefined);
assert.ok(ex.executionCount >= 1);
ex = await sbx.runCode('x');
assert.equal(ex.text, '41');
ok('state across cells');

ex = await sbx.runCode('"a string"');
assert.equal(ex.text, 'a string');
ok('string result without quotes');

ex = await sbx.runCode('def f():\n    raise ValueError("bad value")\nf()');
assert.equal(ex.error.name, 'ValueError');
assert.equal(ex.error.value, 'bad value');
assert.match(ex.error.traceback, /ValueError/);
assert.match(ex.error.traceback, /f\(\)/);
ok('error name, value and traceback');

const seen = [];
ex = await sbx.runCode('import sys, time\nprint("one", flush=True)\nprint("two", file=sys.stderr, flush=True)\nprint("three")', {
  onStdout: (m) => seen.push('out:' + m.line.trim()),
  onStderr: (m) => seen.push('err:' + m.line.trim()),
});
assert.deepEqual(seen, ['out:one', 'err:two', 'out:three']);
assert.deepEqual(ex.logs.stdout, ['one\n', 'three\n']);
ok('streaming order');

ex = await sbx.runCode('import matplotlib.pyplot as plt\nplt.bar(["a", "b"], [3, 5])\nplt.title("Sales")\nplt.show()');
assert.equal(ex.results.length, 1);
const png = Buffer.from(ex.results[0].png, 'base64');
assert.equal(png.subarray(1, 4).toString(), 'PNG');
assert.equal(ex.results[0].chart.type, 'bar');
assert.equal(ex.results[0].chart.title, 'Sales');
assert.equal(ex.results[0].chart.elements.length, 2);
assert.ok(ex.results[0].formats().includes('png'));
ok('matplotlib png and chart');

ex = await sbx.runCode('import pandas as pd\npd.DataFrame({"a": [1, 2], "b": ["x", "y"]})');
assert.match(ex.results[0].html, /<table/);
assert.deepEqual(ex.results[0].data, { a: [1, 2], b: ['x', 'y'] });
ok('dataframe html and data');

ex = await sbx.runCode('import os\nos.environ.get("E2B_TEST_VAR")', { envs: { E2B_TEST_VAR: 'hello' } });
assert.equal(ex.text, 'hello');
ex = await sbx.runCode('str(os.environ.get("E2B_TEST_VAR"))');
assert.equal(ex.text, 'None');
ok('per-cell envs');

const js = await sbx.createCodeContext({ language: 'js' });
assert.equal(js.language, 'javascript');
await sbx.runCode('let count = 1', { context: js });
ex = await sbx.runCode('count += 1; count', { context: js });
assert.equal(ex.text, '2');
ex = await sbx.runCode('throw new TypeError("nope")', { context: js });
assert.equal(ex.error.name, 'TypeError');
ok('javascript context');

const py = await sbx.createCodeContext({ cwd: '/tmp' });
assert.equal(py.cwd, '/tmp');
ex = await sbx.runCode('import os\nos.getcwd()', { context: py });
assert.equal(ex.text, '/tmp');
await sbx.runCode('y = 5', { context: py });
const list = await sbx.listCodeContexts();
assert.ok(list.some((c) => c.id === py.id && c.language === 'python'));
assert.ok(list.some((c) => c.id === js.id));
await sbx.restartCodeContext(py);
ex = await sbx.runCode('y', { context: py });
assert.equal(ex.error.name, 'NameError');
await sbx.removeCodeContext(py.id);
assert.ok(!(await sbx.listCodeContexts()).some((c) => c.id === py.id));
ok('contexts create, list, restart, remove');

await assert.rejects(sbx.runCode('1', { context: { id: 'no-such-context' } }), (e) => e.name === 'NotFoundError' && /no-such-context/.test(e.message));
await assert.rejects(sbx.runCode('1', { language: 'cobol' }), (e) => /400/.test(e.message));
ok('bad input');

ex = await sbx.runCode('echo $((6 * 7))', { language: 'bash' });
assert.deepEqual(ex.logs.stdout, ['42\n']);
ok('bash');

console.log('ALL OK');
// The SDK leaves its request timer running after a refused request;
// do not wait for it.
process.exit(0);
