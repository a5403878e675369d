// The framework adapters, each driven by the framework's own runtime and a
// scripted model (the model is not what is under test): every agent creates
// a sandbox, writes a program, runs it, reads its output and cleans up.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NotFoundError } from "../dist/index.js";
import { skip, tenantClient } from "./helpers.mjs";

const PROGRAM = "a, b = 0, 1\nfor _ in range(10):\n    a, b = b, a + b\nopen('/workspace/out.txt', 'w').write(str(a))\nprint('fib', a)\n";
// The script every agent follows: tool name -> arguments, in order.
const PLAN = [
  ["sandbox_write_file", { path: "/workspace/fib.py", content: PROGRAM }],
  ["sandbox_exec", { command: "python3 /workspace/fib.py" }],
  ["sandbox_read_file", { path: "/workspace/out.txt" }],
  ["sandbox_run_code", { code: "total = sum(range(10))\nprint('sum', total)\ntotal * 2", language: "python" }],
];
const CODE_OUT = /^status: ok\nstdout:\nsum 45\nresult: 90\n/;

async function assertGone(c, id) {
  await assert.rejects(c.sandboxes.get(id), NotFoundError);
}

describe("Vercel AI SDK (ai, MockLanguageModelV3)", { skip }, () => {
  it("generateText drives the tools", async () => {
    const { generateText, stepCountIs } = await import("ai");
    const { MockLanguageModelV3 } = await import("ai/test");
    const { paddockTools } = await import("../dist/adapters/ai.js");
    const c = await tenantClient();
    const sb = await c.sandboxes.create({ labels: { adapter: "ai" } });
    let step = 0;
    const seen = [];
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
    const model = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) => {
        seen.length = 0; // the prompt holds the whole conversation
        for (const m of prompt) if (m.role === "tool") for (const p of m.content) seen.push(p.output.value);
        if (step < PLAN.length) {
          const [toolName, args] = PLAN[step];
          step++;
          return { content: [{ type: "tool-call", toolCallId: `c${step}`, toolName, input: JSON.stringify(args) }],
            finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] };
        }
        return { content: [{ type: "text", text: `the program printed ${seen[1].match(/fib (\d+)/)[1]}` }],
          finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] };
      },
    });
    try {
      const r = await generateText({ model, tools: paddockTools(sb), stopWhen: stepCountIs(6), prompt: "compute fib(10) in the sandbox" });
      assert.match(seen[0], /wrote \d+ bytes to \/workspace\/fib.py/);
      assert.match(seen[1], /exit_code: 0\nstdout:\nfib 55/);
      assert.equal(seen[2], "55");
      assert.match(seen[3], CODE_OUT);
      assert.equal(r.text, "the program printed 55");
    } finally {
      await sb.kill();
    }
    await assertGone(c, sb.id);
  });
});

describe("OpenAI Agents SDK (@openai/agents, scripted Model)", { skip }, () => {
  function scriptedModel(plan, final) {
    let i = 0;
    const outputs = [];
    return {
      outputs,
      async getResponse(req) {
        const { Usage } = await import("@openai/agents");
        outputs.length = 0; // the input holds the whole conversation
        for (const item of Array.isArray(req.input) ? req.input : []) {
          if (item.type === "function_call_result") outputs.push(typeof item.output === "string" ? item.output : item.output?.text ?? JSON.stringify(item.output));
        }
        if (i < plan.length) {
          const [name, args] = plan[i++];
          return { usage: new Usage(), output: [{ type: "function_call", callId: `call_${i}`, name, arguments: JSON.stringify(args), status: "completed" }] };
        }
        return { usage: new Usage(), output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: final(outputs) }] }] };
      },
      async *getStreamedResponse() {
        throw new Error("not used");
      },
    };
  }

  it("PaddockSandboxClient backs a SandboxAgent's shell", async () => {
    const { run } = await import("@openai/agents");
    const { SandboxAgent, shell } = await import("@openai/agents/sandbox");
    const { PaddockSandboxClient } = await import("../dist/adapters/openai-agents.js");
    const c = await tenantClient();
    const client = new PaddockSandboxClient({ url: c.transport.url, apiKey: c.transport.apiKey, spec: { labels: { adapter: "openai-agents" } } });
    const heredoc = `cat > fib.py <<'EOF'\n${PROGRAM}EOF`;
    const model = scriptedModel([
      ["exec_command", { cmd: heredoc }],
      ["exec_command", { cmd: "python3 fib.py" }],
      ["exec_command", { cmd: "cat out.txt; echo; echo $PWD" }],
    ], (out) => `done: ${out.length} results`);
    const agent = new SandboxAgent({ name: "coder", instructions: "Use the shell.", model, capabilities: [shell()] });
    const before = new Set((await c.sandboxes.list({ labels: { adapter: "openai-agents" } })).map((s) => s.id));
    const r = await run(agent, "compute fib(10)", { sandbox: { client } });
    assert.equal(r.finalOutput, "done: 3 results");
    assert.match(model.outputs[1], /exit_code: 0\nstdout:\nfib 55/);
    assert.match(model.outputs[2], /55\n\/workspace/);
    // The runner deleted the sandbox it had the client create.
    const after = (await c.sandboxes.list({ labels: { adapter: "openai-agents" } })).filter((s) => !before.has(s.id));
    assert.deepEqual(after, []);
  });

  it("function tools on an ordinary Agent", async () => {
    const { Agent, run } = await import("@openai/agents");
    const { paddockAgentTools } = await import("../dist/adapters/openai-agents.js");
    const c = await tenantClient();
    const sb = await c.sandboxes.create({ labels: { adapter: "openai-agents-tools" } });
    try {
      const plan = PLAN.map(([n, a]) => [n, n === "sandbox_exec" ? { ...a, cwd: null } : a]);
      const model = scriptedModel(plan, (out) => out[2]);
      const agent = new Agent({ name: "coder", instructions: "Use the tools.", model, tools: paddockAgentTools(sb) });
      const r = await run(agent, "compute fib(10)");
      assert.equal(r.finalOutput, "55");
      assert.match(model.outputs[1], /fib 55/);
      assert.match(model.outputs[3], CODE_OUT);
    } finally {
      await sb.kill();
    }
    await assertGone(c, sb.id);
  });
});

