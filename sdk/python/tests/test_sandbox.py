"""Lifecycle and exec through the sync client, against a real server."""

from __future__ import annotations

import pytest

import paddock
from paddock import NotFoundError


def test_health_and_templates(client: paddock.Paddock) -> None:
    h = client.health()
    assert h.ok is True and h.version
    names = [t.name for t in client.templates()]
    assert names, "the server lists its templates"


def test_create_get_list_timeout_stats_kill(client: paddock.Paddock) -> None:
    sb = client.sandboxes.create(labels={"suite": "pytest", "case": "lifecycle"}, timeout=120, env={"GREETING": "hej"})
    try:
        assert sb.id.startswith("sb-") and sb.info.state == "running"
        assert sb.info.spec.labels == {"suite": "pytest", "case": "lifecycle"}
        again = client.sandboxes.get(sb.id)
        assert again.info.created_at == sb.info.created_at
        listed = [s.id for s in client.sandboxes.list(labels={"case": "lifecycle"})]
        assert sb.id in listed
        assert sb.id not in [s.id for s in client.sandboxes.list(labels={"case": "other"})]
        before = sb.info.expires_at
        sb.set_timeout(600)
        assert sb.info.expires_at > before
        st = sb.stats()
        assert st.pids >= 1 and st.memory_bytes > 0
        assert sb.exec("echo $GREETING").stdout == "hej\n"
    finally:
        sb.kill()
    with pytest.raises(NotFoundError):
        client.sandboxes.get(sb.id)
    sb.kill()  # already gone: not an error


def test_with_block_destroys(client: paddock.Paddock) -> None:
    with client.sandboxes.create() as sb:
        sid = sb.id
        assert sb.exec(["true"]).exit_code == 0
    with pytest.raises(NotFoundError) as e:
        client.sandboxes.get(sid)
    assert e.value.code == "not_found" and e.value.status == 404


def test_sandbox_create_classmethod_uses_env(monkeypatch: pytest.MonkeyPatch, tenant_key: str) -> None:
    import conftest
    monkeypatch.setenv("PADDOCK_URL", conftest.URL)
    monkeypatch.setenv("PADDOCK_API_KEY", tenant_key)
    with paddock.Sandbox.create(labels={"suite": "pytest"}) as sb:
        sid = sb.id
        assert sb.exec("echo ok").stdout == "ok\n"
    assert sb.client._t.http.is_closed, "the sandbox's own client is closed with it"
    with paddock.Paddock() as c:
        with pytest.raises(NotFoundError):
            c.sandboxes.get(sid)


def test_exec_buffered(sb: paddock.Sandbox) -> None:
    r = sb.exec("echo out; echo err >&2; exit 7")
    assert (r.stdout, r.stderr, r.exit_code) == ("out\n", "err\n", 7)
    assert r.duration_ms > 0 and r.stdout_bytes == 4
    r = sb.exec(["sh", "-c", 'printf "%s|%s|%s" "$X" "$(pwd)" "$(id -u)"'], env={"X": "1"}, cwd="/tmp", user="user")
    assert r.stdout == "1|/tmp|1000"
    assert sb.exec(["cat"], stdin="piped").stdout == "piped"
    r = sb.exec("sleep 5", timeout=0.3)
    assert r.timed_out is True and r.exit_code != 0
    r = sb.exec("kill -9 $$")
    assert r.signal == "SIGKILL" and r.exit_code == 137
    r = sb.exec("head -c 5000 /dev/zero", max_output_bytes=1000)
    assert len(r.stdout) == 1000 and r.stdout_truncated is True and r.stdout_bytes == 5000


def test_exec_command_not_found(sb: paddock.Sandbox) -> None:
    with pytest.raises(paddock.CommandNotFoundError) as e:
        sb.exec(["no-such-program-xyz"])
    assert e.value.code == "command_not_found"


def test_exec_stream(sb: paddock.Sandbox) -> None:
    chunks: list[paddock.OutputChunk] = []
    with sb.exec_stream("for i in 1 2 3; do echo $i; sleep 0.05; done; echo bad >&2; exit 4") as st:
        for c in st:
            chunks.append(c)
    assert "".join(c.data for c in chunks if c.stream == "stdout") == "1\n2\n3\n"
    assert "".join(c.data for c in chunks if c.stream == "stderr") == "bad\n"
    assert st.result is not None and st.result.exit_code == 4
    assert sb.exec_stream(["sh", "-c", "exit 3"]).wait().exit_code == 3


def test_exec_stream_large(sb: paddock.Sandbox) -> None:
    n = 0
    st = sb.exec_stream("head -c 3000000 /dev/zero | tr '\\0' a")
    for c in st:
        n += len(c.data)
    assert n == 3000000 and st.result is not None and st.result.stdout_bytes == 3000000


def test_network_policy(sb: paddock.Sandbox) -> None:
    assert sb.network().mode == "none"
    try:
        n = sb.set_network("allowlist", allow=["example.com", "*.example.org"])
    except paddock.UnsupportedError:
        pytest.skip("this server runs with --no-network")
    assert n.mode == "allowlist" and "example.com" in (n.allow or [])
    assert sb.network().allow == n.allow
    with pytest.raises(paddock.InvalidArgumentError):
        sb.set_network("sideways")
    assert sb.set_network("none").mode == "none"


def test_port_url(sb: paddock.Sandbox) -> None:
    import httpx
    sb.files.write("/tmp/www/index.html", "port-ok", parents=True)
    sb.processes.start(["python3", "-m", "http.server", "8765", "--bind", "127.0.0.1", "--directory", "/tmp/www"], tag="web")
    u = sb.port_url(8765, ttl=300)
    assert u.port == 8765 and u.sandbox == sb.id and u.token.startswith("pdt_")
    body = ""
    for _ in range(100):
        r = httpx.get(u.url, timeout=10)
        if r.status_code == 200:
            body = r.text
            break
        import time
        time.sleep(0.1)
    assert body == "port-ok"
    with pytest.raises(paddock.InvalidArgumentError):
        sb.port_url(70000)


def test_sandbox_token(sb: paddock.Sandbox, client: paddock.Paddock, make_client) -> None:  # noqa: ANN001
    tok = sb.create_token(["read", "exec"], ttl=120)
    assert tok.sandbox == sb.id and set(tok.scopes) == {"read", "exec"}
    c = make_client(tok.token)
    mine = c.sandboxes.get(sb.id)
    assert mine.exec("echo tok").stdout == "tok\n"
    with pytest.raises(paddock.ForbiddenError):
        mine.files.write("x", "no write scope")
