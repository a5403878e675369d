// Drives Paddock's E2B-compatible API with the unmodified
// @e2b/code-interpreter SDK, the way its users do: Sandbox.create() (the
// SDK's own template, code-interpreter-v1) through the control plane,
// then runCode and the context calls on port 49999. The Go test
// (code_sdk_linux_test.go) sets E2B_API_URL, E2B_SANDBOX_URL and
// E2B_API_KEY and reads the "ok NAME" lines; a failure prints "FAIL NAME".
import assert from 'node:assert/strict'
import { Sandbox } from '@e2b/code-interpreter'

let failed = false
async function step(name, fn) {
  const t0 = Date.now()
  try {
    await fn()
    console.log('ok', name, '(' + (Date.now() - t0) + ' ms)')
  } catch (err) {
    failed = true
    console.log('FAIL', name, err && err.stack ? err.stack : err)
  }
}

const sbx = await Sandbox.create({ requestTimeoutMs: 120000 })
console.log('SANDBOX ' + sbx.sandboxId)

await step('state across cells', async () => {
  let ex = await sbx.runCode('x = 41\nx + 1')
  assert.equal(ex.text, '42')
  assert.equal(ex.error, undefined)
  ex = await sbx.runCode('x')
  assert.equal(ex.text, '41')
})

await step('error name and traceback', async () => {
  const ex = await sbx.runCode('def f():\n    raise ValueError("bad value")\nf()')
  assert.equal(ex.error.name, 'ValueError')
  assert.equal(ex.error.value, 'bad value')
  assert.match(ex.error.traceback, /ValueError/)
  assert.match(ex.error.traceback, /f\(\)/)
})

await step('matplotlib png that decodes', async () => {
  const ex = await sbx.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title("squares")\nplt.show()')
  assert.equal(ex.results.length, 1)
  const png = Buffer.from(ex.results[0].png, 'base64')
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  // IHDR: width and height of a real figure.
  assert.equal(png.subarray(12, 16).toString(), 'IHDR')
  assert.ok(png.readUInt32BE(16) > 100 && png.readUInt32BE(20) > 100)
  assert.equal(ex.results[0].chart.type, 'line')
  assert.equal(ex.results[0].chart.title, 'squares')
})

await step('dataframe html and data', async () => {
  const ex = await sbx.runCode('import pandas as pd\npd.DataFrame({"a": [1, 2], "b": ["x", "y"]})')
  assert.match(ex.results[0].html, /<table/)
  assert.deepEqual(ex.results[0].data, { a: [1, 2], b: ['x', 'y'] })
})

await step('two contexts isolated', async () => {
  const one = await sbx.createCodeContext()
  const two = await sbx.createCodeContext({ cwd: '/tmp' })
  await sbx.runCode('secret = "one"', { context: one })
  let ex = await sbx.runCode('secret', { context: two })
  assert.equal(ex.error.name, 'NameError')
  ex = await sbx.runCode('secret', { context: one })
  assert.equal(ex.text, 'one')
  ex = await sbx.runCode('import os\nos.getcwd()', { context: two })
  assert.equal(ex.text, '/tmp')
  const list = await sbx.listCodeContexts()
  assert.ok(list.some((c) => c.id === one.id) && list.some((c) => c.id === two.id))
  await sbx.restartCodeContext(one)
  ex = await sbx.runCode('secret', { context: one })
  assert.equal(ex.error.name, 'NameError')
  await sbx.removeCodeContext(two.id)
  assert.ok(!(await sbx.listCodeContexts()).some((c) => c.id === two.id))
})

await step('javascript state across cells', async () => {
  const js = await sbx.createCodeContext({ language: 'js' })
  assert.equal(js.language, 'javascript')
  await sbx.runCode('let count = 1', { context: js })
  let ex = await sbx.runCode('count += 1; count', { context: js })
  assert.equal(ex.text, '2')
  ex = await sbx.runCode('count * 10', { language: 'js' }) // the default JS context is another one
  assert.equal(ex.error.name, 'ReferenceError')
})

await step('streaming order', async () => {
  const seen = []
  const ex = await sbx.runCode('import sys, time\nprint("one", flush=True)\ntime.sleep(0.2)\nprint("two", file=sys.stderr, flush=True)\nprint("three")\n7', {
    onStdout: (m) => seen.push('out:' + m.line.trim()),
    onStderr: (m) => seen.push('err:' + m.line.trim()),
    onResult: (r) => seen.push('result:' + r.text),
  })
  assert.deepEqual(seen, ['out:one', 'err:two', 'out:three', 'result:7'])
  assert.deepEqual(ex.logs.stdout, ['one\n', 'three\n'])
})

await step('unknown context', async () => {
  await assert.rejects(sbx.runCode('1', { context: { id: 'no-such-context' } }), (e) => e.name === 'NotFoundError')
})

await step('files and commands still work beside it', async () => {
  await sbx.runCode('open("/tmp/from-cell.txt", "w").write("hi")')
  assert.equal(await sbx.files.read('/tmp/from-cell.txt'), 'hi')
})

await sbx.kill()
console.log(failed ? 'SOME FAILED' : 'ALL OK')
process.exit(failed ? 1 : 0)
