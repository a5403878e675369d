// The TypeScript SDK against a real server: every method.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { NotFoundError, CommandNotFoundError, ConflictError, ForbiddenError, models } from "../dist/index.js";
import { admin, collect, skip, tenantClient } from "./helpers.mjs";

describe("sandboxes and exec", { skip }, () => {
  let c, sb;
  before(async () => {
    c = await tenantClient();
    sb = await c.sandboxes.create({ labels: { suite: "node" }, env: { GREETING: "hej" }, timeoutS: 300 });
  });
  after(async () => sb && (await sb.kill()));

  it("health, templates, openapi", async () => {
    assert.equal((await c.health()).ok, true);
    assert.ok((await c.templates()).length > 0);
    const doc = await c.openapi();
    assert.ok(doc.paths["/v1/sandboxes/{id}/exec"]);
  });

  it("lifecycle", async () => {
    assert.match(sb.id, /^sb-/);
    assert.equal(sb.info.state, "running");
    assert.equal((await c.sandboxes.get(sb.id)).info.created_at, sb.info.created_at);
    assert.ok((await c.sandboxes.list({ labels: { suite: "node" } })).some((s) => s.id === sb.id));
    assert.equal((await c.sandboxes.list({ labels: { suite: "none" } })).length, 0);
    const before = sb.info.expires_at;
    await sb.setTimeout(900);
    assert.ok(sb.info.expires_at > before);
    assert.ok((await sb.stats()).pids >= 1);
    const other = await c.sandboxes.create();
    await other.kill();
    await assert.rejects(c.sandboxes.get(other.id), NotFoundError);
    await other.kill(); // gone already: fine
  });

  it("exec buffered", async () => {
    const r = await sb.exec("echo $GREETING; echo err >&2; exit 7");
    assert.deepEqual([r.stdout, r.stderr, r.exit_code], ["hej\n", "err\n", 7]);
    const u = await sb.exec(["sh", "-c", 'printf "%s|%s|%s" "$X" "$(pwd)" "$(id -u)"'], { env: { X: "1" }, cwd: "/tmp", user: "user" });
    assert.equal(u.stdout, "1|/tmp|1000");
    assert.equal((await sb.exec(["cat"], { stdin: "piped" })).stdout, "piped");
    const t = await sb.exec("sleep 5", { timeoutMs: 300 });
    assert.equal(t.timed_out, true);
    const cut = await sb.exec("head -c 5000 /dev/zero", { maxOutputBytes: 1000 });
    assert.equal(cut.stdout.length, 1000);
    assert.equal(cut.stdout_truncated, true);
    await assert.rejects(sb.exec(["no-such-program-xyz"]), CommandNotFoundError);
  });

  it("exec stream", async () => {
    const st = sb.execStream("for i in 1 2 3; do echo $i; sleep 0.05; done; echo bad >&2; exit 4");
    const chunks = await collect(st);
    assert.equal(chunks.filter((x) => x.stream === "stdout").map((x) => x.data).join(""), "1\n2\n3\n");
    assert.equal(chunks.filter((x) => x.stream === "stderr").map((x) => x.data).join(""), "bad\n");
    assert.equal(st.result.exit_code, 4);
    assert.equal((await sb.execStream(["sh", "-c", "exit 3"]).wait()).exit_code, 3);
  });

  it("AbortSignal cancels an exec and a stream", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const t0 = Date.now();
    await assert.rejects(sb.exec("sleep 10", { signal: ac.signal }), (e) => e.code === "aborted");
    const ac2 = new AbortController();
    let got = 0;
    await assert.rejects((async () => {
      for await (const ch of sb.execStream("while true; do echo x; sleep 0.02; done", { signal: ac2.signal })) {
        got += ch.data.length;
        if (got > 10) ac2.abort();
      }
    })(), (e) => e.code === "aborted");
    assert.ok(Date.now() - t0 < 8000);
  });

  it("files", async () => {
    const info = await sb.files.write("notes/a.txt", "héllo\n", { parents: true, mode: 0o600 });
    assert.equal(info.path, "/workspace/notes/a.txt");
    assert.equal(info.mode, "0600");
    assert.equal(await sb.files.readText("notes/a.txt"), "héllo\n");
    const bin = new Uint8Array(256).map((_, i) => i);
    await sb.files.write("notes/b.bin", bin);
    assert.deepEqual(await sb.files.read("notes/b.bin"), bin);
    assert.deepEqual((await sb.files.list("notes")).entries.map((e) => e.name), ["a.txt", "b.bin"]);
    assert.equal((await sb.files.stat("notes/a.txt")).type, "file");
    assert.equal(await sb.files.exists("notes/zzz"), false);
    await sb.files.mkdir("x/y", { parents: true });
    await sb.files.move("notes/a.txt", "x/y/a.txt");
    const e = await sb.files.edit("x/y/a.txt", { old_string: "héllo", new_string: "hello" });
    assert.equal(e.replacements, 1);
    assert.equal((await sb.files.find("**/*.txt", { path: "x" })).matches.length, 1);
    assert.equal((await sb.files.search("hello", { path: "x" })).matches[0].line, 1);
    assert.ok((await sb.files.remove("x", { recursive: true })).removed >= 3);
    await assert.rejects(sb.files.read("nope"), NotFoundError);
  });

  it("files streamed both ways", async () => {
    const part = new Uint8Array(1 << 20).fill(7);
    async function* gen() {
      for (let i = 0; i < 8; i++) yield part;
    }
    const info = await sb.files.write("/tmp/big.bin", gen());
    assert.equal(info.size, 8 << 20);
    let n = 0;
    let chunks = 0;
    for await (const b of sb.files.readStream("/tmp/big.bin")) {
      n += b.byteLength;
      chunks++;
    }
    assert.equal(n, 8 << 20);
    assert.ok(chunks > 1);
    const blob = new Blob(["blob-data"]);
    assert.equal((await sb.files.write("/tmp/blob", blob)).size, 9);
    let tar = 0;
    for await (const b of sb.files.downloadArchive("/tmp", { gzip: true })) tar += b.byteLength;
    assert.ok(tar > 0);
  });

  it("watch", async () => {
    await sb.files.mkdir("/workspace/w");
    const seen = [];
    for await (const ev of sb.files.watch("/workspace/w")) {
      seen.push(ev);
      if (ev.type === "ready") await sb.files.write("/workspace/w/n.txt", "x");
      else if (ev.path === "/workspace/w/n.txt") break;
    }
    assert.equal(seen[0].type, "ready");
  });

  it("processes", async () => {
    const p = await sb.processes.start("echo one; echo two >&2; sleep 0.2; exit 5", { tag: "job" });
    assert.equal(p.tag, "job");
    assert.ok((await sb.processes.list()).some((x) => x.id === p.id));
    assert.equal((await sb.processes.get("tag:job")).id, p.id);
    const done = await sb.processes.wait(p, { timeoutMs: 10_000 });
    assert.equal(done.exit_code, 5);
    const lines = await collect(sb.processes.output(p));
    assert.equal(lines.filter((l) => l.stream === "stdout").map((l) => l.data ?? "").join(""), "one\n");
    assert.equal(lines.at(-1).process.exit_code, 5);

    const cat = await sb.processes.start(["cat"], { stdin: true });
    assert.equal(await sb.processes.writeStdin(cat, "ping\n"), 5);
    await sb.processes.closeStdin(cat);
    assert.equal((await collect(sb.processes.output(cat, { follow: true }))).map((l) => l.data ?? "").join(""), "ping\n");

    const sl = await sb.processes.start(["sleep", "60"]);
    assert.equal(await sb.processes.signal(sl, "TERM"), 1);
    assert.equal((await sb.processes.wait(sl, { timeoutMs: 10_000 })).signal, "SIGTERM");
    await assert.rejects(sb.processes.signal(sl), ConflictError);
    const k = await sb.processes.start("sleep 60");
    assert.equal((await sb.processes.kill(k)).state, "exited");

    const pty = await sb.processes.start(["sh"], { pty: { rows: 24, cols: 80 } });
    await sb.processes.resize(pty, 30, 100);
    await sb.processes.writeStdin(pty, "stty size; exit\n");
    await sb.processes.wait(pty, { timeoutMs: 10_000 });
    assert.match((await collect(sb.processes.output(pty))).map((l) => l.data ?? "").join(""), /30 100/);
  });

  it("terminal (ws injected)", async () => {
    const t = await sb.terminal({ cmd: ["sh"], rows: 20, cols: 70 });
    assert.ok(t.pid > 0);
    t.send("stty size\n");
    assert.match(await t.readUntil("20 70", 10_000), /20 70/);
    t.resize(33, 99);
    await new Promise((r) => setTimeout(r, 100));
    t.send("stty size\n");
    assert.match(await t.readUntil("33 99", 10_000), /33 99/);
    t.send("exit 3\n");
    assert.equal((await t.wait(20_000)).exit_code, 3);
    t.close();
  });

  it("network, ports, tokens", async () => {
    assert.equal((await sb.network()).mode, "none");
    try {
      const n = await sb.setNetwork({ mode: "allowlist", allow: ["example.com"] });
      assert.deepEqual(n.allow, ["example.com"]);
      assert.equal((await sb.setNetwork({ mode: "none" })).mode, "none");
    } catch (e) {
      if (e.code !== "unsupported") throw e;
    }
    await sb.files.write("/tmp/www/index.html", "port-ok", { parents: true });
    await sb.processes.start(["python3", "-m", "http.server", "8766", "--bind", "127.0.0.1", "--directory", "/tmp/www"]);
    const u = await sb.portUrl(8766, { ttlS: 300 });
    assert.equal(u.port, 8766);
    let body = "";
    for (let i = 0; i < 100 && body !== "port-ok"; i++) {
      const r = await fetch(u.url);
      body = r.ok ? await r.text() : "";
      if (!r.ok) await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(body, "port-ok");
    const tok = await sb.createToken(["read", "exec"], { ttlS: 120 });
    const { Paddock } = await import("../dist/index.js");
    const scoped = new Paddock({ url: c.transport.url, apiKey: tok.token });
    const mine = await scoped.sandboxes.get(sb.id);
    assert.equal((await mine.exec("echo tok")).stdout, "tok\n");
    await assert.rejects(mine.files.write("x", "no"), ForbiddenError);
  });
});

