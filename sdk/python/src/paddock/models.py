"""Paddock's wire models, generated from the OpenAPI document by
sdk/codegen/generate.py. Do not edit: run `make sdk-models`.

Each model is a keyword-only dataclass (fields sorted: required, then optional); from_dict ignores fields it does not know
(a newer server), to_dict leaves out fields that are None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["APIKey", "APIKeyCreated", "APIKeyList", "APIKeyRequest", "AuditPage", "AuditRecord", "BrowserClick", "BrowserDownload", "BrowserDownloads", "BrowserEval", "BrowserEvalRequest", "BrowserNavigate", "BrowserOpenTab", "BrowserPage", "BrowserPress", "BrowserScroll", "BrowserScrollRequest", "BrowserSnapshot", "BrowserStatus", "BrowserTab", "BrowserTabs", "BrowserText", "BrowserType", "CodeContext", "CodeContextList", "CodeContextRequest", "CodeEnd", "CodeError", "CodeEvent", "CodeExecuteRequest", "CodeExecution", "CodeOmission", "CodeResult", "CodeStart", "CreateSnapshotRequest", "CreateVolumeRequest", "EditRequest", "EditResult", "Error", "ErrorDetail", "ExecEvent", "ExecRequest", "ExecResponse", "ExtractResult", "FileEvent", "FileInfo", "FindResult", "ForkRequest", "ForkResponse", "Health", "InjectRule", "LinesResult", "ListResult", "MkdirRequest", "MoveRequest", "Network", "OK", "OutputLine", "PTYSize", "PortURL", "PortURLRequest", "ProcessInfo", "ProcessList", "ProcessRequest", "RemoveResult", "RuntimeInfo", "Sandbox", "SandboxList", "SandboxToken", "SandboxTokenRequest", "SearchMatch", "SearchResult", "SecretInfo", "SecretList", "SecretValue", "SignalRequest", "SignalResult", "Snapshot", "SnapshotList", "Spec", "Stats", "StdinResult", "StreamInfo", "Template", "TemplateDefaults", "TemplateEvent", "TemplateList", "TemplatePullRequest", "TemplatePushRequest", "TemplateSource", "Tenant", "TenantCreateRequest", "TenantDefaults", "TenantList", "TenantQuotas", "TenantUpdateRequest", "TenantUsage", "TimeoutRequest", "Volume", "VolumeAttachment", "VolumeList", "VolumeMount", "WaitRequest"]


@dataclass(kw_only=True)
class APIKey:
    created_at: str
    format: str
    hint: str
    id: str
    revoked: bool
    scopes: list[str]
    tenant: str
    description: str | None = None
    expires_at: str | None = None
    last_used_at: str | None = None
    name: str | None = None
    revoked_at: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> APIKey:
        return cls(
            created_at=d["created_at"],
            format=d["format"],
            hint=d["hint"],
            id=d["id"],
            revoked=d["revoked"],
            scopes=d["scopes"],
            tenant=d["tenant"],
            description=d.get("description"),
            expires_at=d.get("expires_at"),
            last_used_at=d.get("last_used_at"),
            name=d.get("name"),
            revoked_at=d.get("revoked_at"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.format is not None:
            d["format"] = self.format
        if self.hint is not None:
            d["hint"] = self.hint
        if self.id is not None:
            d["id"] = self.id
        if self.revoked is not None:
            d["revoked"] = self.revoked
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.tenant is not None:
            d["tenant"] = self.tenant
        if self.description is not None:
            d["description"] = self.description
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.last_used_at is not None:
            d["last_used_at"] = self.last_used_at
        if self.name is not None:
            d["name"] = self.name
        if self.revoked_at is not None:
            d["revoked_at"] = self.revoked_at
        return d


@dataclass(kw_only=True)
class APIKeyCreated:
    """A new key, with the key itself (shown once)."""

    created_at: str
    format: str
    hint: str
    id: str
    key: str
    revoked: bool
    scopes: list[str]
    tenant: str
    description: str | None = None
    expires_at: str | None = None
    last_used_at: str | None = None
    name: str | None = None
    revoked_at: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> APIKeyCreated:
        return cls(
            created_at=d["created_at"],
            format=d["format"],
            hint=d["hint"],
            id=d["id"],
            key=d["key"],
            revoked=d["revoked"],
            scopes=d["scopes"],
            tenant=d["tenant"],
            description=d.get("description"),
            expires_at=d.get("expires_at"),
            last_used_at=d.get("last_used_at"),
            name=d.get("name"),
            revoked_at=d.get("revoked_at"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.format is not None:
            d["format"] = self.format
        if self.hint is not None:
            d["hint"] = self.hint
        if self.id is not None:
            d["id"] = self.id
        if self.key is not None:
            d["key"] = self.key
        if self.revoked is not None:
            d["revoked"] = self.revoked
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.tenant is not None:
            d["tenant"] = self.tenant
        if self.description is not None:
            d["description"] = self.description
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.last_used_at is not None:
            d["last_used_at"] = self.last_used_at
        if self.name is not None:
            d["name"] = self.name
        if self.revoked_at is not None:
            d["revoked_at"] = self.revoked_at
        return d


@dataclass(kw_only=True)
class APIKeyList:
    keys: list[APIKey]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> APIKeyList:
        return cls(
            keys=[APIKey.from_dict(x) for x in d["keys"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.keys is not None:
            d["keys"] = [x.to_dict() for x in self.keys]
        return d


@dataclass(kw_only=True)
class APIKeyRequest:
    scopes: list[str]
    tenant: str
    description: str | None = None
    expires_at: str | None = None
    expires_in_s: int | None = None
    format: str | None = None
    name: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> APIKeyRequest:
        return cls(
            scopes=d["scopes"],
            tenant=d["tenant"],
            description=d.get("description"),
            expires_at=d.get("expires_at"),
            expires_in_s=d.get("expires_in_s"),
            format=d.get("format"),
            name=d.get("name"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.tenant is not None:
            d["tenant"] = self.tenant
        if self.description is not None:
            d["description"] = self.description
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.expires_in_s is not None:
            d["expires_in_s"] = self.expires_in_s
        if self.format is not None:
            d["format"] = self.format
        if self.name is not None:
            d["name"] = self.name
        return d


@dataclass(kw_only=True)
class AuditPage:
    has_more: bool
    next_cursor: int
    records: list[AuditRecord]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AuditPage:
        return cls(
            has_more=d["has_more"],
            next_cursor=d["next_cursor"],
            records=[AuditRecord.from_dict(x) for x in d["records"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.has_more is not None:
            d["has_more"] = self.has_more
        if self.next_cursor is not None:
            d["next_cursor"] = self.next_cursor
        if self.records is not None:
            d["records"] = [x.to_dict() for x in self.records]
        return d


@dataclass(kw_only=True)
class AuditRecord:
    """One audit record. `hash` is SHA-256 (hex) of the record's canonical JSON without `hash`; `prev` is the hash of the record before (zeros for the first)."""

    action: str
    hash: str
    phase: str
    prev: str
    seq: int
    time: str
    actor: str | None = None
    args: dict[str, Any] | None = None
    code: str | None = None
    duration_ns: int | None = None
    error: str | None = None
    request: str | None = None
    result: dict[str, Any] | None = None
    sandbox: str | None = None
    status: int | None = None
    tenant: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AuditRecord:
        return cls(
            action=d["action"],
            hash=d["hash"],
            phase=d["phase"],
            prev=d["prev"],
            seq=d["seq"],
            time=d["time"],
            actor=d.get("actor"),
            args=d.get("args"),
            code=d.get("code"),
            duration_ns=d.get("duration_ns"),
            error=d.get("error"),
            request=d.get("request"),
            result=d.get("result"),
            sandbox=d.get("sandbox"),
            status=d.get("status"),
            tenant=d.get("tenant"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.action is not None:
            d["action"] = self.action
        if self.hash is not None:
            d["hash"] = self.hash
        if self.phase is not None:
            d["phase"] = self.phase
        if self.prev is not None:
            d["prev"] = self.prev
        if self.seq is not None:
            d["seq"] = self.seq
        if self.time is not None:
            d["time"] = self.time
        if self.actor is not None:
            d["actor"] = self.actor
        if self.args is not None:
            d["args"] = self.args
        if self.code is not None:
            d["code"] = self.code
        if self.duration_ns is not None:
            d["duration_ns"] = self.duration_ns
        if self.error is not None:
            d["error"] = self.error
        if self.request is not None:
            d["request"] = self.request
        if self.result is not None:
            d["result"] = self.result
        if self.sandbox is not None:
            d["sandbox"] = self.sandbox
        if self.status is not None:
            d["status"] = self.status
        if self.tenant is not None:
            d["tenant"] = self.tenant
        return d


@dataclass(kw_only=True)
class BrowserClick:
    button: str | None = None
    click_count: int | None = None
    ref: str | None = None
    selector: str | None = None
    tab: str | None = None
    text: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserClick:
        return cls(
            button=d.get("button"),
            click_count=d.get("click_count"),
            ref=d.get("ref"),
            selector=d.get("selector"),
            tab=d.get("tab"),
            text=d.get("text"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.button is not None:
            d["button"] = self.button
        if self.click_count is not None:
            d["click_count"] = self.click_count
        if self.ref is not None:
            d["ref"] = self.ref
        if self.selector is not None:
            d["selector"] = self.selector
        if self.tab is not None:
            d["tab"] = self.tab
        if self.text is not None:
            d["text"] = self.text
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass(kw_only=True)
class BrowserDownload:
    bytes: float
    filename: str
    state: str
    url: str
    path: str | None = None
    total_bytes: float | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserDownload:
        return cls(
            bytes=float(d["bytes"]),
            filename=d["filename"],
            state=d["state"],
            url=d["url"],
            path=d.get("path"),
            total_bytes=None if (v := d.get("total_bytes")) is None else float(v),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.bytes is not None:
            d["bytes"] = self.bytes
        if self.filename is not None:
            d["filename"] = self.filename
        if self.state is not None:
            d["state"] = self.state
        if self.url is not None:
            d["url"] = self.url
        if self.path is not None:
            d["path"] = self.path
        if self.total_bytes is not None:
            d["total_bytes"] = self.total_bytes
        return d


@dataclass(kw_only=True)
class BrowserDownloads:
    dir: str
    downloads: list[BrowserDownload]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserDownloads:
        return cls(
            dir=d["dir"],
            downloads=[BrowserDownload.from_dict(x) for x in d["downloads"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.dir is not None:
            d["dir"] = self.dir
        if self.downloads is not None:
            d["downloads"] = [x.to_dict() for x in self.downloads]
        return d


@dataclass(kw_only=True)
class BrowserEval:
    tab: str
    type: str
    value: Any
    truncated: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserEval:
        return cls(
            tab=d["tab"],
            type=d["type"],
            value=d["value"],
            truncated=d.get("truncated"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.tab is not None:
            d["tab"] = self.tab
        if self.type is not None:
            d["type"] = self.type
        if self.value is not None:
            d["value"] = self.value
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass(kw_only=True)
class BrowserEvalRequest:
    expression: str
    tab: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserEvalRequest:
        return cls(
            expression=d["expression"],
            tab=d.get("tab"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.expression is not None:
            d["expression"] = self.expression
        if self.tab is not None:
            d["tab"] = self.tab
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass(kw_only=True)
class BrowserNavigate:
    url: str
    tab: str | None = None
    timeout_ms: int | None = None
    wait_until: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserNavigate:
        return cls(
            url=d["url"],
            tab=d.get("tab"),
            timeout_ms=d.get("timeout_ms"),
            wait_until=d.get("wait_until"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.url is not None:
            d["url"] = self.url
        if self.tab is not None:
            d["tab"] = self.tab
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        if self.wait_until is not None:
            d["wait_until"] = self.wait_until
        return d


@dataclass(kw_only=True)
class BrowserOpenTab:
    timeout_ms: int | None = None
    url: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserOpenTab:
        return cls(
            timeout_ms=d.get("timeout_ms"),
            url=d.get("url"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        if self.url is not None:
            d["url"] = self.url
        return d


@dataclass(kw_only=True)
class BrowserPage:
    duration_ms: float
    tab: str
    title: str
    url: str
    downloads: list[BrowserDownload] | None = None
    new_tabs: list[BrowserTab] | None = None
    status: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserPage:
        return cls(
            duration_ms=float(d["duration_ms"]),
            tab=d["tab"],
            title=d["title"],
            url=d["url"],
            downloads=None if (v := d.get("downloads")) is None else [BrowserDownload.from_dict(x) for x in v],
            new_tabs=None if (v := d.get("new_tabs")) is None else [BrowserTab.from_dict(x) for x in v],
            status=d.get("status"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.duration_ms is not None:
            d["duration_ms"] = self.duration_ms
        if self.tab is not None:
            d["tab"] = self.tab
        if self.title is not None:
            d["title"] = self.title
        if self.url is not None:
            d["url"] = self.url
        if self.downloads is not None:
            d["downloads"] = [x.to_dict() for x in self.downloads]
        if self.new_tabs is not None:
            d["new_tabs"] = [x.to_dict() for x in self.new_tabs]
        if self.status is not None:
            d["status"] = self.status
        return d


@dataclass(kw_only=True)
class BrowserPress:
    key: str
    ref: str | None = None
    selector: str | None = None
    tab: str | None = None
    text: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserPress:
        return cls(
            key=d["key"],
            ref=d.get("ref"),
            selector=d.get("selector"),
            tab=d.get("tab"),
            text=d.get("text"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.key is not None:
            d["key"] = self.key
        if self.ref is not None:
            d["ref"] = self.ref
        if self.selector is not None:
            d["selector"] = self.selector
        if self.tab is not None:
            d["tab"] = self.tab
        if self.text is not None:
            d["text"] = self.text
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass(kw_only=True)
class BrowserScroll:
    at_end: bool
    duration_ms: float
    max_x: float
    max_y: float
    scrolled_x: float
    scrolled_y: float
    tab: str
    title: str
    url: str
    x: float
    y: float
    downloads: list[BrowserDownload] | None = None
    new_tabs: list[BrowserTab] | None = None
    status: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserScroll:
        return cls(
            at_end=d["at_end"],
            duration_ms=float(d["duration_ms"]),
            max_x=float(d["max_x"]),
            max_y=float(d["max_y"]),
            scrolled_x=float(d["scrolled_x"]),
            scrolled_y=float(d["scrolled_y"]),
            tab=d["tab"],
            title=d["title"],
            url=d["url"],
            x=float(d["x"]),
            y=float(d["y"]),
            downloads=None if (v := d.get("downloads")) is None else [BrowserDownload.from_dict(x) for x in v],
            new_tabs=None if (v := d.get("new_tabs")) is None else [BrowserTab.from_dict(x) for x in v],
            status=d.get("status"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.at_end is not None:
            d["at_end"] = self.at_end
        if self.duration_ms is not None:
            d["duration_ms"] = self.duration_ms
        if self.max_x is not None:
            d["max_x"] = self.max_x
        if self.max_y is not None:
            d["max_y"] = self.max_y
        if self.scrolled_x is not None:
            d["scrolled_x"] = self.scrolled_x
        if self.scrolled_y is not None:
            d["scrolled_y"] = self.scrolled_y
        if self.tab is not None:
            d["tab"] = self.tab
        if self.title is not None:
            d["title"] = self.title
        if self.url is not None:
            d["url"] = self.url
        if self.x is not None:
            d["x"] = self.x
        if self.y is not None:
            d["y"] = self.y
        if self.downloads is not None:
            d["downloads"] = [x.to_dict() for x in self.downloads]
        if self.new_tabs is not None:
            d["new_tabs"] = [x.to_dict() for x in self.new_tabs]
        if self.status is not None:
            d["status"] = self.status
        return d


@dataclass(kw_only=True)
class BrowserScrollRequest:
    amount: int | None = None
    direction: str | None = None
    ref: str | None = None
    selector: str | None = None
    tab: str | None = None
    text: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserScrollRequest:
        return cls(
            amount=d.get("amount"),
            direction=d.get("direction"),
            ref=d.get("ref"),
            selector=d.get("selector"),
            tab=d.get("tab"),
            text=d.get("text"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.amount is not None:
            d["amount"] = self.amount
        if self.direction is not None:
            d["direction"] = self.direction
        if self.ref is not None:
            d["ref"] = self.ref
        if self.selector is not None:
            d["selector"] = self.selector
        if self.tab is not None:
            d["tab"] = self.tab
        if self.text is not None:
            d["text"] = self.text
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass(kw_only=True)
class BrowserSnapshot:
    refs: int
    snapshot: str
    tab: str
    title: str
    url: str
    truncated: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserSnapshot:
        return cls(
            refs=d["refs"],
            snapshot=d["snapshot"],
            tab=d["tab"],
            title=d["title"],
            url=d["url"],
            truncated=d.get("truncated"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.refs is not None:
            d["refs"] = self.refs
        if self.snapshot is not None:
            d["snapshot"] = self.snapshot
        if self.tab is not None:
            d["tab"] = self.tab
        if self.title is not None:
            d["title"] = self.title
        if self.url is not None:
            d["url"] = self.url
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass(kw_only=True)
class BrowserStatus:
    connected: bool
    restarts: int
    state: str
    error: str | None = None
    last_exit: str | None = None
    oom_kills: int | None = None
    pid: int | None = None
    start_ms: float | None = None
    started_at: str | None = None
    tabs: list[BrowserTab] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserStatus:
        return cls(
            connected=d["connected"],
            restarts=d["restarts"],
            state=d["state"],
            error=d.get("error"),
            last_exit=d.get("last_exit"),
            oom_kills=d.get("oom_kills"),
            pid=d.get("pid"),
            start_ms=None if (v := d.get("start_ms")) is None else float(v),
            started_at=d.get("started_at"),
            tabs=None if (v := d.get("tabs")) is None else [BrowserTab.from_dict(x) for x in v],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.connected is not None:
            d["connected"] = self.connected
        if self.restarts is not None:
            d["restarts"] = self.restarts
        if self.state is not None:
            d["state"] = self.state
        if self.error is not None:
            d["error"] = self.error
        if self.last_exit is not None:
            d["last_exit"] = self.last_exit
        if self.oom_kills is not None:
            d["oom_kills"] = self.oom_kills
        if self.pid is not None:
            d["pid"] = self.pid
        if self.start_ms is not None:
            d["start_ms"] = self.start_ms
        if self.started_at is not None:
            d["started_at"] = self.started_at
        if self.tabs is not None:
            d["tabs"] = [x.to_dict() for x in self.tabs]
        return d


@dataclass(kw_only=True)
class BrowserTab:
    id: str
    title: str
    url: str
    current: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserTab:
        return cls(
            id=d["id"],
            title=d["title"],
            url=d["url"],
            current=d.get("current"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.id is not None:
            d["id"] = self.id
        if self.title is not None:
            d["title"] = self.title
        if self.url is not None:
            d["url"] = self.url
        if self.current is not None:
            d["current"] = self.current
        return d


@dataclass(kw_only=True)
class BrowserTabs:
    tabs: list[BrowserTab]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserTabs:
        return cls(
            tabs=[BrowserTab.from_dict(x) for x in d["tabs"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.tabs is not None:
            d["tabs"] = [x.to_dict() for x in self.tabs]
        return d


@dataclass(kw_only=True)
class BrowserText:
    bytes: int
    format: str
    tab: str
    text: str
    title: str
    url: str
    truncated: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserText:
        return cls(
            bytes=d["bytes"],
            format=d["format"],
            tab=d["tab"],
            text=d["text"],
            title=d["title"],
            url=d["url"],
            truncated=d.get("truncated"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.bytes is not None:
            d["bytes"] = self.bytes
        if self.format is not None:
            d["format"] = self.format
        if self.tab is not None:
            d["tab"] = self.tab
        if self.text is not None:
            d["text"] = self.text
        if self.title is not None:
            d["title"] = self.title
        if self.url is not None:
            d["url"] = self.url
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass(kw_only=True)
class BrowserType:
    text: str
    clear: bool | None = None
    ref: str | None = None
    selector: str | None = None
    submit: bool | None = None
    tab: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserType:
        return cls(
            text=d["text"],
            clear=d.get("clear"),
            ref=d.get("ref"),
            selector=d.get("selector"),
            submit=d.get("submit"),
            tab=d.get("tab"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.text is not None:
            d["text"] = self.text
        if self.clear is not None:
            d["clear"] = self.clear
        if self.ref is not None:
            d["ref"] = self.ref
        if self.selector is not None:
            d["selector"] = self.selector
        if self.submit is not None:
            d["submit"] = self.submit
        if self.tab is not None:
            d["tab"] = self.tab
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass(kw_only=True)
class CodeContext:
    created_at: str | None = None
    cwd: str | None = None
    default: bool | None = None
    execution_count: int | None = None
    id: str | None = None
    language: str | None = None
    queued: int | None = None
    restarts: int | None = None
    state: str | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeContext:
        return cls(
            created_at=d.get("created_at"),
            cwd=d.get("cwd"),
            default=d.get("default"),
            execution_count=d.get("execution_count"),
            id=d.get("id"),
            language=d.get("language"),
            queued=d.get("queued"),
            restarts=d.get("restarts"),
            state=d.get("state"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.cwd is not None:
            d["cwd"] = self.cwd
        if self.default is not None:
            d["default"] = self.default
        if self.execution_count is not None:
            d["execution_count"] = self.execution_count
        if self.id is not None:
            d["id"] = self.id
        if self.language is not None:
            d["language"] = self.language
        if self.queued is not None:
            d["queued"] = self.queued
        if self.restarts is not None:
            d["restarts"] = self.restarts
        if self.state is not None:
            d["state"] = self.state
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass(kw_only=True)
class CodeContextList:
    contexts: list[CodeContext] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeContextList:
        return cls(
            contexts=None if (v := d.get("contexts")) is None else [CodeContext.from_dict(x) for x in v],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.contexts is not None:
            d["contexts"] = [x.to_dict() for x in self.contexts]
        return d


@dataclass(kw_only=True)
class CodeContextRequest:
    cwd: str | None = None
    env: dict[str, str] | None = None
    language: str | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeContextRequest:
        return cls(
            cwd=d.get("cwd"),
            env=d.get("env"),
            language=d.get("language"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cwd is not None:
            d["cwd"] = self.cwd
        if self.env is not None:
            d["env"] = self.env
        if self.language is not None:
            d["language"] = self.language
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass(kw_only=True)
class CodeEnd:
    duration_ms: float | None = None
    execution_count: int | None = None
    exit_code: int | None = None
    message: str | None = None
    state_lost: bool | None = None
    status: str | None = None
    truncated: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeEnd:
        return cls(
            duration_ms=None if (v := d.get("duration_ms")) is None else float(v),
            execution_count=d.get("execution_count"),
            exit_code=d.get("exit_code"),
            message=d.get("message"),
            state_lost=d.get("state_lost"),
            status=d.get("status"),
            truncated=d.get("truncated"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.duration_ms is not None:
            d["duration_ms"] = self.duration_ms
        if self.execution_count is not None:
            d["execution_count"] = self.execution_count
        if self.exit_code is not None:
            d["exit_code"] = self.exit_code
        if self.message is not None:
            d["message"] = self.message
        if self.state_lost is not None:
            d["state_lost"] = self.state_lost
        if self.status is not None:
            d["status"] = self.status
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass(kw_only=True)
class CodeError:
    name: str | None = None
    traceback: str | None = None
    value: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeError:
        return cls(
            name=d.get("name"),
            traceback=d.get("traceback"),
            value=d.get("value"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.name is not None:
            d["name"] = self.name
        if self.traceback is not None:
            d["traceback"] = self.traceback
        if self.value is not None:
            d["value"] = self.value
        return d


@dataclass(kw_only=True)
class CodeEvent:
    type: str
    end: CodeEnd | None = None
    error: CodeError | None = None
    result: CodeResult | None = None
    start: CodeStart | None = None
    text: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeEvent:
        return cls(
            type=d["type"],
            end=None if (v := d.get("end")) is None else CodeEnd.from_dict(v),
            error=None if (v := d.get("error")) is None else CodeError.from_dict(v),
            result=None if (v := d.get("result")) is None else CodeResult.from_dict(v),
            start=None if (v := d.get("start")) is None else CodeStart.from_dict(v),
            text=d.get("text"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.type is not None:
            d["type"] = self.type
        if self.end is not None:
            d["end"] = self.end.to_dict()
        if self.error is not None:
            d["error"] = self.error.to_dict()
        if self.result is not None:
            d["result"] = self.result.to_dict()
        if self.start is not None:
            d["start"] = self.start.to_dict()
        if self.text is not None:
            d["text"] = self.text
        return d


@dataclass(kw_only=True)
class CodeExecuteRequest:
    code: str
    context_id: str | None = None
    env: dict[str, str] | None = None
    language: str | None = None
    timeout_ms: int | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeExecuteRequest:
        return cls(
            code=d["code"],
            context_id=d.get("context_id"),
            env=d.get("env"),
            language=d.get("language"),
            timeout_ms=d.get("timeout_ms"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.code is not None:
            d["code"] = self.code
        if self.context_id is not None:
            d["context_id"] = self.context_id
        if self.env is not None:
            d["env"] = self.env
        if self.language is not None:
            d["language"] = self.language
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass(kw_only=True)
class CodeExecution:
    end: CodeEnd | None = None
    error: CodeError | None = None
    results: list[CodeResult] | None = None
    start: CodeStart | None = None
    stderr: str | None = None
    stdout: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeExecution:
        return cls(
            end=None if (v := d.get("end")) is None else CodeEnd.from_dict(v),
            error=None if (v := d.get("error")) is None else CodeError.from_dict(v),
            results=None if (v := d.get("results")) is None else [CodeResult.from_dict(x) for x in v],
            start=None if (v := d.get("start")) is None else CodeStart.from_dict(v),
            stderr=d.get("stderr"),
            stdout=d.get("stdout"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.end is not None:
            d["end"] = self.end.to_dict()
        if self.error is not None:
            d["error"] = self.error.to_dict()
        if self.results is not None:
            d["results"] = [x.to_dict() for x in self.results]
        if self.start is not None:
            d["start"] = self.start.to_dict()
        if self.stderr is not None:
            d["stderr"] = self.stderr
        if self.stdout is not None:
            d["stdout"] = self.stdout
        return d


@dataclass(kw_only=True)
class CodeOmission:
    bytes: int | None = None
    mime: str | None = None
    reason: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeOmission:
        return cls(
            bytes=d.get("bytes"),
            mime=d.get("mime"),
            reason=d.get("reason"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.bytes is not None:
            d["bytes"] = self.bytes
        if self.mime is not None:
            d["mime"] = self.mime
        if self.reason is not None:
            d["reason"] = self.reason
        return d


@dataclass(kw_only=True)
class CodeResult:
    bundle: dict[str, Any] | None = None
    chart: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    execution_count: int | None = None
    is_main_result: bool | None = None
    omitted: list[CodeOmission] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeResult:
        return cls(
            bundle=d.get("bundle"),
            chart=d.get("chart"),
            data=d.get("data"),
            execution_count=d.get("execution_count"),
            is_main_result=d.get("is_main_result"),
            omitted=None if (v := d.get("omitted")) is None else [CodeOmission.from_dict(x) for x in v],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.bundle is not None:
            d["bundle"] = self.bundle
        if self.chart is not None:
            d["chart"] = self.chart
        if self.data is not None:
            d["data"] = self.data
        if self.execution_count is not None:
            d["execution_count"] = self.execution_count
        if self.is_main_result is not None:
            d["is_main_result"] = self.is_main_result
        if self.omitted is not None:
            d["omitted"] = [x.to_dict() for x in self.omitted]
        return d


@dataclass(kw_only=True)
class CodeStart:
    context_id: str | None = None
    language: str | None = None
    reason: str | None = None
    restarted: bool | None = None
    state_lost: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CodeStart:
        return cls(
            context_id=d.get("context_id"),
            language=d.get("language"),
            reason=d.get("reason"),
            restarted=d.get("restarted"),
            state_lost=d.get("state_lost"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.context_id is not None:
            d["context_id"] = self.context_id
        if self.language is not None:
            d["language"] = self.language
        if self.reason is not None:
            d["reason"] = self.reason
        if self.restarted is not None:
            d["restarted"] = self.restarted
        if self.state_lost is not None:
            d["state_lost"] = self.state_lost
        return d


@dataclass(kw_only=True)
class CreateSnapshotRequest:
    name: str
    memory: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CreateSnapshotRequest:
        return cls(
            name=d["name"],
            memory=d.get("memory"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.name is not None:
            d["name"] = self.name
        if self.memory is not None:
            d["memory"] = self.memory
        return d


@dataclass(kw_only=True)
class CreateVolumeRequest:
    name: str
    size_mb: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CreateVolumeRequest:
        return cls(
            name=d["name"],
            size_mb=d.get("size_mb"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.name is not None:
            d["name"] = self.name
        if self.size_mb is not None:
            d["size_mb"] = self.size_mb
        return d


@dataclass(kw_only=True)
class EditRequest:
    path: str
    content: str | None = None
    end_line: int | None = None
    new_string: str | None = None
    old_string: str | None = None
    replace_all: bool | None = None
    start_line: int | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EditRequest:
        return cls(
            path=d["path"],
            content=d.get("content"),
            end_line=d.get("end_line"),
            new_string=d.get("new_string"),
            old_string=d.get("old_string"),
            replace_all=d.get("replace_all"),
            start_line=d.get("start_line"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.path is not None:
            d["path"] = self.path
        if self.content is not None:
            d["content"] = self.content
        if self.end_line is not None:
            d["end_line"] = self.end_line
        if self.new_string is not None:
            d["new_string"] = self.new_string
        if self.old_string is not None:
            d["old_string"] = self.old_string
        if self.replace_all is not None:
            d["replace_all"] = self.replace_all
        if self.start_line is not None:
            d["start_line"] = self.start_line
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass(kw_only=True)
class EditResult:
    file: FileInfo
    replacements: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EditResult:
        return cls(
            file=FileInfo.from_dict(d["file"]),
            replacements=d["replacements"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.file is not None:
            d["file"] = self.file.to_dict()
        if self.replacements is not None:
            d["replacements"] = self.replacements
        return d


@dataclass(kw_only=True)
class Error:
    """Every error answer. 429 answers of rate quotas carry Retry-After (seconds)."""

    error: ErrorDetail

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Error:
        return cls(
            error=ErrorDetail.from_dict(d["error"]),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.error is not None:
            d["error"] = self.error.to_dict()
        return d


@dataclass(kw_only=True)
class ErrorDetail:
    code: str
    message: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ErrorDetail:
        return cls(
            code=d["code"],
            message=d["message"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.code is not None:
            d["code"] = self.code
        if self.message is not None:
            d["message"] = self.message
        return d


@dataclass(kw_only=True)
class ExecEvent:
    """One line of a streamed exec: a chunk of output ({"stdout"} or {"stderr"}), then the result (an ExecResponse's fields without stdout/stderr) or {"error"}."""

    duration_ms: float | None = None
    error: ErrorDetail | None = None
    exit_code: int | None = None
    oom_killed: bool | None = None
    pid: int | None = None
    signal: str | None = None
    stderr: str | None = None
    stderr_bytes: int | None = None
    stderr_truncated: bool | None = None
    stdout: str | None = None
    stdout_bytes: int | None = None
    stdout_truncated: bool | None = None
    timed_out: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExecEvent:
        return cls(
            duration_ms=None if (v := d.get("duration_ms")) is None else float(v),
            error=None if (v := d.get("error")) is None else ErrorDetail.from_dict(v),
            exit_code=d.get("exit_code"),
            oom_killed=d.get("oom_killed"),
            pid=d.get("pid"),
            signal=d.get("signal"),
            stderr=d.get("stderr"),
            stderr_bytes=d.get("stderr_bytes"),
            stderr_truncated=d.get("stderr_truncated"),
            stdout=d.get("stdout"),
            stdout_bytes=d.get("stdout_bytes"),
            stdout_truncated=d.get("stdout_truncated"),
            timed_out=d.get("timed_out"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.duration_ms is not None:
            d["duration_ms"] = self.duration_ms
        if self.error is not None:
            d["error"] = self.error.to_dict()
        if self.exit_code is not None:
            d["exit_code"] = self.exit_code
        if self.oom_killed is not None:
            d["oom_killed"] = self.oom_killed
        if self.pid is not None:
            d["pid"] = self.pid
        if self.signal is not None:
            d["signal"] = self.signal
        if self.stderr is not None:
            d["stderr"] = self.stderr
        if self.stderr_bytes is not None:
            d["stderr_bytes"] = self.stderr_bytes
        if self.stderr_truncated is not None:
            d["stderr_truncated"] = self.stderr_truncated
        if self.stdout is not None:
            d["stdout"] = self.stdout
        if self.stdout_bytes is not None:
            d["stdout_bytes"] = self.stdout_bytes
        if self.stdout_truncated is not None:
            d["stdout_truncated"] = self.stdout_truncated
        if self.timed_out is not None:
            d["timed_out"] = self.timed_out
        return d


@dataclass(kw_only=True)
class ExecRequest:
    cmd: list[str]
    cwd: str | None = None
    env: dict[str, str] | None = None
    max_output_bytes: int | None = None
    stdin: str | None = None
    timeout_ms: int | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExecRequest:
        return cls(
            cmd=d["cmd"],
            cwd=d.get("cwd"),
            env=d.get("env"),
            max_output_bytes=d.get("max_output_bytes"),
            stdin=d.get("stdin"),
            timeout_ms=d.get("timeout_ms"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cmd is not None:
            d["cmd"] = self.cmd
        if self.cwd is not None:
            d["cwd"] = self.cwd
        if self.env is not None:
            d["env"] = self.env
        if self.max_output_bytes is not None:
            d["max_output_bytes"] = self.max_output_bytes
        if self.stdin is not None:
            d["stdin"] = self.stdin
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass(kw_only=True)
class ExecResponse:
    duration_ms: float
    exit_code: int
    stderr: str
    stderr_bytes: int
    stdout: str
    stdout_bytes: int
    oom_killed: bool | None = None
    pid: int | None = None
    signal: str | None = None
    stderr_truncated: bool | None = None
    stdout_truncated: bool | None = None
    timed_out: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExecResponse:
        return cls(
            duration_ms=float(d["duration_ms"]),
            exit_code=d["exit_code"],
            stderr=d["stderr"],
            stderr_bytes=d["stderr_bytes"],
            stdout=d["stdout"],
            stdout_bytes=d["stdout_bytes"],
            oom_killed=d.get("oom_killed"),
            pid=d.get("pid"),
            signal=d.get("signal"),
            stderr_truncated=d.get("stderr_truncated"),
            stdout_truncated=d.get("stdout_truncated"),
            timed_out=d.get("timed_out"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.duration_ms is not None:
            d["duration_ms"] = self.duration_ms
        if self.exit_code is not None:
            d["exit_code"] = self.exit_code
        if self.stderr is not None:
            d["stderr"] = self.stderr
        if self.stderr_bytes is not None:
            d["stderr_bytes"] = self.stderr_bytes
        if self.stdout is not None:
            d["stdout"] = self.stdout
        if self.stdout_bytes is not None:
            d["stdout_bytes"] = self.stdout_bytes
        if self.oom_killed is not None:
            d["oom_killed"] = self.oom_killed
        if self.pid is not None:
            d["pid"] = self.pid
        if self.signal is not None:
            d["signal"] = self.signal
        if self.stderr_truncated is not None:
            d["stderr_truncated"] = self.stderr_truncated
        if self.stdout_truncated is not None:
            d["stdout_truncated"] = self.stdout_truncated
        if self.timed_out is not None:
            d["timed_out"] = self.timed_out
        return d


@dataclass(kw_only=True)
class ExtractResult:
    bytes: int
    dirs: int
    files: int
    hardlinks: int
    path: str
    stripped_setid: int
    symlinks: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExtractResult:
        return cls(
            bytes=d["bytes"],
            dirs=d["dirs"],
            files=d["files"],
            hardlinks=d["hardlinks"],
            path=d["path"],
            stripped_setid=d["stripped_setid"],
            symlinks=d["symlinks"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.bytes is not None:
            d["bytes"] = self.bytes
        if self.dirs is not None:
            d["dirs"] = self.dirs
        if self.files is not None:
            d["files"] = self.files
        if self.hardlinks is not None:
            d["hardlinks"] = self.hardlinks
        if self.path is not None:
            d["path"] = self.path
        if self.stripped_setid is not None:
            d["stripped_setid"] = self.stripped_setid
        if self.symlinks is not None:
            d["symlinks"] = self.symlinks
        return d


@dataclass(kw_only=True)
class FileEvent:
    type: str
    entry: str | None = None
    error: str | None = None
    old_path: str | None = None
    path: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FileEvent:
        return cls(
            type=d["type"],
            entry=d.get("entry"),
            error=d.get("error"),
            old_path=d.get("old_path"),
            path=d.get("path"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.type is not None:
            d["type"] = self.type
        if self.entry is not None:
            d["entry"] = self.entry
        if self.error is not None:
            d["error"] = self.error
        if self.old_path is not None:
            d["old_path"] = self.old_path
        if self.path is not None:
            d["path"] = self.path
        return d


@dataclass(kw_only=True)
class FileInfo:
    gid: int
    mode: str
    mtime: str
    name: str
    path: str
    size: int
    type: str
    uid: int
    target: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FileInfo:
        return cls(
            gid=d["gid"],
            mode=d["mode"],
            mtime=d["mtime"],
            name=d["name"],
            path=d["path"],
            size=d["size"],
            type=d["type"],
            uid=d["uid"],
            target=d.get("target"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.gid is not None:
            d["gid"] = self.gid
        if self.mode is not None:
            d["mode"] = self.mode
        if self.mtime is not None:
            d["mtime"] = self.mtime
        if self.name is not None:
            d["name"] = self.name
        if self.path is not None:
            d["path"] = self.path
        if self.size is not None:
            d["size"] = self.size
        if self.type is not None:
            d["type"] = self.type
        if self.uid is not None:
            d["uid"] = self.uid
        if self.target is not None:
            d["target"] = self.target
        return d


@dataclass(kw_only=True)
class FindResult:
    matches: list[FileInfo]
    truncated: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FindResult:
        return cls(
            matches=[FileInfo.from_dict(x) for x in d["matches"]],
            truncated=d["truncated"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.matches is not None:
            d["matches"] = [x.to_dict() for x in self.matches]
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass(kw_only=True)
class ForkRequest:
    count: int | None = None
    memory: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ForkRequest:
        return cls(
            count=d.get("count"),
            memory=d.get("memory"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.count is not None:
            d["count"] = self.count
        if self.memory is not None:
            d["memory"] = self.memory
        return d


@dataclass(kw_only=True)
class ForkResponse:
    sandboxes: list[Sandbox]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ForkResponse:
        return cls(
            sandboxes=[Sandbox.from_dict(x) for x in d["sandboxes"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.sandboxes is not None:
            d["sandboxes"] = [x.to_dict() for x in self.sandboxes]
        return d


@dataclass(kw_only=True)
class Health:
    ok: bool
    version: str
    runtimes: list[RuntimeInfo] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Health:
        return cls(
            ok=d["ok"],
            version=d["version"],
            runtimes=None if (v := d.get("runtimes")) is None else [RuntimeInfo.from_dict(x) for x in v],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.ok is not None:
            d["ok"] = self.ok
        if self.version is not None:
            d["version"] = self.version
        if self.runtimes is not None:
            d["runtimes"] = [x.to_dict() for x in self.runtimes]
        return d


@dataclass(kw_only=True)
class InjectRule:
    """For HTTPS requests the sandbox sends to host, the egress proxy sets header to value, whose {secret:NAME} placeholders are the tenant's secrets. The host must be allowed by the policy; the secrets must exist."""

    header: str
    host: str
    value: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> InjectRule:
        return cls(
            header=d["header"],
            host=d["host"],
            value=d["value"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.header is not None:
            d["header"] = self.header
        if self.host is not None:
            d["host"] = self.host
        if self.value is not None:
            d["value"] = self.value
        return d


@dataclass(kw_only=True)
class LinesResult:
    content: str
    end: int
    path: str
    size: int
    start: int
    binary: bool | None = None
    more: bool | None = None
    total: int | None = None
    truncated: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LinesResult:
        return cls(
            content=d["content"],
            end=d["end"],
            path=d["path"],
            size=d["size"],
            start=d["start"],
            binary=d.get("binary"),
            more=d.get("more"),
            total=d.get("total"),
            truncated=d.get("truncated"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.content is not None:
            d["content"] = self.content
        if self.end is not None:
            d["end"] = self.end
        if self.path is not None:
            d["path"] = self.path
        if self.size is not None:
            d["size"] = self.size
        if self.start is not None:
            d["start"] = self.start
        if self.binary is not None:
            d["binary"] = self.binary
        if self.more is not None:
            d["more"] = self.more
        if self.total is not None:
            d["total"] = self.total
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass(kw_only=True)
class ListResult:
    entries: list[FileInfo]
    path: str
    truncated: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ListResult:
        return cls(
            entries=[FileInfo.from_dict(x) for x in d["entries"]],
            path=d["path"],
            truncated=d["truncated"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.entries is not None:
            d["entries"] = [x.to_dict() for x in self.entries]
        if self.path is not None:
            d["path"] = self.path
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass(kw_only=True)
class MkdirRequest:
    path: str
    mode: str | None = None
    owner: str | None = None
    parents: bool | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MkdirRequest:
        return cls(
            path=d["path"],
            mode=d.get("mode"),
            owner=d.get("owner"),
            parents=d.get("parents"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.path is not None:
            d["path"] = self.path
        if self.mode is not None:
            d["mode"] = self.mode
        if self.owner is not None:
            d["owner"] = self.owner
        if self.parents is not None:
            d["parents"] = self.parents
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass(kw_only=True)
class MoveRequest:
    from_: str
    to: str
    overwrite: bool | None = None
    parents: bool | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MoveRequest:
        return cls(
            from_=d["from"],
            to=d["to"],
            overwrite=d.get("overwrite"),
            parents=d.get("parents"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.from_ is not None:
            d["from"] = self.from_
        if self.to is not None:
            d["to"] = self.to
        if self.overwrite is not None:
            d["overwrite"] = self.overwrite
        if self.parents is not None:
            d["parents"] = self.parents
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass(kw_only=True)
class Network:
    """Egress policy. none: loopback only (the default). allowlist: the names in allow (and the addresses in allow_cidr). open: any public destination. Private, loopback, link-local and metadata addresses and the host itself are refused in every mode unless the server's admin allowed a CIDR."""

    allow: list[str] | None = None
    allow_cidr: list[str] | None = None
    deny_cidr: list[str] | None = None
    inject: list[InjectRule] | None = None
    mode: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Network:
        return cls(
            allow=d.get("allow"),
            allow_cidr=d.get("allow_cidr"),
            deny_cidr=d.get("deny_cidr"),
            inject=None if (v := d.get("inject")) is None else [InjectRule.from_dict(x) for x in v],
            mode=d.get("mode"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.allow is not None:
            d["allow"] = self.allow
        if self.allow_cidr is not None:
            d["allow_cidr"] = self.allow_cidr
        if self.deny_cidr is not None:
            d["deny_cidr"] = self.deny_cidr
        if self.inject is not None:
            d["inject"] = [x.to_dict() for x in self.inject]
        if self.mode is not None:
            d["mode"] = self.mode
        return d


@dataclass(kw_only=True)
class OK:
    ok: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> OK:
        return cls(
            ok=d["ok"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.ok is not None:
            d["ok"] = self.ok
        return d


@dataclass(kw_only=True)
class OutputLine:
    data: str | None = None
    data_b64: str | None = None
    dropped: int | None = None
    error: ErrorDetail | None = None
    offset: int | None = None
    process: ProcessInfo | None = None
    stream: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> OutputLine:
        return cls(
            data=d.get("data"),
            data_b64=d.get("data_b64"),
            dropped=d.get("dropped"),
            error=None if (v := d.get("error")) is None else ErrorDetail.from_dict(v),
            offset=d.get("offset"),
            process=None if (v := d.get("process")) is None else ProcessInfo.from_dict(v),
            stream=d.get("stream"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.data is not None:
            d["data"] = self.data
        if self.data_b64 is not None:
            d["data_b64"] = self.data_b64
        if self.dropped is not None:
            d["dropped"] = self.dropped
        if self.error is not None:
            d["error"] = self.error.to_dict()
        if self.offset is not None:
            d["offset"] = self.offset
        if self.process is not None:
            d["process"] = self.process.to_dict()
        if self.stream is not None:
            d["stream"] = self.stream
        return d


@dataclass(kw_only=True)
class PTYSize:
    cols: int
    rows: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PTYSize:
        return cls(
            cols=d["cols"],
            rows=d["rows"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cols is not None:
            d["cols"] = self.cols
        if self.rows is not None:
            d["rows"] = self.rows
        return d


@dataclass(kw_only=True)
class PortURL:
    expires_at: str
    port: int
    sandbox: str
    token: str
    url: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PortURL:
        return cls(
            expires_at=d["expires_at"],
            port=d["port"],
            sandbox=d["sandbox"],
            token=d["token"],
            url=d["url"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.port is not None:
            d["port"] = self.port
        if self.sandbox is not None:
            d["sandbox"] = self.sandbox
        if self.token is not None:
            d["token"] = self.token
        if self.url is not None:
            d["url"] = self.url
        return d


@dataclass(kw_only=True)
class PortURLRequest:
    ttl_s: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PortURLRequest:
        return cls(
            ttl_s=d.get("ttl_s"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.ttl_s is not None:
            d["ttl_s"] = self.ttl_s
        return d


@dataclass(kw_only=True)
class ProcessInfo:
    cmd: list[str]
    cwd: str
    id: str
    pid: int
    started_at: str
    state: str
    stdin: bool
    streams: dict[str, StreamInfo]
    user: str
    ended_at: str | None = None
    env: dict[str, str] | None = None
    exit_code: int | None = None
    oom_killed: bool | None = None
    pty: PTYSize | None = None
    signal: str | None = None
    tag: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProcessInfo:
        return cls(
            cmd=d["cmd"],
            cwd=d["cwd"],
            id=d["id"],
            pid=d["pid"],
            started_at=d["started_at"],
            state=d["state"],
            stdin=d["stdin"],
            streams={k: StreamInfo.from_dict(v) for k, v in d["streams"].items()},
            user=d["user"],
            ended_at=d.get("ended_at"),
            env=d.get("env"),
            exit_code=d.get("exit_code"),
            oom_killed=d.get("oom_killed"),
            pty=None if (v := d.get("pty")) is None else PTYSize.from_dict(v),
            signal=d.get("signal"),
            tag=d.get("tag"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cmd is not None:
            d["cmd"] = self.cmd
        if self.cwd is not None:
            d["cwd"] = self.cwd
        if self.id is not None:
            d["id"] = self.id
        if self.pid is not None:
            d["pid"] = self.pid
        if self.started_at is not None:
            d["started_at"] = self.started_at
        if self.state is not None:
            d["state"] = self.state
        if self.stdin is not None:
            d["stdin"] = self.stdin
        if self.streams is not None:
            d["streams"] = {k: v.to_dict() for k, v in self.streams.items()}
        if self.user is not None:
            d["user"] = self.user
        if self.ended_at is not None:
            d["ended_at"] = self.ended_at
        if self.env is not None:
            d["env"] = self.env
        if self.exit_code is not None:
            d["exit_code"] = self.exit_code
        if self.oom_killed is not None:
            d["oom_killed"] = self.oom_killed
        if self.pty is not None:
            d["pty"] = self.pty.to_dict()
        if self.signal is not None:
            d["signal"] = self.signal
        if self.tag is not None:
            d["tag"] = self.tag
        return d


@dataclass(kw_only=True)
class ProcessList:
    processes: list[ProcessInfo]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProcessList:
        return cls(
            processes=[ProcessInfo.from_dict(x) for x in d["processes"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.processes is not None:
            d["processes"] = [x.to_dict() for x in self.processes]
        return d


@dataclass(kw_only=True)
class ProcessRequest:
    buffer_bytes: int | None = None
    cmd: list[str] | None = None
    cwd: str | None = None
    env: dict[str, str] | None = None
    pty: PTYSize | None = None
    stdin: bool | None = None
    tag: str | None = None
    timeout_ms: int | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProcessRequest:
        return cls(
            buffer_bytes=d.get("buffer_bytes"),
            cmd=d.get("cmd"),
            cwd=d.get("cwd"),
            env=d.get("env"),
            pty=None if (v := d.get("pty")) is None else PTYSize.from_dict(v),
            stdin=d.get("stdin"),
            tag=d.get("tag"),
            timeout_ms=d.get("timeout_ms"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.buffer_bytes is not None:
            d["buffer_bytes"] = self.buffer_bytes
        if self.cmd is not None:
            d["cmd"] = self.cmd
        if self.cwd is not None:
            d["cwd"] = self.cwd
        if self.env is not None:
            d["env"] = self.env
        if self.pty is not None:
            d["pty"] = self.pty.to_dict()
        if self.stdin is not None:
            d["stdin"] = self.stdin
        if self.tag is not None:
            d["tag"] = self.tag
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass(kw_only=True)
class RemoveResult:
    removed: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RemoveResult:
        return cls(
            removed=d["removed"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.removed is not None:
            d["removed"] = self.removed
        return d


@dataclass(kw_only=True)
class RuntimeInfo:
    available: bool
    name: str
    reason: str | None = None
    version: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RuntimeInfo:
        return cls(
            available=d["available"],
            name=d["name"],
            reason=d.get("reason"),
            version=d.get("version"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.available is not None:
            d["available"] = self.available
        if self.name is not None:
            d["name"] = self.name
        if self.reason is not None:
            d["reason"] = self.reason
        if self.version is not None:
            d["version"] = self.version
        return d


@dataclass(kw_only=True)
class Sandbox:
    created_at: str
    expires_at: str
    id: str
    spec: Spec
    state: str
    tenant: str
    forks: list[str] | None = None
    from_pool: bool | None = None
    paused_at: str | None = None
    reason: str | None = None
    remaining_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Sandbox:
        return cls(
            created_at=d["created_at"],
            expires_at=d["expires_at"],
            id=d["id"],
            spec=Spec.from_dict(d["spec"]),
            state=d["state"],
            tenant=d["tenant"],
            forks=d.get("forks"),
            from_pool=d.get("from_pool"),
            paused_at=d.get("paused_at"),
            reason=d.get("reason"),
            remaining_ms=d.get("remaining_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.id is not None:
            d["id"] = self.id
        if self.spec is not None:
            d["spec"] = self.spec.to_dict()
        if self.state is not None:
            d["state"] = self.state
        if self.tenant is not None:
            d["tenant"] = self.tenant
        if self.forks is not None:
            d["forks"] = self.forks
        if self.from_pool is not None:
            d["from_pool"] = self.from_pool
        if self.paused_at is not None:
            d["paused_at"] = self.paused_at
        if self.reason is not None:
            d["reason"] = self.reason
        if self.remaining_ms is not None:
            d["remaining_ms"] = self.remaining_ms
        return d


@dataclass(kw_only=True)
class SandboxList:
    sandboxes: list[Sandbox]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SandboxList:
        return cls(
            sandboxes=[Sandbox.from_dict(x) for x in d["sandboxes"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.sandboxes is not None:
            d["sandboxes"] = [x.to_dict() for x in self.sandboxes]
        return d


@dataclass(kw_only=True)
class SandboxToken:
    expires_at: str
    id: str
    sandbox: str
    scopes: list[str]
    token: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SandboxToken:
        return cls(
            expires_at=d["expires_at"],
            id=d["id"],
            sandbox=d["sandbox"],
            scopes=d["scopes"],
            token=d["token"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.id is not None:
            d["id"] = self.id
        if self.sandbox is not None:
            d["sandbox"] = self.sandbox
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.token is not None:
            d["token"] = self.token
        return d


@dataclass(kw_only=True)
class SandboxTokenRequest:
    scopes: list[str]
    ttl_s: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SandboxTokenRequest:
        return cls(
            scopes=d["scopes"],
            ttl_s=d.get("ttl_s"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.ttl_s is not None:
            d["ttl_s"] = self.ttl_s
        return d


@dataclass(kw_only=True)
class SearchMatch:
    line: int
    path: str
    text: str
    truncated: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SearchMatch:
        return cls(
            line=d["line"],
            path=d["path"],
            text=d["text"],
            truncated=d.get("truncated"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.line is not None:
            d["line"] = self.line
        if self.path is not None:
            d["path"] = self.path
        if self.text is not None:
            d["text"] = self.text
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass(kw_only=True)
class SearchResult:
    files_scanned: int
    files_skipped: int
    matches: list[SearchMatch]
    truncated: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SearchResult:
        return cls(
            files_scanned=d["files_scanned"],
            files_skipped=d["files_skipped"],
            matches=[SearchMatch.from_dict(x) for x in d["matches"]],
            truncated=d["truncated"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.files_scanned is not None:
            d["files_scanned"] = self.files_scanned
        if self.files_skipped is not None:
            d["files_skipped"] = self.files_skipped
        if self.matches is not None:
            d["matches"] = [x.to_dict() for x in self.matches]
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass(kw_only=True)
class SecretInfo:
    created_at: str
    hosts: list[str]
    name: str
    updated_at: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SecretInfo:
        return cls(
            created_at=d["created_at"],
            hosts=d["hosts"],
            name=d["name"],
            updated_at=d["updated_at"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.hosts is not None:
            d["hosts"] = self.hosts
        if self.name is not None:
            d["name"] = self.name
        if self.updated_at is not None:
            d["updated_at"] = self.updated_at
        return d


@dataclass(kw_only=True)
class SecretList:
    secrets: list[SecretInfo]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SecretList:
        return cls(
            secrets=[SecretInfo.from_dict(x) for x in d["secrets"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.secrets is not None:
            d["secrets"] = [x.to_dict() for x in self.secrets]
        return d


@dataclass(kw_only=True)
class SecretValue:
    """Set a secret's value, its hosts, or both (at least one)."""

    hosts: list[str] | None = None
    value: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SecretValue:
        return cls(
            hosts=d.get("hosts"),
            value=d.get("value"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.hosts is not None:
            d["hosts"] = self.hosts
        if self.value is not None:
            d["value"] = self.value
        return d


@dataclass(kw_only=True)
class SignalRequest:
    signal: str | None = None
    tree: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SignalRequest:
        return cls(
            signal=d.get("signal"),
            tree=d.get("tree"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.signal is not None:
            d["signal"] = self.signal
        if self.tree is not None:
            d["tree"] = self.tree
        return d


@dataclass(kw_only=True)
class SignalResult:
    signalled: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SignalResult:
        return cls(
            signalled=d["signalled"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.signalled is not None:
            d["signalled"] = self.signalled
        return d


@dataclass(kw_only=True)
class Snapshot:
    bytes: int
    created_at: str
    files: int
    name: str
    source: str
    template: str
    memory: bool | None = None
    memory_bytes: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Snapshot:
        return cls(
            bytes=d["bytes"],
            created_at=d["created_at"],
            files=d["files"],
            name=d["name"],
            source=d["source"],
            template=d["template"],
            memory=d.get("memory"),
            memory_bytes=d.get("memory_bytes"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.bytes is not None:
            d["bytes"] = self.bytes
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.files is not None:
            d["files"] = self.files
        if self.name is not None:
            d["name"] = self.name
        if self.source is not None:
            d["source"] = self.source
        if self.template is not None:
            d["template"] = self.template
        if self.memory is not None:
            d["memory"] = self.memory
        if self.memory_bytes is not None:
            d["memory_bytes"] = self.memory_bytes
        return d


@dataclass(kw_only=True)
class SnapshotList:
    snapshots: list[Snapshot]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SnapshotList:
        return cls(
            snapshots=[Snapshot.from_dict(x) for x in d["snapshots"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.snapshots is not None:
            d["snapshots"] = [x.to_dict() for x in self.snapshots]
        return d


@dataclass(kw_only=True)
class Spec:
    auto_resume: bool | None = None
    browser: bool | None = None
    cpu: float | None = None
    disk_mb: int | None = None
    env: dict[str, str] | None = None
    fork_of: str | None = None
    idle_pause_after_s: int | None = None
    labels: dict[str, str] | None = None
    memory_mb: int | None = None
    network: Network | None = None
    on_timeout: str | None = None
    paused_timeout_s: int | None = None
    pids: int | None = None
    runtime: str | None = None
    snapshot: str | None = None
    template: str | None = None
    timeout_s: int | None = None
    volumes: list[VolumeMount] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Spec:
        return cls(
            auto_resume=d.get("auto_resume"),
            browser=d.get("browser"),
            cpu=None if (v := d.get("cpu")) is None else float(v),
            disk_mb=d.get("disk_mb"),
            env=d.get("env"),
            fork_of=d.get("fork_of"),
            idle_pause_after_s=d.get("idle_pause_after_s"),
            labels=d.get("labels"),
            memory_mb=d.get("memory_mb"),
            network=None if (v := d.get("network")) is None else Network.from_dict(v),
            on_timeout=d.get("on_timeout"),
            paused_timeout_s=d.get("paused_timeout_s"),
            pids=d.get("pids"),
            runtime=d.get("runtime"),
            snapshot=d.get("snapshot"),
            template=d.get("template"),
            timeout_s=d.get("timeout_s"),
            volumes=None if (v := d.get("volumes")) is None else [VolumeMount.from_dict(x) for x in v],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.auto_resume is not None:
            d["auto_resume"] = self.auto_resume
        if self.browser is not None:
            d["browser"] = self.browser
        if self.cpu is not None:
            d["cpu"] = self.cpu
        if self.disk_mb is not None:
            d["disk_mb"] = self.disk_mb
        if self.env is not None:
            d["env"] = self.env
        if self.fork_of is not None:
            d["fork_of"] = self.fork_of
        if self.idle_pause_after_s is not None:
            d["idle_pause_after_s"] = self.idle_pause_after_s
        if self.labels is not None:
            d["labels"] = self.labels
        if self.memory_mb is not None:
            d["memory_mb"] = self.memory_mb
        if self.network is not None:
            d["network"] = self.network.to_dict()
        if self.on_timeout is not None:
            d["on_timeout"] = self.on_timeout
        if self.paused_timeout_s is not None:
            d["paused_timeout_s"] = self.paused_timeout_s
        if self.pids is not None:
            d["pids"] = self.pids
        if self.runtime is not None:
            d["runtime"] = self.runtime
        if self.snapshot is not None:
            d["snapshot"] = self.snapshot
        if self.template is not None:
            d["template"] = self.template
        if self.timeout_s is not None:
            d["timeout_s"] = self.timeout_s
        if self.volumes is not None:
            d["volumes"] = [x.to_dict() for x in self.volumes]
        return d


@dataclass(kw_only=True)
class Stats:
    cpu_throttled_ns: int
    cpu_usage_ns: int
    disk_bytes: int
    disk_inodes: int
    memory_bytes: int
    memory_peak_bytes: int
    oom_kills: int
    pids: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Stats:
        return cls(
            cpu_throttled_ns=d["cpu_throttled_ns"],
            cpu_usage_ns=d["cpu_usage_ns"],
            disk_bytes=d["disk_bytes"],
            disk_inodes=d["disk_inodes"],
            memory_bytes=d["memory_bytes"],
            memory_peak_bytes=d["memory_peak_bytes"],
            oom_kills=d["oom_kills"],
            pids=d["pids"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cpu_throttled_ns is not None:
            d["cpu_throttled_ns"] = self.cpu_throttled_ns
        if self.cpu_usage_ns is not None:
            d["cpu_usage_ns"] = self.cpu_usage_ns
        if self.disk_bytes is not None:
            d["disk_bytes"] = self.disk_bytes
        if self.disk_inodes is not None:
            d["disk_inodes"] = self.disk_inodes
        if self.memory_bytes is not None:
            d["memory_bytes"] = self.memory_bytes
        if self.memory_peak_bytes is not None:
            d["memory_peak_bytes"] = self.memory_peak_bytes
        if self.oom_kills is not None:
            d["oom_kills"] = self.oom_kills
        if self.pids is not None:
            d["pids"] = self.pids
        return d


@dataclass(kw_only=True)
class StdinResult:
    bytes: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StdinResult:
        return cls(
            bytes=d["bytes"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.bytes is not None:
            d["bytes"] = self.bytes
        return d


@dataclass(kw_only=True)
class StreamInfo:
    buffer_bytes: int
    dropped: int
    written: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StreamInfo:
        return cls(
            buffer_bytes=d["buffer_bytes"],
            dropped=d["dropped"],
            written=d["written"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.buffer_bytes is not None:
            d["buffer_bytes"] = self.buffer_bytes
        if self.dropped is not None:
            d["dropped"] = self.dropped
        if self.written is not None:
            d["written"] = self.written
        return d


@dataclass(kw_only=True)
class Template:
    created_at: str
    description: str
    name: str
    ready: bool
    shared: bool
    size_bytes: int
    defaults: TemplateDefaults | None = None
    kind: str | None = None
    layers: int | None = None
    shared_bytes: int | None = None
    source: TemplateSource | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Template:
        return cls(
            created_at=d["created_at"],
            description=d["description"],
            name=d["name"],
            ready=d["ready"],
            shared=d["shared"],
            size_bytes=d["size_bytes"],
            defaults=None if (v := d.get("defaults")) is None else TemplateDefaults.from_dict(v),
            kind=d.get("kind"),
            layers=d.get("layers"),
            shared_bytes=d.get("shared_bytes"),
            source=None if (v := d.get("source")) is None else TemplateSource.from_dict(v),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.description is not None:
            d["description"] = self.description
        if self.name is not None:
            d["name"] = self.name
        if self.ready is not None:
            d["ready"] = self.ready
        if self.shared is not None:
            d["shared"] = self.shared
        if self.size_bytes is not None:
            d["size_bytes"] = self.size_bytes
        if self.defaults is not None:
            d["defaults"] = self.defaults.to_dict()
        if self.kind is not None:
            d["kind"] = self.kind
        if self.layers is not None:
            d["layers"] = self.layers
        if self.shared_bytes is not None:
            d["shared_bytes"] = self.shared_bytes
        if self.source is not None:
            d["source"] = self.source.to_dict()
        return d


@dataclass(kw_only=True)
class TemplateDefaults:
    """The image's config as its sandboxes use it (docs/templates.md)"""

    gid: int
    uid: int
    cmd: list[str] | None = None
    entrypoint: list[str] | None = None
    env: list[str] | None = None
    exposed_ports: list[str] | None = None
    labels: dict[str, str] | None = None
    ready_cmd: list[str] | None = None
    start_cmd: list[str] | None = None
    user: str | None = None
    user_error: str | None = None
    working_dir: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TemplateDefaults:
        return cls(
            gid=d["gid"],
            uid=d["uid"],
            cmd=d.get("cmd"),
            entrypoint=d.get("entrypoint"),
            env=d.get("env"),
            exposed_ports=d.get("exposed_ports"),
            labels=d.get("labels"),
            ready_cmd=d.get("ready_cmd"),
            start_cmd=d.get("start_cmd"),
            user=d.get("user"),
            user_error=d.get("user_error"),
            working_dir=d.get("working_dir"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.gid is not None:
            d["gid"] = self.gid
        if self.uid is not None:
            d["uid"] = self.uid
        if self.cmd is not None:
            d["cmd"] = self.cmd
        if self.entrypoint is not None:
            d["entrypoint"] = self.entrypoint
        if self.env is not None:
            d["env"] = self.env
        if self.exposed_ports is not None:
            d["exposed_ports"] = self.exposed_ports
        if self.labels is not None:
            d["labels"] = self.labels
        if self.ready_cmd is not None:
            d["ready_cmd"] = self.ready_cmd
        if self.start_cmd is not None:
            d["start_cmd"] = self.start_cmd
        if self.user is not None:
            d["user"] = self.user
        if self.user_error is not None:
            d["user_error"] = self.user_error
        if self.working_dir is not None:
            d["working_dir"] = self.working_dir
        return d


@dataclass(kw_only=True)
class TemplateEvent:
    """One NDJSON line of a pull, import or build; the last has template or error"""

    cached: bool | None = None
    error: ErrorDetail | None = None
    instruction: str | None = None
    message: str | None = None
    output: str | None = None
    stage: str | None = None
    step: int | None = None
    steps: int | None = None
    template: Template | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TemplateEvent:
        return cls(
            cached=d.get("cached"),
            error=None if (v := d.get("error")) is None else ErrorDetail.from_dict(v),
            instruction=d.get("instruction"),
            message=d.get("message"),
            output=d.get("output"),
            stage=d.get("stage"),
            step=d.get("step"),
            steps=d.get("steps"),
            template=None if (v := d.get("template")) is None else Template.from_dict(v),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cached is not None:
            d["cached"] = self.cached
        if self.error is not None:
            d["error"] = self.error.to_dict()
        if self.instruction is not None:
            d["instruction"] = self.instruction
        if self.message is not None:
            d["message"] = self.message
        if self.output is not None:
            d["output"] = self.output
        if self.stage is not None:
            d["stage"] = self.stage
        if self.step is not None:
            d["step"] = self.step
        if self.steps is not None:
            d["steps"] = self.steps
        if self.template is not None:
            d["template"] = self.template.to_dict()
        return d


@dataclass(kw_only=True)
class TemplateList:
    templates: list[Template]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TemplateList:
        return cls(
            templates=[Template.from_dict(x) for x in d["templates"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.templates is not None:
            d["templates"] = [x.to_dict() for x in self.templates]
        return d


@dataclass(kw_only=True)
class TemplatePullRequest:
    ref: str
    name: str | None = None
    ready_cmd: list[str] | None = None
    replace: bool | None = None
    shared: bool | None = None
    start_cmd: list[str] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TemplatePullRequest:
        return cls(
            ref=d["ref"],
            name=d.get("name"),
            ready_cmd=d.get("ready_cmd"),
            replace=d.get("replace"),
            shared=d.get("shared"),
            start_cmd=d.get("start_cmd"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.ref is not None:
            d["ref"] = self.ref
        if self.name is not None:
            d["name"] = self.name
        if self.ready_cmd is not None:
            d["ready_cmd"] = self.ready_cmd
        if self.replace is not None:
            d["replace"] = self.replace
        if self.shared is not None:
            d["shared"] = self.shared
        if self.start_cmd is not None:
            d["start_cmd"] = self.start_cmd
        return d


@dataclass(kw_only=True)
class TemplatePushRequest:
    ref: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TemplatePushRequest:
        return cls(
            ref=d["ref"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.ref is not None:
            d["ref"] = self.ref
        return d


@dataclass(kw_only=True)
class TemplateSource:
    kind: str
    digest: str | None = None
    dockerfile_digest: str | None = None
    ref: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TemplateSource:
        return cls(
            kind=d["kind"],
            digest=d.get("digest"),
            dockerfile_digest=d.get("dockerfile_digest"),
            ref=d.get("ref"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.kind is not None:
            d["kind"] = self.kind
        if self.digest is not None:
            d["digest"] = self.digest
        if self.dockerfile_digest is not None:
            d["dockerfile_digest"] = self.dockerfile_digest
        if self.ref is not None:
            d["ref"] = self.ref
        return d


@dataclass(kw_only=True)
class Tenant:
    created_at: str
    name: str
    quotas: TenantQuotas
    usage: TenantUsage | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Tenant:
        return cls(
            created_at=d["created_at"],
            name=d["name"],
            quotas=TenantQuotas.from_dict(d["quotas"]),
            usage=None if (v := d.get("usage")) is None else TenantUsage.from_dict(v),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.name is not None:
            d["name"] = self.name
        if self.quotas is not None:
            d["quotas"] = self.quotas.to_dict()
        if self.usage is not None:
            d["usage"] = self.usage.to_dict()
        return d


@dataclass(kw_only=True)
class TenantCreateRequest:
    name: str
    quotas: TenantQuotas | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TenantCreateRequest:
        return cls(
            name=d["name"],
            quotas=None if (v := d.get("quotas")) is None else TenantQuotas.from_dict(v),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.name is not None:
            d["name"] = self.name
        if self.quotas is not None:
            d["quotas"] = self.quotas.to_dict()
        return d


@dataclass(kw_only=True)
class TenantDefaults:
    """fill what a spec leaves unset, before the server's defaults"""

    cpu: float | None = None
    disk_mb: int | None = None
    memory_mb: int | None = None
    pids: int | None = None
    runtime: str | None = None
    template: str | None = None
    timeout_s: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TenantDefaults:
        return cls(
            cpu=None if (v := d.get("cpu")) is None else float(v),
            disk_mb=d.get("disk_mb"),
            memory_mb=d.get("memory_mb"),
            pids=d.get("pids"),
            runtime=d.get("runtime"),
            template=d.get("template"),
            timeout_s=d.get("timeout_s"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cpu is not None:
            d["cpu"] = self.cpu
        if self.disk_mb is not None:
            d["disk_mb"] = self.disk_mb
        if self.memory_mb is not None:
            d["memory_mb"] = self.memory_mb
        if self.pids is not None:
            d["pids"] = self.pids
        if self.runtime is not None:
            d["runtime"] = self.runtime
        if self.template is not None:
            d["template"] = self.template
        if self.timeout_s is not None:
            d["timeout_s"] = self.timeout_s
        return d


@dataclass(kw_only=True)
class TenantList:
    tenants: list[Tenant]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TenantList:
        return cls(
            tenants=[Tenant.from_dict(x) for x in d["tenants"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.tenants is not None:
            d["tenants"] = [x.to_dict() for x in self.tenants]
        return d


@dataclass(kw_only=True)
class TenantQuotas:
    """0 or absent: no tenant limit (the server's limits still apply)."""

    allowed_domains: list[str] | None = None
    create_burst: int | None = None
    create_per_minute: float | None = None
    defaults: TenantDefaults | None = None
    deny_exposed_ports: bool | None = None
    deny_secrets: bool | None = None
    max_cpu: float | None = None
    max_disk_mb: int | None = None
    max_forks: int | None = None
    max_memory_mb: int | None = None
    max_paused: int | None = None
    max_pids: int | None = None
    max_sandboxes: int | None = None
    max_snapshot_mb: int | None = None
    max_template_mb: int | None = None
    max_templates: int | None = None
    max_timeout_s: int | None = None
    max_total_cpu: float | None = None
    max_total_memory_mb: int | None = None
    max_volume_mb: int | None = None
    network_modes: list[str] | None = None
    runtimes: list[str] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TenantQuotas:
        return cls(
            allowed_domains=d.get("allowed_domains"),
            create_burst=d.get("create_burst"),
            create_per_minute=None if (v := d.get("create_per_minute")) is None else float(v),
            defaults=None if (v := d.get("defaults")) is None else TenantDefaults.from_dict(v),
            deny_exposed_ports=d.get("deny_exposed_ports"),
            deny_secrets=d.get("deny_secrets"),
            max_cpu=None if (v := d.get("max_cpu")) is None else float(v),
            max_disk_mb=d.get("max_disk_mb"),
            max_forks=d.get("max_forks"),
            max_memory_mb=d.get("max_memory_mb"),
            max_paused=d.get("max_paused"),
            max_pids=d.get("max_pids"),
            max_sandboxes=d.get("max_sandboxes"),
            max_snapshot_mb=d.get("max_snapshot_mb"),
            max_template_mb=d.get("max_template_mb"),
            max_templates=d.get("max_templates"),
            max_timeout_s=d.get("max_timeout_s"),
            max_total_cpu=None if (v := d.get("max_total_cpu")) is None else float(v),
            max_total_memory_mb=d.get("max_total_memory_mb"),
            max_volume_mb=d.get("max_volume_mb"),
            network_modes=d.get("network_modes"),
            runtimes=d.get("runtimes"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.allowed_domains is not None:
            d["allowed_domains"] = self.allowed_domains
        if self.create_burst is not None:
            d["create_burst"] = self.create_burst
        if self.create_per_minute is not None:
            d["create_per_minute"] = self.create_per_minute
        if self.defaults is not None:
            d["defaults"] = self.defaults.to_dict()
        if self.deny_exposed_ports is not None:
            d["deny_exposed_ports"] = self.deny_exposed_ports
        if self.deny_secrets is not None:
            d["deny_secrets"] = self.deny_secrets
        if self.max_cpu is not None:
            d["max_cpu"] = self.max_cpu
        if self.max_disk_mb is not None:
            d["max_disk_mb"] = self.max_disk_mb
        if self.max_forks is not None:
            d["max_forks"] = self.max_forks
        if self.max_memory_mb is not None:
            d["max_memory_mb"] = self.max_memory_mb
        if self.max_paused is not None:
            d["max_paused"] = self.max_paused
        if self.max_pids is not None:
            d["max_pids"] = self.max_pids
        if self.max_sandboxes is not None:
            d["max_sandboxes"] = self.max_sandboxes
        if self.max_snapshot_mb is not None:
            d["max_snapshot_mb"] = self.max_snapshot_mb
        if self.max_template_mb is not None:
            d["max_template_mb"] = self.max_template_mb
        if self.max_templates is not None:
            d["max_templates"] = self.max_templates
        if self.max_timeout_s is not None:
            d["max_timeout_s"] = self.max_timeout_s
        if self.max_total_cpu is not None:
            d["max_total_cpu"] = self.max_total_cpu
        if self.max_total_memory_mb is not None:
            d["max_total_memory_mb"] = self.max_total_memory_mb
        if self.max_volume_mb is not None:
            d["max_volume_mb"] = self.max_volume_mb
        if self.network_modes is not None:
            d["network_modes"] = self.network_modes
        if self.runtimes is not None:
            d["runtimes"] = self.runtimes
        return d


@dataclass(kw_only=True)
class TenantUpdateRequest:
    quotas: TenantQuotas | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TenantUpdateRequest:
        return cls(
            quotas=None if (v := d.get("quotas")) is None else TenantQuotas.from_dict(v),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.quotas is not None:
            d["quotas"] = self.quotas.to_dict()
        return d


@dataclass(kw_only=True)
class TenantUsage:
    """what the tenant's running sandboxes hold now"""

    cpu: float
    memory_mb: int
    sandboxes: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TenantUsage:
        return cls(
            cpu=float(d["cpu"]),
            memory_mb=d["memory_mb"],
            sandboxes=d["sandboxes"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cpu is not None:
            d["cpu"] = self.cpu
        if self.memory_mb is not None:
            d["memory_mb"] = self.memory_mb
        if self.sandboxes is not None:
            d["sandboxes"] = self.sandboxes
        return d


@dataclass(kw_only=True)
class TimeoutRequest:
    timeout_s: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TimeoutRequest:
        return cls(
            timeout_s=d["timeout_s"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.timeout_s is not None:
            d["timeout_s"] = self.timeout_s
        return d


@dataclass(kw_only=True)
class Volume:
    attached: list[VolumeAttachment]
    created_at: str
    name: str
    size_mb: int
    used_bytes: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Volume:
        return cls(
            attached=[VolumeAttachment.from_dict(x) for x in d["attached"]],
            created_at=d["created_at"],
            name=d["name"],
            size_mb=d["size_mb"],
            used_bytes=d["used_bytes"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.attached is not None:
            d["attached"] = [x.to_dict() for x in self.attached]
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.name is not None:
            d["name"] = self.name
        if self.size_mb is not None:
            d["size_mb"] = self.size_mb
        if self.used_bytes is not None:
            d["used_bytes"] = self.used_bytes
        return d


@dataclass(kw_only=True)
class VolumeAttachment:
    path: str
    sandbox: str
    read_only: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> VolumeAttachment:
        return cls(
            path=d["path"],
            sandbox=d["sandbox"],
            read_only=d.get("read_only"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.path is not None:
            d["path"] = self.path
        if self.sandbox is not None:
            d["sandbox"] = self.sandbox
        if self.read_only is not None:
            d["read_only"] = self.read_only
        return d


@dataclass(kw_only=True)
class VolumeList:
    volumes: list[Volume]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> VolumeList:
        return cls(
            volumes=[Volume.from_dict(x) for x in d["volumes"]],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.volumes is not None:
            d["volumes"] = [x.to_dict() for x in self.volumes]
        return d


@dataclass(kw_only=True)
class VolumeMount:
    name: str
    path: str
    read_only: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> VolumeMount:
        return cls(
            name=d["name"],
            path=d["path"],
            read_only=d.get("read_only"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.name is not None:
            d["name"] = self.name
        if self.path is not None:
            d["path"] = self.path
        if self.read_only is not None:
            d["read_only"] = self.read_only
        return d


@dataclass(kw_only=True)
class WaitRequest:
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WaitRequest:
        return cls(
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d
