# Generated from _async_sandbox.py by tools/unasync.py. Do not edit.
"""A sandbox and what it does: exec, code, files, processes, terminals,
browser, network, ports, pause/resume, snapshots and fork. _sync_sandbox.py is generated from this file by
tools/unasync.py."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence
from urllib.parse import urlencode

from . import _sio, _core, models
from ._sync_code import Code, CodeStream, Contexts
from ._sync_http import Transport, ndjson
from ._code import Callback, Execution
from ._errors import StreamInterruptedError
from ._terminal import Terminal

if TYPE_CHECKING:
    from ._sync_client import Paddock


@dataclass
class OutputChunk:
    """A piece of a command's output: stream is "stdout", "stderr" or "pty"."""
    stream: str
    data: str


class ExecStream:
    """A running exec's output as it arrives; result holds the exit status
    once the iteration has ended."""

    def __init__(self, t: Transport, path: str, body: dict[str, Any], timeout: float | None) -> None:
        self._t, self._path, self._body, self._timeout = t, path, body, timeout
        self._resp: Any = None
        self.result: models.ExecEvent | None = None

    def _open(self) -> None:
        if self._resp is None:
            self._resp = self._t.stream("POST", self._path, json_body=self._body,
                                              headers={"Accept": "application/x-ndjson"}, timeout=self._timeout)

    def __iter__(self) -> Iterator[OutputChunk]:
        self._open()
        for ev in ndjson(self._resp):
            if "stdout" in ev and len(ev) == 1:
                yield OutputChunk("stdout", ev["stdout"])
            elif "stderr" in ev and len(ev) == 1:
                yield OutputChunk("stderr", ev["stderr"])
            elif "exit_code" in ev:
                self.result = models.ExecEvent.from_dict(ev)
        if self.result is None:
            raise StreamInterruptedError("stream_interrupted", "the exec stream ended without the command's result")

    def wait(self) -> models.ExecEvent:
        """Drain the output and return the result."""
        for _ in self:
            pass
        assert self.result is not None
        return self.result

    def close(self) -> None:
        if self._resp is not None:
            self._resp.close()

    def __enter__(self) -> ExecStream:
        self._open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Files:
    """Files in the sandbox (docs/files.md). Paths are absolute or relative
    to /workspace; user is "root" (default) or "user"."""

    def __init__(self, sb: Sandbox) -> None:
        self._sb, self._t = sb, sb._t
        self._p = "/v1/sandboxes/%s/files" % _core.seg(sb.id)

    def read(self, path: str, *, offset: int | None = None, length: int | None = None,
                   user: str | None = None) -> bytes:
        resp = self._t.request("GET", self._p, params=_core.query(
            path=_core.path(path), offset=offset, length=length, user=_core.user(user)))
        return resp.content

    def read_text(self, path: str, *, encoding: str = "utf-8", user: str | None = None) -> str:
        return (self.read(path, user=user)).decode(encoding)

    def iter_read(self, path: str, *, user: str | None = None, chunk_size: int = 1 << 20) -> Iterator[bytes]:
        """Stream a file's bytes (nothing is held whole)."""
        resp = self._t.stream("GET", self._p, params=_core.query(path=_core.path(path), user=_core.user(user)))
        try:
            for b in resp.iter_bytes(chunk_size):
                yield b
        except Exception as e:
            if isinstance(e, StreamInterruptedError):
                raise
            raise StreamInterruptedError("stream_interrupted", "the download was cut before its end: %s" % e) from e
        finally:
            resp.close()

    def download(self, path: str, dest: str | os.PathLike[str] | Any, *, user: str | None = None) -> int:
        """Stream a file into dest (a local path or a binary file object);
        returns the bytes written."""
        n = 0
        f = open(dest, "wb") if isinstance(dest, (str, os.PathLike)) else dest
        try:
            for b in self.iter_read(path, user=user):
                f.write(b)
                n += len(b)
        finally:
            if f is not dest:
                f.close()
        return n

    def write(self, path: str, data: Any, *, mode: int | str | None = None, parents: bool | None = None,
                    user: str | None = None) -> models.FileInfo:
        """Write data (bytes, str, a binary file object or an iterable of
        bytes) to path atomically, streamed. An upload known to be over
        max_upload_bytes is refused before anything is sent."""
        params = _core.query(path=_core.path(path), mode=_core.mode(mode), parents=parents, user=_core.user(user))
        _core.check_upload(data, self._t.cfg.max_upload_bytes)
        content = data.encode() if isinstance(data, str) else data if isinstance(data, bytes) else _sio.body(data)
        d = self._t.json("PUT", self._p, params=params, content=content,
                               headers={"Content-Type": "application/octet-stream"})
        return models.FileInfo.from_dict(d)

    def upload(self, local: str | os.PathLike[str], path: str, **kw: Any) -> models.FileInfo:
        """Stream a local file to path."""
        with open(local, "rb") as f:
            return self.write(path, f, **kw)

    def list(self, path: str = "/workspace", *, depth: int | None = None, limit: int | None = None,
                   user: str | None = None) -> models.ListResult:
        d = self._t.json("GET", self._p + "/list", params=_core.query(
            path=_core.path(path), depth=depth, limit=limit, user=_core.user(user)))
        return models.ListResult.from_dict(d)

    def stat(self, path: str, *, follow: bool | None = None, user: str | None = None) -> models.FileInfo:
        d = self._t.json("GET", self._p + "/stat", params=_core.query(
            path=_core.path(path), follow=follow, user=_core.user(user)))
        return models.FileInfo.from_dict(d)

    def exists(self, path: str, *, user: str | None = None) -> bool:
        from ._errors import NotFoundError
        try:
            self.stat(path, user=user)
            return True
        except NotFoundError:
            return False

    def mkdir(self, path: str, *, parents: bool | None = None, mode: int | str | None = None,
                    user: str | None = None) -> models.FileInfo:
        body = _core.drop_none({"path": _core.path(path), "parents": parents, "mode": _core.mode(mode), "user": _core.user(user)})
        return models.FileInfo.from_dict(self._t.json("POST", self._p + "/mkdir", json_body=body))

    def move(self, src: str, dst: str, *, overwrite: bool | None = None, parents: bool | None = None,
                   user: str | None = None) -> models.FileInfo:
        body = _core.drop_none({"from": _core.path(src), "to": _core.path(dst), "overwrite": overwrite,
                                "parents": parents, "user": _core.user(user)})
        return models.FileInfo.from_dict(self._t.json("POST", self._p + "/move", json_body=body))

    def remove(self, path: str, *, recursive: bool | None = None, user: str | None = None) -> models.RemoveResult:
        d = self._t.json("DELETE", self._p, params=_core.query(
            path=_core.path(path), recursive=recursive, user=_core.user(user)))
        return models.RemoveResult.from_dict(d)

    def edit(self, path: str, *, old_string: str | None = None, new_string: str | None = None,
                   replace_all: bool | None = None, start_line: int | None = None, end_line: int | None = None,
                   content: str | None = None, user: str | None = None) -> models.EditResult:
        body = _core.drop_none({"path": _core.path(path), "old_string": old_string, "new_string": new_string,
                                "replace_all": replace_all, "start_line": start_line, "end_line": end_line,
                                "content": content, "user": _core.user(user)})
        return models.EditResult.from_dict(self._t.json("POST", self._p + "/edit", json_body=body, retry=False))

    def find(self, pattern: str, *, path: str | None = None, type: str | None = None,
                   limit: int | None = None, user: str | None = None) -> models.FindResult:
        d = self._t.json("GET", self._p + "/find", params=_core.query(
            pattern=pattern, path=None if path is None else _core.path(path), type=type, limit=limit,
            user=_core.user(user)))
        return models.FindResult.from_dict(d)

    def search(self, query: str, *, path: str | None = None, regexp: bool | None = None,
                     ignore_case: bool | None = None, include: str | None = None, limit: int | None = None,
                     max_file_size: int | None = None, user: str | None = None) -> models.SearchResult:
        d = self._t.json("GET", self._p + "/search", params=_core.query(
            query=query, path=None if path is None else _core.path(path), regexp=regexp, ignore_case=ignore_case,
            include=include, limit=limit, max_file_size=max_file_size, user=_core.user(user)))
        return models.SearchResult.from_dict(d)

    def watch(self, path: str, *, recursive: bool | None = None, user: str | None = None) -> Iterator[models.FileEvent]:
        """Changes under path, as they happen; the first event is "ready"."""
        resp = self._t.stream("GET", self._p + "/watch", params=_core.query(
            path=_core.path(path), recursive=recursive, user=_core.user(user)))
        for ev in ndjson(resp):
            yield models.FileEvent.from_dict(ev)

    def download_archive(self, path: str, dest: Any, *, gzip: bool | None = None, user: str | None = None) -> int:
        """A directory (or file) as a tar (gzip: tar.gz) stream into dest."""
        resp = self._t.stream("GET", self._p + "/archive", params=_core.query(
            path=_core.path(path), gzip=gzip, user=_core.user(user)))
        n = 0
        f = open(dest, "wb") if isinstance(dest, (str, os.PathLike)) else dest
        try:
            for b in resp.iter_bytes():
                f.write(b)
                n += len(b)
        except Exception as e:
            raise StreamInterruptedError("stream_interrupted", "the archive download was cut: %s" % e) from e
        finally:
            resp.close()
            if f is not dest:
                f.close()
        return n

    def upload_archive(self, path: str, data: Any, *, gzip: bool = False, max_entries: int | None = None,
                             max_ratio: float | None = None, user: str | None = None) -> models.ExtractResult:
        """Extract a tar (or tar.gz) stream into the directory path."""
        _core.check_upload(data, self._t.cfg.max_upload_bytes)
        content = data if isinstance(data, bytes) else _sio.body(data)
        d = self._t.json("POST", self._p + "/archive", params=_core.query(
            path=_core.path(path), max_entries=max_entries, max_ratio=max_ratio, user=_core.user(user)),
            content=content, headers={"Content-Type": "application/gzip" if gzip else "application/x-tar"}, retry=False)
        return models.ExtractResult.from_dict(d)


