"""Files through the sync client: every method, streamed both ways."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import threading

import pytest

import paddock


def test_write_read_stat_list(sb: paddock.Sandbox) -> None:
    info = sb.files.write("notes/a.txt", "héllo\n", parents=True, mode=0o600)
    assert info.path == "/workspace/notes/a.txt" and info.size == 7 and info.mode == "0600"
    assert sb.files.read_text("notes/a.txt") == "héllo\n"
    assert sb.files.read("notes/a.txt", offset=1, length=2) == "é".encode()
    st = sb.files.stat("/workspace/notes/a.txt")
    assert st.type == "file" and st.uid == 0
    sb.files.write("notes/b.bin", bytes(range(256)))
    assert sb.files.read("notes/b.bin") == bytes(range(256))
    names = [e.name for e in sb.files.list("notes").entries]
    assert names == ["a.txt", "b.bin"]
    deep = sb.files.list("/workspace", depth=2)
    assert "/workspace/notes/a.txt" in [e.path for e in deep.entries]
    assert sb.files.exists("notes/a.txt") and not sb.files.exists("notes/zzz")
    with pytest.raises(paddock.NotFoundError):
        sb.files.read("nope.txt")
    mine = sb.files.write("/tmp/u.txt", "u", user="user")
    assert mine.uid == 1000


def test_mkdir_move_remove_edit(sb: paddock.Sandbox) -> None:
    d = sb.files.mkdir("x/y/z", parents=True)
    assert d.type == "dir"
    with pytest.raises(paddock.PaddockError):
        sb.files.mkdir("x/y/z")
    sb.files.write("x/f.txt", "one\ntwo\nthree\n")
    moved = sb.files.move("x/f.txt", "x/y/g.txt")
    assert moved.path == "/workspace/x/y/g.txt" and not sb.files.exists("x/f.txt")
    e = sb.files.edit("x/y/g.txt", old_string="two", new_string="TWO")
    assert e.replacements == 1 and sb.files.read_text("x/y/g.txt") == "one\nTWO\nthree\n"
    sb.files.edit("x/y/g.txt", start_line=1, end_line=1, content="ONE\n")
    assert sb.files.read_text("x/y/g.txt") == "ONE\nTWO\nthree\n"
    with pytest.raises(paddock.NotFoundError) as e:
        sb.files.edit("x/y/g.txt", old_string="absent", new_string="-")
    assert "does not occur" in e.value.message
    r = sb.files.remove("x", recursive=True)
    assert r.removed >= 4 and not sb.files.exists("x")


def test_find_search(sb: paddock.Sandbox) -> None:
    for p in ("src/a.py", "src/b.py", "src/sub/c.py", "src/readme.md"):
        sb.files.write(p, "def hello():\n    return 'needle'\n", parents=True)
    f = sb.files.find("**/*.py", path="src")
    assert sorted(m.path for m in f.matches) == ["/workspace/src/a.py", "/workspace/src/b.py", "/workspace/src/sub/c.py"]
    s = sb.files.search("NEEDLE", path="src", ignore_case=True)
    assert len(s.matches) == 4 and s.files_scanned == 4 and s.matches[0].line == 2
    s = sb.files.search("need.e", path="src", regexp=True, include="*.md")
    assert [m.path for m in s.matches] == ["/workspace/src/readme.md"]


def test_streamed_upload_download(sb: paddock.Sandbox, tmp_path) -> None:  # noqa: ANN001
    src = tmp_path / "big.bin"
    data = os.urandom(1 << 20) * 12  # 12 MiB
    src.write_bytes(data)
    info = sb.files.upload(src, "/tmp/big.bin")
    assert info.size == len(data)
    dst = tmp_path / "back.bin"
    n = sb.files.download("/tmp/big.bin", dst)
    assert n == len(data) and hashlib.sha256(dst.read_bytes()).digest() == hashlib.sha256(data).digest()

    def gen():  # noqa: ANN202
        for i in range(8):
            yield bytes([i]) * 100_000
    info = sb.files.write("/tmp/gen.bin", gen())
    assert info.size == 800_000
    chunks = list(sb.files.iter_read("/tmp/gen.bin", chunk_size=65536))
    assert b"".join(chunks) == b"".join(gen()) and len(chunks) > 1


def test_archive_roundtrip(sb: paddock.Sandbox) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, body in (("proj/main.py", b"print('hi')\n"), ("proj/data/x.txt", b"x")):
            ti = tarfile.TarInfo(name)
            ti.size = len(body)
            tf.addfile(ti, io.BytesIO(body))
    res = sb.files.upload_archive("/workspace/unpacked", buf.getvalue(), gzip=True)
    assert res.files == 2
    assert sb.exec("python3 /workspace/unpacked/proj/main.py").stdout == "hi\n"
    out = io.BytesIO()
    sb.files.download_archive("/workspace/unpacked", out)
    with tarfile.open(fileobj=io.BytesIO(out.getvalue())) as tf:
        names = tf.getnames()
    assert any(n.endswith("proj/data/x.txt") for n in names)


def test_watch(sb: paddock.Sandbox) -> None:
    sb.files.mkdir("w")
    events: list[paddock.models.FileEvent] = []
    ready = threading.Event()

    def writer() -> None:
        ready.wait(10)
        sb.files.write("w/new.txt", "x")

    th = threading.Thread(target=writer)
    th.start()
    it = sb.files.watch("w")
    for ev in it:
        events.append(ev)
        if ev.type == "ready":
            ready.set()
        if ev.path.endswith("new.txt") and ev.type in ("create", "write", "rename"):
            break
    it.close()
    th.join()
    assert events[0].type == "ready"
    assert any(e.path == "/workspace/w/new.txt" for e in events)
