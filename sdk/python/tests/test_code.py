"""The code interpreter (docs/code.md): run_code, its stream and contexts,
against a real server."""

from __future__ import annotations

import asyncio
import json
import struct
import subprocess
import zlib

import httpx
import pytest

import conftest
import paddock
from test_errors import CuttingProxy


def _has_matplotlib() -> bool:
    # The host template runs the host's /usr/bin/python3: what it imports,
    # the sandbox's kernel imports.
    return subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode == 0


def decode_png(b: bytes) -> tuple[int, int]:
    """Width and height of a PNG whose image data inflates (a real decode
    of the container, without an imaging library)."""
    assert b[:8] == b"\x89PNG\r\n\x1a\n", b[:8]
    i, idat, size = 8, b"", None
    while i < len(b):
        n, kind = struct.unpack(">I4s", b[i:i + 8])
        chunk = b[i + 8:i + 8 + n]
        assert zlib.crc32(kind + chunk) == struct.unpack(">I", b[i + 8 + n:i + 12 + n])[0], "bad CRC"
        if kind == b"IHDR":
            size = struct.unpack(">II", chunk[:8])
        elif kind == b"IDAT":
            idat += chunk
        i += 12 + n
    assert size is not None and idat
    w, h = size
    raw = zlib.decompress(idat)
    assert len(raw) >= h * (w + 1), "the pixel rows are all there"
    return w, h


def test_state_across_cells(sb: paddock.Sandbox) -> None:
    a = sb.run_code("x = 40\nprint('set')")
    assert a.status == "ok" and a.stdout == "set\n" and a.text is None and a.error is None
    b = sb.run_code("x + 2")
    assert b.text == "42" and b.results[0].is_main_result and b.execution_count == a.execution_count + 1
    assert b.context_id == a.context_id and b.language == "python"


def test_error_name_value_traceback(sb: paddock.Sandbox) -> None:
    seen: list[paddock.models.CodeError] = []
    ex = sb.run_code("def f():\n    return 1 / 0\nf()", on_error=seen.append)
    assert ex.status == "error"
    assert ex.error is not None and ex.error.name == "ZeroDivisionError" and ex.error.value == "division by zero"
    assert "f()" in ex.error.traceback and "\x1b[" not in ex.error.traceback
    assert seen == [ex.error]
    assert sb.run_code("1 + 1").text == "2", "the context lives on after an error"


def test_callbacks_and_streaming_order(sb: paddock.Sandbox) -> None:
    order: list[str] = []
    code = ("import sys, time\n"
            "print('a', flush=True); time.sleep(0.2)\n"
            "print('b', file=sys.stderr, flush=True); time.sleep(0.2)\n"
            "display({'k': 1}); time.sleep(0.2)\n"
            "print('c', flush=True)\n"
            "'done'")
    ex = sb.run_code(code, on_stdout=lambda t: order.append("out:" + t.strip()),
                     on_stderr=lambda t: order.append("err:" + t.strip()),
                     on_result=lambda r: order.append("res:" + (r.text or "")))
    assert order == ["out:a", "err:b", "res:{'k': 1}", "out:c", "res:'done'"], order
    assert ex.logs.stdout == ["a\n", "c\n"] and ex.logs.stderr == ["b\n"]
    assert ex.results[0].json == {"k": 1} and not ex.results[0].is_main_result

    types: list[str] = []
    with sb.run_code_stream("for i in range(3): print(i, flush=True)") as s:
        for ev in s:
            types.append(ev.type)
            if ev.type == "stdout":
                assert s.execution.status is None, "output arrives before the end"
    assert types[0] == "start" and types[-1] == "end" and "stdout" in types
    assert s.execution.stdout == "0\n1\n2\n" and s.execution.status == "ok"


@pytest.mark.skipif(not _has_matplotlib(), reason="matplotlib is not installed on this host (CI installs python3-matplotlib)")
def test_matplotlib_png_decodes(sb: paddock.Sandbox) -> None:
    ex = sb.run_code("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.title('squares')\nplt.show()",
                     timeout=120)
    assert ex.status == "ok", (ex.error, ex.stderr)
    pngs = [r for r in ex.results if "image/png" in r.formats()]
    assert len(pngs) == 1
    w, h = decode_png(pngs[0].png)
    assert w > 100 and h > 100
    assert pngs[0].chart is not None and pngs[0].chart.get("type") == "line" and pngs[0].chart.get("title") == "squares"


