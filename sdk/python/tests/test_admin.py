"""Tenants, keys, secrets and the audit log, as an admin."""

from __future__ import annotations

import uuid

import pytest

import paddock


def test_tenants_and_keys(admin: paddock.Paddock, make_client) -> None:  # noqa: ANN001
    name = "adm-" + uuid.uuid4().hex[:8]
    t = admin.tenants.create(name, quotas={"max_sandboxes": 3})
    assert t.name == name and t.quotas.max_sandboxes == 3
    assert name in [x.name for x in admin.tenants.list()]
    t = admin.tenants.update(name, quotas={"max_sandboxes": 5, "max_cpu": 2})
    assert t.quotas.max_sandboxes == 5 and admin.tenants.get(name).quotas.max_cpu == 2
    assert admin.tenants.get(name).usage is not None
    with pytest.raises(paddock.ConflictError):
        admin.tenants.create(name)

    k = admin.keys.create(name, ["read"], name="ro", expires_in=3600)
    assert k.key.startswith("pdk_") and k.scopes == ["read"] and k.tenant == name
    assert k.id in [x.id for x in admin.keys.list(tenant=name)]
    ro = make_client(k.key)
    assert ro.sandboxes.list() == []
    with pytest.raises(paddock.ForbiddenError) as e:
        ro.sandboxes.create()
    assert "scope" in e.value.message
    admin.keys.revoke(k.id)
    with pytest.raises(paddock.UnauthenticatedError):
        ro.sandboxes.list()
    with pytest.raises(paddock.ForbiddenError):
        make_client(admin.keys.create(name, ["read", "write"]).key).keys.list()


def test_secrets(admin: paddock.Paddock) -> None:
    name = "SDK_TEST_" + uuid.uuid4().hex[:6].upper()
    try:
        info = admin.secrets.set(name, "s3cret")
    except paddock.UnsupportedError:
        pytest.skip("this server has no secret store")
    assert info.name == name
    assert name in [s.name for s in admin.secrets.list()]
    got = admin.secrets.get(name)
    assert got.name == name and not hasattr(got, "value")
    admin.secrets.set(name, "rotated")
    admin.secrets.delete(name)
    with pytest.raises(paddock.NotFoundError):
        admin.secrets.get(name)


def test_audit(admin: paddock.Paddock, sb: paddock.Sandbox) -> None:
    sb.exec("echo audited")
    page = admin.audit.query(sandbox=sb.id, limit=500)
    actions = {(r.action, r.phase) for r in page.records}
    assert ("sandbox.create", "result") in actions and ("exec", "intent") in actions
    recs = list(admin.audit.records(sandbox=sb.id, limit=2))
    assert len(recs) >= len(page.records) - 2 and [r.seq for r in recs] == sorted(r.seq for r in recs)
    exported = list(admin.audit.export(sandbox=sb.id))
    assert {r.seq for r in page.records} <= {r.seq for r in exported}
    assert all(len(r.hash) == 64 for r in exported)
