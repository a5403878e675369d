// Shared by the tests: the server under test (PADDOCK_URL, PADDOCK_API_KEY:
// an admin key; sdk/sdktest starts `paddock serve` and sets both), a tenant
// of the suite's own, and the `ws` WebSocket for Node 20.
import net from "node:net";
import WebSocket from "ws";
import { Paddock } from "../dist/index.js";

export const URL = process.env.PADDOCK_URL ?? "";
export const ADMIN_KEY = process.env.PADDOCK_API_KEY ?? "";
export const skip = URL && ADMIN_KEY ? false : "needs a Paddock server: set PADDOCK_URL and PADDOCK_API_KEY (admin); sdk/sdktest starts one";

export const admin = () => new Paddock({ url: URL, apiKey: ADMIN_KEY, WebSocket });

let tenantKey;
export async function tenantClient(extra = {}) {
  if (!tenantKey) {
    const a = admin();
    const name = "ts-" + Math.random().toString(36).slice(2, 10);
    await a.tenants.create(name);
    tenantKey = (await a.keys.create({ tenant: name, scopes: ["read", "write", "exec"], name: "node-test" })).key;
  }
  return new Paddock({ url: URL, apiKey: tenantKey, WebSocket, ...extra });
}

export function key() {
  return tenantKey;
}

export async function collect(it) {
  const out = [];
  for await (const x of it) out.push(x);
  return out;
}

/** A TCP proxy to the server that forwards `after` bytes of each answer,
 * then cuts both sides: a stream cut mid-way. */
export async function cuttingProxy(after) {
  const up = new globalThis.URL(URL);
  const proxy = net.createServer((cl) => {
    const s = net.connect(Number(up.port), up.hostname);
    cl.pipe(s);
    let n = 0;
    s.on("data", (d) => {
      if (n + d.length > after) {
        cl.end(d.subarray(0, Math.max(0, after - n)), () => cl.destroy());
        s.destroy();
      } else cl.write(d);
      n += d.length;
    });
    s.on("error", () => cl.destroy());
    cl.on("error", () => s.destroy());
  });
  await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${proxy.address().port}`, close: () => proxy.close() };
}
