// The code interpreter (docs/code.md): runCode, its stream, contexts, against a real server.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { inflateSync } from "node:zlib";
import { after, before, describe, it } from "node:test";
import { AbortedError, Execution, InvalidArgumentError, NotFoundError, Paddock, StreamInterruptedError, TooLargeError } from "../dist/index.js";
import { URL as SERVER, cuttingProxy, key, skip, tenantClient } from "./helpers.mjs";

// The host template runs the host's /usr/bin/python3: what it imports, the kernel imports.
const noMatplotlib = spawnSync("/usr/bin/python3", ["-c", "import matplotlib"]).status === 0
  ? false : "matplotlib is not installed on this host (CI installs python3-matplotlib)";

/** Width and height of a PNG whose chunks check out and whose pixels inflate. */
function decodePng(b) {
  const buf = Buffer.from(b);
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  let i = 8, w = 0, h = 0;
  const idat = [];
  while (i < buf.length) {
    const n = buf.readUInt32BE(i);
    const kind = buf.toString("latin1", i + 4, i + 8);
    const chunk = buf.subarray(i + 8, i + 8 + n);
    if (kind === "IHDR") [w, h] = [chunk.readUInt32BE(0), chunk.readUInt32BE(4)];
    if (kind === "IDAT") idat.push(chunk);
    i += 12 + n;
  }
  const px = inflateSync(Buffer.concat(idat));
  assert.ok(px.length >= h * (w + 1), "every pixel row is there");
  return [w, h];
}

async function serverMessage(id, body) {
  const r = await fetch(`${SERVER}/v1/sandboxes/${id}/code`, { method: "POST", headers: { Authorization: `Bearer ${key()}` }, body: JSON.stringify(body) });
  assert.equal(r.status, 400);
  return (await r.json()).error.message;
}