def test_contexts_isolated_restart_delete(sb: paddock.Sandbox) -> None:
    one = sb.contexts.create("python", cwd="/tmp")
    two = sb.contexts.create("python")
    assert one.id != two.id and one.language == "python" and one.cwd == "/tmp"
    assert sb.run_code("secret = 'one'", context=one).status == "ok"
    other = sb.run_code("secret", context=two.id)
    assert other.status == "error" and other.error.name == "NameError"
    assert sb.run_code("import os; os.getcwd()", context=one).text == "'/tmp'"
    ids = [c.id for c in sb.contexts.list()]
    assert one.id in ids and two.id in ids
    assert sb.contexts.get(one).execution_count >= 2
    r = sb.contexts.restart(one)
    assert r.id == one.id and r.restarts == 1
    assert sb.run_code("secret", context=one).error.name == "NameError", "a restart loses the state, as asked"
    sb.contexts.delete(two)
    with pytest.raises(paddock.NotFoundError):
        sb.contexts.get(two)
    with pytest.raises(paddock.NotFoundError):
        sb.run_code("1", context=two)


def test_javascript_and_bash(sb: paddock.Sandbox) -> None:
    if sb.exec("command -v node").exit_code == 0:
        assert sb.run_code("let n = 20", language="js").status == "ok"
        assert sb.run_code("n * 2 + 2", language="javascript").text == "42"
    sh = sb.contexts.create("bash")
    sb.run_code("V=hej; cd /tmp", context=sh)
    ex = sb.run_code("echo $V $(pwd); false", context=sh)
    assert ex.stdout == "hej /tmp\n" and ex.status == "error" and ex.exit_code == 1


def test_env_and_timeout_keep_state(sb: paddock.Sandbox) -> None:
    assert sb.run_code("import os; os.environ.get('CELL_ONLY')", env={"CELL_ONLY": "yes"}).text == "'yes'"
    assert sb.run_code("import os; repr(os.environ.get('CELL_ONLY'))").text == "'None'"
    sb.run_code("kept = 1")
    ex = sb.run_code("import time; time.sleep(30)", timeout=1)
    assert ex.status == "timeout"
    assert sb.run_code("kept").text == "1"


def test_closing_the_stream_interrupts_the_cell(sb: paddock.Sandbox) -> None:
    ctx = sb.contexts.create("python")
    s = sb.run_code_stream("x = 7\nprint('sleeping', flush=True)\nimport time; time.sleep(120)", context=ctx)
    for ev in s:
        if ev.type == "stdout":
            break
    s.close()
    # The next cell is queued behind the first one unless the disconnect
    # interrupted it: it answers long before the 120 s sleep would end.
    c = paddock.Paddock(conftest.URL, sb.client.config.api_key, timeout=60)
    try:
        ex = c.sandboxes.connect(sb.info).run_code("x", context=ctx, timeout=30)
        assert ex.text == "7", "the interrupted context kept its state"
    finally:
        c.close()


def test_stream_cut_midway_raises(sb: paddock.Sandbox, tenant_key: str) -> None:
    proxy = CuttingProxy(after=4000)
    try:
        c = paddock.Paddock("http://127.0.0.1:%d" % proxy.port, tenant_key, timeout=20)
        far = c.sandboxes.connect(sb.info)
        got: list[str] = []
        with pytest.raises(paddock.StreamInterruptedError):
            far.run_code("import time\nwhile True:\n    print('0123456789abcdef', flush=True); time.sleep(0.01)",
                         on_stdout=got.append, timeout=60)
        assert got, "output came before the cut"
        c.close()
    finally:
        proxy.close()


