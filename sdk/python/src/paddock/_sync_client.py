# Generated from _async_client.py by tools/unasync.py. Do not edit.
"""The async client: sandboxes, snapshots, templates, volumes, and the admin
areas (keys, tenants, secrets, audit). _sync_client.py is generated from this file by
tools/unasync.py."""

from __future__ import annotations

import os
from typing import Any, Iterator, Callable, Mapping, Sequence

import httpx

from . import _sio, _core, models
from ._errors import InvalidArgumentError, NotFoundError, StreamInterruptedError
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
                     paused_timeout: int | None = None, runtime: str | None = None,
                     volumes: Sequence[Any] | None = None) -> Sandbox:
        """Create a sandbox (every argument optional; timeout in seconds).
        snapshot: start with a snapshot's files (its template). Lifecycle
        (docs/state.md), in seconds: auto_resume (calls resume a paused
        sandbox instead of failing with sandbox_paused), on_timeout ("kill",
        "pause" or, gVisor only, "hibernate"), idle_pause_after (0: never),
        paused_timeout. runtime: "native" (default) or "gvisor". volumes:
        mounted at create, each a models.VolumeMount, a {"name", "path",
        "read_only"} mapping or a (name, path[, read_only]) tuple.
        Safe to retry on a rate quota's 429: a refused create did nothing."""
        net = network.to_dict() if isinstance(network, models.Network) else (dict(network) if network else None)
        spec = _core.drop_none({"template": template, "cpu": cpu, "memory_mb": memory_mb, "disk_mb": disk_mb,
                                "pids": pids, "timeout_s": timeout, "labels": dict(labels) if labels else None,
                                "env": dict(env) if env else None, "network": net, "browser": browser,
                                "snapshot": None if snapshot is None else _core.snapshot_name(snapshot),
                                "auto_resume": auto_resume, "on_timeout": _core.on_timeout(on_timeout),
                                "idle_pause_after_s": _core.idle_pause_after(idle_pause_after),
                                "paused_timeout_s": _core.paused_timeout(paused_timeout),
                                "runtime": runtime, "volumes": _core.volume_mounts(volumes)})
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


class TemplateStream:
    """A pull, import or build as it happens: iterate over its progress
    events (build steps, RUN output, messages); template holds the result
    once the iteration has ended. A failure raises its PaddockError (the
    server's last line); a stream cut before that raises
    StreamInterruptedError."""

    def __init__(self, open_: Callable[[], Any]) -> None:
        self._open_ = open_
        self._resp: Any = None
        self.template: models.Template | None = None

    def _open(self) -> None:
        if self._resp is None:
            self._resp = self._open_()

    def __iter__(self) -> Iterator[models.TemplateEvent]:
        self._open()
        for d in ndjson(self._resp):
            ev = models.TemplateEvent.from_dict(d)
            if ev.template is not None:
                self.template = ev.template
                continue
            yield ev
        if self.template is None:
            raise StreamInterruptedError("stream_interrupted", "the template stream ended without the template")

    def wait(self, on_event: Callable[[models.TemplateEvent], Any] | None = None) -> models.Template:
        """Drain the events (each to on_event, if given) and return the template."""
        for ev in self:
            if on_event is not None:
                _sio.settle(on_event(ev))
        assert self.template is not None
        return self.template

    def close(self) -> None:
        if self._resp is not None:
            self._resp.close()

    def __enter__(self) -> TemplateStream:
        self._open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


_NDJSON = {"Accept": "application/x-ndjson"}
_TAR = {"Accept": "application/x-ndjson", "Content-Type": "application/x-tar"}