describe("code interpreter", { skip }, () => {
  let c, sb;
  before(async () => {
    c = await tenantClient();
    sb = await c.sandboxes.create({ labels: { suite: "node" } });
  });
  after(async () => sb && (await sb.kill()));

  it("state across cells", async () => {
    const a = await sb.runCode("x = 40\nprint('set')");
    assert.ok(a instanceof Execution);
    assert.deepEqual([a.status, a.stdout, a.text, a.error], ["ok", "set\n", undefined, undefined]);
    const b = await sb.runCode("x + 2");
    assert.equal(b.text, "42");
    assert.equal(b.executionCount, a.executionCount + 1);
    assert.equal(b.contextId, a.contextId);
  });

  it("an error's name, value and traceback", async () => {
    const seen = [];
    const ex = await sb.runCode("def f():\n    return 1 / 0\nf()", { onError: (e) => seen.push(e) });
    assert.equal(ex.status, "error");
    assert.equal(ex.error.name, "ZeroDivisionError");
    assert.equal(ex.error.value, "division by zero");
    assert.match(ex.error.traceback, /f\(\)/);
    assert.deepEqual(seen, [ex.error]);
  });

  it("streaming order and callbacks", async () => {
    const order = [];
    const code = "import sys, time\nprint('a', flush=True); time.sleep(0.2)\nprint('b', file=sys.stderr, flush=True); time.sleep(0.2)\ndisplay({'k': 1}); time.sleep(0.2)\nprint('c', flush=True)\n'done'";
    const ex = await sb.runCode(code, {
      onStdout: (t) => order.push("out:" + t.trim()), onStderr: (t) => order.push("err:" + t.trim()), onResult: (r) => order.push("res:" + r.text),
    });
    assert.deepEqual(order, ["out:a", "err:b", "res:{'k': 1}", "out:c", "res:'done'"]);
    assert.deepEqual(ex.results[0].json, { k: 1 });
    const s = sb.runCodeStream("for i in range(3): print(i, flush=True)");
    const types = [];
    for await (const ev of s) {
      types.push(ev.type);
      if (ev.type === "stdout") assert.equal(s.execution.status, undefined, "output before the end");
    }
    assert.equal(types[0], "start");
    assert.equal(types.at(-1), "end");
    assert.equal(s.execution.stdout, "0\n1\n2\n");
  });

  it("a matplotlib PNG that decodes", { skip: noMatplotlib }, async () => {
    const ex = await sb.runCode("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title('squares')\nplt.show()", { timeoutMs: 120_000 });
    assert.equal(ex.status, "ok", ex.stderr);
    const png = ex.results.find((r) => r.formats().includes("image/png"));
    const [w, h] = decodePng(png.png);
    assert.ok(w > 100 && h > 100);
    assert.equal(png.chart.type, "line");
  });

  it("two contexts isolated; restart, delete", async () => {
    const one = await sb.contexts.create({ language: "python", cwd: "/tmp" });
    const two = await sb.contexts.create({ language: "python" });
    assert.notEqual(one.id, two.id);
    await sb.runCode("secret = 'one'", { context: one });
    assert.equal((await sb.runCode("secret", { context: two.id })).error.name, "NameError");
    assert.equal((await sb.runCode("secret", { context: one })).text, "'one'");
    const ids = (await sb.contexts.list()).map((x) => x.id);
    assert.ok(ids.includes(one.id) && ids.includes(two.id));
    assert.equal((await sb.contexts.get(one)).cwd, "/tmp");
    assert.equal((await sb.contexts.restart(one)).restarts, 1);
    assert.equal((await sb.runCode("secret", { context: one })).error.name, "NameError");
    await sb.contexts.delete(two);
    await assert.rejects(sb.contexts.get(two), NotFoundError);
  });

  it("bash and javascript contexts", async () => {
    const sh = await sb.contexts.create({ language: "bash" });
    await sb.runCode("V=hej; cd /tmp", { context: sh });
    const ex = await sb.runCode("echo $V $(pwd); false", { context: sh });
    assert.deepEqual([ex.stdout, ex.status, ex.exitCode], ["hej /tmp\n", "error", 1]);
    if ((await sb.exec("command -v node")).exit_code === 0) {
      await sb.runCode("let n = 20", { language: "js" });
      assert.equal((await sb.runCode("n * 2 + 2", { language: "js" })).text, "42");
    }
  });

  it("aborting or breaking out interrupts the cell; the context keeps its state", async () => {
    const ctx = await sb.contexts.create({ language: "python" });
    const ac = new AbortController();
    const s = sb.runCodeStream("x = 7\nprint('sleeping', flush=True)\nimport time; time.sleep(120)", { context: ctx, signal: ac.signal });
    await assert.rejects((async () => {
      for await (const ev of s) if (ev.type === "stdout") ac.abort();
    })(), AbortedError);
    // Queued behind the sleeping cell unless the disconnect interrupted it.
    const next = await sb.runCode("x", { context: ctx, signal: AbortSignal.timeout(60_000) });
    assert.equal(next.text, "7");
    for await (const ev of sb.runCodeStream("y = 8\nprint('z', flush=True)\nimport time; time.sleep(120)", { context: ctx })) {
      if (ev.type === "stdout") break;
    }
    assert.equal((await sb.runCode("y", { context: ctx, signal: AbortSignal.timeout(60_000) })).text, "8");
  });

  it("a stream cut mid-way throws", async () => {
    const proxy = await cuttingProxy(4000);
    try {
      const far = new Paddock({ url: proxy.url, apiKey: key() }).sandboxes.connect(sb.info);
      const got = [];
      await assert.rejects(far.runCode("import time\nwhile True:\n    print('0123456789abcdef', flush=True); time.sleep(0.01)",
        { onStdout: (t) => got.push(t), timeoutMs: 60_000 }), StreamInterruptedError);
      assert.ok(got.length > 0);
    } finally {
      proxy.close();
    }
  });

  it("client-side checks read as the server's", async () => {
    for (const [o, body] of [
      [{ language: "cobol" }, { code: "1", language: "cobol" }],
      [{ language: "python", context: "c1" }, { code: "1", language: "python", context_id: "c1" }],
      [{ timeoutMs: -1 }, { code: "1", timeout_ms: -1 }],
    ]) {
      const want = await serverMessage(sb.id, body);
      await assert.rejects(sb.runCode("1", o), (e) => e instanceof InvalidArgumentError && e.message === want);
    }
    await assert.rejects(sb.runCode("#".repeat((1 << 20) + 1)), TooLargeError);
  });
});

describe("Execution (offline)", () => {
  it("gathers a cell's events; unknown event types are ignored", () => {
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const ex = new Execution();
    for (const ev of [
      { type: "start", start: { context_id: "c1", language: "python", restarted: true, state_lost: true } },
      { type: "stdout", text: "a" }, { type: "stderr", text: "b" }, { type: "stdout", text: "c" },
      { type: "result", result: { is_main_result: false, bundle: { "image/png": Buffer.from(png).toString("base64"), "text/plain": "<Figure>" } } },
      { type: "error", error: { name: "E", value: "v", traceback: "tb" } },
      { type: "result", result: { is_main_result: true, bundle: { "text/plain": "42", "application/json": { k: [1] } } } },
      { type: "future-kind" },
      { type: "end", end: { status: "error", execution_count: 3, truncated: true } },
    ]) {
      assert.equal(ex.ended, false);
      ex.add(ev);
    }
    assert.deepEqual([ex.ended, ex.status, ex.executionCount, ex.truncated, ex.restarted, ex.stateLost], [true, "error", 3, true, true, true]);
    assert.deepEqual([ex.stdout, ex.stderr, ex.text, ex.contextId, ex.error.name], ["ac", "b", "42", "c1", "E"]);
    assert.deepEqual(ex.results[0].png, png);
    assert.deepEqual(ex.results[0].formats(), ["image/png", "text/plain"]);
    assert.deepEqual(ex.results[1].json, { k: [1] });
  });
});
