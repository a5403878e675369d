# Generated from _async_client.py by tools/unasync.py. Do not edit.
"""The async client: sandboxes, snapshots, templates, and the admin areas
(keys, tenants, secrets, audit). _sync_client.py is generated from this file by
tools/unasync.py."""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

import httpx

from . import _core, models
from ._sync_http import Transport, ndjson
from ._sync_sandbox import Sandbox


class Sandboxes:
    def __init__(self, c: Paddock) -> None:
        self._c, self._t = c, c._t

    def create(self, *, template: str | None = None, cpu: float | None = None, memory_mb: int | None = None,
                     disk_mb: int | None = None, pids: int | None = None, timeout: int | None = None,
                     labels: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None,
                     network: Mapping[str, Any] | models.Network | None = None, browser: bool | None = None,
                     snapshot: str | models.Snapshot | None = None, auto_resume: bool | None = None,
                     on_timeout: str | None = None, idle_pause_after: int | None = None,
                     paused_timeout: int | None = None) -> Sandbox:
        """Create a sandbox (every argument optional; timeout in seconds).
        snapshot: start with a snapshot's files (its template). Lifecycle
        (docs/state.md), in seconds: auto_resume (calls resume a paused
        sandbox instead of failing with sandbox_paused), on_timeout ("kill"
        or "pause"), idle_pause_after (0: never), paused_timeout.
        Safe to retry on a rate quota's 429: a refused create did nothing."""
        net = network.to_dict() if isinstance(network, models.Network) else (dict(network) if network else None)
        spec = _core.drop_none({"template": template, "cpu": cpu, "memory_mb": memory_mb, "disk_mb": disk_mb,
                                "pids": pids, "timeout_s": timeout, "labels": dict(labels) if labels else None,
                                "env": dict(env) if env else None, "network": net, "browser": browser,
                                "snapshot": None if snapshot is None else _core.snapshot_name(snapshot),
                                "auto_resume": auto_resume, "on_timeout": _core.on_timeout(on_timeout),
                                "idle_pause_after_s": _core.idle_pause_after(idle_pause_after),
                                "paused_timeout_s": _core.paused_timeout(paused_timeout)})
        d = self._t.json("POST", "/v1/sandboxes", json_body=spec, retry=False, timeout=120)
        return Sandbox(self._c, models.Sandbox.from_dict(d))

    def get(self, sandbox_id: str) -> Sandbox:
        d = self._t.json("GET", "/v1/sandboxes/" + _core.seg(sandbox_id))
        return Sandbox(self._c, models.Sandbox.from_dict(d))

    def connect(self, info: models.Sandbox) -> Sandbox:
        return Sandbox(self._c, info)

    def list(self, *, labels: Mapping[str, str] | None = None) -> list[models.Sandbox]:
        params = [("label", "%s=%s" % (k, v)) for k, v in (labels or {}).items()]
        d = self._t.json("GET", "/v1/sandboxes", params=httpx.QueryParams(params) if params else None)
        return models.SandboxList.from_dict(d).sandboxes

    def delete(self, sandbox_id: str) -> None:
        self._t.request("DELETE", "/v1/sandboxes/" + _core.seg(sandbox_id))


class Snapshots:
    """The tenant's snapshots (docs/state.md): take one with
    sandbox.snapshot(name), start a sandbox from one with
    sandboxes.create(snapshot=name)."""

    def __init__(self, c: Paddock) -> None:
        self._t = c._t

    def list(self) -> list[models.Snapshot]:
        return models.SnapshotList.from_dict(self._t.json("GET", "/v1/snapshots")).snapshots

    def get(self, name: str) -> models.Snapshot:
        return models.Snapshot.from_dict(self._t.json("GET", "/v1/snapshots/" + _core.seg(_core.snapshot_name(name))))

    def delete(self, name: str | models.Snapshot) -> None:
        self._t.request("DELETE", "/v1/snapshots/" + _core.seg(_core.snapshot_name(name)))


class Keys:
    """API keys (admin; a tenant's own admin key manages its tenant's keys)."""

    def __init__(self, c: Paddock) -> None:
        self._t = c._t

    def create(self, tenant: str, scopes: Sequence[str], *, name: str | None = None, description: str | None = None,
                     expires_in: int | None = None, format: str | None = None) -> models.APIKeyCreated:
        body = _core.drop_none({"tenant": tenant, "scopes": list(scopes), "name": name, "description": description,
                                "expires_in_s": expires_in, "format": format})
        return models.APIKeyCreated.from_dict(self._t.json("POST", "/v1/keys", json_body=body))

    def list(self, *, tenant: str | None = None) -> list[models.APIKey]:
        return models.APIKeyList.from_dict(self._t.json("GET", "/v1/keys", params=_core.query(tenant=tenant))).keys

    def revoke(self, key_id: str) -> None:
        self._t.request("DELETE", "/v1/keys/" + _core.seg(key_id))


