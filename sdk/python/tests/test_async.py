"""The asyncio client: the same surface, awaited (no pytest-asyncio needed)."""

from __future__ import annotations

import asyncio

import pytest

import paddock


def run(coro):  # noqa: ANN001, ANN201
    return asyncio.run(coro)


def test_async_exec_files_processes(make_async_client, tenant_key: str) -> None:  # noqa: ANN001
    async def main() -> None:
        async with make_async_client(tenant_key) as c:
            async with await c.sandboxes.create(labels={"suite": "pytest"}) as sb:
                r = await sb.exec("echo async; exit 2")
                assert (r.stdout, r.exit_code) == ("async\n", 2)
                out = []
                async with sb.exec_stream(["sh", "-c", "echo a; echo b >&2"]) as st:
                    async for ch in st:
                        out.append((ch.stream, ch.data))
                assert ("stdout", "a\n") in out and ("stderr", "b\n") in out and st.result.exit_code == 0

                async def body():  # noqa: ANN202
                    for i in range(3):
                        yield b"part%d;" % i
                info = await sb.files.write("/tmp/a.txt", body())
                assert info.size == 18
                assert await sb.files.read("/tmp/a.txt") == b"part0;part1;part2;"
                chunks = [b async for b in sb.files.iter_read("/tmp/a.txt")]
                assert b"".join(chunks) == b"part0;part1;part2;"
                assert [e.name for e in (await sb.files.list("/tmp")).entries] == ["a.txt"]

                p = await sb.processes.start("echo bg")
                await sb.processes.wait(p, timeout=10)
                lines = [l async for l in sb.processes.output(p)]
                assert "".join(l.data or "" for l in lines) == "bg\n"

                # Concurrency: ten execs at once on one client.
                rs = await asyncio.gather(*(sb.exec(["echo", str(i)]) for i in range(10)))
                assert [r.stdout for r in rs] == ["%d\n" % i for i in range(10)]

                async with await sb.terminal(["sh"]) as t:
                    await t.send("echo $((6*7))\n")
                    assert b"42" in await t.read_until(b"42\r\n", 10)
                    await t.send("exit\n")
                    assert (await t.wait()).exit_code == 0
                sid = sb.id
            with pytest.raises(paddock.NotFoundError):
                await c.sandboxes.get(sid)
    run(main())


def test_async_watch(make_async_client, tenant_key: str) -> None:  # noqa: ANN001
    async def main() -> None:
        async with make_async_client(tenant_key) as c:
            async with await c.sandboxes.create() as sb:
                seen = []
                async for ev in sb.files.watch("/workspace"):
                    seen.append(ev.type)
                    if ev.type == "ready":
                        await sb.files.write("/workspace/n.txt", "x")
                    elif ev.path == "/workspace/n.txt":
                        break
                assert seen[0] == "ready" and len(seen) >= 2
    run(main())


def test_async_errors(make_async_client, tenant_key: str) -> None:  # noqa: ANN001
    async def main() -> None:
        async with make_async_client("pdk_bogus") as bad:
            with pytest.raises(paddock.UnauthenticatedError):
                await bad.sandboxes.list()
        async with make_async_client(tenant_key) as c:
            with pytest.raises(paddock.NotFoundError):
                await c.sandboxes.get("sb-doesnotexist")
        sbx = paddock.AsyncPaddock("http://127.0.0.1:9", "k", max_retries=1)
        with pytest.raises(paddock.APIConnectionError):
            await sbx.health()
        await sbx.aclose()
    run(main())


def test_async_sandbox_create_classmethod(monkeypatch: pytest.MonkeyPatch, tenant_key: str) -> None:
    import conftest
    monkeypatch.setenv("PADDOCK_URL", conftest.URL)
    monkeypatch.setenv("PADDOCK_API_KEY", tenant_key)

    async def main() -> None:
        async with await paddock.AsyncSandbox.create() as sb:
            assert (await sb.exec("echo ok")).stdout == "ok\n"
        assert sb.client._t.http.is_closed
    run(main())
