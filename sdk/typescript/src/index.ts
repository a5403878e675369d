// Paddock's TypeScript SDK: sandboxes for AI agents on your own servers.
//
//   import { Paddock } from "@paddock/sdk";
//   const sb = await new Paddock().sandboxes.create();   // PADDOCK_URL, PADDOCK_API_KEY
//   console.log((await sb.exec("echo hello")).stdout);
//   await sb.kill();
export { Paddock, createSandbox, withSandbox, type CreateOptions, type AuditFilter } from "./client.js";
export { Sandbox, ExecStream, type ExecOptions, type OutputChunk } from "./sandbox.js";
export { Execution, Result, CodeStream, Contexts, type RunCodeOptions, type RunCodeCallbacks } from "./code.js";
export { Files, type UploadData } from "./files.js";
export { Templates, TemplateStream, type TemplatesArea, type BuildContext, type BuildOptions, type ImportOptions, type PullOptions, type ProgressOptions } from "./templates.js";
export { Volumes, VolumeFiles } from "./volumes.js";
export { tarOf } from "./tar.js";
export { Processes, type ProcessRef, type StartOptions } from "./processes.js";
export { Browser } from "./browser.js";
export { Terminal, type TerminalExit } from "./terminal.js";
export { Transport, DEFAULT_URL, DEFAULT_MAX_UPLOAD, type ClientOptions, type CallOptions, type WebSocketCtor } from "./http.js";
export * from "./errors.js";
export * as models from "./models.js";
export type * from "./models.js";
