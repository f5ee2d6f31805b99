"""What a Python host decides on before it asks the user about a call: the
annotations of this call, from the best source there is, checked, and the
source named — the contract of the TypeScript host library's ``decide``.

1. ``server``: the server's ``tools/resolve``, when it offers the extension
   and lists the tool resolvable — checked against the conservative bound of
   the listed static annotations and, when the host holds the server's
   signature document, against it (the Rust host's ``verify_resolution``): a
   resolution that widens past either is refused, and the host falls back;
2. ``signature``: resolved locally from the signature document's
   ``resolvedVariants`` (``argumentPatterns``), as ``mcp-resolve-host`` does;
3. ``static``: the tool's static annotations (the worst case), MCP's
   defaults for hints left out.

Works with a connected ``mcp.Client`` of the Python SDK 2.x (it uses
``list_tools``, ``server_capabilities`` and ``session.send_request``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_resolve_runtime import RpcError
from mcp_resolve_runtime.serving import EXTENSION_ID

from .signature import CORE_HINTS, Hints, Signature
from .verify import verify_resolution
from .violation import Violation, Violations

Source = Literal["server", "signature", "static"]
"""Where the annotations of a decision came from."""


@dataclass(frozen=True)
class Decision:
    """The annotations a host should decide a call on, and why."""

    source: Source
    annotations: Hints
    """Every hint explicit: the core four (MCP's defaults where left out),
    then any others."""
    variant: str | None
    """The variant, when a signature names it."""
    required_scopes: tuple[str, ...] | None
    """The scopes the signature declares for the call, when there is one."""
    reason: str
    """Why this source: one sentence for a log or a prompt."""
    violations: Sequence[Violation] = field(default_factory=tuple)
    """What was wrong with the server's answer, when it was refused."""


def _with_defaults(annotations: object) -> dict[str, bool]:
    given = annotations if isinstance(annotations, Mapping) else {}
    hints: dict[str, bool] = {}
    for hint, fallback in CORE_HINTS:
        v = given.get(hint)
        hints[hint] = v if type(v) is bool else fallback
    for hint, v in given.items():
        if type(v) is bool and hint not in hints:
            hints[hint] = v
    return hints


def outside_bound(tool: str, bound: Hints, resolved: Hints) -> list[Violation]:
    """The violations of ``resolved`` against the extension's conservative
    bound of the listed annotations, after defaults."""
    out: list[Violation] = []

    def widened(hint: str, got: bool, why: str) -> None:
        value = "true" if got else "false"
        out.append(Violation(
            "annotation",
            tool,
            f"the resolution has `{hint}: {value}` outside the conservative bound of the listed annotations ({why})",
        ))

    read_only = resolved.get("readOnlyHint") is True
    if bound.get("readOnlyHint") is True and not read_only:
        widened("readOnlyHint", False, "the tool is listed read-only")
    if not read_only:
        if (
            bound.get("readOnlyHint") is not True
            and bound.get("destructiveHint") is False
            and resolved.get("destructiveHint") is True
        ):
            widened("destructiveHint", True, "the tool is listed non-destructive")
        if bound.get("idempotentHint") is True and resolved.get("idempotentHint") is not True:
            widened("idempotentHint", False, "the tool is listed idempotent")
    if bound.get("openWorldHint") is False and resolved.get("openWorldHint") is True:
        widened("openWorldHint", True, "the tool is listed closed-world")
    return out


def _shape_problem(result: object, name: str) -> str | None:
    if not isinstance(result, dict):
        return "the result is not an object"
    for key in result:
        if key not in ("resultType", "name", "annotations", "_meta"):
            return f"the result has a member `{key}`"
    if "resultType" in result and result["resultType"] != "complete":
        return "`resultType` is not `complete`"
    if result.get("name") != name:
        return f"the result names tool {result.get('name')!r}"
    annotations = result.get("annotations")
    if not isinstance(annotations, dict):
        return "the result has no `annotations` object"
    if sorted(annotations) != sorted(h for h, _ in CORE_HINTS) or not all(
        type(v) is bool for v in annotations.values()
    ):
        return "`annotations` must have exactly the four core hints, as booleans"
    return None


def _dump(model: object) -> Any:
    dump = getattr(model, "model_dump", None)
    return dump(by_alias=True, mode="json", exclude_none=True) if dump is not None else model


async def _listed_tool(client: Any, name: str) -> dict[str, Any] | None:
    cursor: str | None = None
    for _ in range(1000):
        listed = await client.list_tools(cursor=cursor)
        for tool in listed.tools:
            dumped = _dump(tool)
            if isinstance(dumped, dict) and dumped.get("name") == name:
                return dumped
        cursor = listed.next_cursor
        if cursor is None:
            return None
    return None


async def _resolve(client: Any, name: str, args: Mapping[str, Any]) -> Any:
    from mcp_types import Request, RequestParams
    from pydantic import ConfigDict, TypeAdapter

    class ResolveParams(RequestParams):
        model_config = ConfigDict(extra="allow")
        name: str
        arguments: Any = None

    class ResolveRequest(Request[ResolveParams, str]):
        method: str = "tools/resolve"
        params: ResolveParams

    request = ResolveRequest(params=ResolveParams(name=name, arguments=dict(args)))
    return await client.session.send_request(request, TypeAdapter(dict[str, Any]))


async def decide(
    client: Any,
    name: str,
    args: Mapping[str, Any],
    *,
    signature: Signature | None = None,
    listed: Mapping[str, Any] | None = None,
    ask_server: bool = True,
) -> Decision:
    """The annotations to decide the call ``(name, args)`` on (see the
    module's documentation). Raises an :class:`RpcError` (``-32602``) when
    the server refuses the arguments: the call itself is invalid, and no
    annotation applies. ``listed`` is the tool as the server listed it
    (listed again, every page, when not given)."""
    from mcp.shared.exceptions import MCPError

    tool_listed = dict(listed) if listed is not None else await _listed_tool(client, name)
    signed = signature.tool(name) if signature is not None else None
    bound: Hints = signed.annotations if signed is not None else _with_defaults(
        (tool_listed or {}).get("annotations")
    )
    violations: list[Violation] = []
    capabilities = _dump(client.server_capabilities)
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    offers = isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION_ID), dict)
    meta = (tool_listed or {}).get("_meta")
    marker = meta.get(EXTENSION_ID) if isinstance(meta, dict) else None
    marked = isinstance(marker, dict) and marker.get("resolvable") is True
    if not ask_server:
        why = "the host did not ask the server"
    elif not offers:
        why = "the server does not offer the tool-resolution extension"
    elif not marked:
        why = (
            "the server does not list the tool"
            if tool_listed is None
            else "the server does not list the tool as resolvable"
        )
    else:
        result: Any = None
        failed: str | None = None
        try:
            result = await _resolve(client, name, args)
        except MCPError as e:
            # The extension's client falls back on any error but -32602.
            if e.code == RpcError.INVALID_PARAMS:
                raise RpcError(RpcError.INVALID_PARAMS, e.message, e.data) from None
            failed = f"tools/resolve failed (error {e.code}: {e.message})"
        if failed is not None:
            why = failed
        else:
            problem = _shape_problem(result, name)
            if problem is not None:
                violations.append(Violation("malformed", name, f"the resolution is malformed: {problem}"))
                why = "the server's resolution was refused: it is malformed"
            else:
                resolved = _with_defaults(result["annotations"])
                violations.extend(outside_bound(name, bound, resolved))
                variant: str | None = None
                scopes: tuple[str, ...] | None = None
                annotations: Hints = resolved
                if signature is not None and not violations:
                    try:
                        expected = verify_resolution(signature, name, args, {**result, "resultType": "complete"})
                        variant = expected.variant.name if expected.variant is not None else None
                        scopes = expected.required_scopes
                        annotations = expected.annotations
                    except Violations as e:
                        violations.extend(e.violations)
                if not violations:
                    return Decision(
                        "server",
                        annotations,
                        variant,
                        scopes,
                        "the server resolved the call, within the conservative bound of its listed annotations"
                        if signature is None
                        else "the server resolved the call, as its signature declares",
                        tuple(violations),
                    )
                why = "the server's resolution was refused: " + "; ".join(v.message for v in violations)

    if signed is not None and signed.resolvable:
        try:
            expected = signed.expect(args)
        except Violation as v:
            raise RpcError(RpcError.INVALID_PARAMS, v.message) from None
        return Decision(
            "signature",
            expected.annotations,
            expected.variant.name if expected.variant is not None else None,
            expected.required_scopes,
            f"{why}; resolved from the signature document's variants",
            tuple(violations),
        )
    return Decision(
        "static",
        bound,
        None,
        signed.required_scopes if signed is not None else None,
        f"{why}; the static annotations apply (the worst case)",
        tuple(violations),
    )
