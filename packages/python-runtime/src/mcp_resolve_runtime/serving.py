"""Serving a generated resolver: the parts of the protocol the
tool-resolution extension owns, independent of any SDK.

The counterpart of the Rust runtime's ``protocol::serve_resolve`` and of the
TypeScript runtime's ``serving.ts``, held to the same answers by the
project's tests (the extension's conformance suite, the SDK clients,
``mcp-resolve proxy --pin``):

- the capabilities a server advertises (:meth:`ToolResolution.capabilities`);
- the ``tools/list`` result, with the resolvable marker only for clients that
  declare the extension (:meth:`ToolResolution.list_tools`);
- a resolve request served (:meth:`ToolResolution.resolve_request`):
  ``-32021`` without the client capability, ``-32602`` for bad params,
  unknown or unmarked tools and invalid arguments, the server's own checks,
  the companion variant extension's result ``_meta``;
- the ``signature`` result, and a ``tools/call``'s arguments checked as
  ``tools/resolve`` checks them (:meth:`ToolResolution.check_call`,
  :meth:`ToolResolution.call_error`).

The SDK adapter (:mod:`mcp_resolve_runtime.server`, for the Python SDK's
``MCPServer`` and low-level ``Server``) wires these into a server in one call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from .resolver import DIALECTS, Args, Dialect, Resolved, RpcError, Rules, Tool

EXTENSION_ID: Final = "io.modelcontextprotocol/tool-resolution"
"""The extension's identifier, as servers and clients declare it."""

VARIANT_EXTENSION_ID: Final = "io.github.mcp-resolve/variant"
"""This project's companion extension: the matched variant in result ``_meta``."""

META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
"""The request ``_meta`` key of the client capabilities (protocol 2026-07-28)."""

SIGNATURE_METHOD: Final = "signature"
"""The method of the Server Capability Signature draft (the signature document)."""

MISSING_CAPABILITY: Final = -32021
"""The JSON-RPC code of a request whose client lacks a required capability."""

ArgumentCheck = Callable[[str, Args], None]
"""A server's own checks of a call's arguments, beyond its ``inputSchema``
(paths inside a sandbox, fields one action needs): raise :class:`RpcError`
(``-32602``) to refuse. It must be a pure function of the tool name and the
arguments; it runs for ``tools/resolve`` and ``tools/call`` alike, so a call
the server would refuse never resolves."""


def missing_capability() -> RpcError:
    """``-32021`` naming the tool-resolution extension as the missing capability."""
    return RpcError(
        MISSING_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}},
    )


def declares_extension(capabilities: object, identifier: str) -> bool:
    """Whether client capabilities declare extension ``identifier`` in the
    form this version supports: an empty settings object (settings it does
    not know — a non-empty object, ``true``, ``null`` — count as not
    declared)."""
    if not isinstance(capabilities, Mapping):
        return False
    extensions = capabilities.get("extensions")
    if not isinstance(extensions, Mapping) or identifier not in extensions:
        return False
    settings = extensions[identifier]
    return isinstance(settings, Mapping) and len(settings) == 0


