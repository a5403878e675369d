"""The framework-neutral tool set an agent gets for one sandbox: run a
command, run code in a stateful interpreter, write/read/list files, and (when the sandbox has a browser) open a
page and read it. Every tool returns text a model can read; errors come
back as text too ("error: <code>: <message>"), so an agent can react."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from .._errors import PaddockError

MAX_TOOL_OUTPUT = 32 << 10


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments
    fn: Callable[..., str]


def _clip(s: str) -> str:
    if len(s) > MAX_TOOL_OUTPUT:
        return s[:MAX_TOOL_OUTPUT] + "\n[... %d more bytes cut]" % (len(s) - MAX_TOOL_OUTPUT)
    return s


def _safe(fn: Callable[..., str]) -> Callable[..., str]:
    def run(**kw: Any) -> str:
        try:
            return _clip(fn(**kw))
        except PaddockError as e:
            return "error: %s: %s" % (e.code, e.message)
    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def code_text(ex: Any) -> str:
    """An Execution as text a model can read: status, output, each result's
    text (images named, not inlined), the error and its traceback."""
    out = "status: %s\n" % ex.status
    for name, text in (("stdout", ex.stdout), ("stderr", ex.stderr)):
        if text:
            out += "%s:\n%s%s" % (name, text, "" if text.endswith("\n") else "\n")
    for r in ex.results:
        other = [f for f in r.formats() if f != "text/plain"]
        out += "%s: %s%s\n" % ("result" if r.is_main_result else "display", r.text or "",
                                " [%s]" % ", ".join(other) if other else "")
    if ex.error is not None:
        out += "error: %s: %s\n%s" % (ex.error.name, ex.error.value, ex.error.traceback or "")
    if ex.message:
        out += ex.message + "\n"
    return out


def sandbox_tools(sb: Any, *, browser: bool = False, prefix: str = "sandbox_") -> list[Tool]:
    """Tools acting on sb (a paddock.Sandbox)."""

    def run_command(command: str, cwd: str | None = None, timeout_s: float | None = None) -> str:
        r = sb.exec(command, cwd=cwd, timeout=timeout_s if timeout_s is not None else 120)
        out = "exit_code: %d\n" % r.exit_code
        if r.timed_out:
            out += "timed out\n"
        if r.stdout:
            out += "stdout:\n" + r.stdout
        if r.stderr:
            out += ("" if out.endswith("\n") else "\n") + "stderr:\n" + r.stderr
        return out

    def run_code(code: str, language: str | None = None) -> str:
        return code_text(sb.run_code(code, language=language, timeout=120))

    def write_file(path: str, content: str) -> str:
        info = sb.files.write(path, content, parents=True)
        return "wrote %d bytes to %s" % (info.size, info.path)

    def read_file(path: str) -> str:
        return sb.files.read(path).decode("utf-8", "replace")

    def list_files(path: str = "/workspace") -> str:
        res = sb.files.list(path)
        return "\n".join("%s%s" % (e.name, "/" if e.type == "dir" else "") for e in res.entries) or "(empty)"

    tools = [
        Tool(prefix + "exec", "Run a shell command (sh -c) in the Linux sandbox; returns the exit code, stdout and stderr.",
             _obj({"command": {"type": "string"}, "cwd": {"type": "string"}, "timeout_s": {"type": "number"}}, ["command"]),
             _safe(run_command)),
        Tool(prefix + "run_code", "Run code in a stateful interpreter in the sandbox (python by default; javascript, "
             "typescript or bash): variables and imports carry over between calls of the same language. Returns the "
             "status, output, results and any error with its traceback.",
             _obj({"code": {"type": "string"}, "language": {"type": "string", "enum": ["python", "javascript", "typescript", "bash"]}},
                  ["code"]), _safe(run_code)),
        Tool(prefix + "write_file", "Write a text file in the sandbox (parent directories are made).",
             _obj({"path": {"type": "string"}, "content": {"type": "string"}}, ["path", "content"]), _safe(write_file)),
        Tool(prefix + "read_file", "Read a text file from the sandbox.",
             _obj({"path": {"type": "string"}}, ["path"]), _safe(read_file)),
        Tool(prefix + "list_files", "List a directory of the sandbox.",
             _obj({"path": {"type": "string"}}, []), _safe(list_files)),
    ]
    if browser:
        def browse(url: str) -> str:
            page = sb.browser.navigate(url)
            text = sb.browser.text()
            return json.dumps({"url": page.url, "title": page.title, "status": page.status}) + "\n" + text.text

        tools.append(Tool(prefix + "browse", "Open a URL in the sandbox's browser and return the page's text.",
                          _obj({"url": {"type": "string"}}, ["url"]), _safe(browse)))
    return tools
