"""Paddock's Python SDK: sandboxes for AI agents on your own servers.

    from paddock import Sandbox

    with Sandbox.create() as sb:            # PADDOCK_URL, PADDOCK_API_KEY
        r = sb.exec("echo hello")
        print(r.stdout, r.exit_code)

Paddock / Sandbox block; AsyncPaddock / AsyncSandbox are the asyncio
twins with the same methods. Errors are PaddockError subclasses carrying the
server's error code (docs/api.md)."""

from . import models
from ._async_client import AsyncPaddock, AsyncTemplateStream
from ._async_code import AsyncCodeStream
from ._code import Execution, Logs, Result
from ._async_sandbox import AsyncExecStream, AsyncSandbox, OutputChunk
from ._errors import (APIConnectionError, CommandNotFoundError, ConflictError, ForbiddenError, InternalError,
                      InvalidArgumentError, LimitExceededError, MethodNotAllowedError, NotFoundError, PaddockError,
                      RateLimitedError, SandboxNotRunningError, SandboxPausedError, StreamInterruptedError, TimeoutError, TooLargeError,
                      UnauthenticatedError, UnavailableError, UnsupportedError)
from ._sync_client import Paddock, TemplateStream
from ._sync_code import CodeStream
from ._sync_sandbox import ExecStream, Sandbox
from ._terminal import AsyncTerminal, Terminal, TerminalExit

__version__ = "0.1.0"

__all__ = [
    "Paddock", "Sandbox", "ExecStream", "AsyncPaddock", "AsyncSandbox", "AsyncExecStream", "OutputChunk",
    "Terminal", "AsyncTerminal", "TerminalExit", "models", "Execution", "Result", "Logs", "CodeStream",
    "AsyncCodeStream", "TemplateStream", "AsyncTemplateStream",
    "PaddockError", "APIConnectionError", "StreamInterruptedError", "InvalidArgumentError", "CommandNotFoundError",
    "UnauthenticatedError", "ForbiddenError", "NotFoundError", "MethodNotAllowedError", "ConflictError",
    "SandboxNotRunningError", "SandboxPausedError", "TooLargeError", "LimitExceededError", "RateLimitedError", "UnsupportedError",
    "UnavailableError", "TimeoutError", "InternalError",
]
