"""Background processes and terminals through the sync client."""

from __future__ import annotations

import time

import pytest

import paddock


def test_start_list_output_wait(sb: paddock.Sandbox) -> None:
    p = sb.processes.start("echo one; echo two >&2; sleep 0.2; exit 5", tag="job")
    assert p.state == "running" and p.tag == "job" and p.id.startswith("p")
    assert p.id in [x.id for x in sb.processes.list()]
    assert sb.processes.get("tag:job").id == p.id
    done = sb.processes.wait(p, timeout=10)
    assert done.state == "exited" and done.exit_code == 5
    lines = list(sb.processes.output(p))
    out = "".join(l.data or "" for l in lines if l.stream == "stdout")
    err = "".join(l.data or "" for l in lines if l.stream == "stderr")
    assert (out, err) == ("one\n", "two\n")
    assert lines[-1].process is not None and lines[-1].process.exit_code == 5
    assert done.streams["stdout"].written == 4


def test_follow_stdin_signal_kill(sb: paddock.Sandbox) -> None:
    p = sb.processes.start(["cat"], stdin=True)
    assert sb.processes.write_stdin(p, "ping\n") == 5
    sb.processes.close_stdin(p)
    got = "".join(l.data or "" for l in sb.processes.output(p, follow=True))
    assert got == "ping\n"
    assert sb.processes.get(p).exit_code == 0

    q = sb.processes.start(["sleep", "60"])
    assert sb.processes.signal(q, "TERM") == 1
    w = sb.processes.wait(q, timeout=10)
    assert w.signal == "SIGTERM" and w.exit_code == 143
    with pytest.raises(paddock.ConflictError):
        sb.processes.signal(q, "TERM")

    r = sb.processes.start("sleep 60 & sleep 60")
    k = sb.processes.kill(r)
    assert k.state == "exited"
    w = sb.processes.wait(r, timeout=0)
    assert w.state == "exited"


def test_base64_and_from(sb: paddock.Sandbox) -> None:
    p = sb.processes.start(["sh", "-c", "printf 'abcdef'"])
    sb.processes.wait(p, timeout=10)
    lines = [l for l in sb.processes.output(p, start=3, base64=True) if l.data_b64]
    import base64
    assert base64.b64decode("".join(l.data_b64 or "" for l in lines)) == b"def"


def test_pty_process_resize(sb: paddock.Sandbox) -> None:
    p = sb.processes.start(["sh"], pty=(24, 80))
    sb.processes.resize(p, 30, 100)
    sb.processes.write_stdin(p, "stty size; exit\n")
    sb.processes.wait(p, timeout=10)
    text = "".join(l.data or "" for l in sb.processes.output(p))
    assert "30 100" in text


def test_terminal(sb: paddock.Sandbox) -> None:
    with sb.terminal(["sh"], rows=20, cols=70) as t:
        assert t.pid
        t.send("stty size\n")
        assert b"20 70" in t.read_until(b"20 70", 10)
        t.resize(33, 99)
        time.sleep(0.1)
        t.send("stty size\n")
        assert b"33 99" in t.read_until(b"33 99", 10)
        t.send("exit 3\n")
        assert t.wait(20).exit_code == 3