class Processes:
    """Background processes (docs/processes.md). ref is a pid, the id from
    start ("p7") or "tag:NAME"."""

    def __init__(self, sb: Sandbox) -> None:
        self._t = sb._t
        self._p = "/v1/sandboxes/%s/processes" % _core.seg(sb.id)

    def _ref(self, ref: str | int | models.ProcessInfo) -> str:
        if isinstance(ref, models.ProcessInfo):
            ref = ref.id
        return self._p + "/" + _core.seg(str(ref))

    def start(self, cmd: str | Sequence[str] | None = None, *, env: Mapping[str, str] | None = None,
                    cwd: str | None = None, user: str | None = None, tag: str | None = None, stdin: bool | None = None,
                    pty: tuple[int, int] | None = None, buffer_bytes: int | None = None) -> models.ProcessInfo:
        body = _core.drop_none({
            "cmd": None if cmd is None else _core.argv(cmd), "env": dict(env) if env else None, "cwd": cwd,
            "user": _core.user(user), "tag": tag, "stdin": stdin,
            "pty": None if pty is None else {"rows": pty[0], "cols": pty[1]},
            "buffer_bytes": _core.buffer_bytes(buffer_bytes)})
        return models.ProcessInfo.from_dict(self._t.json("POST", self._p, json_body=body))

    def list(self) -> list[models.ProcessInfo]:
        return models.ProcessList.from_dict(self._t.json("GET", self._p)).processes

    def get(self, ref: str | int | models.ProcessInfo) -> models.ProcessInfo:
        return models.ProcessInfo.from_dict(self._t.json("GET", self._ref(ref)))

    def kill(self, ref: str | int | models.ProcessInfo) -> models.ProcessInfo:
        return models.ProcessInfo.from_dict(self._t.json("DELETE", self._ref(ref)))

    def wait(self, ref: str | int | models.ProcessInfo, timeout: float | None = None) -> models.ProcessInfo:
        """Wait for the exit (at most timeout seconds; the server's default
        is 30 s): the ProcessInfo's state says which came first."""
        body = _core.drop_none({"timeout_ms": _core.timeout_ms(timeout)})
        wait_s = 30.0 if timeout is None else timeout
        return models.ProcessInfo.from_dict(self._t.json(
            "POST", self._ref(ref) + "/wait", json_body=body, retry=True, timeout=wait_s + 30))

    def signal(self, ref: str | int | models.ProcessInfo, signal: str | int = "SIGTERM", *, tree: bool = False) -> int:
        d = self._t.json("POST", self._ref(ref) + "/signal", json_body={"signal": str(signal), "tree": tree})
        return int(d["signalled"])

    def write_stdin(self, ref: str | int | models.ProcessInfo, data: bytes | str) -> int:
        d = self._t.json("POST", self._ref(ref) + "/stdin", content=data.encode() if isinstance(data, str) else data,
                               headers={"Content-Type": "application/octet-stream"})
        return int(d["bytes"])

    def close_stdin(self, ref: str | int | models.ProcessInfo) -> None:
        self._t.json("POST", self._ref(ref) + "/close-stdin")

    def resize(self, ref: str | int | models.ProcessInfo, rows: int, cols: int) -> None:
        self._t.json("POST", self._ref(ref) + "/resize", json_body={"rows": rows, "cols": cols}, retry=True)

    def output(self, ref: str | int | models.ProcessInfo, *, follow: bool = False, start: str | int | None = None,
                     base64: bool = False) -> Iterator[models.OutputLine]:
        """The process's output lines (docs/processes.md "Output"); with
        follow, until it has exited. The last line carries `process`."""
        resp = self._t.stream("GET", self._ref(ref) + "/output", params=_core.query(
            follow="1" if follow else None, encoding="base64" if base64 else None,
            **{"from": None if start is None else str(start)}))
        ended = False
        for ev in ndjson(resp):
            line = models.OutputLine.from_dict(ev)
            ended = ended or line.process is not None
            yield line
        if not ended:
            raise StreamInterruptedError("stream_interrupted", "the output stream ended before the process's final state")