class Tenants:
    def __init__(self, c: Paddock) -> None:
        self._t = c._t

    def create(self, name: str, *, quotas: Mapping[str, Any] | models.TenantQuotas | None = None) -> models.Tenant:
        q = quotas.to_dict() if isinstance(quotas, models.TenantQuotas) else (dict(quotas) if quotas else None)
        return models.Tenant.from_dict(self._t.json("POST", "/v1/tenants", json_body=_core.drop_none({"name": name, "quotas": q})))

    def list(self) -> list[models.Tenant]:
        return models.TenantList.from_dict(self._t.json("GET", "/v1/tenants")).tenants

    def get(self, name: str) -> models.Tenant:
        return models.Tenant.from_dict(self._t.json("GET", "/v1/tenants/" + _core.seg(name)))

    def update(self, name: str, *, quotas: Mapping[str, Any] | models.TenantQuotas) -> models.Tenant:
        q = quotas.to_dict() if isinstance(quotas, models.TenantQuotas) else dict(quotas)
        return models.Tenant.from_dict(self._t.json("PUT", "/v1/tenants/" + _core.seg(name), json_body={"quotas": q}))


class Secrets:
    """The tenant's secrets: values go in, never come out (docs/network.md)."""

    def __init__(self, c: Paddock) -> None:
        self._t = c._t

    def list(self, *, tenant: str | None = None) -> list[models.SecretInfo]:
        return models.SecretList.from_dict(self._t.json("GET", "/v1/secrets", params=_core.query(tenant=tenant))).secrets

    def get(self, name: str, *, tenant: str | None = None) -> models.SecretInfo:
        return models.SecretInfo.from_dict(self._t.json("GET", "/v1/secrets/" + _core.seg(name), params=_core.query(tenant=tenant)))

    def set(self, name: str, value: str, *, hosts: list[str] | None = None,
                  tenant: str | None = None) -> models.SecretInfo:
        """Create or replace a secret; hosts (if given) are where it may be sent."""
        body: dict[str, Any] = {"value": value}
        if hosts is not None:
            body["hosts"] = list(hosts)
        return models.SecretInfo.from_dict(self._t.json("PUT", "/v1/secrets/" + _core.seg(name),
                                                              params=_core.query(tenant=tenant), json_body=body))

    def bind(self, name: str, hosts: list[str], *, tenant: str | None = None) -> models.SecretInfo:
        """Replace the hosts a secret may be sent to, keeping its value."""
        return models.SecretInfo.from_dict(self._t.json("PUT", "/v1/secrets/" + _core.seg(name),
                                                              params=_core.query(tenant=tenant), json_body={"hosts": list(hosts)}))

    def delete(self, name: str, *, tenant: str | None = None) -> None:
        self._t.request("DELETE", "/v1/secrets/" + _core.seg(name), params=_core.query(tenant=tenant))


class Audit:
    """The audit log (docs/audit.md)."""

    def __init__(self, c: Paddock) -> None:
        self._t = c._t

    def query(self, *, sandbox: str | None = None, actor: str | None = None, tenant: str | None = None,
                    action: str | None = None, since: str | None = None, until: str | None = None,
                    cursor: int | None = None, limit: int | None = None, tail: int | None = None,
                    wait: str | None = None) -> models.AuditPage:
        params = _core.query(sandbox=sandbox, actor=actor, tenant=tenant, action=action, since=since, until=until,
                             cursor=cursor, limit=limit, tail=tail, wait=wait)
        return models.AuditPage.from_dict(self._t.json("GET", "/v1/audit", params=params, timeout=120))

    def records(self, **kw: Any) -> Iterator[models.AuditRecord]:
        """Every matching record, page after page."""
        cursor = kw.pop("cursor", None)
        while True:
            page = self.query(cursor=cursor, **kw)
            for r in page.records:
                yield r
            if not page.has_more:
                return
            cursor = page.next_cursor

    def export(self, *, sandbox: str | None = None, actor: str | None = None, tenant: str | None = None,
                     action: str | None = None, since: str | None = None, until: str | None = None) -> Iterator[models.AuditRecord]:
        resp = self._t.stream("GET", "/v1/audit/export", params=_core.query(
            sandbox=sandbox, actor=actor, tenant=tenant, action=action, since=since, until=until))
        for d in ndjson(resp):
            yield models.AuditRecord.from_dict(d)


class Paddock:
    """A Paddock server. url and api_key default to PADDOCK_URL (else
    http://127.0.0.1:7070) and PADDOCK_API_KEY.

    max_retries: retries of calls that are safe to repeat (see docs);
    max_retry_wait: the longest Retry-After honoured (longer: raise at once);
    max_upload_bytes: the server's --max-upload (uploads over it are refused
    before sending)."""

    def __init__(self, url: str | None = None, api_key: str | None = None, *, timeout: float | None = 60.0,
                 max_retries: int = 3, max_retry_wait: float = 60.0, max_upload_bytes: int | None = None,
                 http_client: httpx.Client | None = None) -> None:
        self.config = _core.Config.resolve(url, api_key, timeout, max_retries, max_retry_wait, max_upload_bytes)
        self._t = Transport(self.config, http_client)
        self.sandboxes = Sandboxes(self)
        self.snapshots = Snapshots(self)
        self.keys = Keys(self)
        self.tenants = Tenants(self)
        self.secrets = Secrets(self)
        self.audit = Audit(self)

    def health(self) -> models.Health:
        return models.Health.from_dict(self._t.json("GET", "/healthz"))

    def templates(self) -> list[models.Template]:
        return models.TemplateList.from_dict(self._t.json("GET", "/v1/templates")).templates

    def openapi(self) -> dict[str, Any]:
        return self._t.json("GET", "/openapi.json")

    def close(self) -> None:
        self._t.close()

    def __enter__(self) -> Paddock:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
