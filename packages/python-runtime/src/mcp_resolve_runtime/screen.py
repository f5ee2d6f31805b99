"""The screen in front of an SDK: what the Rust runtime's ``protocol::Screen``
answers itself before a message reaches a server, for SDKs that would
answer otherwise or not at all (the Python SDK's stdio transport does not
answer a line that is not JSON, and the SDK refuses a 2026-07-28 resolve
request without client capabilities with ``-32602`` before any handler,
where the extension says ``-32021``).

One :class:`Screen` judges the messages of one stream, in order: malformed
JSON-RPC is answered with ``-32700``/``-32600``/``-32602`` and the right
``id``; notifications before the first request and malformed ones are
dropped; a resolve request whose client does not declare the extension, as
the stream's lifecycle decides, is answered ``-32021``; everything else goes
on to the server unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .resolver import RpcError
from .serving import EXTENSION_ID, META_CLIENT_CAPABILITIES, declares_extension, missing_capability

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
"""The request ``_meta`` key of the protocol version (protocol 2026-07-28)."""

STATELESS_VERSION: Final = "2026-07-28"
"""The first protocol version whose requests each carry their own capabilities."""


@dataclass(frozen=True)
class Screened:
    """What to do with one message: ``forward`` it, send ``response``
    instead (``reply``), or ``drop`` it (``why``)."""

    kind: str
    message: Any = None
    response: dict[str, Any] | None = None
    why: str = ""


def _reply(id_: object, error: RpcError) -> Screened:
    return Screened("reply", response={"jsonrpc": "2.0", "id": id_, "error": error.to_json()})


def _refuse(id_: object, code: int, message: str) -> Screened:
    return _reply(id_, RpcError(code, message))


class Screen:
    """The screening of one stream (or, ``per_message``, of separate
    messages: one HTTP request each, where a request is of the 2026-07-28
    lifecycle when its own ``_meta`` says so)."""

    def __init__(self, checking: str | None = None, *, per_message: bool = False) -> None:
        """``checking`` is the resolve method whose client capability the
        screen checks (the extension dialect's ``tools/resolve``)."""
        self._checking = checking
        self._started = per_message
        self._legacy = per_message

    def line(self, text: str) -> Screened:
        """Screens one line of text (without its newline)."""
        if text.strip() == "":
            return Screened("drop", why="a blank line")
        try:
            value = json.loads(text)
        except ValueError:
            return _refuse(None, RpcError.PARSE_ERROR, "Parse error: the message is not JSON")
        return self.message(value)

    def message(self, value: object) -> Screened:
        """Screens one message, already parsed."""
        if isinstance(value, list):
            return _refuse(None, RpcError.INVALID_REQUEST, "Invalid Request: batches are not supported")
        if not isinstance(value, dict):
            return _refuse(None, RpcError.INVALID_REQUEST, "Invalid Request: a message is a JSON object")
        if "method" not in value and ("result" in value or "error" in value):
            return Screened("forward", message=value)
        method = value.get("method")
        params = value.get("params")
        jsonrpc = value.get("jsonrpc") == "2.0"
        if "id" not in value:
            well_formed = jsonrpc and isinstance(method, str) and (params is None or isinstance(params, dict))
            if not well_formed:
                return Screened("drop", why="a malformed notification")
            if not self._started:
                return Screened("drop", why="a notification before the first request")
            return Screened("forward", message=value)
        id_ = value["id"]
        if not (isinstance(id_, str) or (type(id_) is int) or (type(id_) is float and id_.is_integer())):
            return _refuse(None, RpcError.INVALID_REQUEST, "Invalid Request: `id` must be a string or an integer")
        if not jsonrpc:
            return _refuse(id_, RpcError.INVALID_REQUEST, 'Invalid Request: `jsonrpc` must be "2.0"')
        if not isinstance(method, str):
            return _refuse(id_, RpcError.INVALID_REQUEST, "Invalid Request: `method` must be a string")
        if "params" in value:
            if not isinstance(params, dict):
                return _refuse(id_, RpcError.INVALID_PARAMS, "Invalid params: `params` must be an object")
            if "_meta" in params and not isinstance(params["_meta"], dict):
                return _refuse(id_, RpcError.INVALID_PARAMS, "Invalid params: `params._meta` must be an object")
        if not self._started:
            self._started = True
            self._legacy = method == "initialize"
        if self._checking == method and not self._declares(params):
            return _reply(id_, missing_capability())
        return Screened("forward", message=value)

    def _declares(self, params: object) -> bool:
        """Whether a resolve request may go on to the server: one of a
        session opened with ``initialize`` that does not say it is
        2026-07-28 (the server checks the session's capabilities), or one
        whose ``_meta`` client capabilities declare the extension."""
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, Mapping) else None
        modern = not self._legacy or (isinstance(version, str) and version >= STATELESS_VERSION)
        if not modern:
            return True
        capabilities = meta.get(META_CLIENT_CAPABILITIES) if isinstance(meta, Mapping) else None
        return declares_extension(capabilities, EXTENSION_ID)


def screen_http_body(checking: str | None, body: object) -> dict[str, Any] | None:
    """The screen of one HTTP request's parsed body, for a server's own HTTP
    glue in front of the SDK: the error response to send (with status 400)
    when the screen answers the message itself, else ``None``."""
    screened = Screen(checking, per_message=True).message(body)
    return screened.response if screened.kind == "reply" else None