class Browser:
    """The sandbox's headless Chromium (docs/browser.md)."""

    def __init__(self, sb: Sandbox) -> None:
        self._sb, self._t = sb, sb._t
        self._p = "/v1/sandboxes/%s/browser" % _core.seg(sb.id)

    def _post(self, action: str, body: dict[str, Any], timeout_ms: int | None) -> Any:
        wait = (timeout_ms or 30000) / 1000 + 30
        return self._t.json("POST", self._p + "/" + action, json_body=_core.drop_none(body), retry=False, timeout=wait)

    def status(self) -> models.BrowserStatus:
        return models.BrowserStatus.from_dict(self._t.json("GET", self._p))

    def start(self) -> models.BrowserStatus:
        return models.BrowserStatus.from_dict(self._t.json("POST", self._p + "/start", retry=True, timeout=120))

    def stop(self) -> models.BrowserStatus:
        return models.BrowserStatus.from_dict(self._t.json("POST", self._p + "/stop", retry=True))

    def navigate(self, url: str, *, wait_until: str | None = None, tab: str | None = None,
                       timeout_ms: int | None = None) -> models.BrowserPage:
        return models.BrowserPage.from_dict(self._post("navigate", {"url": url, "wait_until": wait_until, "tab": tab, "timeout_ms": timeout_ms}, timeout_ms))

    def click(self, selector: str | None = None, *, text: str | None = None, ref: str | None = None,
                    button: str | None = None, click_count: int | None = None, tab: str | None = None,
                    timeout_ms: int | None = None) -> models.BrowserPage:
        return models.BrowserPage.from_dict(self._post("click", {
            "selector": selector, "text": text, "ref": ref, "button": button, "click_count": click_count,
            "tab": tab, "timeout_ms": timeout_ms}, timeout_ms))

    def type(self, text: str, *, selector: str | None = None, ref: str | None = None, clear: bool | None = None,
                   submit: bool | None = None, tab: str | None = None, timeout_ms: int | None = None) -> models.BrowserPage:
        return models.BrowserPage.from_dict(self._post("type", {
            "text": text, "selector": selector, "ref": ref, "clear": clear, "submit": submit, "tab": tab,
            "timeout_ms": timeout_ms}, timeout_ms))

    def press(self, key: str, *, selector: str | None = None, ref: str | None = None, tab: str | None = None,
                    timeout_ms: int | None = None) -> models.BrowserPage:
        return models.BrowserPage.from_dict(self._post("press", {
            "key": key, "selector": selector, "ref": ref, "tab": tab, "timeout_ms": timeout_ms}, timeout_ms))

    def scroll(self, direction: str | None = None, *, amount: int | None = None, selector: str | None = None,
                     text: str | None = None, ref: str | None = None, tab: str | None = None,
                     timeout_ms: int | None = None) -> models.BrowserScroll:
        return models.BrowserScroll.from_dict(self._post("scroll", {
            "direction": direction, "amount": amount, "selector": selector, "text": text, "ref": ref, "tab": tab,
            "timeout_ms": timeout_ms}, timeout_ms))

    def eval(self, expression: str, *, tab: str | None = None, timeout_ms: int | None = None) -> models.BrowserEval:
        return models.BrowserEval.from_dict(self._post("eval", {"expression": expression, "tab": tab, "timeout_ms": timeout_ms}, timeout_ms))

    def text(self, *, format: str | None = None, max_bytes: int | None = None, tab: str | None = None) -> models.BrowserText:
        return models.BrowserText.from_dict(self._t.json("GET", self._p + "/text", params=_core.query(format=format, max_bytes=max_bytes, tab=tab)))

    def snapshot(self, *, max_bytes: int | None = None, tab: str | None = None) -> models.BrowserSnapshot:
        return models.BrowserSnapshot.from_dict(self._t.json("GET", self._p + "/snapshot", params=_core.query(max_bytes=max_bytes, tab=tab)))

    def screenshot(self, *, full_page: bool | None = None, tab: str | None = None) -> bytes:
        """A PNG of the page."""
        return (self._t.request("GET", self._p + "/screenshot", params=_core.query(full_page=full_page, tab=tab))).content

    def tabs(self) -> list[models.BrowserTab]:
        return models.BrowserTabs.from_dict(self._t.json("GET", self._p + "/tabs")).tabs

    def open_tab(self, url: str | None = None, *, timeout_ms: int | None = None) -> models.BrowserTab:
        return models.BrowserTab.from_dict(self._post("tabs", {"url": url, "timeout_ms": timeout_ms}, timeout_ms))

    def activate_tab(self, tab: str) -> models.BrowserTab:
        return models.BrowserTab.from_dict(self._t.json("POST", self._p + "/tabs/" + _core.seg(tab) + "/activate", retry=True))

    def close_tab(self, tab: str) -> list[models.BrowserTab]:
        return models.BrowserTabs.from_dict(self._t.json("DELETE", self._p + "/tabs/" + _core.seg(tab))).tabs

    def downloads(self) -> models.BrowserDownloads:
        return models.BrowserDownloads.from_dict(self._t.json("GET", self._p + "/downloads"))

    def version(self) -> dict[str, Any]:
        """DevTools' /json/version, its URLs pointing at Paddock."""
        return self._t.json("GET", self._p + "/json/version")

    def cdp_http_url(self) -> str:
        """The base a CDP client (Playwright's connectOverCDP) is given; send
        the key as Authorization: Bearer."""
        return self._t.cfg.url + self._p

    def cdp_url(self, *, ttl: int = 900) -> str:
        """A ws:// DevTools URL for clients that cannot set headers: it
        carries a sandbox token (scope exec, ttl seconds), never the key."""
        tok = self._sb.create_token(["exec"], ttl=ttl)
        return self._t.cfg.ws_url(self._p + "/cdp") + "?" + urlencode({"token": tok.token})


