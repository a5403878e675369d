// OpenAI Agents SDK for JavaScript (@openai/agents ≥ 0.14): Paddock as the
// sandbox client of a SandboxAgent, and as plain function tools.
//
//   import { run } from "@openai/agents";
//   import { SandboxAgent, shell } from "@openai/agents/sandbox";
//   import { PaddockSandboxClient } from "@paddock/sdk/openai-agents";
//   const agent = new SandboxAgent({ name: "coder", capabilities: [shell()] });
//   await run(agent, "…", { sandbox: { client: new PaddockSandboxClient() } });
//
// Each run that needs a sandbox gets a Paddock sandbox (create), which the
// runner destroys when it is done with it (delete).
import { tool } from "@openai/agents";
import type {
  ExecCommandArgs, ListDirectoryArgs, Manifest, MaterializeEntryArgs, ReadFileArgs, SandboxClient, SandboxClientCreateArgs,
  SandboxDirectoryEntry, SandboxExecResult, SandboxSession, SandboxSessionState, ExposedPortEndpoint,
} from "@openai/agents/sandbox";
import { z } from "zod";
import { Paddock, type CreateOptions } from "../client.js";
import { UnsupportedError } from "../errors.js";
import type { ClientOptions } from "../http.js";
import type { Sandbox } from "../sandbox.js";
import { execText, toolSet, type ToolSetOptions } from "./tools.js";

/** Plain function tools (for an ordinary Agent). */
export function paddockAgentTools(sb: Sandbox, o: ToolSetOptions = {}) {
  const t = toolSet(sb, o);
  const tools = [
    tool({ name: t.exec.name, description: t.exec.description, parameters: z.object({ command: z.string().min(1), cwd: z.string().nullable() }),
      execute: (a) => t.exec.run({ command: a.command, cwd: a.cwd ?? undefined }) }),
    tool({ name: t.runCode.name, description: t.runCode.description, parameters: z.object({ code: z.string().min(1), language: z.enum(["python", "javascript", "typescript", "bash"]).nullable() }),
      execute: (a) => t.runCode.run({ code: a.code, language: a.language ?? undefined }) }),
    tool({ name: t.writeFile.name, description: t.writeFile.description, parameters: z.object({ path: z.string().min(1), content: z.string() }),
      execute: (a) => t.writeFile.run(a) }),
    tool({ name: t.readFile.name, description: t.readFile.description, parameters: z.object({ path: z.string().min(1) }),
      execute: (a) => t.readFile.run(a) }),
    tool({ name: t.listFiles.name, description: t.listFiles.description, parameters: z.object({ path: z.string().nullable() }),
      execute: (a) => t.listFiles.run({ path: a.path ?? undefined }) }),
  ];
  if (t.browse) {
    const b = t.browse;
    tools.push(tool({ name: b.name, description: b.description, parameters: z.object({ url: z.string().min(1) }), execute: (a) => b.run(a) }) as unknown as (typeof tools)[number]);
  }
  return tools;
}

/** The session state the runner keeps (and may serialize): which sandbox. */
export interface PaddockSessionState extends SandboxSessionState {
  sandboxId: string;
}

const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** One Paddock sandbox as the Agents SDK's sandbox session. */
export class PaddockSandboxSession implements SandboxSession<PaddockSessionState> {
  constructor(readonly sandbox: Sandbox, public state: PaddockSessionState) {}

  async running(): Promise<boolean> {
    try {
      return (await this.sandbox.refresh()).state === "running";
    } catch {
      return false;
    }
  }

  async exec(a: ExecCommandArgs): Promise<SandboxExecResult> {
    const t0 = Date.now();
    const shell = a.shell ?? "sh";
    const cmd = a.login && shell.endsWith("bash") ? [shell, "-lc", a.cmd] : [shell, "-c", a.cmd];
    const r = await this.sandbox.exec(cmd, {
      cwd: a.workdir ?? this.state.manifest.root, user: a.runAs === "user" ? "user" : undefined,
      env: this.state.environment, timeoutMs: 600_000,
    });
    return { output: r.stdout + r.stderr, stdout: r.stdout, stderr: r.stderr, exitCode: r.exit_code, wallTimeSeconds: (Date.now() - t0) / 1000 };
  }

  async execCommand(a: ExecCommandArgs): Promise<string> {
    const r = await this.exec(a);
    let out = execText({ exit_code: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr });
    if (a.maxOutputTokens !== undefined && out.length > a.maxOutputTokens * 4) out = out.slice(0, a.maxOutputTokens * 4) + "\n[output cut]";
    return out;
  }

  async readFile(a: ReadFileArgs): Promise<Uint8Array> {
    return this.sandbox.files.read(this.abs(a.path), { length: a.maxBytes, user: a.runAs === "user" ? "user" : undefined });
  }

