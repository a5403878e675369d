"""What the sync and async code interpreters share (docs/code.md): an
Execution gathered from a cell's NDJSON events, its rich results, and the
client-side checks of a cell (worded as the server words them)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from . import _core, models
from ._errors import InvalidArgumentError, StreamInterruptedError, TooLargeError

MAX_CODE_BYTES = 1 << 20
MAX_CODE_TIMEOUT_MS = 24 * 3600 * 1000
LANGUAGES = {"": "python", "python": "python", "python3": "python", "py": "python", "ipython": "python",
             "javascript": "javascript", "js": "javascript", "node": "javascript", "nodejs": "javascript",
             "typescript": "typescript", "ts": "typescript", "bash": "bash", "sh": "bash", "shell": "bash"}
_BINARY = {"image/png", "image/jpeg", "application/pdf"}


@dataclass
class Result:
    """One rich result of a cell: its MIME bundle (binary types base64, as
    Jupyter sends them) and, for tables and charts, their data."""
    bundle: dict[str, Any]
    is_main_result: bool = False
    execution_count: int | None = None
    chart: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    omitted: list[models.CodeOmission] = field(default_factory=list)

    @classmethod
    def from_model(cls, r: models.CodeResult) -> Result:
        return cls(bundle=dict(r.bundle or {}), is_main_result=bool(r.is_main_result),
                   execution_count=r.execution_count, chart=r.chart, data=r.data, omitted=list(r.omitted or []))

    def formats(self) -> list[str]:
        """The MIME types present."""
        return sorted(self.bundle)

    def _s(self, mime: str) -> str | None:
        v = self.bundle.get(mime)
        if v is None:
            return None
        return v if isinstance(v, str) else json.dumps(v)

    def _b(self, mime: str) -> bytes | None:
        v = self.bundle.get(mime)
        return None if not isinstance(v, str) else base64.b64decode(v)

    @property
    def text(self) -> str | None:
        return self._s("text/plain")

    @property
    def html(self) -> str | None:
        return self._s("text/html")

    @property
    def markdown(self) -> str | None:
        return self._s("text/markdown")

    @property
    def svg(self) -> str | None:
        return self._s("image/svg+xml")

    @property
    def latex(self) -> str | None:
        return self._s("text/latex")

    @property
    def json(self) -> Any:
        return self.bundle.get("application/json")

    @property
    def png(self) -> bytes | None:
        """The PNG's bytes (decoded)."""
        return self._b("image/png")

    @property
    def jpeg(self) -> bytes | None:
        return self._b("image/jpeg")

    @property
    def pdf(self) -> bytes | None:
        return self._b("application/pdf")


@dataclass
class Logs:
    """The cell's output, in the pieces it came in."""
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)


@dataclass
class Execution:
    """A cell's outcome. status is ok, error (the code raised; see error),
    timeout, cancelled or died (the kernel ended: state_lost)."""
    results: list[Result] = field(default_factory=list)
    logs: Logs = field(default_factory=Logs)
    error: models.CodeError | None = None
    execution_count: int | None = None
    status: str | None = None
    context_id: str | None = None
    language: str | None = None
    exit_code: int | None = None
    duration_ms: float | None = None
    message: str | None = None
    state_lost: bool = False
    truncated: bool = False
    restarted: bool = False

    @property
    def text(self) -> str | None:
        """The final value's text (the main result's text/plain)."""
        for r in self.results:
            if r.is_main_result:
                return r.text
        return None

    @property
    def stdout(self) -> str:
        return "".join(self.logs.stdout)

    @property
    def stderr(self) -> str:
        return "".join(self.logs.stderr)

    @property
    def ended(self) -> bool:
        return self.status is not None

    def add(self, ev: models.CodeEvent) -> None:
        t = ev.type
        if t == "start" and ev.start is not None:
            self.context_id, self.language = ev.start.context_id, ev.start.language
            self.restarted = bool(ev.start.restarted)
            self.state_lost = bool(ev.start.state_lost)
        elif t == "stdout" and ev.text is not None:
            self.logs.stdout.append(ev.text)
        elif t == "stderr" and ev.text is not None:
            self.logs.stderr.append(ev.text)
        elif t == "result" and ev.result is not None:
            self.results.append(Result.from_model(ev.result))
        elif t == "error" and ev.error is not None:
            self.error = ev.error
        elif t == "end" and ev.end is not None:
            e = ev.end
            self.status = e.status or "ok"
            self.execution_count, self.exit_code, self.duration_ms = e.execution_count, e.exit_code, e.duration_ms
            self.message = e.message
            self.state_lost = self.state_lost or bool(e.state_lost)
            self.truncated = bool(e.truncated)


Callback = Callable[[Any], Any]


def callback(ev: models.CodeEvent, ex: Execution, on_stdout: Callback | None, on_stderr: Callback | None,
             on_result: Callback | None, on_error: Callback | None) -> Any:
    """Call ev's callback (ev is already in ex); returns what it returned
    (for the async client, possibly an awaitable to await)."""
    if ev.type == "stdout" and on_stdout is not None:
        return on_stdout(ev.text)
    if ev.type == "stderr" and on_stderr is not None:
        return on_stderr(ev.text)
    if ev.type == "result" and on_result is not None and ex.results:
        return on_result(ex.results[-1])
    if ev.type == "error" and on_error is not None:
        return on_error(ev.error)
    return None


def cut() -> StreamInterruptedError:
    return StreamInterruptedError("stream_interrupted", "the code stream ended before the cell's end event")


def context_id(ctx: str | models.CodeContext | None) -> str | None:
    if isinstance(ctx, models.CodeContext):
        return ctx.id
    return ctx


def language(lang: str | None) -> str | None:
    if lang is None:
        return None
    if lang.strip().lower() not in LANGUAGES:
        raise InvalidArgumentError("invalid_argument", "unknown language %s: Paddock runs python, javascript, typescript and bash"
                                   % json.dumps(lang[:64] + ("…" if len(lang) > 64 else ""), ensure_ascii=False))
    return lang


def execute_body(code: str, lang: str | None, ctx: str | models.CodeContext | None, env: Mapping[str, str] | None,
                 timeout: float | None, user: str | None) -> dict[str, Any]:
    if not isinstance(code, str):
        raise InvalidArgumentError("invalid_argument", "code must be a string")
    if len(code.encode()) > MAX_CODE_BYTES:
        raise TooLargeError("too_large", "the code of one cell is at most %d bytes" % MAX_CODE_BYTES)
    cid = context_id(ctx)
    if cid is not None and lang is not None:
        raise InvalidArgumentError("invalid_argument", "give context_id or language, not both (a context has its language)")
    ms = _core.timeout_ms(timeout)
    if ms is not None and ms > MAX_CODE_TIMEOUT_MS:
        raise InvalidArgumentError("invalid_argument", "timeout_ms must be at most %d" % MAX_CODE_TIMEOUT_MS)
    return _core.drop_none({"code": code, "language": language(lang), "context_id": cid,
                            "env": dict(env) if env else None, "timeout_ms": ms, "user": _core.user(user)})


def context_body(lang: str | None, cwd: str | None, env: Mapping[str, str] | None, user: str | None) -> dict[str, Any]:
    return _core.drop_none({"language": language(lang), "cwd": cwd, "env": dict(env) if env else None,
                            "user": _core.user(user)})


def wait_s(timeout: float | None) -> float | None:
    """How long the client waits for a cell's stream to say something: the
    cell's own timeout (default 10 minutes) plus slack for the interrupt."""
    return (600.0 if timeout is None else timeout) + 30.0
