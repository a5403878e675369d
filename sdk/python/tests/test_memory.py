"""Hibernation, memory snapshots and fork with memory (docs/state.md,
docs/gvisor.md) through the SDK, against a real server. They need the
gVisor runtime (runsc at /var/cache/paddock, scripts/deps.sh): without it
those tests skip; native's refusals are tested everywhere."""

from __future__ import annotations

import asyncio
import uuid

import pytest

import paddock


def gvisor_reason(client: paddock.Paddock) -> str | None:
    for rt in client.health().runtimes or []:
        if rt.name == "gvisor":
            return None if rt.available else (rt.reason or "gVisor is not available on this server")
    return "this server has no gVisor runtime (runsc at /var/cache/paddock: scripts/deps.sh)"


@pytest.fixture()
def gsb(client: paddock.Paddock):  # noqa: ANN201
    why = gvisor_reason(client)
    if why:
        pytest.skip(why)
    s = client.sandboxes.create(runtime="gvisor", labels={"suite": "pytest"})
    yield s
    s.kill()


COUNTER = "i=0; while true; do i=$((i+1)); echo $i > /tmp/count; sleep 0.1; done"


def test_native_refuses_hibernate_and_memory(sb: paddock.Sandbox) -> None:
    with pytest.raises(paddock.UnsupportedError) as e:
        sb.hibernate()
    assert e.value.status == 501 and e.value.message
    with pytest.raises(paddock.UnsupportedError):
        sb.snapshot("py-" + uuid.uuid4().hex[:8], memory=True)
    with pytest.raises(paddock.UnsupportedError):
        sb.fork(memory=True)
    assert sb.refresh().state == "running", "a refusal leaves the sandbox as it was"
    with pytest.raises(paddock.InvalidArgumentError):
        sb.fork(count=0, memory=True)


def test_hibernate_then_resume_keeps_processes_and_files(gsb: paddock.Sandbox) -> None:
    gsb.files.write("/workspace/kept.txt", "before hibernation")
    p = gsb.processes.start("sleep 600", tag="sleeper")
    info = gsb.hibernate()
    assert info.state == "hibernated" and gsb.info.state == "hibernated"
    assert gsb.hibernate().state == "hibernated", "idempotent"
    with pytest.raises(paddock.SandboxPausedError) as e:
        gsb.exec("true")
    assert "hibernated" in e.value.message
    assert gsb.resume().state == "running"
    assert gsb.files.read_text("/workspace/kept.txt") == "before hibernation"
    assert gsb.processes.get(p).state == "running", "the process lived through hibernation"


def test_memory_snapshot_restores_running_processes(client: paddock.Paddock, gsb: paddock.Sandbox) -> None:
    name = "pym-" + uuid.uuid4().hex[:8]
    gsb.processes.start(COUNTER, tag="counter")
    snap = gsb.snapshot(name, memory=True)
    try:
        assert snap.memory and (snap.memory_bytes or 0) > 0
        assert client.snapshots.get(name).memory
        with client.sandboxes.create(snapshot=name, labels={"suite": "pytest"}) as sb2:
            assert sb2.info.spec.runtime == "gvisor"
            assert [q.tag for q in sb2.processes.list() if q.state == "running" and q.tag == "counter"] == ["counter"]
            first = int(sb2.files.read_text("/tmp/count"))
            sb2.exec("sleep 0.5")
            assert int(sb2.files.read_text("/tmp/count")) > first, "the restored counter keeps counting"
        with pytest.raises(paddock.UnsupportedError):
            client.sandboxes.create(snapshot=name, runtime="native")
    finally:
        client.snapshots.delete(name)


def test_fork_with_memory(gsb: paddock.Sandbox) -> None:
    gsb.exec("echo parent > /workspace/who")
    gsb.processes.start(COUNTER, tag="counter")
    forks = gsb.fork(count=2, memory=True)
    try:
        assert len(forks) == 2
        for f in forks:
            assert f.info.spec.fork_of == gsb.id
            assert f.files.read_text("/workspace/who") == "parent\n"
            assert any(q.tag == "counter" and q.state == "running" for q in f.processes.list())
        forks[0].exec("echo mine > /workspace/who")
        assert forks[1].files.read_text("/workspace/who") == "parent\n", "forks are independent"
    finally:
        for f in forks:
            f.kill()


def test_async_hibernate_and_memory_fork(make_async_client, tenant_key: str, client: paddock.Paddock) -> None:  # noqa: ANN001
    why = gvisor_reason(client)
    if why:
        pytest.skip(why)

    async def main() -> None:
        async with make_async_client(tenant_key) as c:
            async with await c.sandboxes.create(runtime="gvisor", labels={"suite": "pytest"}) as sb:
                assert (await sb.hibernate()).state == "hibernated"
                assert (await sb.resume()).state == "running"
                (f,) = await sb.fork(memory=True)
                async with f:
                    assert (await f.exec("echo forked")).stdout == "forked\n"
    asyncio.run(main())
