// Volumes (docs/state.md, "Volumes") against a real server: create, list,
// get, delete; files without a sandbox; mounted at create and read by the
// next sandbox.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConflictError, InvalidArgumentError, NotFoundError, Paddock } from "../dist/index.js";
import { URL as SERVER, admin, key, skip, tenantClient } from "./helpers.mjs";

const uniq = () => "tsv-" + Math.random().toString(36).slice(2, 10);

async function serverError(method, path, body) {
  const r = await fetch(SERVER + path, { method, headers: { Authorization: `Bearer ${key()}` }, body: JSON.stringify(body) });
  return [r.status, (await r.json()).error.message];
}

describe("volumes", { skip }, () => {
  it("create, list, get, delete", async () => {
    const c = await tenantClient();
    const name = uniq();
    const v = await c.volumes.create(name, { sizeMb: 32 });
    assert.equal(v.name, name);
    assert.equal(v.size_mb, 32);
    assert.ok(v.used_bytes > 0);
    assert.deepEqual(v.attached, []);
    assert.ok((await c.volumes.list()).some((x) => x.name === name));
    assert.equal((await c.volumes.get(v)).created_at, v.created_at);
    await assert.rejects(c.volumes.create(name, { sizeMb: 16 }), ConflictError);
    await c.volumes.delete(v);
    await assert.rejects(c.volumes.get(name), NotFoundError);
  });

  it("files without a sandbox", async () => {
    const c = await tenantClient();
    const v = await c.volumes.create(uniq(), { sizeMb: 16 });
    try {
      const f = c.volumes.files(v);
      assert.equal((await f.mkdir("/notes/deep", { parents: true })).type, "dir");
      const info = await f.write("/notes/deep/a.txt", "kept in the volume", { mode: 0o600 });
      assert.equal(info.mode, "0600");
      assert.equal(await f.readText("/notes/deep/a.txt"), "kept in the volume");
      assert.equal((await f.stat("notes/deep/a.txt")).size, "kept in the volume".length);
      assert.deepEqual((await f.list("/notes/deep")).entries.map((e) => e.name), ["a.txt"]);
      assert.ok(!(await f.list()).entries.some((e) => e.name === "lost+found"));
      assert.equal(await f.exists("/nope"), false);
      await f.remove("/notes", { recursive: true });
      assert.equal(await f.exists("/notes"), false);
    } finally {
      await c.volumes.delete(v);
    }
  });

  it("a file one sandbox writes is read by the next", async () => {
    const c = await tenantClient();
    const v = await c.volumes.create(uniq(), { sizeMb: 16 });
    try {
      await c.volumes.files(v).write("/from-api.txt", new TextEncoder().encode("written without a sandbox"));
      const sb = await c.sandboxes.create({ volumes: [[v.name, "/data"]], labels: { suite: "node" } });
      try {
        assert.equal(await sb.files.readText("/data/from-api.txt"), "written without a sandbox");
        assert.equal((await sb.exec("echo from the first sandbox > /data/note.txt")).exit_code, 0);
        assert.deepEqual((await c.volumes.get(v)).attached.map((a) => [a.sandbox, a.path]), [[sb.id, "/data"]]);
        await assert.rejects(c.volumes.files(v).write("/x", "second writer"), ConflictError);
        await assert.rejects(c.volumes.delete(v), ConflictError);
      } finally {
        await sb.kill();
      }
      const sb2 = await c.sandboxes.create({ volumes: [{ name: v.name, path: "/mnt/v", read_only: true }], labels: { suite: "node" } });
      try {
        assert.equal((await sb2.exec("cat /mnt/v/note.txt")).stdout, "from the first sandbox\n");
        const r = await sb2.exec("echo no > /mnt/v/ro.txt");
        assert.ok(r.exit_code !== 0 && r.stderr.includes("Read-only"), JSON.stringify(r));
      } finally {
        await sb2.kill();
      }
    } finally {
      await c.volumes.delete(v);
    }
  });

  it("client checks word it as the server does", async () => {
    const c = await tenantClient();
    for (const bad of ["", "a/b", "..", "-lead", "x".repeat(64)]) {
      const [status, want] = await serverError("POST", "/v1/volumes", { name: bad, size_mb: 16 });
      assert.equal(status, 400);
      await assert.rejects(c.volumes.create(bad), (e) => e instanceof InvalidArgumentError && e.message === want, bad);
    }
    const many = Array.from({ length: 17 }, (_, i) => [`v${i}`, `/m${i}`]);
    const [status, want] = await serverError("POST", "/v1/sandboxes", { volumes: many.map(([name, path]) => ({ name, path })) });
    assert.equal(status, 400);
    await assert.rejects(c.sandboxes.create({ volumes: many }), (e) => e instanceof InvalidArgumentError && e.message === want);
    await assert.rejects(c.sandboxes.create({ volumes: [[uniq(), "/data"]] }), NotFoundError);
  });

  it("another tenant's volume is not found", async () => {
    const c = await tenantClient();
    const v = await c.volumes.create(uniq(), { sizeMb: 16 });
    try {
      const a = admin();
      const other = "ts-" + Math.random().toString(36).slice(2, 10);
      await a.tenants.create(other);
      const k = (await a.keys.create({ tenant: other, scopes: ["read", "write"], name: "node-other" })).key;
      const c2 = new Paddock({ url: SERVER, apiKey: k });
      assert.ok(!(await c2.volumes.list()).some((x) => x.name === v.name));
      await assert.rejects(c2.volumes.get(v), NotFoundError);
      await assert.rejects(c2.volumes.files(v).read("/a"), NotFoundError);
    } finally {
      await c.volumes.delete(v);
    }
  });
});