class Templates:
    """Templates (docs/templates.md): the built-in ones, and images pulled,
    imported or built. Calling the area lists them (client.templates()).
    pull, import_archive and build return the template; their *_stream
    twins iterate over the progress (a build's steps and RUN output)."""

    def __init__(self, c: Paddock) -> None:
        self._t = c._t

    def __call__(self) -> list[models.Template]:
        return self.list()

    def list(self) -> list[models.Template]:
        return models.TemplateList.from_dict(self._t.json("GET", "/v1/templates")).templates

    def get(self, name: str) -> models.Template:
        return models.Template.from_dict(self._t.json("GET", "/v1/templates/" + _core.seg(name)))

    def exists(self, name: str) -> bool:
        try:
            self.get(name)
            return True
        except NotFoundError:
            return False

    def delete(self, name: str | models.Template) -> None:
        """Remove a template (409 while sandboxes use it)."""
        self._t.request("DELETE", "/v1/templates/" + _core.seg(getattr(name, "name", name)))

    def pull_stream(self, ref: str, *, name: str | None = None, replace: bool | None = None,
                    shared: bool | None = None, start_cmd: Sequence[str] | None = None,
                    ready_cmd: Sequence[str] | None = None, timeout: float | None = None) -> TemplateStream:
        if not isinstance(ref, str) or not ref:
            raise InvalidArgumentError("invalid_argument", "ref is required")
        body = _core.drop_none({"ref": ref, "name": name, "replace": replace or None, "shared": shared or None,
                                "start_cmd": None if start_cmd is None else _core.argv(start_cmd),
                                "ready_cmd": None if ready_cmd is None else _core.argv(ready_cmd)})
        return TemplateStream(lambda: self._t.stream("POST", "/v1/templates/pull", json_body=body,
                                                          headers=_NDJSON, timeout=timeout))

    def pull(self, ref: str, *, on_event: Callable[[models.TemplateEvent], Any] | None = None,
                   **kw: Any) -> models.Template:
        """Pull an image ([REGISTRY/]REPO[:TAG|@DIGEST]) as a template
        (name: default the repository's last path element)."""
        return self.pull_stream(ref, **kw).wait(on_event)

    def import_stream(self, archive: Any, *, name: str, tag: str | None = None, shared: bool | None = None,
                      replace: bool | None = None, timeout: float | None = None) -> TemplateStream:
        if not name:
            raise InvalidArgumentError("invalid_argument", "name is required")
        size = None
        if isinstance(archive, (str, os.PathLike)):
            size, archive = os.path.getsize(archive), _core.iter_file(archive)
        _core.check_upload(archive, self._t.cfg.max_upload_bytes, size)
        q = [("name", name)] + ([("tag", tag)] if tag else []) + \
            [(k, "true") for k, b in (("shared", shared), ("replace", replace)) if b]
        content = archive if isinstance(archive, bytes) else _sio.body(archive)
        return TemplateStream(lambda: self._t.stream("POST", "/v1/templates/import", params=httpx.QueryParams(q),
                                                          content=content, headers=_TAR, timeout=timeout))

    def import_archive(self, archive: Any, *, name: str,
                             on_event: Callable[[models.TemplateEvent], Any] | None = None,
                             **kw: Any) -> models.Template:
        """Import an image archive (docker save, an OCI layout as a tar,
        an oci-archive such as export writes): a local path, bytes or a
        binary file object, streamed."""
        return self.import_stream(archive, name=name, **kw).wait(on_event)

    def build_stream(self, context: Any, *, name: str, dockerfile: str | None = None,
                     build_args: Mapping[str, str] | None = None, target: str | None = None,
                     network: str | None = None, allow: Sequence[str] | None = None, no_cache: bool = False,
                     replace: bool = False, shared: bool = False, timeout: float | None = None) -> TemplateStream:
        q = _core.build_query(name, dockerfile, build_args, target, network, allow, no_cache, replace, shared)
        body, size = _core.build_context(context)
        _core.check_upload(body, self._t.cfg.max_upload_bytes, size)
        content = body if isinstance(body, bytes) else _sio.body(body)
        return TemplateStream(lambda: self._t.stream("POST", "/v1/templates/build", params=httpx.QueryParams(q),
                                                          content=content, headers=_TAR, timeout=timeout))

    def build(self, context: Any, *, name: str, on_event: Callable[[models.TemplateEvent], Any] | None = None,
                    **kw: Any) -> models.Template:
        """Build a Dockerfile into template name. context: a local
        directory, a mapping of path -> contents (the Dockerfile among
        them), or a tar (bytes, a file object). Options: dockerfile (its
        path in the context), build_args, target, network ("none" or
        "allowlist") with allow, no_cache, replace, shared (admin)."""
        return self.build_stream(context, name=name, **kw).wait(on_event)

    def export(self, name: str, dest: str | os.PathLike[str] | Any) -> int:
        """Stream a template as an oci-archive into dest (a local path or a
        binary file object); returns the bytes written."""
        resp = self._t.stream("GET", "/v1/templates/%s/export" % _core.seg(name))
        n = 0
        f = open(dest, "wb") if isinstance(dest, (str, os.PathLike)) else dest
        try:
            for b in resp.iter_bytes(1 << 20):
                f.write(b)
                n += len(b)
        except httpx.HTTPError as e:
            raise StreamInterruptedError("stream_interrupted", "the export was cut before its end: %s" % e) from e
        finally:
            resp.close()
            if f is not dest:
                f.close()
        return n

    def push(self, name: str, ref: str) -> None:
        """Push a template to a registry reference."""
        self._t.request("POST", "/v1/templates/%s/push" % _core.seg(name), json_body={"ref": ref},
                              retry=False, timeout=None)


