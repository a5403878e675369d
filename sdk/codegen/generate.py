#!/usr/bin/python3
"""Generate the SDKs' wire models from Paddock's OpenAPI document.

    generate.py [--doc openapi.json] [--check]

Without --doc the document is assembled from internal/api/openapi/*.json
the way the server does (paths and components merged). Writes
sdk/python/src/paddock/models.py and sdk/typescript/src/models.ts; with
--check it writes nothing and exits 1 if either file differs from what the
document gives (the SDK test runs this against the served /openapi.json,
so the models cannot drift from the API).
"""
from __future__ import annotations

import argparse
import glob
import json
import keyword
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PY_OUT = os.path.join(ROOT, "sdk", "python", "src", "paddock", "models.py")
TS_OUT = os.path.join(ROOT, "sdk", "typescript", "src", "models.ts")


def load(doc_path: str | None) -> dict:
    if doc_path:
        with open(doc_path, encoding="utf-8") as f:
            return json.load(f)
    doc: dict = {"paths": {}, "components": {}}
    for name in sorted(glob.glob(os.path.join(ROOT, "internal", "api", "openapi", "*.json"))):
        with open(name, encoding="utf-8") as f:
            frag = json.load(f)
        for p, ops in frag.get("paths", {}).items():
            doc["paths"].setdefault(p, {}).update(ops)
        for sec, items in frag.get("components", {}).items():
            doc["components"].setdefault(sec, {}).update(items)
    return doc


def refname(s: dict) -> str | None:
    r = s.get("$ref", "")
    return r.rsplit("/", 1)[-1] if r.startswith("#/components/schemas/") else None


def pyname(n: str) -> str:
    return n + "_" if keyword.iskeyword(n) else n


def is_object_schema(s: dict) -> bool:
    return s.get("type") == "object" and "properties" in s


# ---------------------------------------------------------------- Python

def py_type(s: dict) -> str:
    r = refname(s)
    if r:
        return r
    t = s.get("type")
    if isinstance(t, list):
        inner = [x for x in t if x != "null"]
        base = py_type({**s, "type": inner[0]}) if inner else "None"
        return base + " | None"
    if "enum" in s and t == "string":
        return "str"
    return {
        "string": "str", "integer": "int", "number": "float", "boolean": "bool",
    }.get(t, None) or (
        "list[%s]" % py_type(s.get("items", {})) if t == "array" else
        "dict[str, %s]" % (py_type(s["additionalProperties"]) if isinstance(s.get("additionalProperties"), dict) else "Any")
        if t == "object" else "Any")


def py_conv(s: dict, expr: str) -> str:
    """Python expression converting JSON value expr to the model type."""
    r = refname(s)
    if r:
        return "%s.from_dict(%s)" % (r, expr)
    t = s.get("type")
    if t == "array" and refname(s.get("items", {})):
        return "[%s.from_dict(x) for x in %s]" % (refname(s["items"]), expr)
    if t == "object" and isinstance(s.get("additionalProperties"), dict) and refname(s["additionalProperties"]):
        return "{k: %s.from_dict(v) for k, v in %s.items()}" % (refname(s["additionalProperties"]), expr)
    if t == "number":
        return "float(%s)" % expr
    return expr


def py_dump(s: dict, expr: str) -> str:
    r = refname(s)
    if r:
        return "%s.to_dict()" % expr
    t = s.get("type")
    if t == "array" and refname(s.get("items", {})):
        return "[x.to_dict() for x in %s]" % expr
    if t == "object" and isinstance(s.get("additionalProperties"), dict) and refname(s["additionalProperties"]):
        return "{k: v.to_dict() for k, v in %s.items()}" % expr
    return expr


