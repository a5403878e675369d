// Templates (docs/templates.md) against a real server: build with its
// streamed steps, export and import, pull from a registry (sdk/sdktest
// starts one when docker-registry is installed), get, list, delete.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConflictError, InvalidArgumentError, NotFoundError, Paddock, PaddockError, StreamInterruptedError, TemplateStream, TooLargeError, tarOf } from "../dist/index.js";
import { URL as SERVER, admin, collect, cuttingProxy, key, skip, tenantClient } from "./helpers.mjs";

const REF = process.env.PADDOCK_TEST_REGISTRY_REF ?? "";
const NO_REGISTRY = process.env.PADDOCK_TEST_REGISTRY_SKIP || "no registry to pull from: sdk/sdktest sets PADDOCK_TEST_REGISTRY_REF when docker-registry is installed";
const CONTEXT = {
  Dockerfile: "FROM scratch\nCOPY hello.txt /srv/hello.txt\nENV BUILT_BY=sdk\nWORKDIR /srv\n",
  "hello.txt": "built by the SDK\n",
};
const uniq = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;

async function bytesOf(it) {
  const parts = await collect(it);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.byteLength;
  }
  return out;
}

describe("templates", { skip }, () => {
  it("build streams its steps; the template is listed, got, deleted", async () => {
    const c = await tenantClient();
    const name = uniq("tsb");
    const events = [];
    const tpl = await c.templates.build(CONTEXT, { name, onEvent: (e) => events.push(e) });
    try {
      assert.equal(tpl.name, name);
      assert.equal(tpl.kind, "image");
      assert.equal(tpl.source.kind, "build");
      assert.ok(tpl.defaults.env.includes("BUILT_BY=sdk"));
      assert.equal(tpl.defaults.working_dir, "/srv");
      const steps = events.filter((e) => e.instruction);
      assert.ok(steps.length > 0 && steps.at(-1).steps === steps.length, JSON.stringify(events));
      assert.ok(steps.some((e) => e.instruction.includes("COPY")));
      assert.ok((await c.templates.list()).some((t) => t.name === name));
      assert.ok((await c.templates()).some((t) => t.name === name), "calling the area lists, as before");
      assert.equal((await c.templates.get(name)).source.dockerfile_digest, tpl.source.dockerfile_digest);
    } finally {
      await c.templates.delete(name);
    }
    assert.equal(await c.templates.exists(name), false);
    await assert.rejects(c.templates.get(name), NotFoundError);
  });

  it("buildStream iterates; a sandbox starts from the template", async () => {
    const c = await tenantClient();
    const name = uniq("tss");
    const st = c.templates.buildStream(tarOf(CONTEXT), { name });
    assert.ok(st instanceof TemplateStream);
    const seen = await collect(st);
    assert.ok(seen.some((e) => e.instruction));
    assert.equal(st.template.name, name);
    try {
      const sb = await c.sandboxes.create({ template: name, labels: { suite: "node" } });
      try {
        assert.equal(sb.info.spec.template, name);
        assert.equal(await sb.files.readText("/srv/hello.txt"), "built by the SDK\n");
      } finally {
        await sb.kill();
      }
    } finally {
      await c.templates.delete(st.template);
    }
  });

  it("export, then import under another name", async () => {
    const c = await tenantClient();
    const name = uniq("tse"), copy = uniq("tsi");
    await c.templates.build(CONTEXT, { name });
    try {
      const archive = await bytesOf(c.templates.export(name));
      assert.ok(archive.byteLength > 0);
      const tpl = await c.templates.importArchive(archive, { name: copy });
      assert.equal(tpl.name, copy);
      assert.equal(tpl.source.kind, "oci-archive");
      const names = (await c.templates.list()).map((t) => t.name);
      assert.ok(names.includes(name) && names.includes(copy));
      await assert.rejects(c.templates.importArchive(archive, { name: copy }), ConflictError);
      assert.equal((await c.templates.importArchive(new Blob([archive]), { name: copy, replace: true })).name, copy);
    } finally {
      await c.templates.delete(name);
      await c.templates.delete(copy).catch(() => undefined);
    }
  });

  it("a failed build throws its error; client checks match the server", async () => {
    const c = await tenantClient();
    const name = uniq("tsf");
    await assert.rejects(c.templates.build({ Dockerfile: "FROM scratch\nCOPY missing.txt /x\n" }, { name }),
      (e) => e instanceof PaddockError && e.message.includes("missing.txt"));
    assert.equal(await c.templates.exists(name), false, "a failed build leaves no template");
    const r = await fetch(SERVER + "/v1/templates/build", { method: "POST", headers: { Authorization: `Bearer ${key()}` }, body: "" });
    assert.equal(r.status, 400);
    const want = (await r.json()).error.message;
    assert.throws(() => c.templates.buildStream(CONTEXT, { name: "" }), (e) => e instanceof InvalidArgumentError && e.message === want);
    assert.throws(() => c.templates.buildStream({ "../x": "y" }, { name }), InvalidArgumentError);
    const small = await tenantClient({ maxUploadBytes: 10 });
    assert.throws(() => small.templates.buildStream(CONTEXT, { name }), TooLargeError);
    assert.throws(() => c.templates.pullStream(""), InvalidArgumentError);
  });

  it("an aborted build rejects with AbortedError", async () => {
    const c = await tenantClient();
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(c.templates.build(CONTEXT, { name: uniq("tsx"), signal: ac.signal }), (e) => e.code === "aborted");
  });

  it("pull lists and runs the image", { skip: REF ? false : NO_REGISTRY }, async () => {
    const c = await tenantClient();
    const name = uniq("tsp");
    const events = [];
    const tpl = await c.templates.pull(REF, { name, onEvent: (e) => events.push(e) });
    try {
      assert.equal(tpl.source.kind, "registry");
      assert.match(tpl.source.digest, /^sha256:/);
      assert.ok(events.some((e) => e.message), "pull progress was streamed");
      assert.ok((await c.templates.list()).some((t) => t.name === name));
      const sb = await c.sandboxes.create({ template: name, labels: { suite: "node" } });
      try {
        assert.equal((await sb.exec("cat /hello.txt; echo $FROM_IMAGE")).stdout, "pulled from the registry\n1\n");
      } finally {
        await sb.kill();
      }
      await assert.rejects(c.templates.pull(REF, { name }), ConflictError);
      // push it back under another reference, and pull that: the same image
      const pushed = `${REF.split("/")[0]}/sdk/${uniq("pushed")}:1`;
      await c.templates.push(name, pushed);
      const back = await c.templates.pull(pushed, { name: name + "-back" });
      assert.ok(back.source.ref.includes("pushed"));
      await c.templates.delete(back);
    } finally {
      await c.templates.delete(name);
    }
  });

  it("another tenant's template is not found", async () => {
    const c = await tenantClient();
    const name = uniq("tst");
    await c.templates.build(CONTEXT, { name });
    try {
      const a = admin();
      const other = uniq("ts");
      await a.tenants.create(other);
      const k = (await a.keys.create({ tenant: other, scopes: ["read", "write"], name: "node-other" })).key;
      const c2 = new Paddock({ url: SERVER, apiKey: k });
      assert.ok(!(await c2.templates.list()).some((t) => t.name === name));
      await assert.rejects(c2.templates.get(name), NotFoundError);
      await assert.rejects(c2.templates.delete(name), NotFoundError);
    } finally {
      await c.templates.delete(name);
    }
  });
  it("a build stream cut mid-way throws StreamInterruptedError", async () => {
    const c = await tenantClient();
    const name = uniq("tsc");
    const many = { Dockerfile: "FROM scratch\n" + Array.from({ length: 80 }, (_, i) => `ENV V${i}=${"x".repeat(40)}\n`).join("") };
    const proxy = await cuttingProxy(2000);
    try {
      const far = new Paddock({ url: proxy.url, apiKey: key(), timeoutMs: 20_000 });
      const seen = [];
      await assert.rejects(far.templates.build(many, { name, onEvent: (e) => seen.push(e) }), StreamInterruptedError);
      assert.ok(seen.length > 0, "events before the cut were delivered");
    } finally {
      proxy.close();
      await c.templates.delete(name).catch(() => undefined); // the server may finish the build on its own
    }
  });
});
