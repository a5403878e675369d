// Every error path of the TypeScript SDK against the real server (and a
// real TCP proxy that cuts connections for the stream cases).
import assert from "node:assert/strict";
import net from "node:net";
import http from "node:http";
import { after, before, describe, it } from "node:test";
import {
  APIConnectionError, InvalidArgumentError, LimitExceededError, NotFoundError, Paddock, RateLimitedError,
  StreamInterruptedError, TooLargeError, UnauthenticatedError, UnavailableError,
} from "../dist/index.js";
import { URL as SERVER, admin, cuttingProxy, key, skip, tenantClient } from "./helpers.mjs";

function freePort() {
  return new Promise((res) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => res(p));
    });
  });
}

describe("offline", () => {
  it("unreachable server: bounded retries, then APIConnectionError", async () => {
    const c = new Paddock({ url: `http://127.0.0.1:${await freePort()}`, apiKey: "pdk_x", maxRetries: 2 });
    const t0 = Date.now();
    await assert.rejects(c.sandboxes.list(), (e) => e instanceof APIConnectionError && e.code === "connection_error");
    assert.ok(Date.now() - t0 < 5000);
  });

  it("env defaults and bad url", () => {
    process.env.PADDOCK_URL = "http://127.0.0.1:1/";
    process.env.PADDOCK_API_KEY = "pdk_env";
    try {
      const c = new Paddock();
      assert.equal(c.transport.url, "http://127.0.0.1:1");
      assert.equal(c.transport.apiKey, "pdk_env");
    } finally {
      process.env.PADDOCK_URL = SERVER;
      delete process.env.PADDOCK_API_KEY;
    }
    assert.throws(() => new Paddock({ url: "ftp://x" }), InvalidArgumentError);
  });

  it("retries 503 for GET only", async () => {
    const hits = [];
    const srv = http.createServer((req, res) => {
      hits.push(req.method);
      req.resume();
      req.on("end", () => {
        const fail = hits.length === 1;
        res.writeHead(fail ? 503 : 200, { "content-type": "application/json" });
        res.end(fail ? '{"error":{"code":"unavailable","message":"busy"}}' : '{"ok":true,"version":"x"}');
      });
    });
    await new Promise((r) => srv.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${srv.address().port}`;
    try {
      assert.equal((await new Paddock({ url, apiKey: "k" }).health()).ok, true);
      assert.deepEqual(hits, ["GET", "GET"]);
      hits.length = 0;
      await assert.rejects(new Paddock({ url, apiKey: "k" }).sandboxes.create(), UnavailableError);
      assert.deepEqual(hits, ["POST"]);
    } finally {
      srv.close();
    }
  });
});

describe("against the server", { skip }, () => {
  let c, sb;
  before(async () => {
    c = await tenantClient();
    sb = await c.sandboxes.create();
  });
  after(async () => sb && (await sb.kill()));

  it("bad key: 401 unauthenticated", async () => {
    for (const apiKey of ["pdk_notakey", ""]) {
      const bad = new Paddock({ url: SERVER, apiKey });
      await assert.rejects(bad.sandboxes.list(), (e) => e instanceof UnauthenticatedError && e.status === 401);
    }
  });

  it("another tenant's sandbox: 404", async () => {
    const a = admin();
    const name = "tsoth-" + Math.random().toString(36).slice(2, 8);
    await a.tenants.create(name);
    const other = new Paddock({ url: SERVER, apiKey: (await a.keys.create({ tenant: name, scopes: ["read", "write", "exec"] })).key });
    await assert.rejects(other.sandboxes.get(sb.id), NotFoundError);
    const foreign = other.sandboxes.connect(sb.info);
    await assert.rejects(foreign.exec("id"), NotFoundError);
    await assert.rejects(foreign.files.read("/etc/hostname"), NotFoundError);
    await assert.rejects(other.sandboxes.delete(sb.id), NotFoundError);
    assert.equal((await sb.exec("echo here")).stdout, "here\n");
  });

  it("rate quota: 429 with Retry-After is waited out (or raised with maxRetries 0)", async () => {
    const a = admin();
    const name = "tsrate-" + Math.random().toString(36).slice(2, 8);
    await a.tenants.create(name, { quotas: { create_per_minute: 12, create_burst: 1 } });
    const apiKey = (await a.keys.create({ tenant: name, scopes: ["read", "write", "exec"] })).key;
    const strict = new Paddock({ url: SERVER, apiKey, maxRetries: 0 });
    const first = await strict.sandboxes.create();
    try {
      await assert.rejects(strict.sandboxes.create(), (e) => e instanceof RateLimitedError && e.retryAfter >= 1 && e.retryAfter <= 5 && e.status === 429);
      const t0 = Date.now();
      const second = await new Paddock({ url: SERVER, apiKey }).sandboxes.create();
      const waited = Date.now() - t0;
      await second.kill();
      assert.ok(waited >= 900 && waited < 20_000, String(waited));
      await assert.rejects(new Paddock({ url: SERVER, apiKey, maxRetryWait: 0.1 }).sandboxes.create(), RateLimitedError);
    } finally {
      await first.kill();
    }
  });

  it("count quota: 429 limit_exceeded is not retried", async () => {
    const a = admin();
    const name = "tscnt-" + Math.random().toString(36).slice(2, 8);
    await a.tenants.create(name, { quotas: { max_sandboxes: 1 } });
    const cc = new Paddock({ url: SERVER, apiKey: (await a.keys.create({ tenant: name, scopes: ["read", "write", "exec"] })).key });
    const one = await cc.sandboxes.create();
    try {
      const t0 = Date.now();
      await assert.rejects(cc.sandboxes.create(), (e) => e instanceof LimitExceededError && e.retryAfter === undefined);
      assert.ok(Date.now() - t0 < 2000);
    } finally {
      await one.kill();
    }
  });

  it("a stream cut mid-way throws, nothing hangs", async () => {
    const proxy = await cuttingProxy(4000);
    try {
      const far = new Paddock({ url: proxy.url, apiKey: key() }).sandboxes.connect(sb.info);
      const t0 = Date.now();
      let got = 0;
      await assert.rejects((async () => {
        for await (const ch of far.execStream("while true; do echo 0123456789abcdef; sleep 0.01; done")) got += ch.data.length;
      })(), StreamInterruptedError);
      assert.ok(got > 0 && got < 4000 && Date.now() - t0 < 15_000);
      await sb.files.write("/tmp/big", new Uint8Array(200_000));
      await assert.rejects((async () => { for await (const _ of far.files.readStream("/tmp/big")) void _; })(), StreamInterruptedError);
      await assert.rejects(far.files.read("/tmp/big"), StreamInterruptedError);
      const p = await sb.processes.start("while true; do echo tick; sleep 0.01; done");
      await assert.rejects((async () => { for await (const _ of far.processes.output(p, { follow: true })) void _; })(), StreamInterruptedError);
      await sb.processes.kill(p);
    } finally {
      proxy.close();
    }
  });

  it("oversized uploads are refused before sending", async () => {
    const small = new Paddock({ url: SERVER, apiKey: key(), maxUploadBytes: 1024 }).sandboxes.connect(sb.info);
    for (const d of [new Uint8Array(2048), "y".repeat(2048), new Blob([new Uint8Array(4096)])]) {
      await assert.rejects(small.files.write("/tmp/too-big", d), (e) => e instanceof TooLargeError && /nothing was sent/.test(e.message));
    }
    assert.equal(await sb.files.exists("/tmp/too-big"), false);
    await small.files.write("/tmp/ok", new Uint8Array(1000));
  });

  const cases = [
    ["empty cmd", (s) => s.exec([]), ["POST", "/exec", { cmd: [] }]],
    ["NUL in arg", (s) => s.exec(["echo", "a\0b"]), ["POST", "/exec", { cmd: ["echo", "a\0b"] }]],
    ["bad user", (s) => s.exec(["id"], { user: "admin" }), ["POST", "/exec", { cmd: ["id"], user: "admin" }]],
    ["negative timeout", (s) => s.exec(["id"], { timeoutMs: -1 }), ["POST", "/exec", { cmd: ["id"], timeout_ms: -1 }]],
    ["output cap", (s) => s.exec(["id"], { maxOutputBytes: 2 ** 30 }), ["POST", "/exec", { cmd: ["id"], max_output_bytes: 2 ** 30 }]],
    ["empty path", (s) => s.files.read(""), ["GET", "/files/stat?path=", null]],
    ["dotdot", (s) => s.files.read("/a/../etc/passwd"), ["GET", "/files/stat?path=/a/../etc/passwd", null]],
    ["mode", (s) => s.files.write("/tmp/m", "x", { mode: "9z" }), ["PUT", "/files?path=/tmp/m&mode=9z", null]],
    ["setuid", (s) => s.files.write("/tmp/m", "x", { mode: 0o4755 }), ["PUT", "/files?path=/tmp/m&mode=4755", null]],
    ["process buffer", (s) => s.processes.start(["true"], { bufferBytes: 10 }), ["POST", "/processes", { cmd: ["true"], buffer_bytes: 10 }]],
  ];
  for (const [name, call, [method, path, body]] of cases) {
    it(`client-side check matches the server: ${name}`, async () => {
      let mine;
      try {
        await call(sb);
      } catch (e) {
        mine = e;
      }
      assert.ok(mine instanceof InvalidArgumentError, String(mine));
      const r = await fetch(`${SERVER}/v1/sandboxes/${sb.id}${path}`, {
        method, headers: { Authorization: `Bearer ${key()}` }, body: body === null ? undefined : JSON.stringify(body),
      });
      assert.equal(r.status, 400);
      const server = (await r.json()).error.message;
      assert.ok(mine.message === server || server.endsWith(": " + mine.message), `${mine.message} vs ${server}`);
    });
  }
});
