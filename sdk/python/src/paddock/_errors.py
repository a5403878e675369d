"""Exceptions: every error the server answers with becomes a PaddockError
carrying its stable code (docs/api.md), message, HTTP status and request id."""

from __future__ import annotations

from typing import Any


class PaddockError(Exception):
    """An error from Paddock (or on the way to it).

    code is the server's stable error code (``not_found``, ``rate_limited``...)
    or, for failures on the client side, ``connection_error`` or
    ``stream_interrupted``.
    """

    code: str

    def __init__(self, code: str, message: str, *, status: int | None = None,
                 request_id: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.request_id = request_id
        self.retry_after = retry_after

    def __str__(self) -> str:
        return "%s: %s" % (self.code, self.message)

    def __repr__(self) -> str:
        return "%s(code=%r, message=%r, status=%r)" % (type(self).__name__, self.code, self.message, self.status)


class InvalidArgumentError(PaddockError):
    """invalid_argument (400): also raised before sending, with the server's words."""


class CommandNotFoundError(PaddockError):
    """command_not_found (400)."""


class UnauthenticatedError(PaddockError):
    """unauthenticated (401): a missing, invalid or revoked key."""


class ForbiddenError(PaddockError):
    """forbidden (403): the key lacks a scope, or a tenant policy refuses."""


class NotFoundError(PaddockError):
    """not_found (404): also another tenant's sandbox."""


class MethodNotAllowedError(PaddockError):
    """method_not_allowed (405)."""


class ConflictError(PaddockError):
    """conflict (409)."""


class SandboxNotRunningError(ConflictError):
    """sandbox_not_running (409)."""


class SandboxPausedError(ConflictError):
    """sandbox_paused (409): the sandbox is paused; resume() it, or create
    it with auto_resume=True so calls resume it themselves."""


class TooLargeError(PaddockError):
    """too_large (413): also raised before sending an upload over the limit."""


class LimitExceededError(PaddockError):
    """limit_exceeded (429): a count or size quota."""


class RateLimitedError(PaddockError):
    """rate_limited (429): retry_after says when a retry can succeed."""


class UnsupportedError(PaddockError):
    """unsupported (501)."""


class UnavailableError(PaddockError):
    """unavailable (503)."""


class TimeoutError(PaddockError):  # noqa: A001 - Paddock's code is "timeout"
    """timeout (504), or the client's own timeout."""


class InternalError(PaddockError):
    """internal (500)."""


class APIConnectionError(PaddockError):
    """The server could not be reached (refused, reset, DNS, TLS)."""


class StreamInterruptedError(PaddockError):
    """A stream (exec output, a code cell, process output, watch, download) was cut before its end."""


_BY_CODE: dict[str, type[PaddockError]] = {
    "invalid_argument": InvalidArgumentError,
    "command_not_found": CommandNotFoundError,
    "unauthenticated": UnauthenticatedError,
    "forbidden": ForbiddenError,
    "not_found": NotFoundError,
    "method_not_allowed": MethodNotAllowedError,
    "conflict": ConflictError,
    "sandbox_not_running": SandboxNotRunningError,
    "sandbox_paused": SandboxPausedError,
    "too_large": TooLargeError,
    "limit_exceeded": LimitExceededError,
    "rate_limited": RateLimitedError,
    "unsupported": UnsupportedError,
    "unavailable": UnavailableError,
    "timeout": TimeoutError,
    "internal": InternalError,
}

_BY_STATUS = {400: "invalid_argument", 401: "unauthenticated", 403: "forbidden", 404: "not_found",
              405: "method_not_allowed", 409: "conflict", 413: "too_large", 429: "limit_exceeded",
              501: "unsupported", 503: "unavailable", 504: "timeout"}


def error_from(code: str, message: str, **kw: Any) -> PaddockError:
    """The exception for a Paddock error code (an unknown code gives the base class)."""
    return _BY_CODE.get(code, PaddockError)(code, message, **kw)


def error_from_response(status: int, body: bytes, headers: Any) -> PaddockError:
    """Map an error answer ({"error":{"code","message"}}) to its exception."""
    import json

    code, message = _BY_STATUS.get(status, "internal"), "HTTP %d" % status
    try:
        e = json.loads(body)["error"]
        code, message = str(e["code"]), str(e["message"])
    except Exception:  # not Paddock's shape: a proxy in between, or an empty body
        text = body[:200].decode("utf-8", "replace").strip()
        if text:
            message = "HTTP %d: %s" % (status, text)
    ra = None
    if headers is not None and headers.get("retry-after"):
        try:
            ra = float(headers["retry-after"])
        except ValueError:
            ra = None
    rid = headers.get("x-request-id") if headers is not None else None
    return error_from(code, message, status=status, request_id=rid, retry_after=ra)
