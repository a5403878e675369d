// Vercel AI SDK tools (`ai` ≥ 6): exec, files and browser on a Paddock sandbox.
//
//   import { generateText, stepCountIs } from "ai";
//   import { paddockTools } from "@paddock/sdk/ai";
//   await generateText({ model, tools: paddockTools(sb), stopWhen: stepCountIs(10), prompt });
import { tool, type Tool } from "ai";
import { z } from "zod";
import type { Sandbox } from "../sandbox.js";
import { toolSet, type ToolSetOptions } from "./tools.js";

export function paddockTools(sb: Sandbox, o: ToolSetOptions = {}): Record<string, Tool> {
  const t = toolSet(sb, o);
  const tools: Record<string, Tool> = {
    [t.exec.name]: tool({
      description: t.exec.description,
      inputSchema: z.object({ command: z.string().min(1), cwd: z.string().optional() }),
      execute: (a, { abortSignal }) => t.exec.run(a, abortSignal),
    }),
    [t.runCode.name]: tool({
      description: t.runCode.description,
      inputSchema: z.object({ code: z.string().min(1), language: z.enum(["python", "javascript", "typescript", "bash"]).optional() }),
      execute: (a, { abortSignal }) => t.runCode.run(a, abortSignal),
    }),
    [t.writeFile.name]: tool({
      description: t.writeFile.description,
      inputSchema: z.object({ path: z.string().min(1), content: z.string() }),
      execute: (a, { abortSignal }) => t.writeFile.run(a, abortSignal),
    }),
    [t.readFile.name]: tool({
      description: t.readFile.description,
      inputSchema: z.object({ path: z.string().min(1) }),
      execute: (a, { abortSignal }) => t.readFile.run(a, abortSignal),
    }),
    [t.listFiles.name]: tool({
      description: t.listFiles.description,
      inputSchema: z.object({ path: z.string().optional() }),
      execute: (a, { abortSignal }) => t.listFiles.run(a, abortSignal),
    }),
  };
  if (t.browse) {
    const b = t.browse;
    tools[b.name] = tool({
      description: b.description,
      inputSchema: z.object({ url: z.string().min(1) }),
      execute: (a, { abortSignal }) => b.run(a, abortSignal),
    });
  }
  return tools;
}
