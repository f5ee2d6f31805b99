"""The screen in front of an SDK's HTTP endpoint: an ASGI wrapper.

``screened_asgi(app, checking)`` wraps an ASGI application (the Python
SDK's ``streamable_http_app()``): the body of every ``POST`` goes through
:func:`~.screen.screen_http_body` first, and what the screen answers itself
(malformed JSON-RPC; with ``checking``, a 2026-07-28 resolve request whose
client does not declare the extension: ``-32021``) is sent with status 400;
every other request reaches the application unchanged, its body replayed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from .resolver import RpcError
from .screen import META_PROTOCOL_VERSION, STATELESS_VERSION, screen_http_body

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 4 << 20
"""The largest request body screened (a larger one is refused with 413)."""


def screened_asgi(app: ASGIApp, checking: str | None) -> ASGIApp:
    """``app`` behind the screen. ``checking`` is the resolve method whose
    client capability the screen checks (``ToolResolution.method`` in the
    extension dialect; ``None`` in the others)."""

    async def screened(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message.get("type") == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY:
                await _respond(send, 413, {"jsonrpc": "2.0", "id": None, "error": {
                    "code": RpcError.INVALID_REQUEST, "message": "Invalid Request: the body is too large"}})
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        try:
            parsed: object = json.loads(body)
        except ValueError:
            parsed = None
        if parsed is not None:
            response = screen_http_body(checking, parsed)
            if response is not None:
                await _respond(send, 400, response)
                return
            if _early_notification(scope, parsed):
                # As on a stream: a notification before any session began
                # is dropped, not refused.
                await send({"type": "http.response.start", "status": 202, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return screened


def _early_notification(scope: Scope, message: object) -> bool:
    """Whether ``message`` is a notification outside any session: no
    ``Mcp-Session-Id`` header, and not of the 2026-07-28 lifecycle (whose
    messages each stand alone)."""
    if not isinstance(message, dict) or "id" in message or not isinstance(message.get("method"), str):
        return False
    headers = dict(scope.get("headers") or [])
    if b"mcp-session-id" in headers:
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    return not (isinstance(version, str) and version >= STATELESS_VERSION)


async def _respond(send: Send, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload, separators=(",", ":")).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
    })
    await send({"type": "http.response.body", "body": data})
