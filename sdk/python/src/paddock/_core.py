"""What the sync and async clients share: configuration, the retry policy,
and the client-side argument checks (worded as the server words them, so an
error reads the same whether it was caught here or there)."""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import quote

from . import models
from ._errors import InvalidArgumentError, TooLargeError

DEFAULT_URL = "http://127.0.0.1:7070"
#: The server's default --max-upload (16 GiB); a server started with another
#: value is not discoverable, so pass max_upload_bytes to match it.
DEFAULT_MAX_UPLOAD = 16 << 30

# Limits the server enforces (internal/sandbox, internal/guestapi).
MAX_ARGS = 4096
MAX_ARGV_BYTES = 1 << 20
MAX_PATH = 4096
MAX_NAME = 255
MAX_OUTPUT_BYTES = 64 << 20
MIN_PROCESS_BUFFER = 4 << 10
MAX_PROCESS_BUFFER = 16 << 20
USERS = ("root", "user")

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRY_STATUS = frozenset({502, 503, 504})


@dataclass
class Config:
    url: str
    api_key: str | None
    timeout: float | None
    max_retries: int
    max_retry_wait: float
    max_upload_bytes: int

    @classmethod
    def resolve(cls, url: str | None, api_key: str | None, timeout: float | None,
                max_retries: int, max_retry_wait: float, max_upload_bytes: int | None) -> Config:
        url = (url or os.environ.get("PADDOCK_URL") or DEFAULT_URL).rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise InvalidArgumentError("invalid_argument", "url must start with http:// or https:// (got %r)" % url[:80])
        key = api_key if api_key is not None else os.environ.get("PADDOCK_API_KEY")
        if max_retries < 0:
            raise InvalidArgumentError("invalid_argument", "max_retries must not be negative")
        return cls(url=url, api_key=key or None, timeout=timeout, max_retries=max_retries,
                   max_retry_wait=max_retry_wait,
                   max_upload_bytes=DEFAULT_MAX_UPLOAD if max_upload_bytes is None else max_upload_bytes)

    def headers(self) -> dict[str, str]:
        h = {"User-Agent": "paddock-python/0.1", "Accept": "application/json"}
        if self.api_key:
            h["Authorization"] = "Bearer " + self.api_key
        return h

    def ws_url(self, path: str) -> str:
        return "ws" + self.url[len("http"):] + path


def backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait before retry number attempt (0-based): Retry-After
    when the server gave one, else exponential with full jitter (0.1 s, 0.2 s,
    0.4 s... at most 5 s)."""
    if retry_after is not None:
        return max(0.0, retry_after)
    return random.uniform(0, min(5.0, 0.1 * (2 ** attempt)))


def dumps(v: Any) -> bytes:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode()


def seg(s: str) -> str:
    """A path segment, escaped (ids, pids, tags, names)."""
    if not s:
        raise InvalidArgumentError("invalid_argument", "an id must not be empty")
    return quote(s, safe="")


def drop_none(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def query(**kw: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in kw.items():
        if v is None:
            continue
        out[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out


# ------------------------------------------------------------ argument checks

def argv(cmd: str | Sequence[str]) -> list[str]:
    """A command as an argv: a string runs through sh -c, a list directly."""
    if isinstance(cmd, str):
        return ["sh", "-c", cmd]
    out = list(cmd)
    if not out or not isinstance(out[0], str) or out[0] == "":
        raise InvalidArgumentError("invalid_argument", 'cmd must name a program (it is run directly, not through a shell; use ["sh","-c","..."] for shell syntax)')
    if len(out) > MAX_ARGS:
        raise InvalidArgumentError("invalid_argument", "at most %d arguments" % MAX_ARGS)
    n = 0
    for a in out:
        if not isinstance(a, str):
            raise InvalidArgumentError("invalid_argument", "arguments must be strings")
        if "\x00" in a:
            raise InvalidArgumentError("invalid_argument", "arguments must not contain NUL bytes")
        n += len(a.encode())
    if n > MAX_ARGV_BYTES:
        raise InvalidArgumentError("invalid_argument", "arguments exceed %d bytes" % MAX_ARGV_BYTES)
    return out


def user(u: str | None) -> str | None:
    if u is not None and u not in USERS:
        raise InvalidArgumentError("invalid_argument", 'user must be "root" or "user"')
    return u


def timeout_ms(seconds: float | None) -> int | None:
    if seconds is None:
        return None
    if seconds < 0:
        raise InvalidArgumentError("invalid_argument", "timeout_ms must not be negative")
    return int(round(seconds * 1000))


def max_output(n: int | None) -> int | None:
    if n is not None and not 0 <= n <= MAX_OUTPUT_BYTES:
        raise InvalidArgumentError("invalid_argument", "max_output_bytes must be between 0 and %d" % MAX_OUTPUT_BYTES)
    return n


def buffer_bytes(n: int | None) -> int | None:
    if n is not None and not MIN_PROCESS_BUFFER <= n <= MAX_PROCESS_BUFFER:
        raise InvalidArgumentError("invalid_argument", "buffer_bytes must be %d..%d" % (MIN_PROCESS_BUFFER, MAX_PROCESS_BUFFER))
    return n


def _clip(s: str) -> str:
    if len(s) > 64:
        s = s[:64] + "…"
    return s


def _goquote(s: str) -> str:
    # Go's %q, for the messages the server writes about a path.
    return json.dumps(s, ensure_ascii=False)


def path(p: str, field: str = "path") -> str:
    """Check a sandbox path the way the server does (guestapi.CleanPath)."""
    if not isinstance(p, str):
        raise InvalidArgumentError("invalid_argument", "%s must be a string" % field)
    if p == "":
        raise InvalidArgumentError("invalid_argument", "path is empty")
    if len(p.encode()) > MAX_PATH:
        raise InvalidArgumentError("invalid_argument", "path is longer than %d bytes" % MAX_PATH)
    if "\x00" in p:
        raise InvalidArgumentError("invalid_argument", "path %s contains a NUL byte" % _goquote(_clip(p)))
    for part in p.split("/"):
        if part == "..":
            raise InvalidArgumentError("invalid_argument", 'path %s contains a ".." component; give the path without it' % _goquote(_clip(p)))
        if len(part.encode()) > MAX_NAME:
            raise InvalidArgumentError("invalid_argument", "path %s has a name longer than %d bytes" % (_goquote(_clip(p)), MAX_NAME))
    return p


def mode(m: int | str | None) -> str | None:
    if m is None:
        return None
    s = oct(m)[2:].rjust(4, "0") if isinstance(m, int) else m
    try:
        v = int(s, 8)
    except ValueError:
        raise InvalidArgumentError("invalid_argument", "mode %s is not an octal number such as 0644" % _goquote(_clip(s))) from None
    if v & ~0o7777:
        raise InvalidArgumentError("invalid_argument", "mode %s has bits outside 07777" % _goquote(_clip(s)))
    if v & 0o6000:
        raise InvalidArgumentError("invalid_argument", "mode %s sets setuid/setgid bits, which the files API does not create" % _goquote(_clip(s)))
    return s


def upload_size(data: Any) -> int | None:
    """The size of an upload if it can be known before sending."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return len(data)
    if isinstance(data, str):
        return len(data.encode())
    fileno = getattr(data, "fileno", None)
    if fileno is not None:
        try:
            st = os.fstat(fileno())
            pos = data.tell() if hasattr(data, "tell") else 0
            if st.st_size or pos:
                return max(0, st.st_size - pos)
        except (OSError, ValueError):
            pass
    if hasattr(data, "seek") and hasattr(data, "tell"):
        try:
            pos = data.tell()
            end = data.seek(0, 2)
            data.seek(pos)
            return end - pos
        except (OSError, ValueError):
            return None
    return None


def check_upload(data: Any, limit: int, size: int | None = None) -> None:
    n = upload_size(data) if size is None else size
    if n is not None and n > limit:
        raise TooLargeError("too_large", "the upload is %d bytes, over the %d-byte limit (max_upload_bytes); nothing was sent" % (n, limit))