def gen_python(doc: dict) -> str:
    schemas = doc["components"]["schemas"]
    out = [
        '"""Paddock\'s wire models, generated from the OpenAPI document by',
        "sdk/codegen/generate.py. Do not edit: run `make sdk-models`.",
        "",
        "Each model is a keyword-only dataclass (fields sorted: required, then optional); from_dict ignores fields it does not know",
        "(a newer server), to_dict leaves out fields that are None.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass, field",
        "from typing import Any, Mapping",
        "",
        "__all__ = [%s]" % ", ".join('"%s"' % n for n in sorted(schemas) if is_object_schema(schemas[n])),
        "",
    ]
    for name in sorted(schemas):
        s = schemas[name]
        if not is_object_schema(s):
            continue
        props = s["properties"]
        req = set(s.get("required", []))
        out.append("")
        out.append("@dataclass(kw_only=True)")
        out.append("class %s:" % name)
        desc = s.get("description")
        if desc:
            out.append('    """%s"""' % desc.replace('"""', "'''").replace("\\", "\\\\"))
            out.append("")
        order = sorted(p for p in props if p in req) + sorted(p for p in props if p not in req)
        for p in order:
            ps = props[p]
            typ = py_type(ps)
            if p in req:
                out.append("    %s: %s" % (pyname(p), typ))
            else:
                if typ.endswith(" | None"):
                    typ = typ[: -len(" | None")]
                out.append("    %s: %s | None = None" % (pyname(p), typ))
        out.append("")
        out.append("    @classmethod")
        out.append("    def from_dict(cls, d: Mapping[str, Any]) -> %s:" % name)
        args = []
        for p in order:
            ps = props[p]
            if p in req:
                args.append("%s=%s" % (pyname(p), py_conv(ps, 'd["%s"]' % p)))
            else:
                conv = py_conv(ps, "v")
                if conv == "v":
                    args.append('%s=d.get("%s")' % (pyname(p), p))
                else:
                    args.append('%s=None if (v := d.get("%s")) is None else %s' % (pyname(p), p, conv))
        if args:
            out.append("        return cls(")
            for a in args:
                out.append("            %s," % a)
            out.append("        )")
        else:
            out.append("        return cls()")
        out.append("")
        out.append("    def to_dict(self) -> dict[str, Any]:")
        out.append("        d: dict[str, Any] = {}")
        for p in order:
            ps = props[p]
            attr = "self.%s" % pyname(p)
            dump = py_dump(ps, attr)
            out.append("        if %s is not None:" % attr)
            out.append('            d["%s"] = %s' % (p, dump))
        out.append("        return d")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


# ---------------------------------------------------------------- TypeScript

def ts_type(s: dict) -> str:
    r = refname(s)
    if r:
        return r
    if "const" in s:
        return json.dumps(s["const"])
    t = s.get("type")
    if isinstance(t, list):
        return " | ".join(ts_type({**s, "type": x}) if x != "null" else "null" for x in t)
    if "enum" in s:
        return " | ".join(json.dumps(v) for v in s["enum"])
    if t == "string":
        return "string"
    if t in ("integer", "number"):
        return "number"
    if t == "boolean":
        return "boolean"
    if t == "array":
        inner = ts_type(s.get("items", {}))
        return ("(%s)[]" % inner) if "|" in inner else inner + "[]"
    if t == "object":
        if "properties" in s:
            return ts_inline(s)
        ap = s.get("additionalProperties")
        return "Record<string, %s>" % (ts_type(ap) if isinstance(ap, dict) else "unknown")
    return "unknown"


def ts_inline(s: dict) -> str:
    req = set(s.get("required", []))
    fields = ["%s%s: %s" % (json.dumps(p) if not p.isidentifier() else p, "" if p in req else "?", ts_type(v))
              for p, v in sorted(s["properties"].items())]
    return "{ " + "; ".join(fields) + " }"


def gen_ts(doc: dict) -> str:
    schemas = doc["components"]["schemas"]
    out = [
        "// Paddock's wire models, generated from the OpenAPI document by",
        "// sdk/codegen/generate.py. Do not edit: run `make sdk-models`.",
        "",
    ]
    for name in sorted(schemas):
        s = schemas[name]
        if not is_object_schema(s):
            continue
        req = set(s.get("required", []))
        if s.get("description"):
            out.append("/** %s */" % s["description"].replace("*/", "* /"))
        out.append("export interface %s {" % name)
        for p, ps in sorted(s["properties"].items()):
            if ps.get("description"):
                out.append("  /** %s */" % ps["description"].replace("*/", "* /"))
            key = p if p.isidentifier() else json.dumps(p)
            out.append("  %s%s: %s;" % (key, "" if p in req else "?", ts_type(ps)))
        out.append("}")
        out.append("")
    codes = doc["components"]["schemas"].get("ErrorDetail", {}).get("properties", {}).get("code", {}).get("enum", [])
    out.append("/** Every error code the server answers with (docs/api.md). */")
    out.append("export const ERROR_CODES = %s as const;" % json.dumps(codes))
    out.append("")
    out.append("/** Every operation of the API, by operationId: method and path. */")
    out.append("export const OPERATIONS = {")
    ops = []
    for p, item in sorted(doc["paths"].items()):
        for m, op in sorted(item.items()):
            if isinstance(op, dict) and op.get("operationId"):
                ops.append((op["operationId"], m.upper(), p))
    for oid, m, p in sorted(ops):
        out.append("  %s: [%s, %s]," % (oid, json.dumps(m), json.dumps(p)))
    out.append("} as const;")
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    doc = load(a.doc)
    want = {PY_OUT: gen_python(doc), TS_OUT: gen_ts(doc)}
    stale = []
    for path, text in want.items():
        try:
            with open(path, encoding="utf-8") as f:
                have = f.read()
        except FileNotFoundError:
            have = None
        if have != text:
            stale.append(path)
            if not a.check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    if a.check and stale:
        for p in stale:
            print("stale: %s (run `make sdk-models`)" % os.path.relpath(p, ROOT), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
