// Hibernation, memory snapshots and fork with memory (docs/state.md) against
// a real server. gVisor-only: without runsc (/var/cache/paddock,
// scripts/deps.sh) those skip; native's refusals are tested everywhere.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { InvalidArgumentError, SandboxPausedError, UnsupportedError } from "../dist/index.js";
import { skip, tenantClient } from "./helpers.mjs";

const COUNTER = "i=0; while true; do i=$((i+1)); echo $i > /tmp/count; sleep 0.1; done";
const uniq = () => "tsm-" + Math.random().toString(36).slice(2, 10);

async function gvisorReason(c) {
  const rt = ((await c.health()).runtimes ?? []).find((r) => r.name === "gvisor");
  if (!rt) return "this server has no gVisor runtime (runsc at /var/cache/paddock: scripts/deps.sh)";
  return rt.available ? false : rt.reason || "gVisor is not available on this server";
}

describe("hibernate and memory (native refusals)", { skip }, () => {
  it("native refuses hibernate, memory snapshots and memory forks", async () => {
    const c = await tenantClient();
    const sb = await c.sandboxes.create({ labels: { suite: "node" } });
    try {
      await assert.rejects(sb.hibernate(), (e) => e instanceof UnsupportedError && e.status === 501);
      await assert.rejects(sb.snapshot(uniq(), { memory: true }), UnsupportedError);
      await assert.rejects(sb.fork({ memory: true }), UnsupportedError);
      assert.equal((await sb.refresh()).state, "running");
      await assert.rejects(sb.fork({ count: 0, memory: true }), InvalidArgumentError);
    } finally {
      await sb.kill();
    }
  });
});

describe("hibernate and memory (gVisor)", { skip }, () => {
  let c, why;
  before(async () => {
    c = await tenantClient();
    why = await gvisorReason(c);
  });

  it("hibernate, then resume keeps processes and files", async (t) => {
    if (why) return t.skip(why);
    const sb = await c.sandboxes.create({ runtime: "gvisor", labels: { suite: "node" } });
    try {
      await sb.files.write("/workspace/kept.txt", "before");
      const p = await sb.processes.start("sleep 600");
      assert.equal((await sb.hibernate()).state, "hibernated");
      assert.equal((await sb.hibernate()).state, "hibernated");
      await assert.rejects(sb.exec("true"), (e) => e instanceof SandboxPausedError && e.message.includes("hibernated"));
      assert.equal((await sb.resume()).state, "running");
      assert.equal(await sb.files.readText("/workspace/kept.txt"), "before");
      assert.equal((await sb.processes.get(p)).state, "running");
    } finally {
      await sb.kill();
    }
  });

  it("a memory snapshot restores running processes", async (t) => {
    if (why) return t.skip(why);
    const sb = await c.sandboxes.create({ runtime: "gvisor", labels: { suite: "node" } });
    const name = uniq();
    try {
      await sb.processes.start(COUNTER, { tag: "counter" });
      const snap = await sb.snapshot(name, { memory: true });
      assert.ok(snap.memory && snap.memory_bytes > 0);
      const made = await c.sandboxes.create({ snapshot: name, labels: { suite: "node" } });
      try {
        assert.equal(made.info.spec.runtime, "gvisor");
        assert.ok((await made.processes.list()).some((q) => q.tag === "counter" && q.state === "running"));
        const first = Number(await made.files.readText("/tmp/count"));
        await made.exec("sleep 0.5");
        assert.ok(Number(await made.files.readText("/tmp/count")) > first, "the restored counter keeps counting");
      } finally {
        await made.kill();
      }
    } finally {
      await sb.kill();
      await c.snapshots.delete(name).catch(() => undefined);
    }
  });

  it("fork with memory", async (t) => {
    if (why) return t.skip(why);
    const sb = await c.sandboxes.create({ runtime: "gvisor", labels: { suite: "node" } });
    try {
      await sb.processes.start(COUNTER, { tag: "counter" });
      const forks = await sb.fork({ count: 2, memory: true });
      try {
        assert.equal(forks.length, 2);
        for (const f of forks) {
          assert.equal(f.info.spec.fork_of, sb.id);
          assert.ok((await f.processes.list()).some((q) => q.tag === "counter" && q.state === "running"));
        }
      } finally {
        for (const f of forks) await f.kill();
      }
    } finally {
      await sb.kill();
    }
  });
});
