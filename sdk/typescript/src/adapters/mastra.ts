// Mastra tools (@mastra/core ≥ 0.24; that line has no workspace sandbox
// interface, so the sandbox is offered as tools an Agent calls).
//
//   import { Agent } from "@mastra/core/agent";
//   import { paddockMastraTools } from "@paddock/sdk/mastra";
//   new Agent({ name, instructions, model, tools: paddockMastraTools(sb) });
import { createTool } from "@mastra/core/tools";

// The tool type Mastra agents take (kept opaque: its generics name Mastra internals).
export type Tool = ReturnType<typeof createTool> & { readonly id: string };
import { z } from "zod";
import type { Sandbox } from "../sandbox.js";
import { toolSet, type ToolSetOptions } from "./tools.js";

export function paddockMastraTools(sb: Sandbox, o: ToolSetOptions = {}): Record<string, Tool> {
  const t = toolSet(sb, o);
  const out: Record<string, Tool> = {
    [t.exec.name]: createTool({
      id: t.exec.name, description: t.exec.description,
      inputSchema: z.object({ command: z.string().min(1), cwd: z.string().optional() }),
      execute: async ({ context }) => t.exec.run(context as { command: string; cwd?: string }),
    }) as unknown as Tool,
    [t.runCode.name]: createTool({
      id: t.runCode.name, description: t.runCode.description,
      inputSchema: z.object({ code: z.string().min(1), language: z.enum(["python", "javascript", "typescript", "bash"]).optional() }),
      execute: async ({ context }) => t.runCode.run(context as { code: string; language?: string }),
    }) as unknown as Tool,
    [t.writeFile.name]: createTool({
      id: t.writeFile.name, description: t.writeFile.description,
      inputSchema: z.object({ path: z.string().min(1), content: z.string() }),
      execute: async ({ context }) => t.writeFile.run(context as { path: string; content: string }),
    }) as unknown as Tool,
    [t.readFile.name]: createTool({
      id: t.readFile.name, description: t.readFile.description,
      inputSchema: z.object({ path: z.string().min(1) }),
      execute: async ({ context }) => t.readFile.run(context as { path: string }),
    }) as unknown as Tool,
    [t.listFiles.name]: createTool({
      id: t.listFiles.name, description: t.listFiles.description,
      inputSchema: z.object({ path: z.string().optional() }),
      execute: async ({ context }) => t.listFiles.run(context as { path?: string }),
    }) as unknown as Tool,
  };
  if (t.browse) {
    const b = t.browse;
    out[b.name] = createTool({
      id: b.name, description: b.description, inputSchema: z.object({ url: z.string().min(1) }),
      execute: async ({ context }) => b.run(context as { url: string }),
    }) as unknown as Tool;
  }
  return out;
}
