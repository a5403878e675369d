"""Templates (docs/templates.md) through the SDK, against a real server:
build from a Dockerfile with its streamed log, export and import, pull from
a registry (sdk/sdktest starts one when docker-registry is installed), get,
list and delete."""

from __future__ import annotations

import asyncio
import io
import os
import uuid

import httpx
import pytest

import conftest
import paddock

REF = os.environ.get("PADDOCK_TEST_REGISTRY_REF", "")
NO_REGISTRY = os.environ.get("PADDOCK_TEST_REGISTRY_SKIP") or \
    "no registry to pull from: sdk/sdktest sets PADDOCK_TEST_REGISTRY_REF when docker-registry is installed"

CONTEXT = {
    "Dockerfile": "FROM scratch\nCOPY hello.txt /srv/hello.txt\nENV BUILT_BY=sdk\nWORKDIR /srv\n",
    "hello.txt": "built by the SDK\n",
}


def uniq(prefix: str) -> str:
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


def test_build_streams_steps_and_lists_the_template(client: paddock.Paddock) -> None:
    name = uniq("pyb")
    events: list[paddock.models.TemplateEvent] = []
    tpl = client.templates.build(CONTEXT, name=name, on_event=events.append)
    try:
        assert tpl.name == name and tpl.kind == "image" and tpl.ready
        assert tpl.source is not None and tpl.source.kind == "build" and tpl.source.dockerfile_digest
        assert tpl.defaults is not None and "BUILT_BY=sdk" in (tpl.defaults.env or []) and tpl.defaults.working_dir == "/srv"
        steps = [e for e in events if e.instruction]
        assert steps and steps[-1].steps == len(steps), [e.to_dict() for e in events]
        assert any("COPY" in (e.instruction or "") for e in steps)
        assert name in [t.name for t in client.templates.list()]
        assert name in [t.name for t in client.templates()], "calling the area lists, as before"
        got = client.templates.get(name)
        assert got.source is not None and got.source.dockerfile_digest == tpl.source.dockerfile_digest
        assert client.templates.exists(name)
    finally:
        client.templates.delete(name)
    assert not client.templates.exists(name)
    with pytest.raises(paddock.NotFoundError):
        client.templates.get(name)


def test_build_from_a_directory_and_the_stream_iterator(client: paddock.Paddock, tmp_path) -> None:  # noqa: ANN001
    for k, v in CONTEXT.items():
        (tmp_path / k).write_text(v)
    name = uniq("pyd")
    with client.templates.build_stream(str(tmp_path), name=name) as st:
        seen = [e for e in st]
    assert st.template is not None and st.template.name == name
    assert any(e.instruction for e in seen)
    client.templates.delete(st.template)


def test_export_then_import_under_another_name(client: paddock.Paddock, tmp_path) -> None:  # noqa: ANN001
    name, copy = uniq("pye"), uniq("pyi")
    client.templates.build(CONTEXT, name=name)
    try:
        archive = tmp_path / "t.oci.tar"
        n = client.templates.export(name, str(archive))
        assert n == archive.stat().st_size and n > 0
        buf = io.BytesIO()
        assert client.templates.export(name, buf) == n
        msgs: list[str] = []
        tpl = client.templates.import_archive(str(archive), name=copy, on_event=lambda e: msgs.append(e.message or ""))
        assert tpl.name == copy and tpl.kind == "image" and tpl.source is not None
        assert tpl.source.kind == "oci-archive", tpl.source
        assert {name, copy} <= {t.name for t in client.templates.list()}
        with pytest.raises(paddock.ConflictError):
            client.templates.import_archive(buf.getvalue(), name=copy)
        again = client.templates.import_archive(buf.getvalue(), name=copy, replace=True)
        assert again.name == copy
    finally:
        client.templates.delete(name)
        client.templates.delete(copy)


def test_a_sandbox_starts_from_a_built_template(client: paddock.Paddock) -> None:
    name = uniq("pys")
    client.templates.build(CONTEXT, name=name)
    try:
        with client.sandboxes.create(template=name, labels={"suite": "pytest"}) as sb:
            assert sb.info.spec.template == name
            assert sb.files.read_text("/srv/hello.txt") == "built by the SDK\n"
        with pytest.raises(paddock.NotFoundError):
            client.sandboxes.create(template=uniq("none"))
    finally:
        client.templates.delete(name)


