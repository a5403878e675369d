// Pause/resume, lifecycle fields, snapshots and fork (docs/state.md) against a real server.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ConflictError, InvalidArgumentError, NotFoundError, Sandbox, SandboxPausedError } from "../dist/index.js";
import { URL as SERVER, key, skip, tenantClient } from "./helpers.mjs";

async function serverMessage(method, path, body) {
  const r = await fetch(SERVER + path, { method, headers: { Authorization: `Bearer ${key()}` }, body: JSON.stringify(body) });
  assert.equal(r.status, 400);
  return (await r.json()).error.message;
}

describe("pause, snapshots, fork", { skip }, () => {
  let c, sb;
  before(async () => {
    c = await tenantClient();
    sb = await c.sandboxes.create({ labels: { suite: "node" } });
  });
  after(async () => sb && (await sb.kill()));

  it("pause refuses calls with sandbox_paused; resume keeps state", async () => {
    await sb.files.write("/workspace/kept.txt", "before");
    const p = await sb.processes.start("sleep 600");
    const info = await sb.pause();
    assert.equal(info.state, "paused");
    assert.equal(sb.info.state, "paused");
    assert.equal((await sb.pause()).paused_at, info.paused_at, "pausing a paused sandbox answers it as it is");
    await assert.rejects(sb.exec("true"), (e) => e instanceof SandboxPausedError && e instanceof ConflictError && e.code === "sandbox_paused" && e.status === 409);
    await assert.rejects(sb.runCode("1"), SandboxPausedError);
    assert.equal((await sb.resume()).state, "running");
    assert.equal((await sb.resume()).state, "running");
    assert.equal((await sb.exec("cat /workspace/kept.txt")).stdout, "before");
    assert.equal((await sb.processes.get(p)).state, "running");
  });

  it("lifecycle fields at create, auto_resume", async () => {
    const s = await c.sandboxes.create({ autoResume: true, onTimeout: "pause", idlePauseAfterS: 600, pausedTimeoutS: 3600 });
    try {
      const sp = s.info.spec;
      assert.deepEqual([sp.auto_resume, sp.on_timeout, sp.idle_pause_after_s, sp.paused_timeout_s], [true, "pause", 600, 3600]);
      await s.pause();
      assert.equal((await s.exec("echo awake")).stdout, "awake\n");
      assert.equal((await s.refresh()).state, "running");
    } finally {
      await s.kill();
    }
    const want = await serverMessage("POST", "/v1/sandboxes", { on_timeout: "nap" });
    await assert.rejects(c.sandboxes.create({ onTimeout: "nap" }), (e) => e instanceof InvalidArgumentError && e.message === want);
  });

  it("snapshot, delete the sandbox, create from it", async () => {
    const name = "ts-" + Math.random().toString(36).slice(2, 10);
    const src = await c.sandboxes.create();
    let snap;
    try {
      await src.files.write("/workspace/n/a.txt", "from the snapshot", { parents: true });
      snap = await src.snapshot(name);
      assert.equal(snap.name, name);
      assert.equal(snap.source, src.id);
      assert.ok((await c.snapshots.list()).some((s) => s.name === name));
      assert.equal((await c.snapshots.get(name)).created_at, snap.created_at);
      await assert.rejects(src.snapshot(name), ConflictError);
    } finally {
      await src.kill();
    }
    const made = await c.sandboxes.create({ snapshot: snap });
    try {
      assert.equal(made.info.spec.snapshot, name);
      assert.equal(await made.files.readText("/workspace/n/a.txt"), "from the snapshot");
    } finally {
      await made.kill();
    }
    await c.snapshots.delete(name);
    await assert.rejects(c.snapshots.get(name), NotFoundError);
    for (const bad of ["", "a/b", "..", "-x", "x".repeat(64)]) {
      const want = await serverMessage("POST", `/v1/sandboxes/${sb.id}/snapshots`, { name: bad });
      await assert.rejects(sb.snapshot(bad), (e) => e instanceof InvalidArgumentError && e.message === want);
    }
  });

  it("fork 3: writes isolated", async () => {
    await sb.files.write("/workspace/base.txt", "shared");
    const forks = await sb.fork({ count: 3 });
    try {
      assert.equal(forks.length, 3);
      assert.equal(new Set([sb.id, ...forks.map((f) => f.id)]).size, 4);
      for (const [i, f] of forks.entries()) {
        assert.ok(f instanceof Sandbox);
        assert.equal(f.info.spec.fork_of, sb.id);
        assert.equal(await f.files.readText("/workspace/base.txt"), "shared");
        await f.files.write("/workspace/mine.txt", `fork ${i}`);
      }
      for (const [i, f] of forks.entries()) assert.equal((await f.exec("cat /workspace/mine.txt")).stdout, `fork ${i}`);
      assert.equal(await sb.files.exists("/workspace/mine.txt"), false);
    } finally {
      for (const f of forks) await f.kill();
    }
    const want = await serverMessage("POST", `/v1/sandboxes/${sb.id}/fork`, { count: 101 });
    await assert.rejects(sb.fork({ count: 101 }), (e) => e instanceof InvalidArgumentError && e.message === want);
    await assert.rejects(sb.fork({ count: 0 }), InvalidArgumentError);
  });
});