CHUNK = 1 << 20


def iter_chunks(data: Any) -> Iterable[bytes]:
    """bytes, str, a binary file object or an iterable of bytes, in chunks."""
    if isinstance(data, str):
        data = data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        yield bytes(data)
        return
    read = getattr(data, "read", None)
    if read is not None:
        while True:
            b = read(CHUNK)
            if not b:
                return
            yield b.encode() if isinstance(b, str) else b
    for b in data:
        yield b.encode() if isinstance(b, str) else bytes(b)


# ------------------------------------------------ state: snapshots, fork, lifecycle

MAX_SNAPSHOT_NAME = 63
MAX_FORKS = 100
MAX_PAUSED_TIMEOUT_S = 30 * 24 * 3600
_SNAPSHOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


def snapshot_name(name: Any) -> str:
    """A snapshot name, checked as the server checks it: it becomes a file
    name on the host, so no separator or ".." may reach a path (path traversal)."""
    name = getattr(name, "name", name)  # a models.Snapshot names itself
    if not isinstance(name, str) or name == "":
        raise InvalidArgumentError("invalid_argument", "a snapshot needs a name")
    if len(name) > MAX_SNAPSHOT_NAME:
        raise InvalidArgumentError("invalid_argument", "a snapshot name is at most %d characters" % MAX_SNAPSHOT_NAME)
    if not _SNAPSHOT_NAME.match(name) or ".." in name:
        raise InvalidArgumentError("invalid_argument", "a snapshot name has only letters, digits, '.', '_' and '-', "
                                   "starts with a letter or digit and has no \"..\"")
    return name


