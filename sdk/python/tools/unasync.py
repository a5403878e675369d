#!/usr/bin/python3
"""Generate the sync client from the async one (one source of truth).

    unasync.py [--check]

Reads src/paddock/_async_{http,code,sandbox,client}.py and writes
_sync_{http,code,sandbox,client}.py with coroutines made plain functions: the
two clients cannot differ in anything but blocking. --check exits 1 when a
generated file is stale (the SDK test runs it)."""

import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "paddock")
FILES = ["http", "code", "sandbox", "client"]

RULES = [
    (r"\basync def\b", "def"),
    (r"\bawait ", ""),
    (r"\basync for\b", "for"),
    (r"\basync with\b", "with"),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\b__aiter__\b", "__iter__"),
    (r"\baiter_bytes\b", "iter_bytes"),
    (r"\baiter_lines\b", "iter_lines"),
    (r"\baread\b", "read"),
    (r"\baclose\b", "close"),
    (r"\bAsyncIterator\b", "Iterator"),
    (r"\bhttpx\.AsyncClient\b", "httpx.Client"),
    (r"\bhttpx\.AsyncHTTPTransport\b", "httpx.HTTPTransport"),
    (r"\b_aio\b", "_sio"),
    (r"\b_async_(http|code|sandbox|client)\b", r"_sync_\1"),
    (r"\bAsync([A-Z]\w*)", r"\1"),
]

HEADER = "# Generated from %s by tools/unasync.py. Do not edit.\n"


def convert(text: str, name: str) -> str:
    for pat, rep in RULES:
        text = re.sub(pat, rep, text)
    return HEADER % name + text


def main() -> int:
    check = "--check" in sys.argv
    stale = []
    for f in FILES:
        src = os.path.join(SRC, "_async_%s.py" % f)
        dst = os.path.join(SRC, "_sync_%s.py" % f)
        with open(src, encoding="utf-8") as fh:
            want = convert(fh.read(), "_async_%s.py" % f)
        have = open(dst, encoding="utf-8").read() if os.path.exists(dst) else None
        if have != want:
            stale.append(dst)
            if not check:
                with open(dst, "w", encoding="utf-8") as fh:
                    fh.write(want)
    if check and stale:
        for s in stale:
            print("stale: %s (run tools/unasync.py)" % os.path.relpath(s), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