def test_build_failure_raises_its_error(client: paddock.Paddock, tenant_key: str) -> None:
    name = uniq("pyf")
    with pytest.raises(paddock.PaddockError) as e:
        client.templates.build({"Dockerfile": "FROM scratch\nCOPY missing.txt /x\n"}, name=name)
    assert e.value.code in ("invalid_argument", "not_found"), e.value
    assert "missing.txt" in e.value.message
    assert not client.templates.exists(name), "a failed build leaves no template"
    # Client-side checks word it as the server does.
    with pytest.raises(paddock.InvalidArgumentError) as ce:
        client.templates.build(CONTEXT, name="")
    r = httpx.post(conftest.URL + "/v1/templates/build", headers={"Authorization": "Bearer " + tenant_key}, content=b"")
    assert r.status_code == 400 and r.json()["error"]["message"] == ce.value.message
    with pytest.raises(paddock.InvalidArgumentError):
        client.templates.build({"../escape": "x"}, name=name)
    with pytest.raises(paddock.TooLargeError):
        paddock.Paddock(conftest.URL, tenant_key, max_upload_bytes=10).templates.build(CONTEXT, name=name)


@pytest.mark.skipif(not REF, reason=NO_REGISTRY)
def test_pull_lists_and_runs_the_image(client: paddock.Paddock) -> None:
    name = uniq("pyp")
    events: list[paddock.models.TemplateEvent] = []
    tpl = client.templates.pull(REF, name=name, on_event=events.append)
    try:
        assert tpl.name == name and tpl.source is not None and tpl.source.kind == "registry"
        assert tpl.source.ref and tpl.source.digest and tpl.source.digest.startswith("sha256:")
        assert any(e.message for e in events), "pull progress was streamed"
        assert name in [t.name for t in client.templates.list()]
        with client.sandboxes.create(template=name, labels={"suite": "pytest"}) as sb:
            r = sb.exec("cat /hello.txt; echo $FROM_IMAGE")
            assert r.stdout == "pulled from the registry\n1\n", r
        with pytest.raises(paddock.ConflictError):
            client.templates.pull(REF, name=name)
        # push it back under another reference, and pull that: the same image
        pushed = "%s/sdk/%s:1" % (REF.split("/")[0], uniq("pushed"))
        client.templates.push(name, pushed)
        back = client.templates.pull(pushed, name=name + "-back")
        assert back.source is not None and back.source.ref and "pushed" in back.source.ref
        client.templates.delete(back)
    finally:
        client.templates.delete(name)
    assert name not in [t.name for t in client.templates.list()]


def test_pull_of_an_unknown_registry_fails(client: paddock.Paddock) -> None:
    with pytest.raises(paddock.PaddockError) as e:
        client.templates.pull("127.0.0.1:1/nothing/here:1", name=uniq("pyu"))
    assert e.value.code in ("unavailable", "not_found", "invalid_argument"), e.value
    with pytest.raises(paddock.InvalidArgumentError):
        client.templates.pull("")


def test_another_tenants_template_is_not_found(client: paddock.Paddock, admin: paddock.Paddock) -> None:
    name = uniq("pyt")
    client.templates.build(CONTEXT, name=name)
    try:
        other = uniq("sdk")
        admin.tenants.create(other)
        key = admin.keys.create(other, ["read", "write"], name="pytest-other").key
        with paddock.Paddock(conftest.URL, key) as c2:
            assert name not in [t.name for t in c2.templates.list()]
            with pytest.raises(paddock.NotFoundError):
                c2.templates.get(name)
            with pytest.raises(paddock.NotFoundError):
                c2.templates.delete(name)
    finally:
        client.templates.delete(name)


def test_async_build_stream_and_delete(make_async_client, tenant_key: str) -> None:  # noqa: ANN001
    name = uniq("pya")

    async def main() -> None:
        async with make_async_client(tenant_key) as c:
            st = c.templates.build_stream(CONTEXT, name=name)
            steps = [e async for e in st]
            assert st.template is not None and st.template.name == name and any(e.instruction for e in steps)
            assert name in [t.name for t in await c.templates()]
            assert (await c.templates.get(name)).kind == "image"
            buf = io.BytesIO()
            assert await c.templates.export(name, buf) > 0
            copy = name + "-i"
            assert (await c.templates.import_archive(buf.getvalue(), name=copy)).name == copy
            await c.templates.delete(copy)
            await c.templates.delete(name)
            assert not await c.templates.exists(name)
    asyncio.run(main())


def test_a_build_stream_cut_midway_raises(client: paddock.Paddock, tenant_key: str) -> None:
    from test_errors import CuttingProxy
    name = uniq("pyc")
    many = {"Dockerfile": "FROM scratch\n" + "".join("ENV V%d=%s\n" % (i, "x" * 40) for i in range(80))}
    proxy = CuttingProxy(after=2000)
    try:
        with paddock.Paddock("http://127.0.0.1:%d" % proxy.port, tenant_key, timeout=20) as far:
            seen: list[paddock.models.TemplateEvent] = []
            with pytest.raises(paddock.StreamInterruptedError):
                far.templates.build(many, name=name, on_event=seen.append)
            assert seen, "events before the cut were delivered"
    finally:
        proxy.close()
        try:
            client.templates.delete(name)  # the server may finish the build on its own
        except paddock.NotFoundError:
            pass
