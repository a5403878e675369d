// The sandbox's headless Chromium (docs/browser.md).
import * as check from "./checks.js";
import type { CallOptions, Transport } from "./http.js";
import type * as m from "./models.js";

type Act = CallOptions & { tab?: string; timeoutMs?: number };

export class Browser {
  private readonly p: string;
  constructor(private readonly t: Transport, id: string, private readonly token: (scopes: string[], ttl: number) => Promise<m.SandboxToken>) {
    this.p = `/v1/sandboxes/${check.seg(id)}/browser`;
  }

  private act<T>(action: string, req: object, o: Act): Promise<T> {
    return this.t.json("POST", `${this.p}/${action}`, {
      json: { ...req, tab: o.tab, timeout_ms: o.timeoutMs }, retry: false, timeoutMs: (o.timeoutMs ?? 30_000) + 30_000, signal: o.signal,
    });
  }

  status(o: CallOptions = {}): Promise<m.BrowserStatus> {
    return this.t.json("GET", this.p, { signal: o.signal });
  }
  start(o: CallOptions = {}): Promise<m.BrowserStatus> {
    return this.t.json("POST", this.p + "/start", { retry: true, timeoutMs: 120_000, signal: o.signal });
  }
  stop(o: CallOptions = {}): Promise<m.BrowserStatus> {
    return this.t.json("POST", this.p + "/stop", { retry: true, signal: o.signal });
  }
  navigate(url: string, o: Act & { waitUntil?: string } = {}): Promise<m.BrowserPage> {
    return this.act("navigate", { url, wait_until: o.waitUntil }, o);
  }
  click(selector: string | undefined, o: Act & { text?: string; ref?: string; button?: string; clickCount?: number } = {}): Promise<m.BrowserPage> {
    return this.act("click", { selector, text: o.text, ref: o.ref, button: o.button, click_count: o.clickCount }, o);
  }
  type(text: string, o: Act & { selector?: string; ref?: string; clear?: boolean; submit?: boolean } = {}): Promise<m.BrowserPage> {
    return this.act("type", { text, selector: o.selector, ref: o.ref, clear: o.clear, submit: o.submit }, o);
  }
  press(key: string, o: Act & { selector?: string; ref?: string } = {}): Promise<m.BrowserPage> {
    return this.act("press", { key, selector: o.selector, ref: o.ref }, o);
  }
  scroll(direction?: string, o: Act & { amount?: number; selector?: string; text?: string; ref?: string } = {}): Promise<m.BrowserScroll> {
    return this.act("scroll", { direction, amount: o.amount, selector: o.selector, text: o.text, ref: o.ref }, o);
  }
  eval(expression: string, o: Act = {}): Promise<m.BrowserEval> {
    return this.act("eval", { expression }, o);
  }
  text(o: CallOptions & { format?: string; maxBytes?: number; tab?: string } = {}): Promise<m.BrowserText> {
    return this.t.json("GET", this.p + "/text", { query: { format: o.format, max_bytes: o.maxBytes, tab: o.tab }, signal: o.signal });
  }
  snapshot(o: CallOptions & { maxBytes?: number; tab?: string } = {}): Promise<m.BrowserSnapshot> {
    return this.t.json("GET", this.p + "/snapshot", { query: { max_bytes: o.maxBytes, tab: o.tab }, signal: o.signal });
  }
  /** A PNG of the page. */
  screenshot(o: CallOptions & { fullPage?: boolean; tab?: string } = {}): Promise<Uint8Array> {
    return this.t.bytes("GET", this.p + "/screenshot", { query: { full_page: o.fullPage, tab: o.tab }, signal: o.signal });
  }
  async tabs(o: CallOptions = {}): Promise<m.BrowserTab[]> {
    return (await this.t.json<m.BrowserTabs>("GET", this.p + "/tabs", { signal: o.signal })).tabs;
  }
  openTab(url?: string, o: CallOptions & { timeoutMs?: number } = {}): Promise<m.BrowserTab> {
    return this.t.json("POST", this.p + "/tabs", { json: { url, timeout_ms: o.timeoutMs } satisfies m.BrowserOpenTab, retry: false, signal: o.signal });
  }
  activateTab(tab: string, o: CallOptions = {}): Promise<m.BrowserTab> {
    return this.t.json("POST", `${this.p}/tabs/${check.seg(tab)}/activate`, { retry: true, signal: o.signal });
  }
  async closeTab(tab: string, o: CallOptions = {}): Promise<m.BrowserTab[]> {
    return (await this.t.json<m.BrowserTabs>("DELETE", `${this.p}/tabs/${check.seg(tab)}`, { signal: o.signal })).tabs;
  }
  downloads(o: CallOptions = {}): Promise<m.BrowserDownloads> {
    return this.t.json("GET", this.p + "/downloads", { signal: o.signal });
  }
  /** DevTools' /json/version, its URLs pointing at Paddock. */
  version(o: CallOptions = {}): Promise<Record<string, unknown>> {
    return this.t.json("GET", this.p + "/json/version", { signal: o.signal });
  }
  /** The base URL for Playwright's connectOverCDP (send the key as Authorization: Bearer). */
  cdpHttpUrl(): string {
    return this.t.url + this.p;
  }
  /** A ws:// DevTools URL for clients that cannot set headers: it carries a
   * sandbox token (scope exec), never the key. */
  async cdpUrl(o: { ttlS?: number } = {}): Promise<string> {
    const tok = await this.token(["exec"], o.ttlS ?? 900);
    return `${this.t.wsUrl(this.p + "/cdp")}?token=${encodeURIComponent(tok.token)}`;
  }
}
