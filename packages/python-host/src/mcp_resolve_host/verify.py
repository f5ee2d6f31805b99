"""Checking a server's ``tools/list`` and resolution results against its
signature document: the Rust host library's ``verify_tools_list`` and
``verify_resolution``, with the same violation kinds and messages."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from mcp_resolve_runtime import json_equal
from mcp_resolve_runtime.serving import EXTENSION_ID

from .signature import CORE_HINTS, Expected, Hints, Signature, SignedTool
from .violation import Violation, finish

_WORST: Final[Mapping[str, bool]] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
    "agencyHint": True,
}
_CORE: Final = tuple(name for name, _ in CORE_HINTS)
_PINNED_FIELDS: Final = ("title", "description", "inputSchema", "outputSchema", "icons", "execution", "_meta")


def _show(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _bool(b: bool) -> str:
    return "true" if b else "false"


def _compare_hints(
    tool: str,
    expected: Hints,
    reported: Mapping[str, object],
    only_core: bool,
    context: str,
    out: list[Violation],
) -> None:
    core: dict[str, bool | None] = {}
    for hint, value in reported.items():
        is_core = hint in _CORE
        if type(value) is bool:
            if is_core:
                core[hint] = value
            elif hint not in expected:
                out.append(Violation(
                    "undeclared-hint", tool, f"{context} reports `{hint}`, which the signature does not declare"
                ))
        elif isinstance(value, str) and hint == "title":
            pass  # A display title is not a hint.
        else:
            if is_core:
                core[hint] = None
            out.append(Violation("malformed", tool, f"{context} reports `{hint}` as {_show(value)}, not a boolean"))

    def differs(hint: str, want: bool, got: bool, left_out: bool) -> None:
        if got == want:
            return
        v = Violation(
            "annotation",
            tool,
            f"{context} has `{hint}: {_bool(got)}`"
            + (" (left out, so the MCP default)" if left_out else "")
            + f" where the signature declares `{_bool(want)}`",
        )
        worst = _WORST.get(hint)
        v.less_conservative = worst is None or want == worst
        out.append(v)

    for hint, fallback in CORE_HINTS:
        want = expected[hint]
        if hint not in core:
            differs(hint, want, fallback, True)
        else:
            got = core[hint]
            if got is not None:
                differs(hint, want, got, False)
    if not only_core:
        for hint in sorted(h for h in expected if h not in _CORE):
            got_value = reported.get(hint)
            if type(got_value) is bool:
                differs(hint, expected[hint], got_value, False)


def _show_set(scopes: set[str] | frozenset[str]) -> str:
    return "{" + ", ".join(json.dumps(s, ensure_ascii=False) for s in sorted(scopes)) + "}"


def _compare_scopes(
    tool: str, expected: tuple[str, ...], reported: set[str], context: str, out: list[Violation]
) -> None:
    want = set(expected)
    if want == reported:
        return
    v = Violation(
        "scopes",
        tool,
        f"{context} asks for scopes {_show_set(reported)} where the signature declares {_show_set(want)}",
    )
    v.less_conservative = not reported <= want
    out.append(v)


def _scopes_of_schemes(tool: Mapping[str, Any]) -> set[str] | str | None:
    """The scopes of SEP-1488 ``securitySchemes``: ``None`` when absent, a
    message when malformed."""
    if "securitySchemes" not in tool:
        return None
    schemes = tool["securitySchemes"]
    if not isinstance(schemes, list):
        return "`securitySchemes` is not an array"
    scopes: set[str] = set()
    for scheme in schemes:
        if isinstance(scheme, dict) and "scopes" in scheme:
            listed = scheme["scopes"]
            if not isinstance(listed, list) or not all(isinstance(s, str) for s in listed):
                return "`securitySchemes[].scopes` must be an array of strings"
            scopes.update(listed)
    return scopes


def _unmark(tool: Mapping[str, Any]) -> dict[str, Any]:
    copy = dict(tool)
    copy.pop("resolve", None)
    copy.pop("dynamicAnnotations", None)
    meta = copy.get("_meta")
    if isinstance(meta, dict) and EXTENSION_ID in meta:
        rest = {k: v for k, v in meta.items() if k != EXTENSION_ID}
        if rest:
            copy["_meta"] = rest
        else:
            del copy["_meta"]
    return copy


def _compare_tool_fields(signed: SignedTool, listed: Mapping[str, Any], context: str, out: list[Violation]) -> None:
    unmarked = _unmark(listed)
    for field in _PINNED_FIELDS:
        want = signed.definition.get(field)
        if field == "_meta" and isinstance(want, dict) and not want:
            want = None
        got = unmarked.get(field)
        same = got is None if want is None else got is not None and json_equal(got, want)
        if not same:
            out.append(Violation(
                "tool-changed", signed.name, f"{context} has a `{field}` that differs from the signature's"
            ))


def _marked_resolvable(tool: Mapping[str, Any]) -> bool:
    meta = tool.get("_meta")
    marker = meta.get(EXTENSION_ID) if isinstance(meta, dict) else None
    return (
        (isinstance(marker, dict) and marker.get("resolvable") is True)
        or tool.get("resolve") is True
        or tool.get("dynamicAnnotations") is True
    )


def verify_tools_list(signature: Signature, result: object) -> None:
    """Checks a ``tools/list`` result (``{tools: [...]}``, or the bare list)
    against the signature. Raises :class:`~.violation.Violations`."""
    tools = result if isinstance(result, list) else result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list):
        finish([Violation("malformed", "", "a tools/list result needs a `tools` array")])
        return
    out: list[Violation] = []
    seen: set[str] = set()
    for tool in tools:
        if not isinstance(tool, dict):
            out.append(Violation("malformed", "", f"tools/list holds {_show(tool)}, not a tool object"))
            continue
        name = tool.get("name")
        if not isinstance(name, str):
            out.append(Violation("malformed", "", "tools/list holds a tool without a string `name`"))
            continue
        if name in seen:
            out.append(Violation("duplicate-tool", name, "tools/list names the tool twice"))
            continue
        seen.add(name)
        signed = signature.tool(name)
        if signed is None:
            out.append(Violation("unknown-tool", name, "tools/list offers a tool the signature does not have"))
            continue
        _compare_tool_fields(signed, tool, "tools/list", out)
        annotations = tool.get("annotations")
        title = annotations.get("title") if isinstance(annotations, dict) else None
        if (title if isinstance(title, str) else None) != signed.title:
            out.append(Violation(
                "tool-changed", name, "tools/list has an `annotations.title` that differs from the signature's"
            ))
        if annotations is None:
            _compare_hints(name, signed.annotations, {}, False, "tools/list", out)
        elif isinstance(annotations, dict):
            _compare_hints(name, signed.annotations, annotations, False, "tools/list", out)
        else:
            out.append(Violation("malformed", name, f"tools/list has `annotations` {_show(annotations)}, not an object"))
        if _marked_resolvable(tool) and not signed.resolvable:
            out.append(Violation(
                "not-resolvable", name, "tools/list marks the tool resolvable but the signature gives it no variants"
            ))
        scopes = _scopes_of_schemes(tool)
        if isinstance(scopes, str):
            out.append(Violation("malformed", name, scopes))
        elif scopes is not None:
            _compare_scopes(name, signed.required_scopes, scopes, "tools/list", out)
    finish(out)


def verify_resolution(signature: Signature, name: str, args: object, result: object) -> Expected:
    """Checks a resolution result, in any dialect, against what the
    signature declares for the call. Returns the signature's answer, which
    the host should act on; raises :class:`~.violation.Violations`."""
    try:
        expected = signature.expect(name, args)
    except Violation as v:
        finish([v])
        raise
    want = expected.annotations
    context = (
        "the resolution (static annotations)"
        if expected.variant is None
        else f"the resolution (variant `{expected.variant.name}`)"
    )

    def malformed(message: str) -> None:
        finish([Violation("malformed", name, message)])

    if not isinstance(result, dict):
        malformed(f"a resolution result must be an object, not {_show(result)}")
        return expected
    out: list[Violation] = []
    if "tool" in result:
        tool = result["tool"]
        if not isinstance(tool, dict):
            malformed("`tool` must be an object")
            return expected
        if tool.get("name") != name:
            malformed(f"the result describes tool {_show(tool.get('name'))}, not `{name}`")
        _compare_tool_fields(expected.tool, tool, "the resolved tool", out)
        reported = tool.get("annotations")
        if not isinstance(reported, dict):
            malformed("the resolved tool has no `annotations` object")
            return expected
        _compare_hints(name, want, reported, False, context, out)
        scopes = _scopes_of_schemes(tool)
        if isinstance(scopes, str):
            out.append(Violation("malformed", name, scopes))
        elif scopes is not None:
            _compare_scopes(name, expected.required_scopes, scopes, context, out)
    elif "resultType" in result:
        if result["resultType"] != "complete":
            malformed(f"`resultType` is {_show(result['resultType'])}; only a complete result carries annotations")
        if result.get("name") != name:
            malformed(f"the result names tool {_show(result.get('name'))}, not `{name}`")
        reported = result.get("annotations")
        if not isinstance(reported, dict):
            malformed("the result has no `annotations` object")
            return expected
        _compare_hints(name, want, reported, True, context, out)
    elif "annotations" in result:
        reported = result["annotations"]
        if not isinstance(reported, dict):
            malformed("`annotations` must be an object")
            return expected
        _compare_hints(name, want, reported, False, context, out)
    else:
        malformed("the result has none of `tool`, `resultType` or `annotations`")
    finish(out)
    return expected
