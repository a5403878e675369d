// The framework-neutral tool set for one sandbox: run a command, run code
// in a stateful interpreter, write, read and list files, and (with a
// browser) open a page and read it. Each
// adapter wraps these in its framework's tool type. Tools answer text a
// model can read; Paddock errors come back as text ("error: code: message")
// so an agent can react instead of the run failing.
import type { Execution } from "../code.js";
import { PaddockError } from "../errors.js";
import type { Sandbox } from "../sandbox.js";

export const MAX_TOOL_OUTPUT = 32 << 10;

export interface ToolDef<A> {
  name: string;
  description: string;
  run(args: A, signal?: AbortSignal): Promise<string>;
}

export interface ToolSetOptions {
  /** Add the browser tool (the sandbox needs `browser: true` or a started browser). */
  browser?: boolean;
  /** Exec timeout, ms (default 120 s). */
  timeoutMs?: number;
}

const clip = (s: string) => (s.length > MAX_TOOL_OUTPUT ? `${s.slice(0, MAX_TOOL_OUTPUT)}\n[... ${s.length - MAX_TOOL_OUTPUT} more characters cut]` : s);

async function safe(f: () => Promise<string>): Promise<string> {
  try {
    return clip(await f());
  } catch (e) {
    if (e instanceof PaddockError) return `error: ${e.code}: ${e.message}`;
    throw e;
  }
}

export function execText(r: { exit_code: number; stdout: string; stderr: string; timed_out?: boolean }): string {
  let out = `exit_code: ${r.exit_code}\n`;
  if (r.timed_out) out += "timed out\n";
  if (r.stdout) out += `stdout:\n${r.stdout}`;
  if (r.stderr) out += `${out.endsWith("\n") ? "" : "\n"}stderr:\n${r.stderr}`;
  return out;
}

/** An execution as text a model can read: status, output, each result's
 * text (images named, not inlined), the error and its traceback. */
export function codeText(ex: Execution): string {
  let out = `status: ${ex.status}\n`;
  if (ex.stdout) out += `stdout:\n${ex.stdout}${ex.stdout.endsWith("\n") ? "" : "\n"}`;
  if (ex.stderr) out += `stderr:\n${ex.stderr}${ex.stderr.endsWith("\n") ? "" : "\n"}`;
  for (const r of ex.results) {
    const other = r.formats().filter((f) => f !== "text/plain");
    out += `${r.isMainResult ? "result" : "display"}: ${r.text ?? ""}${other.length ? ` [${other.join(", ")}]` : ""}\n`;
  }
  if (ex.error) out += `error: ${ex.error.name}: ${ex.error.value}\n${ex.error.traceback ?? ""}`;
  if (ex.message) out += `${ex.message}\n`;
  return out;
}

export function toolSet(sb: Sandbox, o: ToolSetOptions = {}) {
  const exec: ToolDef<{ command: string; cwd?: string }> = {
    name: "sandbox_exec",
    description: "Run a shell command (sh -c) in the Linux sandbox; returns the exit code, stdout and stderr.",
    run: (a, signal) => safe(async () => execText(await sb.exec(a.command, { cwd: a.cwd ?? undefined, timeoutMs: o.timeoutMs ?? 120_000, signal }))),
  };
  const runCode: ToolDef<{ code: string; language?: string }> = {
    name: "sandbox_run_code",
    description: "Run code in a stateful interpreter in the sandbox (python by default; javascript, typescript or bash): variables and imports carry over between calls of the same language. Returns the status, output, results and any error with its traceback.",
    run: (a, signal) => safe(async () => codeText(await sb.runCode(a.code, { language: a.language ?? undefined, timeoutMs: o.timeoutMs ?? 120_000, signal }))),
  };
  const writeFile: ToolDef<{ path: string; content: string }> = {
    name: "sandbox_write_file",
    description: "Write a text file in the sandbox (parent directories are made).",
    run: (a, signal) => safe(async () => {
      const info = await sb.files.write(a.path, a.content, { parents: true, signal });
      return `wrote ${info.size} bytes to ${info.path}`;
    }),
  };
  const readFile: ToolDef<{ path: string }> = {
    name: "sandbox_read_file",
    description: "Read a text file from the sandbox.",
    run: (a, signal) => safe(async () => sb.files.readText(a.path, { signal })),
  };
  const listFiles: ToolDef<{ path?: string }> = {
    name: "sandbox_list_files",
    description: "List a directory of the sandbox (default /workspace).",
    run: (a, signal) => safe(async () => {
      const r = await sb.files.list(a.path ?? "/workspace", { signal });
      return r.entries.map((e) => e.name + (e.type === "dir" ? "/" : "")).join("\n") || "(empty)";
    }),
  };
  const browse: ToolDef<{ url: string }> | undefined = o.browser
    ? {
        name: "sandbox_browse",
        description: "Open a URL in the sandbox's browser and return the page's title and text.",
        run: (a, signal) => safe(async () => {
          const page = await sb.browser.navigate(a.url, { signal });
          const text = await sb.browser.text({ signal });
          return `${JSON.stringify({ url: page.url, title: page.title, status: page.status })}\n${text.text}`;
        }),
      }
    : undefined;
  return { exec, runCode, writeFile, readFile, listFiles, browse };
}
