"""Standard streams screened for the Python SDK's stdio transport.

``async with screened_stdio(checking) as (stdin, stdout)`` gives the two
streams to hand to ``mcp.server.stdio.stdio_server(stdin, stdout)``: every
line of the process's standard input goes through a :class:`~.screen.Screen`
first, which answers malformed JSON-RPC (the transport would not answer a
line that is not JSON) and, with ``checking``, a resolve request whose
client does not declare the extension (``-32021``) itself; what it answers is
written to standard output through the same stream as the server's own
messages, one whole line at a time.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import Any

from .screen import Screen


class _Out:
    """Standard output as the transport writes it, shared with the screen:
    each write is one whole message, under a lock."""

    def __init__(self) -> None:
        import anyio

        self._file = anyio.wrap_file(TextIOWrapper(sys.stdout.buffer, encoding="utf-8", write_through=True))
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._file.write(text)
            await self._file.flush()

    async def flush(self) -> None:
        pass


class _In:
    """Standard input, screened: the lines that go on to the server."""

    def __init__(self, screen: Screen, out: _Out) -> None:
        import anyio

        self._file = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        self._screen = screen
        self._out = out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._file:
            screened = self._screen.line(line.rstrip("\r\n"))
            if screened.kind == "forward":
                yield line
            elif screened.kind == "reply" and screened.response is not None:
                await self._out.write(json.dumps(screened.response, separators=(",", ":")) + "\n")


@asynccontextmanager
async def screened_stdio(checking: str | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """The screened standard input and the shared standard output, for
    ``stdio_server(stdin, stdout)``. ``checking`` is the resolve method whose
    client capability the screen checks (``ToolResolution.method`` in the
    extension dialect; ``None`` in the others)."""
    out = _Out()
    yield _In(Screen(checking), out), out
