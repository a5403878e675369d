"""A small JSON Schema checker for the subset the OpenAPI document uses
($ref, type, properties, required, additionalProperties, items, enum,
const), and a matcher from a request to its documented operation. Tests
check every JSON answer they get against the document: the document, the
server and the SDK's generated models must agree."""

from __future__ import annotations

import re
from typing import Any

_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


class Doc:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.ops: list[tuple[re.Pattern[str], int, str, dict[str, Any]]] = []
        for p, item in doc["paths"].items():
            rx = "^" + re.sub(r"\\\{[^}]*\\\.\\\.\\\.\\\}", ".*", re.sub(r"\\\{[^}.]*\\\}", "[^/]+", re.escape(p))) + "$"
            literal = len(re.sub(r"\{[^}]*\}", "", p))
            for m, op in item.items():
                if isinstance(op, dict):
                    self.ops.append((re.compile(rx), literal, m.upper(), op))
        self.ops.sort(key=lambda x: -x[1])

    def resolve(self, s: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in s:
            parts = s["$ref"].lstrip("#/").split("/")
            node: Any = self.doc
            for part in parts:
                node = node[part]
            s = node
        return s

    def operation(self, method: str, path: str) -> dict[str, Any] | None:
        for rx, _, m, op in self.ops:
            if m == method and rx.match(path):
                return op
        return None

    def response_schema(self, method: str, path: str, status: int, ctype: str) -> dict[str, Any] | None:
        op = self.operation(method, path)
        if op is None:
            return None
        rs = op.get("responses", {})
        r = rs.get(str(status)) or rs.get("default")
        if r is None:
            return None
        r = self.resolve(r)
        c = r.get("content", {}).get(ctype)
        return None if c is None else c.get("schema")

    def validate(self, v: Any, s: dict[str, Any], where: str = "$") -> list[str]:
        s = self.resolve(s)
        errs: list[str] = []
        if "const" in s and v != s["const"]:
            return ["%s: %r is not %r" % (where, v, s["const"])]
        t = s.get("type")
        if t is not None:
            ts = t if isinstance(t, list) else [t]
            if not any(_TYPES[x](v) for x in ts):
                return ["%s: %r is not of type %s" % (where, v if len(repr(v)) < 80 else type(v).__name__, t)]
        if "enum" in s and v not in s["enum"]:
            errs.append("%s: %r not in %s" % (where, v, s["enum"]))
        if isinstance(v, dict):
            props = s.get("properties", {})
            for r in s.get("required", []):
                if r not in v:
                    errs.append("%s: missing required %r" % (where, r))
            ap = s.get("additionalProperties", True)
            for k, x in v.items():
                if k in props:
                    errs += self.validate(x, props[k], "%s.%s" % (where, k))
                elif ap is False:
                    errs.append("%s: undocumented field %r" % (where, k))
                elif isinstance(ap, dict):
                    errs += self.validate(x, ap, "%s[%r]" % (where, k))
        if isinstance(v, list) and "items" in s:
            for i, x in enumerate(v):
                errs += self.validate(x, s["items"], "%s[%d]" % (where, i))
        return errs
