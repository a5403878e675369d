"""Runs last: every JSON answer the suite received matched /openapi.json;
the generated models and the generated sync client are current."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import httpx
import pytest

import conftest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def test_answers_match_the_document() -> None:
    if conftest.VIOLATIONS:
        pytest.fail("answers that differ from /openapi.json:\n" + "\n".join(sorted(set(conftest.VIOLATIONS))[:60]))


def test_models_generated_from_served_document() -> None:
    doc = httpx.get(conftest.URL + "/openapi.json").json()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    try:
        r = subprocess.run([sys.executable, os.path.join(ROOT, "sdk", "codegen", "generate.py"), "--check", "--doc", f.name],
                           capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    assert r.returncode == 0, r.stderr


@pytest.mark.offline
def test_sync_client_generated_from_async() -> None:
    r = subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "unasync.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
