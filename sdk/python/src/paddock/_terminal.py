"""Interactive terminals over the PTY WebSocket (docs/processes.md).

AsyncTerminal uses the websockets package's asyncio client; Terminal, for the
sync client, runs one on a private event loop thread (Debian's websockets
10.4 has no sync client)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from ._errors import APIConnectionError, PaddockError, StreamInterruptedError, error_from


class TerminalExit:
    """How the terminal's process ended."""

    def __init__(self, d: dict[str, Any]) -> None:
        self.exit_code: int | None = d.get("exit_code")
        self.signal: str | None = d.get("signal") or None


class AsyncTerminal:
    def __init__(self, ws: Any) -> None:
        self._ws = ws
        self.pid: int | None = None
        self.id: str | None = None
        self.exit: TerminalExit | None = None
        self.dropped = 0

    @classmethod
    async def open(cls, url: str, api_key: str | None) -> AsyncTerminal:
        import websockets
        from websockets.exceptions import InvalidStatusCode

        headers = {"Authorization": "Bearer " + api_key} if api_key else {}
        try:
            ws = await websockets.connect(url, extra_headers=headers, max_size=None, open_timeout=30)  # type: ignore[attr-defined]
        except InvalidStatusCode as e:
            raise error_from({401: "unauthenticated", 403: "forbidden", 404: "not_found", 409: "sandbox_not_running"}.get(
                e.status_code, "internal"), "the terminal was refused (HTTP %d)" % e.status_code, status=e.status_code) from e
        except OSError as e:
            raise APIConnectionError("connection_error", "cannot reach Paddock: %s" % e) from e
        t = cls(ws)
        # The first text message names the process.
        while t.pid is None:
            msg = await t._recv_raw()
            if msg is None:
                raise StreamInterruptedError("stream_interrupted", "the terminal closed before it started")
            if isinstance(msg, bytes):
                t._early = getattr(t, "_early", b"") + msg
        return t

    async def _recv_raw(self) -> bytes | str | None:
        from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK
        try:
            msg = await self._ws.recv()
        except ConnectionClosedOK:
            return None
        except ConnectionClosedError as e:
            if self.exit is not None:
                return None
            raise StreamInterruptedError("stream_interrupted", "the terminal connection was cut: %s" % e) from e
        if isinstance(msg, str):
            d = json.loads(msg)
            typ = d.get("type")
            if typ == "started":
                self.pid, self.id = d.get("pid"), d.get("id")
            elif typ == "exit":
                self.exit = TerminalExit(d)
            elif typ == "dropped":
                self.dropped += int(d.get("bytes", 0))
            elif typ == "error":
                raise error_from(str(d.get("code", "internal")), str(d.get("message", "")))
        return msg

    async def recv(self) -> bytes | None:
        """The next screen bytes; None once the process has exited and the
        socket closed."""
        early = getattr(self, "_early", b"")
        if early:
            self._early = b""
            return early
        while True:
            msg = await self._recv_raw()
            if msg is None:
                return None
            if isinstance(msg, bytes):
                return msg

    async def read_until(self, needle: bytes, timeout: float = 30) -> bytes:
        """Screen output up to and including needle."""
        buf = b""

        async def loop() -> bytes:
            nonlocal buf
            while needle not in buf:
                b = await self.recv()
                if b is None:
                    raise StreamInterruptedError("stream_interrupted", "the terminal ended before %r appeared" % needle)
                buf += b
            return buf

        return await asyncio.wait_for(loop(), timeout)

    async def send(self, data: bytes | str) -> None:
        await self._ws.send(data.encode() if isinstance(data, str) else data)

    async def resize(self, rows: int, cols: int) -> None:
        await self._ws.send(json.dumps({"type": "resize", "rows": rows, "cols": cols}))

    async def signal(self, signal: str = "SIGINT", *, tree: bool = False) -> None:
        await self._ws.send(json.dumps({"type": "signal", "signal": signal, "tree": tree}))

    async def eof(self) -> None:
        await self._ws.send(json.dumps({"type": "eof"}))

    async def wait(self, timeout: float = 60) -> TerminalExit:
        """Read until the process exits."""
        async def loop() -> None:
            while await self.recv() is not None:
                pass
        await asyncio.wait_for(loop(), timeout)
        if self.exit is None:
            raise StreamInterruptedError("stream_interrupted", "the terminal closed without an exit status")
        return self.exit

    async def aclose(self) -> None:
        await self._ws.close()

    async def __aenter__(self) -> AsyncTerminal:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


class Terminal:
    """The sync face of AsyncTerminal (same methods, blocking)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, thread: threading.Thread, t: AsyncTerminal) -> None:
        self._loop, self._thread, self._t = loop, thread, t

    @classmethod
    def open(cls, url: str, api_key: str | None) -> Terminal:
        loop = asyncio.new_event_loop()
        th = threading.Thread(target=loop.run_forever, name="paddock-terminal", daemon=True)
        th.start()
        try:
            t = asyncio.run_coroutine_threadsafe(AsyncTerminal.open(url, api_key), loop).result()
        except BaseException:
            loop.call_soon_threadsafe(loop.stop)
            th.join()
            loop.close()
            raise
        return cls(loop, th, t)

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @property
    def pid(self) -> int | None:
        return self._t.pid

    @property
    def exit(self) -> TerminalExit | None:
        return self._t.exit

    def recv(self) -> bytes | None:
        return self._run(self._t.recv())

    def read_until(self, needle: bytes, timeout: float = 30) -> bytes:
        return self._run(self._t.read_until(needle, timeout))

    def send(self, data: bytes | str) -> None:
        self._run(self._t.send(data))

    def resize(self, rows: int, cols: int) -> None:
        self._run(self._t.resize(rows, cols))

    def signal(self, signal: str = "SIGINT", *, tree: bool = False) -> None:
        self._run(self._t.signal(signal, tree=tree))

    def eof(self) -> None:
        self._run(self._t.eof())

    def wait(self, timeout: float = 60) -> TerminalExit:
        return self._run(self._t.wait(timeout))

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self._t.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["AsyncTerminal", "Terminal", "TerminalExit", "PaddockError"]
