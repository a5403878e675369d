"""The code interpreter of a sandbox (docs/code.md): cells run in stateful
contexts, streamed as NDJSON events. _sync_code.py is generated from this
file by tools/unasync.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncIterator, Mapping

from . import _aio, _code, _core, models
from ._async_http import AsyncTransport, ndjson
from ._code import Callback, Execution

if TYPE_CHECKING:
    from ._async_sandbox import AsyncSandbox


class AsyncCodeStream:
    """A running cell's events (models.CodeEvent) as they arrive;
    `execution` gathers them. Closing the stream (aclose, or leaving its
    `async with`) ends the request, and the server interrupts the cell (the
    context keeps its state)."""

    def __init__(self, t: AsyncTransport, path: str, body: dict[str, Any], timeout: float | None) -> None:
        self._t, self._path, self._body, self._timeout = t, path, body, timeout
        self._resp: Any = None
        self.execution = Execution()

    async def _open(self) -> None:
        if self._resp is None:
            self._resp = await self._t.stream("POST", self._path, json_body=self._body,
                                              headers={"Accept": "application/x-ndjson"}, timeout=self._timeout)

    async def __aiter__(self) -> AsyncIterator[models.CodeEvent]:
        await self._open()
        async for d in ndjson(self._resp):
            ev = models.CodeEvent.from_dict(d)
            self.execution.add(ev)
            yield ev
        if not self.execution.ended:
            raise _code.cut()

    async def wait(self) -> Execution:
        """Drain the events and return the execution."""
        try:
            async for _ in self:
                pass
        finally:
            await self.aclose()
        return self.execution

    async def aclose(self) -> None:
        if self._resp is not None:
            await self._resp.aclose()

    async def __aenter__(self) -> AsyncCodeStream:
        await self._open()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class AsyncContexts:
    """The sandbox's code contexts: each a stateful interpreter (python,
    javascript, typescript or bash) whose cells share variables."""

    def __init__(self, sb: AsyncSandbox) -> None:
        self._t = sb._t
        self._p = "/v1/sandboxes/%s/code/contexts" % _core.seg(sb.id)

    def _ref(self, ctx: str | models.CodeContext) -> str:
        cid = _code.context_id(ctx)
        return self._p + "/" + _core.seg(cid or "")

    async def create(self, language: str | None = None, *, cwd: str | None = None, env: Mapping[str, str] | None = None,
                     user: str | None = None) -> models.CodeContext:
        """Start a context (answers when its kernel is ready)."""
        body = _code.context_body(language, cwd, env, user)
        return models.CodeContext.from_dict(await self._t.json("POST", self._p, json_body=body, retry=False, timeout=180))

    async def list(self) -> list[models.CodeContext]:
        return models.CodeContextList.from_dict(await self._t.json("GET", self._p)).contexts or []

    async def get(self, ctx: str | models.CodeContext) -> models.CodeContext:
        return models.CodeContext.from_dict(await self._t.json("GET", self._ref(ctx)))

    async def restart(self, ctx: str | models.CodeContext) -> models.CodeContext:
        """A new kernel for the context: its state is lost, as asked."""
        return models.CodeContext.from_dict(await self._t.json("POST", self._ref(ctx) + "/restart", retry=False, timeout=180))

    async def delete(self, ctx: str | models.CodeContext) -> None:
        await self._t.request("DELETE", self._ref(ctx))


class AsyncCode:
    """run_code and run_code_stream of one sandbox."""

    def __init__(self, sb: AsyncSandbox) -> None:
        self._t = sb._t
        self._p = "/v1/sandboxes/%s/code" % _core.seg(sb.id)

    def stream(self, code: str, *, language: str | None = None, context: str | models.CodeContext | None = None,
               env: Mapping[str, str] | None = None, timeout: float | None = None,
               user: str | None = None) -> AsyncCodeStream:
        body = _code.execute_body(code, language, context, env, timeout, user)
        return AsyncCodeStream(self._t, self._p, body, _code.wait_s(timeout))

    async def run(self, code: str, *, language: str | None = None, context: str | models.CodeContext | None = None,
                  env: Mapping[str, str] | None = None, timeout: float | None = None, user: str | None = None,
                  on_stdout: Callback | None = None, on_stderr: Callback | None = None,
                  on_result: Callback | None = None, on_error: Callback | None = None) -> Execution:
        s = self.stream(code, language=language, context=context, env=env, timeout=timeout, user=user)
        async with s:
            async for ev in s:
                await _aio.settle(_code.callback(ev, s.execution, on_stdout, on_stderr, on_result, on_error))
        return s.execution
