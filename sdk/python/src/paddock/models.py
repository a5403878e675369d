"""Paddock's wire models, generated from the OpenAPI document by
sdk/codegen/generate.py. Do not edit: run `make sdk-models`.

Each model is a dataclass; from_dict ignores fields it does not know
(a newer server), to_dict leaves out fields that are None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["APIKey", "APIKeyCreated", "APIKeyList", "APIKeyRequest", "AuditPage", "AuditRecord", "BrowserClick", "BrowserDownload", "BrowserDownloads", "BrowserEval", "BrowserEvalRequest", "BrowserNavigate", "BrowserOpenTab", "BrowserPage", "BrowserPress", "BrowserScroll", "BrowserScrollRequest", "BrowserSnapshot", "BrowserStatus", "BrowserTab", "BrowserTabs", "BrowserText", "BrowserType", "EditRequest", "EditResult", "Error", "ErrorDetail", "ExecEvent", "ExecRequest", "ExecResponse", "ExtractResult", "FileEvent", "FileInfo", "FindResult", "Health", "InjectRule", "ListResult", "MkdirRequest", "MoveRequest", "Network", "OK", "OutputLine", "PTYSize", "PortURL", "PortURLRequest", "ProcessInfo", "ProcessList", "ProcessRequest", "RemoveResult", "Sandbox", "SandboxList", "SandboxToken", "SandboxTokenRequest", "SearchResult", "SecretInfo", "SecretList", "SecretValue", "SignalRequest", "SignalResult", "Spec", "Stats", "StdinResult", "Template", "TemplateList", "Tenant", "TenantCreateRequest", "TenantList", "TenantQuotas", "TenantUpdateRequest", "TenantUsage", "TimeoutRequest", "WaitRequest"]


@dataclass
class APIKey:
    id: str
    tenant: str
    scopes: list[str]
    format: str
    hint: str
    created_at: str
    revoked: bool
    name: str | None = None
    description: str | None = None
    last_used_at: str | None = None
    expires_at: str | None = None
    revoked_at: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> APIKey:
        return cls(
            id=d["id"],
            tenant=d["tenant"],
            scopes=d["scopes"],
            format=d["format"],
            hint=d["hint"],
            created_at=d["created_at"],
            revoked=d["revoked"],
            name=d.get("name"),
            description=d.get("description"),
            last_used_at=d.get("last_used_at"),
            expires_at=d.get("expires_at"),
            revoked_at=d.get("revoked_at"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.id is not None:
            d["id"] = self.id
        if self.tenant is not None:
            d["tenant"] = self.tenant
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.format is not None:
            d["format"] = self.format
        if self.hint is not None:
            d["hint"] = self.hint
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.revoked is not None:
            d["revoked"] = self.revoked
        if self.name is not None:
            d["name"] = self.name
        if self.description is not None:
            d["description"] = self.description
        if self.last_used_at is not None:
            d["last_used_at"] = self.last_used_at
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.revoked_at is not None:
            d["revoked_at"] = self.revoked_at
        return d


@dataclass
class APIKeyCreated:
    """A new key, with the key itself (shown once)."""

    id: str
    tenant: str
    scopes: list[str]
    format: str
    hint: str
    created_at: str
    revoked: bool
    key: str
    name: str | None = None
    description: str | None = None
    last_used_at: str | None = None
    expires_at: str | None = None
    revoked_at: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> APIKeyCreated:
        return cls(
            id=d["id"],
            tenant=d["tenant"],
            scopes=d["scopes"],
            format=d["format"],
            hint=d["hint"],
            created_at=d["created_at"],
            revoked=d["revoked"],
            key=d["key"],
            name=d.get("name"),
            description=d.get("description"),
            last_used_at=d.get("last_used_at"),
            expires_at=d.get("expires_at"),
            revoked_at=d.get("revoked_at"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.id is not None:
            d["id"] = self.id
        if self.tenant is not None:
            d["tenant"] = self.tenant
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.format is not None:
            d["format"] = self.format
        if self.hint is not None:
            d["hint"] = self.hint
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.revoked is not None:
            d["revoked"] = self.revoked
        if self.key is not None:
            d["key"] = self.key
        if self.name is not None:
            d["name"] = self.name
        if self.description is not None:
            d["description"] = self.description
        if self.last_used_at is not None:
            d["last_used_at"] = self.last_used_at
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.revoked_at is not None:
            d["revoked_at"] = self.revoked_at
        return d


@dataclass
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


@dataclass
class APIKeyRequest:
    tenant: str
    scopes: list[str]
    name: str | None = None
    description: str | None = None
    expires_at: str | None = None
    expires_in_s: int | None = None
    format: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> APIKeyRequest:
        return cls(
            tenant=d["tenant"],
            scopes=d["scopes"],
            name=d.get("name"),
            description=d.get("description"),
            expires_at=d.get("expires_at"),
            expires_in_s=d.get("expires_in_s"),
            format=d.get("format"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.tenant is not None:
            d["tenant"] = self.tenant
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.name is not None:
            d["name"] = self.name
        if self.description is not None:
            d["description"] = self.description
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.expires_in_s is not None:
            d["expires_in_s"] = self.expires_in_s
        if self.format is not None:
            d["format"] = self.format
        return d


@dataclass
class AuditPage:
    records: list[AuditRecord]
    next_cursor: int
    has_more: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AuditPage:
        return cls(
            records=[AuditRecord.from_dict(x) for x in d["records"]],
            next_cursor=d["next_cursor"],
            has_more=d["has_more"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.records is not None:
            d["records"] = [x.to_dict() for x in self.records]
        if self.next_cursor is not None:
            d["next_cursor"] = self.next_cursor
        if self.has_more is not None:
            d["has_more"] = self.has_more
        return d


@dataclass
class AuditRecord:
    """One audit record. `hash` is SHA-256 (hex) of the record's canonical JSON without `hash`; `prev` is the hash of the record before (zeros for the first)."""

    seq: int
    time: str
    action: str
    phase: str
    prev: str
    hash: str
    actor: str | None = None
    tenant: str | None = None
    sandbox: str | None = None
    request: str | None = None
    args: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    status: int | None = None
    code: str | None = None
    error: str | None = None
    duration_ns: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AuditRecord:
        return cls(
            seq=d["seq"],
            time=d["time"],
            action=d["action"],
            phase=d["phase"],
            prev=d["prev"],
            hash=d["hash"],
            actor=d.get("actor"),
            tenant=d.get("tenant"),
            sandbox=d.get("sandbox"),
            request=d.get("request"),
            args=d.get("args"),
            result=d.get("result"),
            status=d.get("status"),
            code=d.get("code"),
            error=d.get("error"),
            duration_ns=d.get("duration_ns"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.seq is not None:
            d["seq"] = self.seq
        if self.time is not None:
            d["time"] = self.time
        if self.action is not None:
            d["action"] = self.action
        if self.phase is not None:
            d["phase"] = self.phase
        if self.prev is not None:
            d["prev"] = self.prev
        if self.hash is not None:
            d["hash"] = self.hash
        if self.actor is not None:
            d["actor"] = self.actor
        if self.tenant is not None:
            d["tenant"] = self.tenant
        if self.sandbox is not None:
            d["sandbox"] = self.sandbox
        if self.request is not None:
            d["request"] = self.request
        if self.args is not None:
            d["args"] = self.args
        if self.result is not None:
            d["result"] = self.result
        if self.status is not None:
            d["status"] = self.status
        if self.code is not None:
            d["code"] = self.code
        if self.error is not None:
            d["error"] = self.error
        if self.duration_ns is not None:
            d["duration_ns"] = self.duration_ns
        return d


@dataclass
class BrowserClick:
    selector: str | None = None
    text: str | None = None
    ref: str | None = None
    button: str | None = None
    click_count: int | None = None
    tab: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserClick:
        return cls(
            selector=d.get("selector"),
            text=d.get("text"),
            ref=d.get("ref"),
            button=d.get("button"),
            click_count=d.get("click_count"),
            tab=d.get("tab"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.selector is not None:
            d["selector"] = self.selector
        if self.text is not None:
            d["text"] = self.text
        if self.ref is not None:
            d["ref"] = self.ref
        if self.button is not None:
            d["button"] = self.button
        if self.click_count is not None:
            d["click_count"] = self.click_count
        if self.tab is not None:
            d["tab"] = self.tab
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass
class BrowserDownload:
    url: str
    filename: str
    state: str
    bytes: float
    path: str | None = None
    total_bytes: float | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserDownload:
        return cls(
            url=d["url"],
            filename=d["filename"],
            state=d["state"],
            bytes=float(d["bytes"]),
            path=d.get("path"),
            total_bytes=None if (v := d.get("total_bytes")) is None else float(v),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.url is not None:
            d["url"] = self.url
        if self.filename is not None:
            d["filename"] = self.filename
        if self.state is not None:
            d["state"] = self.state
        if self.bytes is not None:
            d["bytes"] = self.bytes
        if self.path is not None:
            d["path"] = self.path
        if self.total_bytes is not None:
            d["total_bytes"] = self.total_bytes
        return d


@dataclass
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


@dataclass
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


@dataclass
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


@dataclass
class BrowserNavigate:
    url: str
    wait_until: str | None = None
    tab: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserNavigate:
        return cls(
            url=d["url"],
            wait_until=d.get("wait_until"),
            tab=d.get("tab"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.url is not None:
            d["url"] = self.url
        if self.wait_until is not None:
            d["wait_until"] = self.wait_until
        if self.tab is not None:
            d["tab"] = self.tab
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass
class BrowserOpenTab:
    url: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserOpenTab:
        return cls(
            url=d.get("url"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.url is not None:
            d["url"] = self.url
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass
class BrowserPage:
    tab: str
    url: str
    title: str
    duration_ms: float
    status: int | None = None
    downloads: list[BrowserDownload] | None = None
    new_tabs: list[BrowserTab] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserPage:
        return cls(
            tab=d["tab"],
            url=d["url"],
            title=d["title"],
            duration_ms=float(d["duration_ms"]),
            status=d.get("status"),
            downloads=None if (v := d.get("downloads")) is None else [BrowserDownload.from_dict(x) for x in v],
            new_tabs=None if (v := d.get("new_tabs")) is None else [BrowserTab.from_dict(x) for x in v],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.tab is not None:
            d["tab"] = self.tab
        if self.url is not None:
            d["url"] = self.url
        if self.title is not None:
            d["title"] = self.title
        if self.duration_ms is not None:
            d["duration_ms"] = self.duration_ms
        if self.status is not None:
            d["status"] = self.status
        if self.downloads is not None:
            d["downloads"] = [x.to_dict() for x in self.downloads]
        if self.new_tabs is not None:
            d["new_tabs"] = [x.to_dict() for x in self.new_tabs]
        return d


@dataclass
class BrowserPress:
    key: str
    selector: str | None = None
    text: str | None = None
    ref: str | None = None
    tab: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserPress:
        return cls(
            key=d["key"],
            selector=d.get("selector"),
            text=d.get("text"),
            ref=d.get("ref"),
            tab=d.get("tab"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.key is not None:
            d["key"] = self.key
        if self.selector is not None:
            d["selector"] = self.selector
        if self.text is not None:
            d["text"] = self.text
        if self.ref is not None:
            d["ref"] = self.ref
        if self.tab is not None:
            d["tab"] = self.tab
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass
class BrowserScroll:
    tab: str
    url: str
    title: str
    duration_ms: float
    x: float
    y: float
    max_x: float
    max_y: float
    at_end: bool
    scrolled_x: float
    scrolled_y: float
    status: int | None = None
    downloads: list[BrowserDownload] | None = None
    new_tabs: list[BrowserTab] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserScroll:
        return cls(
            tab=d["tab"],
            url=d["url"],
            title=d["title"],
            duration_ms=float(d["duration_ms"]),
            x=float(d["x"]),
            y=float(d["y"]),
            max_x=float(d["max_x"]),
            max_y=float(d["max_y"]),
            at_end=d["at_end"],
            scrolled_x=float(d["scrolled_x"]),
            scrolled_y=float(d["scrolled_y"]),
            status=d.get("status"),
            downloads=None if (v := d.get("downloads")) is None else [BrowserDownload.from_dict(x) for x in v],
            new_tabs=None if (v := d.get("new_tabs")) is None else [BrowserTab.from_dict(x) for x in v],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.tab is not None:
            d["tab"] = self.tab
        if self.url is not None:
            d["url"] = self.url
        if self.title is not None:
            d["title"] = self.title
        if self.duration_ms is not None:
            d["duration_ms"] = self.duration_ms
        if self.x is not None:
            d["x"] = self.x
        if self.y is not None:
            d["y"] = self.y
        if self.max_x is not None:
            d["max_x"] = self.max_x
        if self.max_y is not None:
            d["max_y"] = self.max_y
        if self.at_end is not None:
            d["at_end"] = self.at_end
        if self.scrolled_x is not None:
            d["scrolled_x"] = self.scrolled_x
        if self.scrolled_y is not None:
            d["scrolled_y"] = self.scrolled_y
        if self.status is not None:
            d["status"] = self.status
        if self.downloads is not None:
            d["downloads"] = [x.to_dict() for x in self.downloads]
        if self.new_tabs is not None:
            d["new_tabs"] = [x.to_dict() for x in self.new_tabs]
        return d


@dataclass
class BrowserScrollRequest:
    selector: str | None = None
    text: str | None = None
    ref: str | None = None
    direction: str | None = None
    amount: int | None = None
    tab: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserScrollRequest:
        return cls(
            selector=d.get("selector"),
            text=d.get("text"),
            ref=d.get("ref"),
            direction=d.get("direction"),
            amount=d.get("amount"),
            tab=d.get("tab"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.selector is not None:
            d["selector"] = self.selector
        if self.text is not None:
            d["text"] = self.text
        if self.ref is not None:
            d["ref"] = self.ref
        if self.direction is not None:
            d["direction"] = self.direction
        if self.amount is not None:
            d["amount"] = self.amount
        if self.tab is not None:
            d["tab"] = self.tab
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass
class BrowserSnapshot:
    tab: str
    url: str
    title: str
    snapshot: str
    refs: int
    truncated: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserSnapshot:
        return cls(
            tab=d["tab"],
            url=d["url"],
            title=d["title"],
            snapshot=d["snapshot"],
            refs=d["refs"],
            truncated=d.get("truncated"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.tab is not None:
            d["tab"] = self.tab
        if self.url is not None:
            d["url"] = self.url
        if self.title is not None:
            d["title"] = self.title
        if self.snapshot is not None:
            d["snapshot"] = self.snapshot
        if self.refs is not None:
            d["refs"] = self.refs
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass
class BrowserStatus:
    state: str
    restarts: int
    connected: bool
    pid: int | None = None
    started_at: str | None = None
    last_exit: str | None = None
    oom_kills: int | None = None
    error: str | None = None
    start_ms: float | None = None
    tabs: list[BrowserTab] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserStatus:
        return cls(
            state=d["state"],
            restarts=d["restarts"],
            connected=d["connected"],
            pid=d.get("pid"),
            started_at=d.get("started_at"),
            last_exit=d.get("last_exit"),
            oom_kills=d.get("oom_kills"),
            error=d.get("error"),
            start_ms=None if (v := d.get("start_ms")) is None else float(v),
            tabs=None if (v := d.get("tabs")) is None else [BrowserTab.from_dict(x) for x in v],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.state is not None:
            d["state"] = self.state
        if self.restarts is not None:
            d["restarts"] = self.restarts
        if self.connected is not None:
            d["connected"] = self.connected
        if self.pid is not None:
            d["pid"] = self.pid
        if self.started_at is not None:
            d["started_at"] = self.started_at
        if self.last_exit is not None:
            d["last_exit"] = self.last_exit
        if self.oom_kills is not None:
            d["oom_kills"] = self.oom_kills
        if self.error is not None:
            d["error"] = self.error
        if self.start_ms is not None:
            d["start_ms"] = self.start_ms
        if self.tabs is not None:
            d["tabs"] = [x.to_dict() for x in self.tabs]
        return d


@dataclass
class BrowserTab:
    id: str
    url: str
    title: str
    current: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserTab:
        return cls(
            id=d["id"],
            url=d["url"],
            title=d["title"],
            current=d.get("current"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.id is not None:
            d["id"] = self.id
        if self.url is not None:
            d["url"] = self.url
        if self.title is not None:
            d["title"] = self.title
        if self.current is not None:
            d["current"] = self.current
        return d


@dataclass
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


@dataclass
class BrowserText:
    tab: str
    url: str
    title: str
    format: str
    text: str
    bytes: int
    truncated: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserText:
        return cls(
            tab=d["tab"],
            url=d["url"],
            title=d["title"],
            format=d["format"],
            text=d["text"],
            bytes=d["bytes"],
            truncated=d.get("truncated"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.tab is not None:
            d["tab"] = self.tab
        if self.url is not None:
            d["url"] = self.url
        if self.title is not None:
            d["title"] = self.title
        if self.format is not None:
            d["format"] = self.format
        if self.text is not None:
            d["text"] = self.text
        if self.bytes is not None:
            d["bytes"] = self.bytes
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass
class BrowserType:
    text: str
    selector: str | None = None
    ref: str | None = None
    clear: bool | None = None
    submit: bool | None = None
    tab: str | None = None
    timeout_ms: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BrowserType:
        return cls(
            text=d["text"],
            selector=d.get("selector"),
            ref=d.get("ref"),
            clear=d.get("clear"),
            submit=d.get("submit"),
            tab=d.get("tab"),
            timeout_ms=d.get("timeout_ms"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.text is not None:
            d["text"] = self.text
        if self.selector is not None:
            d["selector"] = self.selector
        if self.ref is not None:
            d["ref"] = self.ref
        if self.clear is not None:
            d["clear"] = self.clear
        if self.submit is not None:
            d["submit"] = self.submit
        if self.tab is not None:
            d["tab"] = self.tab
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        return d


@dataclass
class EditRequest:
    path: str
    old_string: str | None = None
    new_string: str | None = None
    replace_all: bool | None = None
    start_line: int | None = None
    end_line: int | None = None
    content: str | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EditRequest:
        return cls(
            path=d["path"],
            old_string=d.get("old_string"),
            new_string=d.get("new_string"),
            replace_all=d.get("replace_all"),
            start_line=d.get("start_line"),
            end_line=d.get("end_line"),
            content=d.get("content"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.path is not None:
            d["path"] = self.path
        if self.old_string is not None:
            d["old_string"] = self.old_string
        if self.new_string is not None:
            d["new_string"] = self.new_string
        if self.replace_all is not None:
            d["replace_all"] = self.replace_all
        if self.start_line is not None:
            d["start_line"] = self.start_line
        if self.end_line is not None:
            d["end_line"] = self.end_line
        if self.content is not None:
            d["content"] = self.content
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass
class EditResult:
    replacements: int
    file: FileInfo

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EditResult:
        return cls(
            replacements=d["replacements"],
            file=FileInfo.from_dict(d["file"]),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.replacements is not None:
            d["replacements"] = self.replacements
        if self.file is not None:
            d["file"] = self.file.to_dict()
        return d


@dataclass
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


@dataclass
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


@dataclass
class ExecEvent:
    """One line of a streamed exec: a chunk of output ({"stdout"} or {"stderr"}), then the result (an ExecResponse's fields without stdout/stderr) or {"error"}."""

    stdout: str | None = None
    stderr: str | None = None
    error: ErrorDetail | None = None
    exit_code: int | None = None
    duration_ms: float | None = None
    signal: str | None = None
    oom_killed: bool | None = None
    timed_out: bool | None = None
    stdout_bytes: int | None = None
    stderr_bytes: int | None = None
    stdout_truncated: bool | None = None
    stderr_truncated: bool | None = None
    pid: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExecEvent:
        return cls(
            stdout=d.get("stdout"),
            stderr=d.get("stderr"),
            error=None if (v := d.get("error")) is None else ErrorDetail.from_dict(v),
            exit_code=d.get("exit_code"),
            duration_ms=None if (v := d.get("duration_ms")) is None else float(v),
            signal=d.get("signal"),
            oom_killed=d.get("oom_killed"),
            timed_out=d.get("timed_out"),
            stdout_bytes=d.get("stdout_bytes"),
            stderr_bytes=d.get("stderr_bytes"),
            stdout_truncated=d.get("stdout_truncated"),
            stderr_truncated=d.get("stderr_truncated"),
            pid=d.get("pid"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.stdout is not None:
            d["stdout"] = self.stdout
        if self.stderr is not None:
            d["stderr"] = self.stderr
        if self.error is not None:
            d["error"] = self.error.to_dict()
        if self.exit_code is not None:
            d["exit_code"] = self.exit_code
        if self.duration_ms is not None:
            d["duration_ms"] = self.duration_ms
        if self.signal is not None:
            d["signal"] = self.signal
        if self.oom_killed is not None:
            d["oom_killed"] = self.oom_killed
        if self.timed_out is not None:
            d["timed_out"] = self.timed_out
        if self.stdout_bytes is not None:
            d["stdout_bytes"] = self.stdout_bytes
        if self.stderr_bytes is not None:
            d["stderr_bytes"] = self.stderr_bytes
        if self.stdout_truncated is not None:
            d["stdout_truncated"] = self.stdout_truncated
        if self.stderr_truncated is not None:
            d["stderr_truncated"] = self.stderr_truncated
        if self.pid is not None:
            d["pid"] = self.pid
        return d


@dataclass
class ExecRequest:
    cmd: list[str]
    env: dict[str, str] | None = None
    cwd: str | None = None
    user: str | None = None
    timeout_ms: int | None = None
    stdin: str | None = None
    max_output_bytes: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExecRequest:
        return cls(
            cmd=d["cmd"],
            env=d.get("env"),
            cwd=d.get("cwd"),
            user=d.get("user"),
            timeout_ms=d.get("timeout_ms"),
            stdin=d.get("stdin"),
            max_output_bytes=d.get("max_output_bytes"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cmd is not None:
            d["cmd"] = self.cmd
        if self.env is not None:
            d["env"] = self.env
        if self.cwd is not None:
            d["cwd"] = self.cwd
        if self.user is not None:
            d["user"] = self.user
        if self.timeout_ms is not None:
            d["timeout_ms"] = self.timeout_ms
        if self.stdin is not None:
            d["stdin"] = self.stdin
        if self.max_output_bytes is not None:
            d["max_output_bytes"] = self.max_output_bytes
        return d


@dataclass
class ExecResponse:
    exit_code: int
    stdout: str
    stderr: str
    duration_ms: float
    stdout_bytes: int
    stderr_bytes: int
    signal: str | None = None
    oom_killed: bool | None = None
    timed_out: bool | None = None
    stdout_truncated: bool | None = None
    stderr_truncated: bool | None = None
    pid: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExecResponse:
        return cls(
            exit_code=d["exit_code"],
            stdout=d["stdout"],
            stderr=d["stderr"],
            duration_ms=float(d["duration_ms"]),
            stdout_bytes=d["stdout_bytes"],
            stderr_bytes=d["stderr_bytes"],
            signal=d.get("signal"),
            oom_killed=d.get("oom_killed"),
            timed_out=d.get("timed_out"),
            stdout_truncated=d.get("stdout_truncated"),
            stderr_truncated=d.get("stderr_truncated"),
            pid=d.get("pid"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.exit_code is not None:
            d["exit_code"] = self.exit_code
        if self.stdout is not None:
            d["stdout"] = self.stdout
        if self.stderr is not None:
            d["stderr"] = self.stderr
        if self.duration_ms is not None:
            d["duration_ms"] = self.duration_ms
        if self.stdout_bytes is not None:
            d["stdout_bytes"] = self.stdout_bytes
        if self.stderr_bytes is not None:
            d["stderr_bytes"] = self.stderr_bytes
        if self.signal is not None:
            d["signal"] = self.signal
        if self.oom_killed is not None:
            d["oom_killed"] = self.oom_killed
        if self.timed_out is not None:
            d["timed_out"] = self.timed_out
        if self.stdout_truncated is not None:
            d["stdout_truncated"] = self.stdout_truncated
        if self.stderr_truncated is not None:
            d["stderr_truncated"] = self.stderr_truncated
        if self.pid is not None:
            d["pid"] = self.pid
        return d


@dataclass
class ExtractResult:
    path: str
    files: int
    dirs: int
    symlinks: int
    hardlinks: int
    bytes: int
    stripped_setid: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ExtractResult:
        return cls(
            path=d["path"],
            files=d["files"],
            dirs=d["dirs"],
            symlinks=d["symlinks"],
            hardlinks=d["hardlinks"],
            bytes=d["bytes"],
            stripped_setid=d["stripped_setid"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.path is not None:
            d["path"] = self.path
        if self.files is not None:
            d["files"] = self.files
        if self.dirs is not None:
            d["dirs"] = self.dirs
        if self.symlinks is not None:
            d["symlinks"] = self.symlinks
        if self.hardlinks is not None:
            d["hardlinks"] = self.hardlinks
        if self.bytes is not None:
            d["bytes"] = self.bytes
        if self.stripped_setid is not None:
            d["stripped_setid"] = self.stripped_setid
        return d


@dataclass
class FileEvent:
    type: str
    path: str | None = None
    old_path: str | None = None
    entry: str | None = None
    error: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FileEvent:
        return cls(
            type=d["type"],
            path=d.get("path"),
            old_path=d.get("old_path"),
            entry=d.get("entry"),
            error=d.get("error"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.type is not None:
            d["type"] = self.type
        if self.path is not None:
            d["path"] = self.path
        if self.old_path is not None:
            d["old_path"] = self.old_path
        if self.entry is not None:
            d["entry"] = self.entry
        if self.error is not None:
            d["error"] = self.error
        return d


@dataclass
class FileInfo:
    name: str
    path: str
    type: str
    size: int
    mode: str
    mtime: str
    uid: int
    gid: int
    target: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FileInfo:
        return cls(
            name=d["name"],
            path=d["path"],
            type=d["type"],
            size=d["size"],
            mode=d["mode"],
            mtime=d["mtime"],
            uid=d["uid"],
            gid=d["gid"],
            target=d.get("target"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.name is not None:
            d["name"] = self.name
        if self.path is not None:
            d["path"] = self.path
        if self.type is not None:
            d["type"] = self.type
        if self.size is not None:
            d["size"] = self.size
        if self.mode is not None:
            d["mode"] = self.mode
        if self.mtime is not None:
            d["mtime"] = self.mtime
        if self.uid is not None:
            d["uid"] = self.uid
        if self.gid is not None:
            d["gid"] = self.gid
        if self.target is not None:
            d["target"] = self.target
        return d


@dataclass
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


@dataclass
class Health:
    ok: bool
    version: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Health:
        return cls(
            ok=d["ok"],
            version=d["version"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.ok is not None:
            d["ok"] = self.ok
        if self.version is not None:
            d["version"] = self.version
        return d


@dataclass
class InjectRule:
    """For HTTPS requests the sandbox sends to host, the egress proxy sets header to value, whose {secret:NAME} placeholders are the tenant's secrets. The host must be allowed by the policy; the secrets must exist."""

    host: str
    header: str
    value: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> InjectRule:
        return cls(
            host=d["host"],
            header=d["header"],
            value=d["value"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.host is not None:
            d["host"] = self.host
        if self.header is not None:
            d["header"] = self.header
        if self.value is not None:
            d["value"] = self.value
        return d


@dataclass
class ListResult:
    path: str
    entries: list[FileInfo]
    truncated: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ListResult:
        return cls(
            path=d["path"],
            entries=[FileInfo.from_dict(x) for x in d["entries"]],
            truncated=d["truncated"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.path is not None:
            d["path"] = self.path
        if self.entries is not None:
            d["entries"] = [x.to_dict() for x in self.entries]
        if self.truncated is not None:
            d["truncated"] = self.truncated
        return d


@dataclass
class MkdirRequest:
    path: str
    parents: bool | None = None
    mode: str | None = None
    user: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MkdirRequest:
        return cls(
            path=d["path"],
            parents=d.get("parents"),
            mode=d.get("mode"),
            user=d.get("user"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.path is not None:
            d["path"] = self.path
        if self.parents is not None:
            d["parents"] = self.parents
        if self.mode is not None:
            d["mode"] = self.mode
        if self.user is not None:
            d["user"] = self.user
        return d


@dataclass
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


@dataclass
class Network:
    """Egress policy. none: loopback only (the default). allowlist: the names in allow (and the addresses in allow_cidr). open: any public destination. Private, loopback, link-local and metadata addresses and the host itself are refused in every mode unless the server's admin allowed a CIDR."""

    mode: str | None = None
    allow: list[str] | None = None
    allow_cidr: list[str] | None = None
    inject: list[InjectRule] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Network:
        return cls(
            mode=d.get("mode"),
            allow=d.get("allow"),
            allow_cidr=d.get("allow_cidr"),
            inject=None if (v := d.get("inject")) is None else [InjectRule.from_dict(x) for x in v],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.mode is not None:
            d["mode"] = self.mode
        if self.allow is not None:
            d["allow"] = self.allow
        if self.allow_cidr is not None:
            d["allow_cidr"] = self.allow_cidr
        if self.inject is not None:
            d["inject"] = [x.to_dict() for x in self.inject]
        return d


@dataclass
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


@dataclass
class OutputLine:
    stream: str | None = None
    offset: int | None = None
    dropped: int | None = None
    data: str | None = None
    data_b64: str | None = None
    process: ProcessInfo | None = None
    error: ErrorDetail | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> OutputLine:
        return cls(
            stream=d.get("stream"),
            offset=d.get("offset"),
            dropped=d.get("dropped"),
            data=d.get("data"),
            data_b64=d.get("data_b64"),
            process=None if (v := d.get("process")) is None else ProcessInfo.from_dict(v),
            error=None if (v := d.get("error")) is None else ErrorDetail.from_dict(v),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.stream is not None:
            d["stream"] = self.stream
        if self.offset is not None:
            d["offset"] = self.offset
        if self.dropped is not None:
            d["dropped"] = self.dropped
        if self.data is not None:
            d["data"] = self.data
        if self.data_b64 is not None:
            d["data_b64"] = self.data_b64
        if self.process is not None:
            d["process"] = self.process.to_dict()
        if self.error is not None:
            d["error"] = self.error.to_dict()
        return d


@dataclass
class PTYSize:
    rows: int
    cols: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PTYSize:
        return cls(
            rows=d["rows"],
            cols=d["cols"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.rows is not None:
            d["rows"] = self.rows
        if self.cols is not None:
            d["cols"] = self.cols
        return d


@dataclass
class PortURL:
    sandbox: str
    port: int
    url: str
    token: str
    expires_at: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PortURL:
        return cls(
            sandbox=d["sandbox"],
            port=d["port"],
            url=d["url"],
            token=d["token"],
            expires_at=d["expires_at"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.sandbox is not None:
            d["sandbox"] = self.sandbox
        if self.port is not None:
            d["port"] = self.port
        if self.url is not None:
            d["url"] = self.url
        if self.token is not None:
            d["token"] = self.token
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        return d


@dataclass
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


@dataclass
class ProcessInfo:
    id: str
    pid: int
    cmd: list[str]
    cwd: str
    user: str
    stdin: bool
    state: str
    started_at: str
    streams: dict[str, dict[str, Any]]
    tag: str | None = None
    env: dict[str, str] | None = None
    pty: PTYSize | None = None
    exit_code: int | None = None
    signal: str | None = None
    oom_killed: bool | None = None
    ended_at: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProcessInfo:
        return cls(
            id=d["id"],
            pid=d["pid"],
            cmd=d["cmd"],
            cwd=d["cwd"],
            user=d["user"],
            stdin=d["stdin"],
            state=d["state"],
            started_at=d["started_at"],
            streams=d["streams"],
            tag=d.get("tag"),
            env=d.get("env"),
            pty=None if (v := d.get("pty")) is None else PTYSize.from_dict(v),
            exit_code=d.get("exit_code"),
            signal=d.get("signal"),
            oom_killed=d.get("oom_killed"),
            ended_at=d.get("ended_at"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.id is not None:
            d["id"] = self.id
        if self.pid is not None:
            d["pid"] = self.pid
        if self.cmd is not None:
            d["cmd"] = self.cmd
        if self.cwd is not None:
            d["cwd"] = self.cwd
        if self.user is not None:
            d["user"] = self.user
        if self.stdin is not None:
            d["stdin"] = self.stdin
        if self.state is not None:
            d["state"] = self.state
        if self.started_at is not None:
            d["started_at"] = self.started_at
        if self.streams is not None:
            d["streams"] = self.streams
        if self.tag is not None:
            d["tag"] = self.tag
        if self.env is not None:
            d["env"] = self.env
        if self.pty is not None:
            d["pty"] = self.pty.to_dict()
        if self.exit_code is not None:
            d["exit_code"] = self.exit_code
        if self.signal is not None:
            d["signal"] = self.signal
        if self.oom_killed is not None:
            d["oom_killed"] = self.oom_killed
        if self.ended_at is not None:
            d["ended_at"] = self.ended_at
        return d


@dataclass
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


@dataclass
class ProcessRequest:
    cmd: list[str] | None = None
    env: dict[str, str] | None = None
    cwd: str | None = None
    user: str | None = None
    tag: str | None = None
    pty: PTYSize | None = None
    stdin: bool | None = None
    buffer_bytes: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProcessRequest:
        return cls(
            cmd=d.get("cmd"),
            env=d.get("env"),
            cwd=d.get("cwd"),
            user=d.get("user"),
            tag=d.get("tag"),
            pty=None if (v := d.get("pty")) is None else PTYSize.from_dict(v),
            stdin=d.get("stdin"),
            buffer_bytes=d.get("buffer_bytes"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.cmd is not None:
            d["cmd"] = self.cmd
        if self.env is not None:
            d["env"] = self.env
        if self.cwd is not None:
            d["cwd"] = self.cwd
        if self.user is not None:
            d["user"] = self.user
        if self.tag is not None:
            d["tag"] = self.tag
        if self.pty is not None:
            d["pty"] = self.pty.to_dict()
        if self.stdin is not None:
            d["stdin"] = self.stdin
        if self.buffer_bytes is not None:
            d["buffer_bytes"] = self.buffer_bytes
        return d


@dataclass
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


@dataclass
class Sandbox:
    id: str
    tenant: str
    state: str
    spec: Spec
    created_at: str
    expires_at: str
    reason: str | None = None
    from_pool: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Sandbox:
        return cls(
            id=d["id"],
            tenant=d["tenant"],
            state=d["state"],
            spec=Spec.from_dict(d["spec"]),
            created_at=d["created_at"],
            expires_at=d["expires_at"],
            reason=d.get("reason"),
            from_pool=d.get("from_pool"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.id is not None:
            d["id"] = self.id
        if self.tenant is not None:
            d["tenant"] = self.tenant
        if self.state is not None:
            d["state"] = self.state
        if self.spec is not None:
            d["spec"] = self.spec.to_dict()
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        if self.reason is not None:
            d["reason"] = self.reason
        if self.from_pool is not None:
            d["from_pool"] = self.from_pool
        return d


@dataclass
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


@dataclass
class SandboxToken:
    token: str
    id: str
    sandbox: str
    scopes: list[str]
    expires_at: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SandboxToken:
        return cls(
            token=d["token"],
            id=d["id"],
            sandbox=d["sandbox"],
            scopes=d["scopes"],
            expires_at=d["expires_at"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.token is not None:
            d["token"] = self.token
        if self.id is not None:
            d["id"] = self.id
        if self.sandbox is not None:
            d["sandbox"] = self.sandbox
        if self.scopes is not None:
            d["scopes"] = self.scopes
        if self.expires_at is not None:
            d["expires_at"] = self.expires_at
        return d


@dataclass
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


@dataclass
class SearchResult:
    matches: list[dict[str, Any]]
    truncated: bool
    files_scanned: int
    files_skipped: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SearchResult:
        return cls(
            matches=d["matches"],
            truncated=d["truncated"],
            files_scanned=d["files_scanned"],
            files_skipped=d["files_skipped"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.matches is not None:
            d["matches"] = self.matches
        if self.truncated is not None:
            d["truncated"] = self.truncated
        if self.files_scanned is not None:
            d["files_scanned"] = self.files_scanned
        if self.files_skipped is not None:
            d["files_skipped"] = self.files_skipped
        return d


@dataclass
class SecretInfo:
    name: str
    created_at: str
    updated_at: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SecretInfo:
        return cls(
            name=d["name"],
            created_at=d["created_at"],
            updated_at=d["updated_at"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.name is not None:
            d["name"] = self.name
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.updated_at is not None:
            d["updated_at"] = self.updated_at
        return d


@dataclass
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


@dataclass
class SecretValue:
    value: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SecretValue:
        return cls(
            value=d["value"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.value is not None:
            d["value"] = self.value
        return d


@dataclass
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


@dataclass
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


@dataclass
class Spec:
    template: str | None = None
    cpu: float | None = None
    memory_mb: int | None = None
    disk_mb: int | None = None
    pids: int | None = None
    timeout_s: int | None = None
    labels: dict[str, str] | None = None
    env: dict[str, str] | None = None
    network: Network | None = None
    browser: bool | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Spec:
        return cls(
            template=d.get("template"),
            cpu=None if (v := d.get("cpu")) is None else float(v),
            memory_mb=d.get("memory_mb"),
            disk_mb=d.get("disk_mb"),
            pids=d.get("pids"),
            timeout_s=d.get("timeout_s"),
            labels=d.get("labels"),
            env=d.get("env"),
            network=None if (v := d.get("network")) is None else Network.from_dict(v),
            browser=d.get("browser"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.template is not None:
            d["template"] = self.template
        if self.cpu is not None:
            d["cpu"] = self.cpu
        if self.memory_mb is not None:
            d["memory_mb"] = self.memory_mb
        if self.disk_mb is not None:
            d["disk_mb"] = self.disk_mb
        if self.pids is not None:
            d["pids"] = self.pids
        if self.timeout_s is not None:
            d["timeout_s"] = self.timeout_s
        if self.labels is not None:
            d["labels"] = self.labels
        if self.env is not None:
            d["env"] = self.env
        if self.network is not None:
            d["network"] = self.network.to_dict()
        if self.browser is not None:
            d["browser"] = self.browser
        return d


@dataclass
class Stats:
    memory_bytes: int
    memory_peak_bytes: int
    oom_kills: int
    pids: int
    cpu_usage_ns: int
    cpu_throttled_ns: int
    disk_bytes: int
    disk_inodes: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Stats:
        return cls(
            memory_bytes=d["memory_bytes"],
            memory_peak_bytes=d["memory_peak_bytes"],
            oom_kills=d["oom_kills"],
            pids=d["pids"],
            cpu_usage_ns=d["cpu_usage_ns"],
            cpu_throttled_ns=d["cpu_throttled_ns"],
            disk_bytes=d["disk_bytes"],
            disk_inodes=d["disk_inodes"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.memory_bytes is not None:
            d["memory_bytes"] = self.memory_bytes
        if self.memory_peak_bytes is not None:
            d["memory_peak_bytes"] = self.memory_peak_bytes
        if self.oom_kills is not None:
            d["oom_kills"] = self.oom_kills
        if self.pids is not None:
            d["pids"] = self.pids
        if self.cpu_usage_ns is not None:
            d["cpu_usage_ns"] = self.cpu_usage_ns
        if self.cpu_throttled_ns is not None:
            d["cpu_throttled_ns"] = self.cpu_throttled_ns
        if self.disk_bytes is not None:
            d["disk_bytes"] = self.disk_bytes
        if self.disk_inodes is not None:
            d["disk_inodes"] = self.disk_inodes
        return d


@dataclass
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


@dataclass
class Template:
    name: str
    description: str
    created_at: str
    size_bytes: int
    ready: bool

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Template:
        return cls(
            name=d["name"],
            description=d["description"],
            created_at=d["created_at"],
            size_bytes=d["size_bytes"],
            ready=d["ready"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.name is not None:
            d["name"] = self.name
        if self.description is not None:
            d["description"] = self.description
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.size_bytes is not None:
            d["size_bytes"] = self.size_bytes
        if self.ready is not None:
            d["ready"] = self.ready
        return d


@dataclass
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


@dataclass
class Tenant:
    name: str
    quotas: TenantQuotas
    created_at: str
    usage: TenantUsage | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Tenant:
        return cls(
            name=d["name"],
            quotas=TenantQuotas.from_dict(d["quotas"]),
            created_at=d["created_at"],
            usage=None if (v := d.get("usage")) is None else TenantUsage.from_dict(v),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.name is not None:
            d["name"] = self.name
        if self.quotas is not None:
            d["quotas"] = self.quotas.to_dict()
        if self.created_at is not None:
            d["created_at"] = self.created_at
        if self.usage is not None:
            d["usage"] = self.usage.to_dict()
        return d


@dataclass
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


@dataclass
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


@dataclass
class TenantQuotas:
    """0 or absent: no tenant limit (the server's limits still apply)."""

    max_sandboxes: int | None = None
    max_total_cpu: float | None = None
    max_total_memory_mb: int | None = None
    create_per_minute: float | None = None
    create_burst: int | None = None
    max_cpu: float | None = None
    max_memory_mb: int | None = None
    max_disk_mb: int | None = None
    max_pids: int | None = None
    max_timeout_s: int | None = None
    network_modes: list[str] | None = None
    allowed_domains: list[str] | None = None
    deny_secrets: bool | None = None
    deny_exposed_ports: bool | None = None
    defaults: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TenantQuotas:
        return cls(
            max_sandboxes=d.get("max_sandboxes"),
            max_total_cpu=None if (v := d.get("max_total_cpu")) is None else float(v),
            max_total_memory_mb=d.get("max_total_memory_mb"),
            create_per_minute=None if (v := d.get("create_per_minute")) is None else float(v),
            create_burst=d.get("create_burst"),
            max_cpu=None if (v := d.get("max_cpu")) is None else float(v),
            max_memory_mb=d.get("max_memory_mb"),
            max_disk_mb=d.get("max_disk_mb"),
            max_pids=d.get("max_pids"),
            max_timeout_s=d.get("max_timeout_s"),
            network_modes=d.get("network_modes"),
            allowed_domains=d.get("allowed_domains"),
            deny_secrets=d.get("deny_secrets"),
            deny_exposed_ports=d.get("deny_exposed_ports"),
            defaults=d.get("defaults"),
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.max_sandboxes is not None:
            d["max_sandboxes"] = self.max_sandboxes
        if self.max_total_cpu is not None:
            d["max_total_cpu"] = self.max_total_cpu
        if self.max_total_memory_mb is not None:
            d["max_total_memory_mb"] = self.max_total_memory_mb
        if self.create_per_minute is not None:
            d["create_per_minute"] = self.create_per_minute
        if self.create_burst is not None:
            d["create_burst"] = self.create_burst
        if self.max_cpu is not None:
            d["max_cpu"] = self.max_cpu
        if self.max_memory_mb is not None:
            d["max_memory_mb"] = self.max_memory_mb
        if self.max_disk_mb is not None:
            d["max_disk_mb"] = self.max_disk_mb
        if self.max_pids is not None:
            d["max_pids"] = self.max_pids
        if self.max_timeout_s is not None:
            d["max_timeout_s"] = self.max_timeout_s
        if self.network_modes is not None:
            d["network_modes"] = self.network_modes
        if self.allowed_domains is not None:
            d["allowed_domains"] = self.allowed_domains
        if self.deny_secrets is not None:
            d["deny_secrets"] = self.deny_secrets
        if self.deny_exposed_ports is not None:
            d["deny_exposed_ports"] = self.deny_exposed_ports
        if self.defaults is not None:
            d["defaults"] = self.defaults
        return d


@dataclass
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


@dataclass
class TenantUsage:
    """what the tenant's running sandboxes hold now"""

    sandboxes: int
    cpu: float
    memory_mb: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TenantUsage:
        return cls(
            sandboxes=d["sandboxes"],
            cpu=float(d["cpu"]),
            memory_mb=d["memory_mb"],
        )

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.sandboxes is not None:
            d["sandboxes"] = self.sandboxes
        if self.cpu is not None:
            d["cpu"] = self.cpu
        if self.memory_mb is not None:
            d["memory_mb"] = self.memory_mb
        return d


@dataclass
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


@dataclass
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
