// Per-call overhead of the SDK over a raw fetch, for exec.
//
//   npm run build && PADDOCK_URL=... PADDOCK_API_KEY=... node bench/exec-overhead.mjs [N] [--json]
//
// One sandbox; N rounds, each one exec through a raw fetch (hand-built JSON)
// and one through Sandbox.exec, alternating so that load drifts hit both
// alike. Prints the p50 of each and the p50 of the paired differences (the
// SDK's overhead). Target: overhead p50 <= 0.3 ms. Then the same for
// runCode ("1+1" in the warm default Python context): a raw POST .../code
// whose NDJSON is read and parsed to its end event, against Sandbox.runCode.
import http from "node:http";
import { performance } from "node:perf_hooks";
import { Paddock } from "../dist/index.js";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const n = Number(args[0] ?? 300);
const url = process.env.PADDOCK_URL.replace(/\/+$/, "");
const key = process.env.PADDOCK_API_KEY;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const c = new Paddock({ url, apiKey: key });
const sb = await c.sandboxes.create({ labels: { bench: "sdk-typescript" } });
try {
  const path = `${url}/v1/sandboxes/${sb.id}/exec`;
  const body = JSON.stringify({ cmd: ["true"] });
  const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json" };
  const raw = async () => {
    const r = await fetch(path, { method: "POST", headers, body });
    const j = JSON.parse(await r.text());
    if (r.status !== 200 || j.exit_code !== 0) throw new Error("raw exec failed");
  };
  const sdk = async () => {
    if ((await sb.exec(["true"])).exit_code !== 0) throw new Error("sdk exec failed");
  };
  for (let i = 0; i < 20; i++) {
    await raw();
    await sdk();
  }
  const tRaw = [], tSdk = [], diff = [];
  for (let i = 0; i < n; i++) {
    const d = new Map();
    for (const f of i % 2 ? [sdk, raw] : [raw, sdk]) {
      const t0 = performance.now();
      await f();
      d.set(f, performance.now() - t0);
    }
    tRaw.push(d.get(raw));
    tSdk.push(d.get(sdk));
    diff.push(d.get(sdk) - d.get(raw));
  }
  const res = { n, raw_p50_ms: median(tRaw), sdk_p50_ms: median(tSdk), overhead_p50_ms: median(diff) };
  const cpath = `${url}/v1/sandboxes/${sb.id}/code`;
  const cbody = JSON.stringify({ code: "1+1" });
  const rawCode = async () => {
    const r = await fetch(cpath, { method: "POST", headers: { ...headers, Accept: "application/x-ndjson" }, body: cbody });
    const evs = (await r.text()).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    if (r.status !== 200 || evs.at(-1).type !== "end") throw new Error("raw code failed");
  };
  const sdkCode = async () => {
    if ((await sb.runCode("1+1")).text !== "2") throw new Error("sdk runCode failed");
  };
  for (let i = 0; i < 5; i++) { await rawCode(); await sdkCode(); }
  const cRaw = [], cSdk = [], cDiff = [];
  for (let i = 0; i < Math.max(10, Math.floor(n / 3)); i++) {
    const d = new Map();
    for (const f of i % 2 ? [sdkCode, rawCode] : [rawCode, sdkCode]) {
      const t0 = performance.now();
      await f();
      d.set(f, performance.now() - t0);
    }
    cRaw.push(d.get(rawCode));
    cSdk.push(d.get(sdkCode));
    cDiff.push(d.get(sdkCode) - d.get(rawCode));
  }
  Object.assign(res, { code_n: cRaw.length, code_raw_p50_ms: median(cRaw), code_sdk_p50_ms: median(cSdk), code_overhead_p50_ms: median(cDiff) });
  // The SDK alone: the same two calls against a local stub that answers
  // like exec at once, so the sandbox's (loaded, noisy) exec time is out of
  // the difference.
  const answer = JSON.stringify({ exit_code: 0, stdout: "", stderr: "", duration_ms: 1, stdout_bytes: 0, stderr_bytes: 0 });
  const stub = http.createServer((req, r) => { req.resume(); req.on("end", () => { r.writeHead(200, { "content-type": "application/json" }); r.end(answer); }); });
  await new Promise((ok) => stub.listen(0, "127.0.0.1", ok));
  const surl = `http://127.0.0.1:${stub.address().port}`;
  const ssb = new Paddock({ url: surl, apiKey: key }).sandboxes.connect(sb.info);
  const sraw = async () => JSON.parse(await (await fetch(`${surl}/v1/sandboxes/${sb.id}/exec`, { method: "POST", headers, body })).text());
  const ssdk = () => ssb.exec(["true"]);
  const sd = [];
  for (let i = 0; i < 200; i++) { await sraw(); await ssdk(); }
  for (let i = 0; i < 2000; i++) {
    let t0 = performance.now(); await sraw(); const a = performance.now() - t0;
    t0 = performance.now(); await ssdk(); sd.push(performance.now() - t0 - a);
  }
  stub.close();
  res.stub_overhead_p50_ms = median(sd);
  if (process.argv.includes("--json")) console.log(JSON.stringify(res));
  else {
    console.log(`exec x${n}: raw fetch p50 ${res.raw_p50_ms.toFixed(3)} ms, SDK p50 ${res.sdk_p50_ms.toFixed(3)} ms, SDK overhead p50 ${res.overhead_p50_ms.toFixed(3)} ms; against a local stub ${res.stub_overhead_p50_ms.toFixed(3)} ms`);
    console.log(`runCode x${res.code_n}: raw fetch p50 ${res.code_raw_p50_ms.toFixed(3)} ms, SDK p50 ${res.code_sdk_p50_ms.toFixed(3)} ms, SDK overhead p50 ${res.code_overhead_p50_ms.toFixed(3)} ms`);
  }
} finally {
  await sb.kill();
}