class ToolResolution:
    """A generated resolver, served: what an SDK adapter answers with."""

    def __init__(
        self,
        rules: Rules,
        *,
        dialect: Dialect = "extension",
        check: ArgumentCheck | None = None,
    ) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect: {dialect}")
        self.rules: Final = rules
        self.dialect: Final[Dialect] = dialect
        self._check = check
        self._listed = rules.tools_list_json(dialect)
        listing = json.loads(self._listed)
        schemas: dict[str, str] = {}
        for tool in listing["tools"]:
            schemas[str(tool["name"])] = json.dumps(tool["inputSchema"], separators=(",", ":"))
            meta = tool.get("_meta")
            if isinstance(meta, dict) and EXTENSION_ID in meta:
                del meta[EXTENSION_ID]
                if not meta:
                    del tool["_meta"]
        self._unmarked = json.dumps(listing, separators=(",", ":"), ensure_ascii=False)
        marked = json.loads(rules.tools_list_json("extension"))["tools"]
        self._resolvable = frozenset(
            str(tool["name"])
            for tool in marked
            if isinstance(tool.get("_meta"), dict) and EXTENSION_ID in tool["_meta"]
        )
        self._schemas = schemas
        self._validators: dict[str, Tool] = {}

    @property
    def method(self) -> str:
        """The request method that resolves a call: ``tools/annotations`` in
        that dialect, else ``tools/resolve``."""
        return "tools/annotations" if self.dialect == "annotations" else "tools/resolve"

    def capabilities(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The capabilities this server adds to its own: ``tools``; in the
        extension dialect ``extensions[EXTENSION_ID] = {}``, in the others
        ``experimental[method]``; the companion variant extension; and
        ``experimental.signature`` — as the Rust SDK wiring advertises them."""
        extensions: dict[str, dict[str, Any]] = {VARIANT_EXTENSION_ID: {}}
        experimental: dict[str, dict[str, Any]] = {}
        if self.dialect == "extension":
            extensions[EXTENSION_ID] = {}
        else:
            experimental[self.method] = {}
        experimental[SIGNATURE_METHOD] = {}
        return {"tools": {}, "extensions": extensions, "experimental": experimental}

    def has_tool(self, name: str) -> bool:
        """Whether the server has a tool called ``name`` (resolvable or not)."""
        return name in self._schemas

    def list_tools(self, client_declares: bool) -> dict[str, Any]:
        """The ``tools/list`` result, a fresh object: every tool with its
        static (conservative) annotations. In the extension dialect the
        resolvable marker is listed only to a client that declares the
        extension."""
        text = self._listed if self.dialect != "extension" or client_declares else self._unmarked
        result: dict[str, Any] = json.loads(text)
        return result

    def signature_result(self) -> dict[str, Any]:
        """The ``signature`` result: the signature document with
        ``resultType: "complete"`` (which the fingerprint leaves out, so the
        document still verifies)."""
        document: dict[str, Any] = json.loads(self.rules.signature_json)
        document["resultType"] = "complete"
        return document

    def resolve_request(
        self, params: object, declares: Callable[[str], bool]
    ) -> dict[str, Any]:
        """Serves a resolve request whose params are ``params`` (``None`` when
        absent): the capability check of the extension dialect (``-32021``),
        the params checks (``-32602``: an object, ``name`` a string,
        ``arguments`` required by the extension and ``{}`` by default in the
        older drafts), the resolution (the full ``inputSchema`` validated), the
        server's own checks; then the dialect's result, with the companion
        extension's ``_meta`` when the client declares it. ``declares`` says
        whether the client declares an extension (by identifier) for this
        request. Raises :class:`RpcError`."""
        if self.dialect == "extension" and not declares(EXTENSION_ID):
            raise missing_capability()
        if params is not None and not isinstance(params, Mapping):
            raise RpcError(RpcError.INVALID_PARAMS, "params must be an object")
        name = params.get("name") if params is not None else None
        if not isinstance(name, str):
            raise RpcError(
                RpcError.INVALID_PARAMS, "params.name must be a string (the tool name)"
            )
        if params is not None and "arguments" in params:
            args = params["arguments"]
        elif self.dialect == "extension":
            raise RpcError(
                RpcError.INVALID_PARAMS,
                "params.arguments is required: the complete arguments object of the call "
                "({} for a tool without arguments)",
            )
        else:
            args = {}
        resolved = self.rules.resolve(name, args)
        if self._check is not None:
            self._check(name, args)
        return self._result(resolved, declares(VARIANT_EXTENSION_ID))

    def _result(self, resolved: Resolved, variant_meta: bool) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(resolved.result_json(self.dialect))
        if variant_meta:
            meta = result.get("_meta")
            if not isinstance(meta, dict):
                meta = {}
            meta[VARIANT_EXTENSION_ID] = {
                "variant": resolved.variant,
                "requiredScopes": list(resolved.required_scopes),
            }
            result["_meta"] = meta
        return result

    def check_call(self, name: str, args: object = None) -> Resolved | None:
        """Checks a ``tools/call``'s arguments as ``tools/resolve`` does: the
        tool's full ``inputSchema`` (with the resolver's own validator) and
        the server's own checks. Returns the resolution of a resolvable tool,
        ``None`` for the others; raises :class:`RpcError` (``-32602``) for an
        unknown tool or arguments either refuses. ``None`` arguments are
        ``{}``."""
        if args is None:
            args = {}
        if name not in self._schemas:
            raise RpcError(RpcError.INVALID_PARAMS, f"unknown tool: {name}")
        resolved: Resolved | None = None
        if name in self._resolvable:
            resolved = self.rules.resolve(name, args)
        else:
            self._validator(name).validate(args)
        if self._check is not None and isinstance(args, Mapping):
            self._check(name, args)
        return resolved

    def _validator(self, name: str) -> Tool:
        tool = self._validators.get(name)
        if tool is None:
            tool = Tool(name, self._schemas.get(name, "{}"), False, "", (), lambda _args: 0)
            self._validators[name] = tool
        return tool

    def call_error(self, error: RpcError) -> dict[str, Any]:
        """A refused call as the tool error the model reads (SEP-1303: invalid
        arguments are a tool execution error, not a protocol error): the
        message, then the details as JSON."""
        text = (
            error.message
            if error.data is None
            else error.message + "\n" + json.dumps(error.data, separators=(",", ":"), ensure_ascii=False)
        )
        return {"content": [{"type": "text", "text": text}], "isError": True}
