"""Volumes (docs/state.md, "Volumes") through the SDK, against a real
server: create/list/get/delete, files without a sandbox, mounted at create
and outliving the sandbox that wrote them."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest

import conftest
import paddock


def uniq() -> str:
    return "pyv-" + uuid.uuid4().hex[:8]


@pytest.fixture()
def vol(client: paddock.Paddock):  # noqa: ANN201
    v = client.volumes.create(uniq(), size_mb=16)
    yield v
    try:
        client.volumes.delete(v)
    except paddock.NotFoundError:
        pass


def test_create_list_get_delete(client: paddock.Paddock) -> None:
    name = uniq()
    v = client.volumes.create(name, size_mb=32)
    assert isinstance(v, paddock.models.Volume)
    assert v.name == name and v.size_mb == 32 and v.used_bytes > 0 and v.attached == []
    assert name in [x.name for x in client.volumes.list()]
    assert client.volumes.get(name).created_at == v.created_at
    with pytest.raises(paddock.ConflictError):
        client.volumes.create(name, size_mb=16)
    client.volumes.delete(v)
    with pytest.raises(paddock.NotFoundError):
        client.volumes.get(name)
    assert name not in [x.name for x in client.volumes.list()]


def test_files_without_a_sandbox(client: paddock.Paddock, vol: paddock.models.Volume) -> None:
    f = client.volumes.files(vol)
    assert f.mkdir("/notes/deep", parents=True).type == "dir"
    info = f.write("/notes/deep/a.txt", "kept in the volume", mode=0o600)
    assert info.size == len("kept in the volume") and info.mode == "0600"
    assert f.read_text("/notes/deep/a.txt") == "kept in the volume"
    assert f.read("notes/deep/a.txt") == b"kept in the volume", "relative to the volume's root"
    assert f.stat("/notes/deep/a.txt").size == len("kept in the volume")
    assert [e.name for e in f.list("/notes/deep").entries] == ["a.txt"]
    assert "lost+found" not in [e.name for e in f.list("/").entries]
    assert f.exists("/notes/deep/a.txt") and not f.exists("/nope")
    with pytest.raises(paddock.NotFoundError):
        f.read("/nope")
    f.remove("/notes", recursive=True)
    assert not f.exists("/notes")
    with pytest.raises(paddock.NotFoundError):
        client.volumes.files(uniq()).read("/a")


def test_a_file_written_by_one_sandbox_is_read_by_the_next(client: paddock.Paddock, vol: paddock.models.Volume) -> None:
    client.volumes.files(vol).write("/from-api.txt", "written without a sandbox")
    with client.sandboxes.create(volumes=[(vol.name, "/data")], labels={"suite": "pytest"}) as sb:
        assert sb.info.spec.volumes and sb.info.spec.volumes[0].name == vol.name
        assert sb.files.read_text("/data/from-api.txt") == "written without a sandbox"
        assert sb.exec("echo from the first sandbox > /data/note.txt").exit_code == 0
        got = client.volumes.get(vol)
        assert [(a.sandbox, a.path) for a in got.attached] == [(sb.id, "/data")]
        with pytest.raises(paddock.ConflictError):
            client.volumes.files(vol).write("/x.txt", "a second writer")
        with pytest.raises(paddock.ConflictError):
            client.volumes.delete(vol)
        assert client.volumes.files(vol).read_text("/note.txt") == "from the first sandbox\n", "reads while mounted"
    mount = paddock.models.VolumeMount(name=vol.name, path="/mnt/v", read_only=True)
    with client.sandboxes.create(volumes=[mount], labels={"suite": "pytest"}) as sb2:
        assert sb2.exec("cat /mnt/v/note.txt").stdout == "from the first sandbox\n"
        r = sb2.exec("echo no > /mnt/v/ro.txt")
        assert r.exit_code != 0 and "Read-only" in r.stderr
    assert client.volumes.get(vol).attached == []
    client.volumes.delete(vol)
    with pytest.raises(paddock.NotFoundError):
        client.volumes.get(vol)


def raw(key: str, method: str, path: str, body: object) -> tuple[int, dict]:
    r = httpx.request(method, conftest.URL + path, headers={"Authorization": "Bearer " + key},
                      content=json.dumps(body).encode(), timeout=60)
    return r.status_code, r.json()


@pytest.mark.parametrize("bad", ["", "a/b", "..", "-lead", "x" * 64, "sp ace"])
def test_volume_name_checked_as_server(client: paddock.Paddock, tenant_key: str, bad: str) -> None:
    with pytest.raises(paddock.InvalidArgumentError) as e:
        client.volumes.create(bad)
    status, body = raw(tenant_key, "POST", "/v1/volumes", {"name": bad, "size_mb": 16})
    assert status == 400 and e.value.message == body["error"]["message"], (e.value.message, body)


def test_mount_checks_match_server(client: paddock.Paddock, tenant_key: str) -> None:
    many = [("v%d" % i, "/m%d" % i) for i in range(17)]
    with pytest.raises(paddock.InvalidArgumentError) as e:
        client.sandboxes.create(volumes=many)
    status, body = raw(tenant_key, "POST", "/v1/sandboxes", {"volumes": [{"name": n, "path": p} for n, p in many]})
    assert status == 400 and e.value.message == body["error"]["message"], (e.value.message, body)
    with pytest.raises(paddock.NotFoundError):
        client.sandboxes.create(volumes=[(uniq(), "/data")])
    with pytest.raises(paddock.InvalidArgumentError):
        client.sandboxes.create(volumes=["just-a-name"])


def test_another_tenants_volume_is_not_found(client: paddock.Paddock, admin: paddock.Paddock,
                                             vol: paddock.models.Volume) -> None:
    other = "sdk-" + uuid.uuid4().hex[:8]
    admin.tenants.create(other)
    key = admin.keys.create(other, ["read", "write"], name="pytest-other").key
    with paddock.Paddock(conftest.URL, key) as c2:
        assert vol.name not in [v.name for v in c2.volumes.list()]
        with pytest.raises(paddock.NotFoundError):
            c2.volumes.get(vol)
        with pytest.raises(paddock.NotFoundError):
            c2.volumes.files(vol).read("/a")
        with pytest.raises(paddock.NotFoundError):
            c2.sandboxes.create(volumes=[(vol.name, "/data")])


def test_async_volume_round_trip(make_async_client, tenant_key: str) -> None:  # noqa: ANN001
    name = uniq()

    async def main() -> None:
        async with make_async_client(tenant_key) as c:
            v = await c.volumes.create(name, size_mb=16)
            await c.volumes.files(v).write("/a.txt", b"async bytes")
            async with await c.sandboxes.create(volumes=[{"name": name, "path": "/data"}], labels={"suite": "pytest"}) as sb:
                assert (await sb.exec("cat /data/a.txt")).stdout == "async bytes"
            assert name in [x.name for x in await c.volumes.list()]
            assert (await c.volumes.files(name).stat("/a.txt")).size == len(b"async bytes")
            await c.volumes.delete(name)
            with pytest.raises(paddock.NotFoundError):
                await c.volumes.get(name)
    asyncio.run(main())
