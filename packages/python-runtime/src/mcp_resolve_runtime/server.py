"""Serving a generated resolver on the Python MCP SDK 2.x (``mcp``).

``attach(server, RULES, call=...)`` answers ``tools/resolve`` (or
``tools/annotations``) and ``signature``, lists the tools with their static
annotations and, to clients that declare the extension, the resolvable
marker, declares the extension under ``capabilities.extensions``, and answers
``tools/call`` with the arguments checked as ``tools/resolve`` checks them
(a refusal is a tool error the model can read, SEP-1303). The client
capabilities are read per request: from the request's own ``_meta`` envelope
(2026-07-28), else from the session's ``initialize``.

``server`` is an ``MCPServer`` (``mcp.server.mcpserver``), a FastMCP 4
server (``fastmcp.FastMCP``, built on the SDK's low-level server) or a
low-level ``Server`` (``mcp.server.lowlevel``); the handlers are registered
on the low-level one with its public ``add_request_handler``, replacing the
server's own ``tools/list`` (and, with ``call``, ``tools/call``). This module imports
the SDK only when ``attach`` runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .resolver import Args, Dialect, RpcError, Rules
from .serving import (
    EXTENSION_ID,
    META_CLIENT_CAPABILITIES,
    SIGNATURE_METHOD,
    VARIANT_EXTENSION_ID,
    ArgumentCheck,
    ToolResolution,
    declares_extension,
)

CallHandler = Callable[[str, Args, Any], "Awaitable[dict[str, Any]] | dict[str, Any]"]
"""Answers a ``tools/call`` whose arguments passed the checks: the tool's
name, its arguments and the SDK's request context; returns the
``CallToolResult`` as a dict (or an awaitable of one)."""


def _lowlevel(server: Any) -> Any:
    """The SDK's low-level ``Server`` of ``server``: an ``MCPServer``'s, a
    FastMCP server's (FastMCP 4 builds on the SDK's), or ``server`` itself."""
    for attribute in ("_lowlevel_server", "_mcp_server"):
        inner = getattr(server, attribute, None)
        if inner is not None:
            return inner
    return server


def _capabilities_of(ctx: Any, params: Any) -> object:
    """The client capabilities that count for this request: those of its
    own ``_meta`` envelope (2026-07-28), else the session's."""
    meta = getattr(params, "meta", None)
    if isinstance(meta, Mapping) and META_CLIENT_CAPABILITIES in meta:
        return meta[META_CLIENT_CAPABILITIES]
    session = getattr(ctx, "session", None)
    capabilities = getattr(session, "client_capabilities", None)
    if capabilities is None:
        return None
    dump = getattr(capabilities, "model_dump", None)
    if dump is not None:
        return dump(by_alias=True, mode="json", exclude_none=True)
    return capabilities


def _raw(params: Any) -> dict[str, Any]:
    """The params as the client sent them (without ``_meta``)."""
    extra = getattr(params, "model_extra", None) or {}
    raw = dict(extra)
    for name in getattr(type(params), "model_fields", {}):
        if name != "meta":
            value = getattr(params, name, None)
            if value is not None:
                raw[name] = value
    return raw


