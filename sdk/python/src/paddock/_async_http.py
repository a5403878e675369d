"""The HTTP layer of the async client: one request with retries, one
streamed answer, errors as PaddockError. _sync_http.py is generated from
this file by tools/unasync.py."""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Mapping

import httpx

from . import _aio, _core
from ._errors import APIConnectionError, PaddockError, StreamInterruptedError, TimeoutError, error_from, error_from_response


class AsyncTransport:
    def __init__(self, cfg: _core.Config, http_client: httpx.AsyncClient | None = None) -> None:
        self.cfg = cfg
        self._own = http_client is None
        self.http = http_client or httpx.AsyncClient(
            base_url=cfg.url, headers=cfg.headers(),
            timeout=httpx.Timeout(cfg.timeout, connect=min(cfg.timeout or 10.0, 10.0)),
            transport=httpx.AsyncHTTPTransport(retries=0),
            follow_redirects=False)
        if not self._own:
            self.http.headers.update(cfg.headers())

    async def aclose(self) -> None:
        if self._own:
            await self.http.aclose()

    async def request(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                      json_body: Any = None, content: Any = None, headers: Mapping[str, str] | None = None,
                      retry: bool | None = None, timeout: Any = httpx.USE_CLIENT_DEFAULT) -> httpx.Response:
        """Send one request; retry it when that is safe: a refusal (429,
        nothing was done; Retry-After honoured) for any method, and connection
        failures and 502/503/504 for idempotent ones. A body that is a stream
        is never resent."""
        hdrs = dict(headers) if headers else {}
        if json_body is not None:
            content = _core.dumps(json_body)
            hdrs["Content-Type"] = "application/json"
        replayable = content is None or isinstance(content, (bytes, str))
        idem = (method in _core.IDEMPOTENT) if retry is None else retry
        attempt = 0
        while True:
            try:
                resp = await self.http.request(method, path, params=params, content=content,
                                               headers=hdrs or None, timeout=timeout)
            except httpx.ConnectError as e:
                # Nothing reached the server: safe to retry whatever the method.
                if replayable and attempt < self.cfg.max_retries:
                    await _aio.sleep(_core.backoff(attempt, None))
                    attempt += 1
                    continue
                raise APIConnectionError("connection_error", "cannot reach Paddock at %s: %s" % (self.cfg.url, e)) from e
            except httpx.TimeoutException as e:
                raise TimeoutError("timeout", "no answer from Paddock in time (%s %s)" % (method, path)) from e
            except httpx.TransportError as e:
                if idem and replayable and attempt < self.cfg.max_retries:
                    await _aio.sleep(_core.backoff(attempt, None))
                    attempt += 1
                    continue
                raise APIConnectionError("connection_error", "connection to Paddock failed: %s" % e) from e
            if resp.status_code < 400:
                return resp
            await resp.aread()
            err = error_from_response(resp.status_code, resp.content, resp.headers)
            if replayable and attempt < self.cfg.max_retries and self._retryable(resp.status_code, idem, err):
                wait = _core.backoff(attempt, err.retry_after)
                if wait <= self.cfg.max_retry_wait:
                    await _aio.sleep(wait)
                    attempt += 1
                    continue
            raise err

    @staticmethod
    def _retryable(status: int, idem: bool, err: PaddockError) -> bool:
        if status == 429:
            # Quotas that free up by themselves say when (Retry-After); a
            # count quota (limit_exceeded) without it waits on someone else.
            return err.retry_after is not None
        return idem and status in _core.RETRY_STATUS

    async def json(self, method: str, path: str, **kw: Any) -> Any:
        resp = await self.request(method, path, **kw)
        if resp.status_code == 204 or not resp.content:
            return None
        return resp.json()

    async def stream(self, method: str, path: str, *, params: Mapping[str, str] | None = None,
                     json_body: Any = None, content: Any = None, headers: Mapping[str, str] | None = None,
                     timeout: Any = None) -> httpx.Response:
        """Open a streamed answer; the caller must aclose() it. Errors before
        the stream starts raise here."""
        hdrs = dict(headers) if headers else {}
        if json_body is not None:
            content = _core.dumps(json_body)
            hdrs["Content-Type"] = "application/json"
        req = self.http.build_request(method, path, params=params, content=content, headers=hdrs or None,
                                      timeout=httpx.Timeout(timeout, connect=10.0))
        attempt = 0
        while True:
            try:
                resp = await self.http.send(req, stream=True)
            except httpx.ConnectError as e:
                if attempt < self.cfg.max_retries and (content is None or isinstance(content, bytes)):
                    await _aio.sleep(_core.backoff(attempt, None))
                    attempt += 1
                    continue
                raise APIConnectionError("connection_error", "cannot reach Paddock at %s: %s" % (self.cfg.url, e)) from e
            except httpx.TimeoutException as e:
                raise TimeoutError("timeout", "no answer from Paddock in time (%s %s)" % (method, path)) from e
            except httpx.TransportError as e:
                raise APIConnectionError("connection_error", "connection to Paddock failed: %s" % e) from e
            if resp.status_code < 400:
                return resp
            try:
                await resp.aread()
            except httpx.HTTPError:
                pass
            await resp.aclose()
            err = error_from_response(resp.status_code, resp.content, resp.headers)
            if (resp.status_code == 429 and err.retry_after is not None and attempt < self.cfg.max_retries
                    and err.retry_after <= self.cfg.max_retry_wait and (content is None or isinstance(content, bytes))):
                await _aio.sleep(err.retry_after)
                attempt += 1
                continue
            raise err


async def ndjson(resp: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The lines of an NDJSON answer as objects; a cut connection raises
    StreamInterruptedError, an {"error":...} line its PaddockError."""
    try:
        async for line in resp.aiter_lines():
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise StreamInterruptedError("stream_interrupted", "the stream ended with a partial line") from e
            e = obj.get("error") if isinstance(obj, dict) else None
            if isinstance(e, dict) and "code" in e and len(obj) == 1:
                raise error_from(str(e["code"]), str(e.get("message", "")))
            yield obj
    except httpx.TimeoutException as e:
        raise TimeoutError("timeout", "the stream sent nothing in time") from e
    except httpx.HTTPError as e:
        raise StreamInterruptedError("stream_interrupted", "the stream was cut before its end: %s" % e) from e
    finally:
        await resp.aclose()