class VolumeFiles:
    """A volume's files without a sandbox (docs/state.md, "Volumes"):
    paths are relative to the volume's root. Writes are refused (409)
    while a sandbox mounts the volume read-write."""

    def __init__(self, t: Transport, name: str) -> None:
        self._t = t
        self._p = "/v1/volumes/%s/files" % _core.seg(_core.volume_name(name))

    def read(self, path: str) -> bytes:
        return (self._t.request("GET", self._p, params={"path": path})).content

    def read_text(self, path: str, *, encoding: str = "utf-8") -> str:
        return (self.read(path)).decode(encoding)

    def write(self, path: str, data: Any, *, mode: int | str | None = None,
                    user: str | None = None) -> models.FileInfo:
        """Write data (bytes, str, a binary file object or an iterable of
        bytes), streamed; user "user" makes the file the sandbox user's."""
        params = _core.query(path=path, mode=_core.mode(mode), user=_core.user(user))
        _core.check_upload(data, self._t.cfg.max_upload_bytes)
        content = data.encode() if isinstance(data, str) else data if isinstance(data, bytes) else _sio.body(data)
        return models.FileInfo.from_dict(self._t.json("PUT", self._p, params=params, content=content,
                                                            headers={"Content-Type": "application/octet-stream"}))

    def list(self, path: str = "/", *, limit: int | None = None) -> models.ListResult:
        return models.ListResult.from_dict(self._t.json("GET", self._p + "/list", params=_core.query(path=path, limit=limit)))

    def stat(self, path: str) -> models.FileInfo:
        return models.FileInfo.from_dict(self._t.json("GET", self._p + "/stat", params={"path": path}))

    def exists(self, path: str) -> bool:
        try:
            self.stat(path)
            return True
        except NotFoundError:
            return False

    def mkdir(self, path: str, *, parents: bool | None = None, mode: int | str | None = None,
                    user: str | None = None) -> models.FileInfo:
        body = _core.drop_none({"path": path, "parents": parents, "mode": _core.mode(mode), "user": _core.user(user)})
        return models.FileInfo.from_dict(self._t.json("POST", self._p + "/mkdir", json_body=body))

    def remove(self, path: str, *, recursive: bool | None = None, user: str | None = None) -> models.RemoveResult:
        return models.RemoveResult.from_dict(self._t.json("DELETE", self._p, params=_core.query(
            path=path, recursive=recursive, user=_core.user(user))))


class Volumes:
    """The tenant's volumes (docs/state.md, "Volumes"): ext4 images with a
    hard size, mounted at create (sandboxes.create(volumes=[(name, path)]))
    and outliving their sandboxes; files(name) reaches them without one."""

    def __init__(self, c: Paddock) -> None:
        self._t = c._t

    def create(self, name: str, *, size_mb: int | None = None) -> models.Volume:
        """A new volume of size_mb MiB (default 1024; at least 16)."""
        body = _core.drop_none({"name": _core.volume_name(name), "size_mb": size_mb})
        return models.Volume.from_dict(self._t.json("POST", "/v1/volumes", json_body=body, retry=False, timeout=300))

    def list(self) -> list[models.Volume]:
        return models.VolumeList.from_dict(self._t.json("GET", "/v1/volumes")).volumes

    def get(self, name: str | models.Volume) -> models.Volume:
        return models.Volume.from_dict(self._t.json("GET", "/v1/volumes/" + _core.seg(_core.volume_name(name))))

    def delete(self, name: str | models.Volume) -> None:
        """Delete a volume and its files (409 while a sandbox mounts it)."""
        self._t.request("DELETE", "/v1/volumes/" + _core.seg(_core.volume_name(name)))

    def files(self, name: str | models.Volume) -> VolumeFiles:
        return VolumeFiles(self._t, _core.volume_name(name))


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
        self.templates = Templates(self)
        self.volumes = Volumes(self)
        self.keys = Keys(self)
        self.tenants = Tenants(self)
        self.secrets = Secrets(self)
        self.audit = Audit(self)

    def health(self) -> models.Health:
        return models.Health.from_dict(self._t.json("GET", "/healthz"))

    def openapi(self) -> dict[str, Any]:
        return self._t.json("GET", "/openapi.json")

    def close(self) -> None:
        self._t.close()

    def __enter__(self) -> Paddock:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