def attach(
    server: Any,
    rules: Rules,
    *,
    call: CallHandler | None = None,
    dialect: Dialect = "extension",
    check: ArgumentCheck | None = None,
) -> ToolResolution:
    """Serves ``rules`` on ``server`` (an SDK 2.x ``MCPServer`` or low-level
    ``Server``), before it runs. Returns the :class:`ToolResolution` served.

    ``call`` answers ``tools/call`` for the rules' tools (its arguments
    checked first); without it the server answers ``tools/call`` itself
    (call ``resolution.check_call`` there). ``check`` is the server's own
    argument checks (see :data:`~mcp_resolve_runtime.serving.ArgumentCheck`).
    """
    from mcp.shared.exceptions import MCPError
    from mcp_types import RequestParams
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from pydantic import ConfigDict

    class AnyParams(RequestParams):
        """Params of any shape: the resolution checks them itself."""

        model_config = ConfigDict(extra="allow")

    lowlevel = _lowlevel(server)
    resolution = ToolResolution(rules, dialect=dialect, check=check)
    capabilities = resolution.capabilities()
    for identifier, settings in capabilities["extensions"].items():
        lowlevel.extensions[identifier] = settings

    def as_mcp_error(error: RpcError) -> MCPError:
        return MCPError(code=error.code, message=error.message, data=error.data)

    def declares(ctx: Any, params: Any) -> Callable[[str], bool]:
        capabilities = _capabilities_of(ctx, params)
        return lambda identifier: declares_extension(capabilities, identifier)

    def modern(ctx: Any, result: dict[str, Any]) -> dict[str, Any]:
        """A core method's result as 2026-07-28 requires it (`resultType`)."""
        if getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS:
            result.setdefault("resultType", "complete")
        return result

    async def list_tools(ctx: Any, params: Any) -> dict[str, Any]:
        result = resolution.list_tools(declares(ctx, params)(EXTENSION_ID))
        if getattr(ctx, "protocol_version", None) in MODERN_PROTOCOL_VERSIONS:
            # 2026-07-28 lists carry freshness hints: the server's own when it
            # configured them (the SDK fills those in), else "immediately
            # stale, this caller only".
            result["resultType"] = "complete"
            if "tools/list" not in lowlevel.cache_hints:
                result["ttlMs"] = 0
                result["cacheScope"] = "private"
        return result

    async def resolve(ctx: Any, params: Any) -> dict[str, Any]:
        try:
            return resolution.resolve_request(_raw(params), declares(ctx, params))
        except RpcError as e:
            raise as_mcp_error(e) from None

    async def signature(_ctx: Any, _params: Any) -> dict[str, Any]:
        return resolution.signature_result()

    async def advertise(ctx: Any, call_next: Any) -> Any:
        """Puts the capabilities into what `initialize` and `server/discover`
        answer, after the SDK shaped them for the wire (it leaves out of a
        2025-11-25 `initialize` what that revision's schema does not name)."""
        result = await call_next(ctx)
        if getattr(ctx, "method", None) in ("initialize", "server/discover") and isinstance(result, dict):
            own = result.get("capabilities")
            if isinstance(own, dict):
                # Every extension the server declares (a framework's own
                # too), so that `initialize` and `server/discover` agree.
                extensions = dict(own.get("extensions") or {})
                declared = lowlevel.get_capabilities().model_dump(by_alias=True, mode="json", exclude_none=True)
                extensions.update(declared.get("extensions") or {})
                extensions.update(lowlevel.extensions)
                own["extensions"] = extensions
                experimental = dict(own.get("experimental") or {})
                experimental.update(capabilities["experimental"])
                own["experimental"] = experimental
        return result

    lowlevel.middleware.append(advertise)
    lowlevel.add_request_handler("tools/list", AnyParams, list_tools)
    lowlevel.add_request_handler(resolution.method, AnyParams, resolve)
    lowlevel.add_request_handler(SIGNATURE_METHOD, AnyParams, signature)

    if call is not None:
        handler = call

        async def call_tool(ctx: Any, params: Any) -> dict[str, Any]:
            raw = _raw(params)
            name = raw.get("name")
            if not isinstance(name, str):
                raise MCPError(
                    code=RpcError.INVALID_PARAMS, message="params.name must be a string (the tool name)"
                )
            args = raw.get("arguments")
            if args is None:
                args = {}
            try:
                resolution.check_call(name, args)
            except RpcError as e:
                if e.code == RpcError.INVALID_PARAMS and resolution.has_tool(name):
                    return modern(ctx, resolution.call_error(e))
                raise as_mcp_error(e) from None
            answer = handler(name, args, ctx)
            if inspect.isawaitable(answer):
                answer = await answer
            return modern(ctx, dict(answer))

        lowlevel.add_request_handler("tools/call", AnyParams, call_tool)

    return resolution
