// LangChain.js tools (@langchain/core ≥ 1) for a Paddock sandbox.
//
//   import { paddockLangChainTools } from "@paddock/sdk/langchain";
//   const model = chatModel.bindTools(paddockLangChainTools(sb));
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { Sandbox } from "../sandbox.js";
import { toolSet, type ToolSetOptions } from "./tools.js";

export function paddockLangChainTools(sb: Sandbox, o: ToolSetOptions = {}) {
  const t = toolSet(sb, o);
  const tools = [
    tool((a: { command: string; cwd?: string }) => t.exec.run(a), {
      name: t.exec.name, description: t.exec.description, schema: z.object({ command: z.string().min(1), cwd: z.string().optional() }),
    }),
    tool((a: { code: string; language?: string }) => t.runCode.run(a), {
      name: t.runCode.name, description: t.runCode.description, schema: z.object({ code: z.string().min(1), language: z.enum(["python", "javascript", "typescript", "bash"]).optional() }),
    }),
    tool((a: { path: string; content: string }) => t.writeFile.run(a), {
      name: t.writeFile.name, description: t.writeFile.description, schema: z.object({ path: z.string().min(1), content: z.string() }),
    }),
    tool((a: { path: string }) => t.readFile.run(a), {
      name: t.readFile.name, description: t.readFile.description, schema: z.object({ path: z.string().min(1) }),
    }),
    tool((a: { path?: string }) => t.listFiles.run(a), {
      name: t.listFiles.name, description: t.listFiles.description, schema: z.object({ path: z.string().optional() }),
    }),
  ];
  if (t.browse) {
    const b = t.browse;
    tools.push(tool((a: { url: string }) => b.run(a), { name: b.name, description: b.description, schema: z.object({ url: z.string().min(1) }) }) as unknown as (typeof tools)[number]);
  }
  return tools;
}