describe("admin", { skip }, () => {
  it("tenants, keys, secrets, audit", async () => {
    const a = admin();
    const name = "tsadm-" + Math.random().toString(36).slice(2, 8);
    const t = await a.tenants.create(name, { quotas: { max_sandboxes: 3 } });
    assert.equal(t.quotas.max_sandboxes, 3);
    assert.ok((await a.tenants.list()).some((x) => x.name === name));
    assert.equal((await a.tenants.update(name, { max_sandboxes: 4 })).quotas.max_sandboxes, 4);
    assert.equal((await a.tenants.get(name)).name, name);
    const k = await a.keys.create({ tenant: name, scopes: ["read"] });
    assert.ok((await a.keys.list({ tenant: name })).some((x) => x.id === k.id));
    await a.keys.revoke(k.id);
    const sname = "TS_SECRET_" + Math.random().toString(36).slice(2, 6).toUpperCase();
    try {
      await a.secrets.set(sname, "v");
      assert.ok((await a.secrets.list()).some((s) => s.name === sname));
      assert.equal((await a.secrets.get(sname)).name, sname);
      await a.secrets.delete(sname);
      await assert.rejects(a.secrets.get(sname), NotFoundError);
    } catch (e) {
      if (e.code !== "unsupported") throw e;
    }
    const c = await tenantClient();
    const sb = await c.sandboxes.create();
    await sb.exec("true");
    await sb.kill();
    const page = await a.audit.query({ sandbox: sb.id, limit: 500 });
    assert.ok(page.records.some((r) => r.action === "sandbox.create" && r.phase === "result"));
    assert.ok((await collect(a.audit.records({ sandbox: sb.id, limit: 2 }))).length >= page.records.length);
    assert.ok((await collect(a.audit.export({ sandbox: sb.id }))).every((r) => r.hash.length === 64));
  });

  it("exports the generated operation table", () => {
    assert.deepEqual(models.OPERATIONS.postSandboxExec, ["POST", "/v1/sandboxes/{id}/exec"]);
    assert.ok(models.ERROR_CODES.includes("rate_limited"));
  });
});
