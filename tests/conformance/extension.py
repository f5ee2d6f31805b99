"""What the tool-resolution extension (draft 2026-08-20) asks of a resolve
answer, as checks a client can run: written for this project from the
extension's specification, shared by the conformance suite (`suite.py`) and
the file server's end-to-end test.

* `RESULT_SCHEMA`: the result shape — exactly `resultType: "complete"`,
  `name`, `annotations` with exactly the four core hints as booleans, and an
  optional `_meta` object;
* `error_schema(code)`: a JSON-RPC error response with that code (for
  -32021, the `requiredCapabilities` naming the extension);
* `within_conservative_bound`: the client-side bound check, after defaults;
* `meta_is_negotiated`: result `_meta` keys belong to negotiated extensions;
* `declared`: the variant and annotations a signature declares for some
  arguments (docs/signature.md's host-side recipe);
* `fingerprint_of`: a signature document's fingerprint (RFC 8785 + SHA-256);
* `candidates` / `invalid_variant`: argument objects from an `inputSchema`.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
from typing import Any

import jsonschema

EXTENSION = "io.modelcontextprotocol/tool-resolution"
# This project's companion extension: the matched variant in result `_meta`.
VARIANT_EXTENSION = "io.github.mcp-resolve/variant"
CORE_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}

RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["resultType", "name", "annotations"],
    "additionalProperties": False,
    "properties": {
        "resultType": {"const": "complete"},
        "name": {"type": "string", "minLength": 1},
        "annotations": {
            "type": "object",
            "required": list(CORE_DEFAULTS),
            "additionalProperties": False,
            "properties": {hint: {"type": "boolean"} for hint in CORE_DEFAULTS},
        },
        "_meta": {"type": "object"},
    },
}


def error_schema(code: int) -> dict[str, Any]:
    """A JSON-RPC 2.0 error response with `code`."""
    error: dict[str, Any] = {
        "type": "object",
        "required": ["code", "message"],
        "properties": {"code": {"const": code}, "message": {"type": "string"}},
    }
    if code == -32021:
        error["required"] = ["code", "message", "data"]
        error["properties"]["data"] = {
            "type": "object",
            "required": ["requiredCapabilities"],
            "properties": {"requiredCapabilities": {
                "type": "object",
                "required": ["extensions"],
                "properties": {"extensions": {
                    "type": "object",
                    "required": [EXTENSION],
                    "properties": {EXTENSION: {"type": "object"}},
                }},
            }},
        }
    return {
        "type": "object",
        "required": ["jsonrpc", "id", "error"],
        "not": {"required": ["result"]},
        "properties": {"jsonrpc": {"const": "2.0"}, "error": error},
    }


def schema_errors(schema: dict[str, Any], value: Any) -> list[str]:
    """Every way `value` fails `schema`, as readable lines (empty when valid)."""
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in validator.iter_errors(value)]


def core(annotations: dict[str, Any]) -> dict[str, bool]:
    """The four core hints, defaults applied."""
    return {hint: annotations.get(hint, default) for hint, default in CORE_DEFAULTS.items()}


def within_conservative_bound(static: dict[str, Any], resolved: dict[str, Any]) -> str | None:
    """The extension's client-side check, after defaults: the violated rule, or None."""
    s, r = core(static), core(resolved)
    if s["readOnlyHint"] and not r["readOnlyHint"]:
        return "static read-only, resolved not read-only"
    if not s["readOnlyHint"] and not s["destructiveHint"] and not r["readOnlyHint"] and r["destructiveHint"]:
        return "static non-destructive, resolved destructive"
    if s["idempotentHint"] and not r["readOnlyHint"] and not r["idempotentHint"]:
        return "static idempotent, resolved not idempotent"
    if not s["openWorldHint"] and r["openWorldHint"]:
        return "static closed-world, resolved open-world"
    return None


# Result `_meta` keys the protocol itself defines for every result, not
# extensions': a server's identity (2026-07-28: servers SHOULD identify
# themselves on every response; the TypeScript SDK v2 does).
CORE_RESULT_META = {"io.modelcontextprotocol/serverInfo"}


def meta_is_negotiated(result: dict[str, Any], client: set[str], server: set[str]) -> str | None:
    """Result `_meta` keys of extensions (`a/b` names) must be ones both sides declared."""
    for key in (result.get("_meta") or {}):
        if key in CORE_RESULT_META:
            continue
        if "/" in key and not (key in client and key in server):
            return f"result _meta key {key!r} belongs to an extension that was not negotiated"
    return None


