"""The sync side's I/O helpers (the async side has the same names in _aio)."""

from __future__ import annotations

import time
from typing import Any, Iterator

from . import _core


def sleep(seconds: float) -> None:
    time.sleep(seconds)


def body(data: Any) -> Iterator[bytes]:
    """An upload body as chunks."""
    if hasattr(data, "__aiter__"):
        raise TypeError("the sync client cannot send an async iterable; use AsyncPaddock")
    yield from _core.iter_chunks(data)


def settle(v: Any) -> None:
    """The sync client's callbacks are plain functions: nothing to wait for."""
