"""Every error path of the SDK, against the real server (and, for a cut
stream, a real proxy between the two that drops the connection)."""

from __future__ import annotations

import socket
import threading
import time
import uuid

import httpx
import pytest

import conftest
import paddock


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


@pytest.mark.offline
def test_unreachable_server() -> None:
    c = paddock.Paddock("http://127.0.0.1:%d" % free_port(), "pdk_x", max_retries=2)
    t0 = time.monotonic()
    with pytest.raises(paddock.APIConnectionError) as e:
        c.sandboxes.list()
    assert e.value.code == "connection_error" and "cannot reach Paddock" in e.value.message
    assert time.monotonic() - t0 < 5, "bounded retries, no hang"


@pytest.mark.offline
def test_bad_url_and_env_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(paddock.InvalidArgumentError):
        paddock.Paddock("ftp://x")
    monkeypatch.setenv("PADDOCK_URL", "http://127.0.0.1:1/")
    monkeypatch.setenv("PADDOCK_API_KEY", "pdk_env")
    c = paddock.Paddock()
    assert c.config.url == "http://127.0.0.1:1" and c.config.api_key == "pdk_env"
    monkeypatch.delenv("PADDOCK_URL")
    assert paddock.Paddock().config.url == "http://127.0.0.1:7070"


def test_bad_key(make_client) -> None:  # noqa: ANN001
    for key in ("pdk_notakey", ""):
        c = make_client(key)
        with pytest.raises(paddock.UnauthenticatedError) as e:
            c.sandboxes.list()
        assert e.value.status == 401 and e.value.code == "unauthenticated"


def test_other_tenants_sandbox_is_404(sb: paddock.Sandbox, admin: paddock.Paddock, make_client) -> None:  # noqa: ANN001
    other = "oth-" + uuid.uuid4().hex[:8]
    admin.tenants.create(other)
    c = make_client(admin.keys.create(other, ["read", "write", "exec"]).key)
    with pytest.raises(paddock.NotFoundError) as e:
        c.sandboxes.get(sb.id)
    assert e.value.status == 404
    foreign = c.sandboxes.connect(sb.info)
    for call in (lambda: foreign.exec("id"), lambda: foreign.files.read("/etc/hostname"),
                 lambda: c.sandboxes.delete(sb.id), lambda: foreign.processes.list()):
        with pytest.raises(paddock.NotFoundError):
            call()
    assert sb.exec("echo still-here").stdout == "still-here\n"


def test_rate_quota_429_retry_after(admin: paddock.Paddock, make_client) -> None:  # noqa: ANN001
    name = "rate-" + uuid.uuid4().hex[:8]
    admin.tenants.create(name, quotas={"create_per_minute": 12, "create_burst": 1})
    key = admin.keys.create(name, ["read", "write", "exec"]).key
    strict = make_client(key, max_retries=0)
    first = strict.sandboxes.create()
    try:
        with pytest.raises(paddock.RateLimitedError) as e:
            strict.sandboxes.create()
        assert e.value.status == 429 and 1 <= e.value.retry_after <= 5
        # The default client waits the Retry-After and succeeds.
        t0 = time.monotonic()
        patient = make_client(key)
        second = patient.sandboxes.create()
        waited = time.monotonic() - t0
        second.kill()
        assert 0.9 <= waited < 20, waited
        # A Retry-After longer than max_retry_wait is not waited for.
        impatient = make_client(key, max_retry_wait=0.1)
        with pytest.raises(paddock.RateLimitedError):
            impatient.sandboxes.create()
    finally:
        first.kill()


def test_count_quota_429_is_not_retried(admin: paddock.Paddock, make_client) -> None:  # noqa: ANN001
    name = "cnt-" + uuid.uuid4().hex[:8]
    admin.tenants.create(name, quotas={"max_sandboxes": 1})
    c = make_client(admin.keys.create(name, ["read", "write", "exec"]).key)
    a = c.sandboxes.create()
    try:
        t0 = time.monotonic()
        with pytest.raises(paddock.LimitExceededError) as e:
            c.sandboxes.create()
        assert e.value.retry_after is None and time.monotonic() - t0 < 2
    finally:
        a.kill()