class Sandbox:
    """One sandbox. `with` destroys it at the end of the block."""

    def __init__(self, client: Paddock, info: models.Sandbox, *, owns_client: bool = False) -> None:
        self.client = client
        self._t = client._t
        self.info = info
        self.id = info.id
        # A client made by Sandbox.create is shared with the sandbox's forks:
        # the last of them killed closes it.
        self._lease: _core.Lease | None = _core.Lease() if owns_client else None
        self._path = "/v1/sandboxes/" + _core.seg(self.id)
        self.files = Files(self)
        self.processes = Processes(self)
        self.browser = Browser(self)
        self.contexts = Contexts(self)
        self._code = Code(self)

    def __repr__(self) -> str:
        return "<Sandbox %s %s>" % (self.id, self.info.state)

    @classmethod
    def create(cls, *, url: str | None = None, api_key: str | None = None, **spec: Any) -> Sandbox:
        """Create a sandbox with a client of its own (PADDOCK_URL and
        PADDOCK_API_KEY by default), closed with the sandbox."""
        from ._sync_client import Paddock
        c = Paddock(url=url, api_key=api_key)
        try:
            sb = c.sandboxes.create(**spec)
        except BaseException:
            c.close()
            raise
        sb._lease = _core.Lease()
        return sb

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.kill()

    def kill(self) -> None:
        """Destroy the sandbox (a sandbox already gone is not an error)."""
        from ._errors import NotFoundError
        try:
            self._t.request("DELETE", self._path)
        except NotFoundError:
            pass
        finally:
            lease, self._lease = self._lease, None
            if lease is not None and lease.release():
                self.client.close()

    def refresh(self) -> models.Sandbox:
        self.info = models.Sandbox.from_dict(self._t.json("GET", self._path))
        return self.info

    def set_timeout(self, seconds: int) -> models.Sandbox:
        """The sandbox now expires seconds from now."""
        self.info = models.Sandbox.from_dict(self._t.json("POST", self._path + "/timeout", json_body={"timeout_s": int(seconds)}, retry=True))
        return self.info

    def stats(self) -> models.Stats:
        return models.Stats.from_dict(self._t.json("GET", self._path + "/stats"))

    # ------------------------------------------------------------ state (docs/state.md)

    def pause(self) -> models.Sandbox:
        """Freeze the sandbox (processes, memory and files kept; its clock
        stops). Pausing a paused sandbox answers it as it is."""
        self.info = models.Sandbox.from_dict(self._t.json("POST", self._path + "/pause", retry=True))
        return self.info

    def resume(self) -> models.Sandbox:
        """Thaw a paused sandbox; resuming a running one answers it as it is."""
        self.info = models.Sandbox.from_dict(self._t.json("POST", self._path + "/resume", retry=True))
        return self.info

    def hibernate(self) -> models.Sandbox:
        """Checkpoint the sandbox to disk and release its RAM (gVisor
        sandboxes; native ones answer unsupported). resume() restores it,
        processes included. Hibernating a hibernated sandbox answers it."""
        self.info = models.Sandbox.from_dict(self._t.json("POST", self._path + "/hibernate", retry=True, timeout=600))
        return self.info

    def snapshot(self, name: str, *, memory: bool = False) -> models.Snapshot:
        """Save the sandbox's filesystem changes as the tenant's snapshot
        name (create another sandbox from it with snapshot=name). memory
        (gVisor): also checkpoint its processes and memory, which a sandbox
        created from the snapshot continues."""
        body: dict[str, Any] = {"name": _core.snapshot_name(name)}
        if memory:
            body["memory"] = True
        return models.Snapshot.from_dict(self._t.json("POST", self._path + "/snapshots", json_body=body,
                                                            retry=False, timeout=600))

    def fork(self, count: int = 1, *, memory: bool = False) -> list[Sandbox]:
        """count copies of the sandbox's files, each a sandbox of its own
        (all made, or none). memory (gVisor): each fork also continues the
        sandbox's running processes from one checkpoint. Kill each (or use
        it in `with`)."""
        body: dict[str, Any] = {"count": _core.fork_count(count)}
        if memory:
            body["memory"] = True
        d = self._t.json("POST", self._path + "/fork", json_body=body, retry=False, timeout=600)
        out: list[Sandbox] = []
        for info in models.ForkResponse.from_dict(d).sandboxes:
            sb = Sandbox(self.client, info)
            sb._lease = None if self._lease is None else self._lease.hold()
            out.append(sb)
        return out

    # ------------------------------------------------------------ code (docs/code.md)

    def run_code(self, code: str, *, language: str | None = None, context: str | models.CodeContext | None = None,
                       env: Mapping[str, str] | None = None, timeout: float | None = None, user: str | None = None,
                       on_stdout: Callback | None = None, on_stderr: Callback | None = None,
                       on_result: Callback | None = None, on_error: Callback | None = None) -> Execution:
        """Run a cell in a context (the language's default one unless
        context is given) and return its Execution; callbacks see the output
        as it comes. A cell that raises is not an exception: look at
        .error. A stream cut before the cell's end raises StreamInterruptedError."""
        return self._code.run(code, language=language, context=context, env=env, timeout=timeout, user=user,
                                    on_stdout=on_stdout, on_stderr=on_stderr, on_result=on_result, on_error=on_error)

    def run_code_stream(self, code: str, *, language: str | None = None, context: str | models.CodeContext | None = None,
                        env: Mapping[str, str] | None = None, timeout: float | None = None,
                        user: str | None = None) -> CodeStream:
        """Run a cell and iterate over its events; closing the stream
        interrupts the cell."""
        return self._code.stream(code, language=language, context=context, env=env, timeout=timeout, user=user)

    def _exec_body(self, cmd: str | Sequence[str], env: Mapping[str, str] | None, cwd: str | None, user: str | None,
                   timeout: float | None, stdin: str | bytes | None, max_output_bytes: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {"cmd": _core.argv(cmd)}
        if env:
            body["env"] = dict(env)
        if cwd is not None:
            body["cwd"] = cwd
        if user is not None:
            body["user"] = _core.user(user)
        if timeout is not None:
            body["timeout_ms"] = _core.timeout_ms(timeout)
        if stdin is not None:
            body["stdin"] = stdin.decode() if isinstance(stdin, bytes) else stdin
        if max_output_bytes is not None:
            body["max_output_bytes"] = _core.max_output(max_output_bytes)
        return body

    def exec(self, cmd: str | Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                   user: str | None = None, timeout: float | None = None, stdin: str | bytes | None = None,
                   max_output_bytes: int | None = None) -> models.ExecResponse:
        """Run a command (a string runs through sh -c, a list directly) and
        return its buffered output and exit status. A non-zero exit is not an
        error: look at exit_code."""
        body = self._exec_body(cmd, env, cwd, user, timeout, stdin, max_output_bytes)
        wait = None if timeout is None else timeout + 30
        resp = self._t.request("POST", self._path + "/exec", content=_core.dumps(body),
                                     headers={"Content-Type": "application/json"}, retry=False,
                                     timeout=wait if wait is not None else self._t.cfg.timeout)
        return models.ExecResponse.from_dict(resp.json())

    def exec_stream(self, cmd: str | Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                    user: str | None = None, timeout: float | None = None, stdin: str | bytes | None = None,
                    max_output_bytes: int | None = None) -> ExecStream:
        """Run a command and iterate over its output as it arrives;
        `.result` has the exit status once the iteration ends."""
        body = self._exec_body(cmd, env, cwd, user, timeout, stdin, max_output_bytes)
        return ExecStream(self._t, self._path + "/exec", body, None)

    def terminal(self, cmd: Sequence[str] | None = None, *, rows: int = 24, cols: int = 80,
                       user: str | None = None, cwd: str | None = None, env: Mapping[str, str] | None = None) -> Terminal:
        """An interactive terminal (WebSocket); closing it hangs up."""
        q: list[tuple[str, str]] = [("rows", str(rows)), ("cols", str(cols))]
        for a in ([] if cmd is None else _core.argv(cmd)):
            q.append(("cmd", a))
        if user is not None:
            q.append(("user", _core.user(user) or ""))
        if cwd is not None:
            q.append(("cwd", cwd))
        for k, v in (env or {}).items():
            q.append(("env", "%s=%s" % (k, v)))
        url = self._t.cfg.ws_url(self._path + "/pty") + "?" + urlencode(q)
        return Terminal.open(url, self._t.cfg.api_key)

    def network(self) -> models.Network:
        return models.Network.from_dict(self._t.json("GET", self._path + "/network"))

    def set_network(self, mode: str, *, allow: Sequence[str] | None = None, allow_cidr: Sequence[str] | None = None,
                          inject: Sequence[Mapping[str, str]] | None = None) -> models.Network:
        """Change the egress policy (none, allowlist, open); new connections
        follow it at once."""
        body = _core.drop_none({"mode": mode, "allow": list(allow) if allow is not None else None,
                                "allow_cidr": list(allow_cidr) if allow_cidr is not None else None,
                                "inject": [dict(r) for r in inject] if inject is not None else None})
        return models.Network.from_dict(self._t.json("PUT", self._path + "/network", json_body=body))

    def port_url(self, port: int, *, ttl: int | None = None) -> models.PortURL:
        """A signed URL reaching the sandbox's port through the server."""
        if not 1 <= int(port) <= 65535:
            from ._errors import InvalidArgumentError
            raise InvalidArgumentError("invalid_argument", "port must be 1..65535")
        return models.PortURL.from_dict(self._t.json(
            "POST", "%s/ports/%d/url" % (self._path, int(port)), json_body=_core.drop_none({"ttl_s": ttl})))

    def create_token(self, scopes: Sequence[str], *, ttl: int | None = None) -> models.SandboxToken:
        """A token limited to this sandbox (docs/auth.md)."""
        return models.SandboxToken.from_dict(self._t.json(
            "POST", self._path + "/tokens", json_body=_core.drop_none({"scopes": list(scopes), "ttl_s": ttl})))
