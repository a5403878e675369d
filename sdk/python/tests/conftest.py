"""Fixtures: a real Paddock server (PADDOCK_URL, PADDOCK_API_KEY: an admin
key — sdk/sdktest starts `paddock serve` and sets both), clients whose every
JSON answer is checked against the served OpenAPI document, and a sandbox."""

from __future__ import annotations

import json
import os
import sys
import uuid

import httpx
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

import paddock  # noqa: E402
from schema import Doc  # noqa: E402

URL = os.environ.get("PADDOCK_URL", "")
KEY = os.environ.get("PADDOCK_API_KEY", "")

VIOLATIONS: list[str] = []
CHECKED = {"n": 0}


def pytest_collection_modifyitems(config, items):  # noqa: ANN001
    if URL and KEY:
        return
    skip = pytest.mark.skip(reason="needs a Paddock server: set PADDOCK_URL and PADDOCK_API_KEY (an admin key); "
                                   "sdk/sdktest (make test) starts one")
    for it in items:
        if "offline" not in it.keywords:
            it.add_marker(skip)


def pytest_configure(config):  # noqa: ANN001
    config.addinivalue_line("markers", "offline: runs without a server")
    config.addinivalue_line("markers", "browser: starts Chromium in a sandbox")


@pytest.fixture(scope="session")
def doc() -> Doc:
    return Doc(httpx.get(URL + "/openapi.json").json())


def _checker(doc: Doc):  # noqa: ANN202
    def hook(resp: httpx.Response) -> None:
        ctype = resp.headers.get("content-type", "").split(";")[0].strip()
        if ctype != "application/json":
            return
        resp.read()
        req = resp.request
        path = req.url.path
        schema = doc.response_schema(req.method, path, resp.status_code, ctype)
        where = "%s %s -> %d" % (req.method, path, resp.status_code)
        if schema is None:
            VIOLATIONS.append("%s: no documented JSON answer" % where)
            return
        CHECKED["n"] += 1
        for e in doc.validate(json.loads(resp.content), schema):
            VIOLATIONS.append("%s: %s" % (where, e))
    return hook


def _async_checker(doc: Doc):  # noqa: ANN202
    sync = _checker(doc)

    async def hook(resp: httpx.Response) -> None:
        if resp.headers.get("content-type", "").startswith("application/json"):
            await resp.aread()
            sync(resp)
    return hook


@pytest.fixture(scope="session")
def make_client(doc: Doc):  # noqa: ANN201
    made: list[paddock.Paddock] = []

    def make(key: str | None = None, **kw) -> paddock.Paddock:  # noqa: ANN003
        http = httpx.Client(base_url=URL, event_hooks={"response": [_checker(doc)]}, timeout=60,
                            transport=httpx.HTTPTransport(retries=0))
        c = paddock.Paddock(URL, KEY if key is None else key, http_client=http, **kw)
        made.append(c)
        return c
    yield make
    for c in made:
        c._t.http.close()


@pytest.fixture(scope="session")
def make_async_client(doc: Doc):  # noqa: ANN201
    def make(key: str | None = None, **kw) -> paddock.AsyncPaddock:  # noqa: ANN003
        http = httpx.AsyncClient(base_url=URL, event_hooks={"response": [_async_checker(doc)]}, timeout=60)
        return paddock.AsyncPaddock(URL, KEY if key is None else key, http_client=http, **kw)
    return make


@pytest.fixture(scope="session")
def admin(make_client) -> paddock.Paddock:  # noqa: ANN001
    return make_client()


@pytest.fixture(scope="session")
def tenant_key(admin: paddock.Paddock) -> str:
    """A key of a tenant of its own, with every scope but admin."""
    name = "sdk-" + uuid.uuid4().hex[:8]
    admin.tenants.create(name)
    return admin.keys.create(name, ["read", "write", "exec"], name="pytest").key


@pytest.fixture(scope="session")
def client(make_client, tenant_key: str) -> paddock.Paddock:  # noqa: ANN001
    return make_client(tenant_key)


@pytest.fixture()
def sb(client: paddock.Paddock):  # noqa: ANN201
    s = client.sandboxes.create(labels={"suite": "pytest"})
    yield s
    s.kill()


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ANN001
    if URL and KEY:
        terminalreporter.write_line("openapi: %d JSON answers checked against the document, %d violations"
                                    % (CHECKED["n"], len(VIOLATIONS)))