class CuttingProxy:
    """A TCP proxy to the server that cuts every connection once `after`
    bytes of the answer went through."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.port = free_port()
        self.lsock = socket.create_server(("127.0.0.1", self.port))
        self.stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        up = httpx.URL(conftest.URL)
        while not self.stop:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            s = socket.create_connection((up.host, up.port))
            threading.Thread(target=self._pipe, args=(c, s, None), daemon=True).start()
            threading.Thread(target=self._pipe, args=(s, c, self.after), daemon=True).start()

    def _pipe(self, a: socket.socket, b: socket.socket, limit: int | None) -> None:
        n = 0
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                if limit is not None and n + len(d) >= limit:
                    b.sendall(d[: max(0, limit - n)])
                    break
                n += len(d)
                b.sendall(d)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            x.close()

    def close(self) -> None:
        self.stop = True
        self.lsock.close()


def test_stream_cut_midway_raises(sb: paddock.Sandbox, tenant_key: str) -> None:
    proxy = CuttingProxy(after=4000)
    try:
        c = paddock.Paddock("http://127.0.0.1:%d" % proxy.port, tenant_key, timeout=20)
        far = c.sandboxes.connect(sb.info)
        got = 0
        with pytest.raises(paddock.StreamInterruptedError):
            for ch in far.exec_stream("while true; do echo 0123456789abcdef; sleep 0.01; done"):
                got += len(ch.data)
        # StreamInterruptedError, not the client's 20 s timeout: the cut was seen.
        assert 0 < got < 4000
        sb.files.write("/tmp/big", b"z" * 200_000)
        with pytest.raises(paddock.StreamInterruptedError):
            far.files.download("/tmp/big", "/dev/null")
        p = sb.processes.start("while true; do echo tick-tock; sleep 0.01; done")
        with pytest.raises(paddock.StreamInterruptedError):
            for _ in far.processes.output(p, follow=True):
                pass
        sb.processes.kill(p)
        c.close()
    finally:
        proxy.close()


def test_oversized_upload_refused_before_sending(sb: paddock.Sandbox, tenant_key: str, make_client, tmp_path) -> None:  # noqa: ANN001
    c = make_client(tenant_key, max_upload_bytes=1024)
    small = c.sandboxes.connect(sb.info)
    for data in (b"x" * 2048, "y" * 2048):
        with pytest.raises(paddock.TooLargeError) as e:
            small.files.write("/tmp/too-big", data)
        assert "nothing was sent" in e.value.message
    f = tmp_path / "f"
    f.write_bytes(b"z" * 4096)
    with pytest.raises(paddock.TooLargeError):
        small.files.upload(f, "/tmp/too-big")
    assert not sb.files.exists("/tmp/too-big")
    small.files.write("/tmp/ok", b"x" * 1000)


# Each case: the SDK call (refused before sending) and the same request sent
# raw; the SDK's message must be the server's.
CASES = [
    ("empty cmd", lambda sb: sb.exec([]), ("POST", "/exec", {"cmd": []})),
    ("NUL in arg", lambda sb: sb.exec(["echo", "a\x00b"]), ("POST", "/exec", {"cmd": ["echo", "a\x00b"]})),
    ("bad user", lambda sb: sb.exec(["id"], user="admin"), ("POST", "/exec", {"cmd": ["id"], "user": "admin"})),
    ("negative timeout", lambda sb: sb.exec(["id"], timeout=-1), ("POST", "/exec", {"cmd": ["id"], "timeout_ms": -1000})),
    ("output cap", lambda sb: sb.exec(["id"], max_output_bytes=1 << 30), ("POST", "/exec", {"cmd": ["id"], "max_output_bytes": 1 << 30})),
    ("empty path", lambda sb: sb.files.read(""), ("GET", "/files/stat?path=", None)),
    ("dotdot", lambda sb: sb.files.read("/a/../etc/passwd"), ("GET", "/files/stat?path=/a/../etc/passwd", None)),
    ("mode", lambda sb: sb.files.write("/tmp/m", "x", mode="9z"), ("PUT", "/files?path=/tmp/m&mode=9z", None)),
    ("setuid", lambda sb: sb.files.write("/tmp/m", "x", mode=0o4755), ("PUT", "/files?path=/tmp/m&mode=4755", None)),
    ("process buffer", lambda sb: sb.processes.start(["true"], buffer_bytes=10), ("POST", "/processes", {"cmd": ["true"], "buffer_bytes": 10})),
]


@pytest.mark.parametrize("name,call,raw", CASES, ids=[c[0] for c in CASES])
def test_client_side_checks_match_server(sb: paddock.Sandbox, tenant_key: str, name, call, raw) -> None:  # noqa: ANN001
    with pytest.raises(paddock.InvalidArgumentError) as e:
        call(sb)
    method, path, body = raw
    r = httpx.request(method, conftest.URL + "/v1/sandboxes/" + sb.id + path,
                      headers={"Authorization": "Bearer " + tenant_key},
                      content=None if body is None else __import__("json").dumps(body).encode(),
                      timeout=30)
    assert r.status_code == 400, r.text
    server = r.json()["error"]["message"]
    assert e.value.message == server or server.endswith(": " + e.value.message), (e.value.message, server)


class _Flaky:
    """A local HTTP server that fails the first `fails` requests with
    `status`, then answers like Paddock's /healthz."""

    def __init__(self, status: int, fails: int) -> None:
        import http.server

        self.hits: list[str] = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def _any(self) -> None:
                outer.hits.append(self.command)
                n = int(self.headers.get("content-length") or 0)
                self.rfile.read(n)
                if len(outer.hits) <= fails:
                    body = b'{"error":{"code":"unavailable","message":"busy"}}'
                    self.send_response(status)
                else:
                    body = b'{"ok":true,"version":"x"}'
                    self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _any

            def log_message(self, *a) -> None:  # noqa: ANN002
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]

    def close(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()


@pytest.mark.offline
def test_retry_policy_idempotent_only() -> None:
    f = _Flaky(503, 2)
    try:
        assert paddock.Paddock(f.url, "k").health().ok is True
        assert f.hits == ["GET", "GET", "GET"]
    finally:
        f.close()
    f = _Flaky(503, 1)
    try:
        with pytest.raises(paddock.UnavailableError):
            paddock.Paddock(f.url, "k").sandboxes.create()
        assert f.hits == ["POST"], "a POST that may have acted is not repeated"
    finally:
        f.close()