CASES = [
    ("unknown language", lambda sb: sb.run_code("1", language="cobol"), {"code": "1", "language": "cobol"}),
    ("both", lambda sb: sb.run_code("1", language="python", context="c1"), {"code": "1", "language": "python", "context_id": "c1"}),
    ("negative timeout", lambda sb: sb.run_code("1", timeout=-1), {"code": "1", "timeout_ms": -1000}),
]


@pytest.mark.parametrize("name,call,body", CASES, ids=[c[0] for c in CASES])
def test_code_checks_match_server(sb: paddock.Sandbox, tenant_key: str, name, call, body) -> None:  # noqa: ANN001
    with pytest.raises(paddock.InvalidArgumentError) as e:
        call(sb)
    r = httpx.post(conftest.URL + "/v1/sandboxes/%s/code" % sb.id, headers={"Authorization": "Bearer " + tenant_key},
                   content=json.dumps(body).encode(), timeout=30)
    assert r.status_code == 400, r.text
    assert e.value.message == r.json()["error"]["message"]


def test_code_too_large_refused_before_sending(sb: paddock.Sandbox) -> None:
    with pytest.raises(paddock.TooLargeError) as e:
        sb.run_code("#" * ((1 << 20) + 1))
    assert e.value.message == "the code of one cell is at most 1048576 bytes"


def test_async_run_code_and_stream(make_async_client, tenant_key: str) -> None:  # noqa: ANN001
    async def main() -> None:
        async with make_async_client(tenant_key) as c:
            async with await c.sandboxes.create(labels={"suite": "pytest"}) as sb:
                got: list[str] = []

                async def on_out(t: str) -> None:  # an async callback is awaited
                    await asyncio.sleep(0)
                    got.append(t)
                ex = await sb.run_code("y = 5\nprint('hi')\ny * 2", on_stdout=on_out)
                assert (ex.text, got) == ("10", ["hi\n"])
                types = []
                async with sb.run_code_stream("print(y)") as s:
                    async for ev in s:
                        types.append(ev.type)
                assert types[0] == "start" and types[-1] == "end" and s.execution.stdout == "5\n"
                ctx = await sb.contexts.create("bash")
                assert ctx.id in [x.id for x in await sb.contexts.list()]
                assert (await sb.run_code("echo $((6*7))", context=ctx)).stdout == "42\n"
                await sb.contexts.delete(ctx)
    asyncio.run(main())


@pytest.mark.offline
def test_execution_gathers_events() -> None:
    png = b"\x89PNG\r\n\x1a\nrest"
    ex = paddock.Execution()
    seen: list[object] = []
    events = [
        {"type": "start", "start": {"context_id": "c1", "language": "python", "restarted": True, "state_lost": True}},
        {"type": "stdout", "text": "a"}, {"type": "stderr", "text": "b"}, {"type": "stdout", "text": "c"},
        {"type": "result", "result": {"is_main_result": False, "bundle": {"image/png": __import__("base64").b64encode(png).decode(),
                                                                           "text/plain": "<Figure>"}}},
        {"type": "error", "error": {"name": "E", "value": "v", "traceback": "tb"}},
        {"type": "result", "result": {"is_main_result": True, "bundle": {"text/plain": "42", "application/json": {"k": [1]}}}},
        {"type": "future-kind"},  # an event type this SDK does not know is ignored, not fatal
        {"type": "end", "end": {"status": "error", "execution_count": 3, "truncated": True}},
    ]
    from paddock import _code
    for d in events:
        ev = paddock.models.CodeEvent.from_dict(d)
        assert not ex.ended
        ex.add(ev)
        _code.callback(ev, ex, seen.append, seen.append, lambda r: seen.append(r.text), lambda e: seen.append(e.name))
    assert ex.ended and ex.status == "error" and ex.execution_count == 3 and ex.truncated and ex.restarted and ex.state_lost
    assert (ex.stdout, ex.stderr, ex.text, ex.context_id) == ("ac", "b", "42", "c1")
    assert ex.results[0].png == png and ex.results[0].formats() == ["image/png", "text/plain"]
    assert ex.results[1].json == {"k": [1]} and ex.error.name == "E"
    assert seen == ["a", "b", "c", "<Figure>", "E", "42"]
