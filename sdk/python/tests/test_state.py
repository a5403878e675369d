"""Pause/resume, lifecycle fields, snapshots and fork (docs/state.md),
against a real server."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest

import conftest
import paddock


def raw(key: str, method: str, path: str, body: object) -> dict:
    r = httpx.request(method, conftest.URL + path, headers={"Authorization": "Bearer " + key},
                      content=json.dumps(body).encode(), timeout=60)
    assert r.status_code == 400, r.text
    return r.json()["error"]


def test_pause_refuses_calls_resume_keeps_state(sb: paddock.Sandbox) -> None:
    sb.files.write("/workspace/kept.txt", "before the pause")
    p = sb.processes.start("sleep 600", tag="sleeper")
    info = sb.pause()
    assert info.state == "paused" and sb.info.state == "paused" and info.paused_at
    again = sb.pause()  # idempotent, as the server's answer
    assert again.state == "paused" and again.paused_at == info.paused_at
    with pytest.raises(paddock.SandboxPausedError) as e:
        sb.exec("echo no")
    assert e.value.code == "sandbox_paused" and e.value.status == 409
    assert isinstance(e.value, paddock.ConflictError)
    with pytest.raises(paddock.SandboxPausedError):
        sb.files.read("/workspace/kept.txt")
    assert sb.refresh().state == "paused"
    assert sb.resume().state == "running"
    assert sb.resume().state == "running"
    assert sb.exec("cat /workspace/kept.txt").stdout == "before the pause"
    assert sb.processes.get(p).state == "running", "the process lived through the pause"


def test_code_state_survives_pause(sb: paddock.Sandbox) -> None:
    assert sb.run_code("kept = 6 * 7").status == "ok"
    sb.pause()
    with pytest.raises(paddock.SandboxPausedError):
        sb.run_code("kept")
    sb.resume()
    assert sb.run_code("kept").text == "42"


def test_lifecycle_fields_and_auto_resume(client: paddock.Paddock) -> None:
    with client.sandboxes.create(auto_resume=True, on_timeout="pause", idle_pause_after=600,
                                 paused_timeout=3600, labels={"suite": "pytest"}) as sb:
        spec = sb.info.spec
        assert (spec.auto_resume, spec.on_timeout, spec.idle_pause_after_s, spec.paused_timeout_s) == (True, "pause", 600, 3600)
        sb.pause()
        assert sb.exec("echo awake").stdout == "awake\n", "auto_resume: the call resumed it"
        assert sb.refresh().state == "running"


@pytest.mark.parametrize("kw,body", [
    ({"on_timeout": "nap"}, {"on_timeout": "nap"}),
    ({"paused_timeout": 0}, {"paused_timeout_s": -1}),
])
def test_lifecycle_checks_match_server(client: paddock.Paddock, tenant_key: str, kw: dict, body: dict) -> None:
    with pytest.raises(paddock.InvalidArgumentError) as e:
        client.sandboxes.create(**kw)
    server = raw(tenant_key, "POST", "/v1/sandboxes", body)["message"]
    assert e.value.message == server, (e.value.message, server)


def test_snapshot_then_create_from_it(client: paddock.Paddock) -> None:
    name = "py-" + uuid.uuid4().hex[:10]
    src = client.sandboxes.create(labels={"suite": "pytest"})
    try:
        src.files.write("/workspace/notes/a.txt", "from the snapshot", parents=True)
        snap = src.snapshot(name)
        assert isinstance(snap, paddock.models.Snapshot)
        assert snap.name == name and snap.source == src.id and snap.files >= 1 and snap.bytes >= len("from the snapshot")
        assert name in [s.name for s in client.snapshots.list()]
        assert client.snapshots.get(name).created_at == snap.created_at
        with pytest.raises(paddock.ConflictError):
            src.snapshot(name)
    finally:
        src.kill()
    with client.sandboxes.create(snapshot=name) as sb:
        assert sb.info.spec.snapshot == name
        assert sb.files.read_text("/workspace/notes/a.txt") == "from the snapshot"
    client.snapshots.delete(snap)
    with pytest.raises(paddock.NotFoundError):
        client.snapshots.get(name)
    with pytest.raises(paddock.NotFoundError):
        client.sandboxes.create(snapshot=name)


@pytest.mark.parametrize("bad", ["", "a/b", "..", "-lead", "x" * 64, "sp ace"])
def test_snapshot_name_checked_as_server(sb: paddock.Sandbox, tenant_key: str, bad: str) -> None:
    with pytest.raises(paddock.InvalidArgumentError) as e:
        sb.snapshot(bad)
    server = raw(tenant_key, "POST", "/v1/sandboxes/%s/snapshots" % sb.id, {"name": bad})["message"]
    assert e.value.message == server, (e.value.message, server)


def test_fork_three_isolated(sb: paddock.Sandbox, tenant_key: str) -> None:
    sb.files.write("/workspace/base.txt", "shared")
    forks = sb.fork(count=3)
    try:
        assert len(forks) == 3 and len({f.id for f in forks} | {sb.id}) == 4
        for i, f in enumerate(forks):
            assert isinstance(f, paddock.Sandbox) and f.info.spec.fork_of == sb.id
            assert f.files.read_text("/workspace/base.txt") == "shared"
            f.files.write("/workspace/mine.txt", "fork %d" % i)
        for i, f in enumerate(forks):
            assert f.exec("cat /workspace/mine.txt").stdout == "fork %d" % i
        assert not sb.files.exists("/workspace/mine.txt"), "a fork's write stays in the fork"
        assert set(sb.refresh().forks or []) == {f.id for f in forks}
    finally:
        for f in forks:
            f.kill()
    for bad in (0, 101):
        with pytest.raises(paddock.InvalidArgumentError) as e:
            sb.fork(count=bad)
        assert e.value.message == "count must be between 1 and 100"
    assert raw(tenant_key, "POST", "/v1/sandboxes/%s/fork" % sb.id, {"count": 101})["message"] == "count must be between 1 and 100"


def test_forks_outlive_the_parent_of_sandbox_create(monkeypatch: pytest.MonkeyPatch, tenant_key: str) -> None:
    monkeypatch.setenv("PADDOCK_URL", conftest.URL)
    monkeypatch.setenv("PADDOCK_API_KEY", tenant_key)
    parent = paddock.Sandbox.create(labels={"suite": "pytest"})
    (child,) = parent.fork()
    parent.kill()  # the client is shared: it stays open for the fork
    assert child.exec("echo still").stdout == "still\n"
    child.kill()
    assert child.client._t.http.is_closed, "the last sandbox of Sandbox.create closes its client"


def test_async_pause_snapshot_fork(make_async_client, tenant_key: str) -> None:  # noqa: ANN001
    name = "apy-" + uuid.uuid4().hex[:10]

    async def main() -> None:
        async with make_async_client(tenant_key) as c:
            async with await c.sandboxes.create(labels={"suite": "pytest"}) as sb:
                await sb.files.write("/workspace/f.txt", "async")
                assert (await sb.pause()).state == "paused"
                with pytest.raises(paddock.SandboxPausedError):
                    await sb.exec("true")
                assert (await sb.resume()).state == "running"
                snap = await sb.snapshot(name)
                assert snap.name == name
                forks = await sb.fork(count=2)
                for f in forks:
                    async with f:
                        assert await f.files.read_text("/workspace/f.txt") == "async"
            async with await c.sandboxes.create(snapshot=name) as sb2:
                assert await sb2.files.read_text("/workspace/f.txt") == "async"
            assert name in [s.name for s in await c.snapshots.list()]
            await c.snapshots.delete(name)
    asyncio.run(main())