  async listDir(a: ListDirectoryArgs): Promise<SandboxDirectoryEntry[]> {
    const r = await this.sandbox.files.list(this.abs(a.path));
    return r.entries.map((e) => ({ name: e.name, path: e.path, type: e.type === "dir" ? "dir" : e.type === "file" ? "file" : "other" }));
  }

  pathExists(path: string): Promise<boolean> {
    return this.sandbox.files.exists(this.abs(path));
  }

  /** Files and directories of a manifest (other entry kinds need host access Paddock does not give). */
  async materializeEntry(a: MaterializeEntryArgs): Promise<void> {
    const path = this.abs(a.path);
    const e = a.entry as { type: string; content?: string | Uint8Array; children?: Record<string, unknown> };
    if (e.type === "file") {
      await this.sandbox.files.write(path, e.content ?? "", { parents: true });
    } else if (e.type === "dir") {
      await this.sandbox.files.mkdir(path, { parents: true });
      for (const [name, child] of Object.entries(e.children ?? {})) {
        await this.materializeEntry({ path: `${path}/${name}`, entry: child as MaterializeEntryArgs["entry"] });
      }
    } else {
      throw new UnsupportedError("unsupported", `manifest entries of type ${e.type} are not supported by the Paddock sandbox client`);
    }
  }

  async applyManifest(manifest: Manifest): Promise<void> {
    await this.sandbox.files.mkdir(manifest.root, { parents: true });
    for (const [path, entry] of Object.entries(manifest.entries)) {
      await this.materializeEntry({ path: path.startsWith("/") ? path : `${manifest.root}/${path}`, entry });
    }
  }

  async resolveExposedPort(port: number): Promise<ExposedPortEndpoint> {
    const u = await this.sandbox.portUrl(port);
    const url = new URL(u.url);
    return { host: url.hostname, port: Number(url.port || (url.protocol === "https:" ? 443 : 80)), tls: url.protocol === "https:", query: url.search.slice(1), url: u.url };
  }

  supportsPty(): boolean {
    return false;
  }

  async delete(): Promise<void> {
    await this.sandbox.kill();
  }

  private abs(p: string): string {
    return p.startsWith("/") ? p : `${this.state.manifest.root}/${p}`;
  }

  /** For shells that want a safely quoted path. */
  static quote = shQuote;
}

export interface PaddockSandboxClientOptions extends ClientOptions {
  /** The spec of each sandbox the client creates. */
  spec?: CreateOptions;
}

/** The Agents SDK's SandboxClient, backed by a Paddock server. */
export class PaddockSandboxClient implements SandboxClient<Record<string, unknown>, PaddockSessionState> {
  readonly backendId = "paddock";
  readonly paddock: Paddock;
  private readonly spec: CreateOptions;

  constructor(o: PaddockSandboxClientOptions = {}) {
    this.paddock = new Paddock(o);
    this.spec = o.spec ?? {};
  }

  async create(args?: SandboxClientCreateArgs<Record<string, unknown>> | Manifest): Promise<PaddockSandboxSession> {
    const { Manifest: M } = await import("@openai/agents/sandbox");
    const a = (args && "root" in args && "entries" in args ? { manifest: args } : args ?? {}) as SandboxClientCreateArgs<Record<string, unknown>>;
    const manifest = a.manifest instanceof M ? a.manifest : new M(a.manifest as ConstructorParameters<typeof M>[0]);
    const sb = await this.paddock.sandboxes.create({ labels: { "paddock.io/client": "openai-agents" }, ...this.spec });
    const session = new PaddockSandboxSession(sb, { manifest, sandboxId: sb.id, workspaceReady: false });
    try {
      await session.applyManifest(manifest);
      session.state.workspaceReady = true;
    } catch (e) {
      await sb.kill();
      throw e;
    }
    return session;
  }

  async delete(state: PaddockSessionState): Promise<void> {
    await this.paddock.sandboxes.delete(state.sandboxId).catch((e) => {
      if (e.code !== "not_found") throw e;
    });
  }

  async resume(state: PaddockSessionState): Promise<PaddockSandboxSession> {
    return new PaddockSandboxSession(await this.paddock.sandboxes.get(state.sandboxId), state);
  }

  async serializeSessionState(state: PaddockSessionState): Promise<Record<string, unknown>> {
    const m = state.manifest;
    return { sandboxId: state.sandboxId, manifest: { version: m.version, root: m.root, entries: m.entries } };
  }

  async deserializeSessionState(s: Record<string, unknown>): Promise<PaddockSessionState> {
    const { Manifest: M } = await import("@openai/agents/sandbox");
    return { sandboxId: String(s.sandboxId), manifest: new M(s.manifest as ConstructorParameters<typeof M>[0]) };
  }
}