def declared(tool: dict[str, Any], arguments: Any) -> tuple[str | None, dict[str, Any]]:
    """The variant and annotations a signature tool declares for `arguments`."""
    for variant in tool.get("resolvedVariants", []):
        patterns = variant["when"]["argumentPatterns"]
        schema = {
            "type": "object",
            "properties": patterns,
            "required": [k for k, v in patterns.items() if v is not False],
        }
        if jsonschema.Draft202012Validator(schema).is_valid(arguments):
            return variant["name"], variant["annotations"]
    return None, tool["annotations"]


def fingerprint_of(document: dict[str, Any]) -> str:
    import rfc8785  # only the signature checks need it

    body = {k: v for k, v in document.items() if k not in ("fingerprint", "resultType", "_meta")}
    return "sha256:" + hashlib.sha256(rfc8785.dumps(body)).hexdigest()


def candidates(schema: dict[str, Any], limit: int = 512) -> list[dict[str, Any]]:
    """Argument objects valid for `schema`, covering its enums, booleans and
    optional fields."""
    required = set(schema.get("required", []))
    choices: list[list[tuple[str, Any]]] = []
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        if "enum" in prop:
            values = list(prop["enum"])
        elif "const" in prop:
            values = [prop["const"]]
        elif prop.get("type") == "boolean":
            values = [True, False]
        elif prop.get("type") == "string":
            values = ["notes.txt"]
        elif prop.get("type") in ("integer", "number"):
            values = [prop.get("minimum", 1)]
        elif prop.get("type") == "array":
            values = [[]]
        elif prop.get("type") == "object":
            values = [{}]
        else:
            values = ["notes.txt"]
        options = [(name, v) for v in values]
        if name not in required:
            options.append((name, ...))  # absent
        choices.append(options)
    validator = jsonschema.Draft202012Validator(schema)
    out = []
    for combo in itertools.product(*choices):
        arguments = {k: v for k, v in combo if v is not ...}
        if validator.is_valid(arguments):
            out.append(arguments)
        if len(out) >= limit:
            break
    return out


def invalid_variant(schema: dict[str, Any], valid: dict[str, Any]) -> dict[str, Any] | None:
    """`valid` changed so that `schema` rejects it: a required argument
    dropped, or an argument of the wrong type; None when neither works."""
    validator = jsonschema.Draft202012Validator(schema)
    for name in schema.get("required", []):
        broken = {k: v for k, v in valid.items() if k != name}
        if not validator.is_valid(broken):
            return broken
    for name in (schema.get("properties") or {}):
        for wrong in ({"not": "expected"}, 12345, "not-expected", None):
            broken = copy.deepcopy(valid)
            broken[name] = wrong
            if not validator.is_valid(broken):
                return broken
    return None


def selftest() -> None:
    """The checks above must be able to fail: known lies are caught."""
    static = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    lies = [
        ({"readOnlyHint": True}, {"readOnlyHint": False}),
        (static, {**static, "destructiveHint": True}),
        (static, {**static, "idempotentHint": False}),
        (static, {**static, "openWorldHint": True}),
        ({"openWorldHint": False}, {}),  # defaults apply: open world
    ]
    for s, r in lies:
        assert within_conservative_bound(s, r) is not None, f"bound check accepts {s} -> {r}"
    assert within_conservative_bound(static, {**static, "readOnlyHint": True}) is None
    tool = {"annotations": {"readOnlyHint": False},
            "resolvedVariants": [{"name": "r", "when": {"argumentPatterns": {"a": {"const": 1}, "b": False}},
                                  "annotations": {"readOnlyHint": True}}]}
    assert declared(tool, {"a": 1})[0] == "r", "recipe misses a match"
    assert declared(tool, {"a": 1, "b": 0})[0] is None, "`false` must mean absent"
    assert declared(tool, {})[0] is None, "a pattern requires its argument"
    good = {"resultType": "complete", "name": "t", "annotations": core({})}
    assert not schema_errors(RESULT_SCHEMA, good)
    for bad in [{**good, "tool": {}}, {**good, "resultType": "partial"},
                {**good, "annotations": {**core({}), "title": "x"}},
                {**good, "annotations": {"readOnlyHint": True}},
                {**good, "annotations": {**core({}), "readOnlyHint": "yes"}}]:
        assert schema_errors(RESULT_SCHEMA, bad), f"result schema accepts {bad}"
    assert meta_is_negotiated({"_meta": {"a/b": {}}}, {"a/b"}, {"a/b"}) is None
    assert meta_is_negotiated({"_meta": {"a/b": {}}}, set(), {"a/b"}) is not None
    missing = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32021, "message": "m"}}
    assert schema_errors(error_schema(-32021), missing), "-32021 without requiredCapabilities"
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"enum": ["x", "y"]}, "b": {"type": "boolean"}}}
    assert len(candidates(schema)) == 6
    assert not jsonschema.Draft202012Validator(schema).is_valid(invalid_variant(schema, {"a": "x"}))