def fork_count(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_FORKS:
        raise InvalidArgumentError("invalid_argument", "count must be between 1 and %d" % MAX_FORKS)
    return n


def on_timeout(v: str | None) -> str | None:
    if v is not None and v not in ("kill", "pause", "hibernate"):
        raise InvalidArgumentError("invalid_argument", 'on_timeout must be "kill", "pause" or "hibernate"')
    return v


def paused_timeout(s: int | None) -> int | None:
    if s is not None and not 1 <= int(s) <= MAX_PAUSED_TIMEOUT_S:
        raise InvalidArgumentError("invalid_argument", "paused_timeout_s must be between 1 and %d" % MAX_PAUSED_TIMEOUT_S)
    return None if s is None else int(s)


def idle_pause_after(s: int | None) -> int | None:
    if s is not None and int(s) < 0:
        raise InvalidArgumentError("invalid_argument", "idle_pause_after_s must not be negative (0 is never)")
    return None if s is None else int(s)


class Lease:
    """A client several sandboxes share (a sandbox made by Sandbox.create and
    its forks): the last one killed closes it."""

    def __init__(self) -> None:
        self.holders = 1

    def hold(self) -> Lease:
        self.holders += 1
        return self

    def release(self) -> bool:
        """True when this was the last holder."""
        self.holders -= 1
        return self.holders == 0


# ------------------------------------------------ volumes and templates

MAX_VOLUME_NAME = 63
MAX_VOLUME_MOUNTS = 16


def volume_name(name: Any) -> str:
    """A volume name, checked as the server checks it (internal/volume):
    it becomes a file name on the host."""
    name = getattr(name, "name", name)  # a models.Volume names itself
    if not isinstance(name, str) or name == "":
        raise InvalidArgumentError("invalid_argument", "a volume needs a name")
    if len(name) > MAX_VOLUME_NAME:
        raise InvalidArgumentError("invalid_argument", "a volume name is at most %d characters" % MAX_VOLUME_NAME)
    if not _SNAPSHOT_NAME.match(name) or ".." in name:
        raise InvalidArgumentError("invalid_argument", "a volume name has only letters, digits, '.', '_' and '-', "
                                   "starts with a letter or digit and has no \"..\"")
    return name


def volume_mounts(mounts: Any) -> list[dict[str, Any]] | None:
    """A create's volumes: models.VolumeMount, {"name", "path", "read_only"}
    mappings or (name, path[, read_only]) tuples."""
    if mounts is None:
        return None
    out: list[dict[str, Any]] = []
    for m in mounts:
        if isinstance(m, models.VolumeMount):
            d = m.to_dict()
        elif isinstance(m, Mapping):
            d = dict(m)
        elif isinstance(m, (tuple, list)) and len(m) in (2, 3):
            d = {"name": m[0], "path": m[1]}
            if len(m) == 3 and m[2]:
                d["read_only"] = True
        else:
            raise InvalidArgumentError("invalid_argument", "a volume mount is a VolumeMount, a mapping or (name, path[, read_only])")
        d["name"] = volume_name(d.get("name"))
        out.append(d)
    if len(out) > MAX_VOLUME_MOUNTS:
        raise InvalidArgumentError("invalid_argument", "at most %d volumes per sandbox" % MAX_VOLUME_MOUNTS)
    return out


def iter_file(path: str | os.PathLike[str]) -> Iterable[bytes]:
    """A local file's bytes in chunks, closed at the end."""
    with open(path, "rb") as f:
        while True:
            b = f.read(CHUNK)
            if not b:
                return
            yield b


def build_context(context: Any) -> tuple[Any, int | None]:
    """A build context as a tar body: a directory (tarred here, spooled to a
    temporary file past 8 MiB), a mapping of path -> bytes/str (tarred here),
    or tar bytes / a binary file object / an iterable of bytes (sent as is);
    with its size when known."""
    import io
    import tarfile
    import tempfile
    if isinstance(context, (str, os.PathLike)) and os.path.isdir(context):
        buf: Any = tempfile.SpooledTemporaryFile(max_size=8 << 20)

        def owner(ti: tarfile.TarInfo) -> tarfile.TarInfo:
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = ""
            return ti
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
            for name in sorted(os.listdir(context)):
                tf.add(os.path.join(context, name), arcname=name, filter=owner)
        size = buf.tell()
        buf.seek(0)
        return buf, size
    if isinstance(context, Mapping):
        bio = io.BytesIO()
        with tarfile.open(fileobj=bio, mode="w", format=tarfile.PAX_FORMAT) as tf:
            for name in sorted(context):
                data = context[name]
                data = data.encode() if isinstance(data, str) else bytes(data)
                clean = str(name).lstrip("/")
                if not clean or ".." in clean.split("/"):
                    raise InvalidArgumentError("invalid_argument", "a build context path must be relative with no \"..\" (got %s)" % _goquote(_clip(str(name))))
                ti = tarfile.TarInfo(clean)
                ti.size, ti.mode, ti.mtime = len(data), 0o644, 0
                tf.addfile(ti, io.BytesIO(data))
        return bio.getvalue(), bio.tell()
    if isinstance(context, (str, os.PathLike)):
        raise InvalidArgumentError("invalid_argument", "the build context %s is not a directory" % _goquote(_clip(os.fspath(context))))
    return context, upload_size(context)


def build_query(name: str, dockerfile: str | None, build_args: Mapping[str, str] | None, target: str | None,
                network: str | None, allow: Sequence[str] | None, no_cache: bool, replace: bool,
                shared: bool) -> list[tuple[str, str]]:
    if not name:
        raise InvalidArgumentError("invalid_argument", "name is required")
    q: list[tuple[str, str]] = [("name", name)]
    for k, v in (("dockerfile", dockerfile), ("target", target), ("net", network)):
        if v:
            q.append((k, v))
    for h in allow or ():
        q.append(("allow", h))
    for k, v in (build_args or {}).items():
        if not k:
            raise InvalidArgumentError("invalid_argument", "build_arg must be KEY=VALUE")
        q.append(("build_arg", "%s=%s" % (k, v)))
    if len(allow or ()) > 256 or len(build_args or {}) > 256:
        raise InvalidArgumentError("invalid_argument", "at most 256 allow and build_arg parameters")
    for k, b in (("no_cache", no_cache), ("replace", replace), ("shared", shared)):
        if b:
            q.append((k, "true"))
    return q
