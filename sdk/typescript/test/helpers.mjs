// Shared by the tests: the server under test (PADDOCK_URL, PADDOCK_API_KEY:
// an admin key; sdk/sdktest starts `paddock serve` and sets both), a tenant
// of the suite's own, and the `ws` WebSocket for Node 20.
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