describe("LangChain.js (@langchain/core tools, FakeStreamingChatModel)", { skip }, () => {
  it("a tool-calling loop over the fake chat model", async () => {
    const { FakeStreamingChatModel } = await import("@langchain/core/utils/testing");
    const { HumanMessage } = await import("@langchain/core/messages");
    const { paddockLangChainTools } = await import("../dist/adapters/langchain.js");
    const c = await tenantClient();
    const sb = await c.sandboxes.create({ labels: { adapter: "langchain" } });
    try {
      const tools = paddockLangChainTools(sb);
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      const messages = [new HumanMessage("compute fib(10) in the sandbox")];
      const results = [];
      for (const [i, [name, args]] of PLAN.entries()) {
        // The framework's fake chat model, scripted with this turn's tool call.
        const model = new FakeStreamingChatModel({ sleep: 0, chunks: [{ content: "", tool_calls: [{ id: `t${i}`, name, args, type: "tool_call" }] }] }).bindTools(tools);
        const ai = await model.invoke(messages);
        messages.push(ai);
        for (const tc of ai.tool_calls) {
          const msg = await byName[tc.name].invoke(tc);
          messages.push(msg);
          results.push(String(msg.content));
        }
      }
      assert.match(results[1], /exit_code: 0\nstdout:\nfib 55/);
      assert.equal(results[2], "55");
      assert.match(results[3], CODE_OUT);
      assert.equal(messages.filter((m) => m._getType() === "tool").length, 4);
    } finally {
      await sb.kill();
    }
    await assertGone(c, sb.id);
  });
});

describe("Mastra (@mastra/core Agent, scripted AI SDK v5 model)", { skip }, () => {
  // Mastra 0.24 runs AI SDK v5 (LanguageModelV2) models; ai-v5's own mock
  // needs msw, a test-only dependency it does not install, so this is the
  // same scripted model written against the LanguageModelV2 interface.
  function scriptedV2(plan, final) {
    let step = 0;
    const seen = [];
    const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
    const next = (prompt) => {
      seen.length = 0;
      for (const m of prompt) if (m.role === "tool") for (const p of m.content) seen.push(p.output?.value ?? p.output);
      if (step < plan.length) {
        const [toolName, args] = plan[step++];
        return { kind: "tool", toolCallId: `m${step}`, toolName, input: JSON.stringify(args) };
      }
      return { kind: "text", text: final(seen) };
    };
    return {
      seen,
      specificationVersion: "v2", provider: "scripted", modelId: "plan", supportedUrls: {},
      async doGenerate({ prompt }) {
        const n = next(prompt);
        return n.kind === "tool"
          ? { content: [{ type: "tool-call", toolCallId: n.toolCallId, toolName: n.toolName, input: n.input }], finishReason: "tool-calls", usage, warnings: [] }
          : { content: [{ type: "text", text: n.text }], finishReason: "stop", usage, warnings: [] };
      },
      async doStream({ prompt }) {
        const n = next(prompt);
        const parts = [{ type: "stream-start", warnings: [] }];
        if (n.kind === "tool") parts.push({ type: "tool-call", toolCallId: n.toolCallId, toolName: n.toolName, input: n.input });
        else parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: n.text }, { type: "text-end", id: "t" });
        parts.push({ type: "finish", finishReason: n.kind === "tool" ? "tool-calls" : "stop", usage });
        return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
      },
    };
  }

  it("an Agent calls the tools", async () => {
    const { Agent } = await import("@mastra/core/agent");
    const { paddockMastraTools } = await import("../dist/adapters/mastra.js");
    const c = await tenantClient();
    const sb = await c.sandboxes.create({ labels: { adapter: "mastra" } });
    const model = scriptedV2(PLAN, (seen) => `printed ${seen[2]}`);
    let outputs;
    try {
      const agent = new Agent({ name: "coder", instructions: "Use the tools.", model, tools: paddockMastraTools(sb) });
      const r = await agent.generate("compute fib(10) in the sandbox", { maxSteps: 6 });
      outputs = [...model.seen];
      assert.match(String(outputs[1]), /fib 55/);
      assert.match(String(outputs[3]), CODE_OUT);
      assert.equal(r.text, "printed 55");
    } finally {
      await sb.kill();
    }
    await assertGone(c, sb.id);
  });
});
