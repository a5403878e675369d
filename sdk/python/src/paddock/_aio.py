"""The async side's I/O helpers (the sync side has the same names in _sio)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, AsyncIterator

from . import _core


async def sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def body(data: Any) -> AsyncIterator[bytes]:
    """An upload body as async chunks (async iterables pass through)."""
    if hasattr(data, "__aiter__"):
        async for b in data:
            yield b.encode() if isinstance(b, str) else bytes(b)
        return
    for b in _core.iter_chunks(data):
        yield b


async def settle(v: Any) -> None:
    """Await v if a callback returned an awaitable (async callbacks)."""
    if inspect.isawaitable(v):
        await v
