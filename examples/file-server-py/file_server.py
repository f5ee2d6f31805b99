"""The file server on FastMCP 4 (or, with ``--framework mcp``, on the
Python MCP SDK 2.x's own ``MCPServer``), its resolver generated from the file
server's rules (``resolve.py``, written by ``mcp-resolve generate
../file-server/rules/file-server.yaml --lang python -o resolve.py``) and
served by ``mcp_resolve_runtime.server.attach``.

usage: python file_server.py --root DIR [--dialect extension|sep1862|annotations]
                             [--http HOST:PORT] [--framework fastmcp|mcp]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp_resolve_runtime import Args, RpcError
from mcp_resolve_runtime.http import screened_asgi
from mcp_resolve_runtime.server import attach
from mcp_resolve_runtime.stdio import screened_stdio

from resolve import RULES, SERVER_NAME, SERVER_VERSION
from sandbox import Refused, Sandbox, check_path

INSTRUCTIONS = (
    "Files in one sandbox directory. Ask `tools/resolve` for the annotations of a call "
    "before making it: reads are read-only, appends are not destructive."
)


def check_arguments(name: str, args: Args) -> None:
    """The server's own checks, beyond the inputSchema, that `tools/resolve`
    and `tools/call` share: every path stays inside the sandbox (lexically;
    the call's walk also refuses symbolic links that leave it), and the
    actions that write have `content`. Pure, as resolution must be."""
    for key in ("source", "destination") if name == "copy_file" else ("path",):
        value = args.get(key)
        if isinstance(value, str):
            try:
                check_path(value)
            except Refused as e:
                raise RpcError(RpcError.INVALID_PARAMS, str(e)) from None
    action = args.get("action")
    if name == "manage_files" and action in ("append", "replace") and "content" not in args:
        raise RpcError(RpcError.INVALID_PARAMS, f"`content` is required to {action}")


def text(message: str, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": message}]}
    if is_error:
        result["isError"] = True
    return result


def run(sandbox: Sandbox, name: str, args: Args) -> str:
    def s(key: str) -> str:
        return str(args.get(key))

    if name == "manage_files":
        p = s("path")
        content = args.get("content")
        content = content if isinstance(content, str) else ""
        action = args.get("action")
        if action == "read":
            return sandbox.read(p)
        if action == "append":
            sandbox.append(p, content)
            return f"appended {len(content.encode())} bytes to {p}"
        if action == "replace":
            sandbox.replace(p, content)
            return f"wrote {len(content.encode())} bytes to {p}"
        if action == "delete":
            sandbox.delete(p)
            return f"deleted {p}"
        raise Refused(f"unknown action {action}")
    if name == "copy_file":
        size = sandbox.copy(s("source"), s("destination"), args.get("overwrite") is True)
        return f"copied {size} bytes from {s('source')} to {s('destination')}"
    if name == "list_directory":
        path = args.get("path")
        return "\n".join(sandbox.list(path if isinstance(path, str) else "."))
    raise Refused(f"unknown tool {name}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="file_server.py")
    parser.add_argument("--root", required=True)
    parser.add_argument("--dialect", default="extension", choices=["extension", "sep1862", "annotations"])
    parser.add_argument("--http", metavar="HOST:PORT")
    parser.add_argument("--framework", default="fastmcp", choices=["fastmcp", "mcp"])
    options = parser.parse_args()
    try:
        sandbox = Sandbox(options.root)
    except OSError as e:
        print(f"file_server.py: cannot open sandbox directory {options.root}: {e}", file=sys.stderr)
        sys.exit(2)

    def call(name: str, args: Args, _ctx: Any) -> dict[str, Any]:
        try:
            return text(run(sandbox, name, args))
        except Refused as e:
            return text(str(e), is_error=True)

    server: Any
    if options.framework == "fastmcp":
        from fastmcp import FastMCP

        server = FastMCP(SERVER_NAME, version=SERVER_VERSION, instructions=INSTRUCTIONS)
    else:
        server = MCPServer(SERVER_NAME, version=SERVER_VERSION, instructions=INSTRUCTIONS, log_level="WARNING")
    resolution = attach(server, RULES, call=call, dialect=options.dialect, check=check_arguments)
    # The SDK behind the screen, which answers what it would not (a line
    # that is not JSON) or otherwise (a resolve request without client
    # capabilities: -32021).
    checking = resolution.method if options.dialect == "extension" else None
    if options.http is None:
        anyio.run(serve_stdio, server, checking)
    else:
        host, _, port = options.http.rpartition(":")
        anyio.run(serve_http, server, checking, host, int(port))


def lowlevel_of(server: Any) -> Any:
    """The SDK's low-level server under an `MCPServer` or a `FastMCP`."""
    return getattr(server, "_lowlevel_server", None) or server._mcp_server


async def serve_stdio(server: Any, checking: str | None) -> None:
    """The server's stdio loop, as `run("stdio")` runs it (for FastMCP,
    inside its lifespan), on the screened streams."""
    lowlevel = lowlevel_of(server)
    lifespan = getattr(server, "_lifespan_manager", None)
    async with lifespan() if lifespan is not None else contextlib.nullcontext():
        async with screened_stdio(checking) as (stdin, stdout):
            async with stdio_server(stdin, stdout) as (read, write):
                await lowlevel.run(read, write, lowlevel.create_initialization_options())


async def serve_http(server: Any, checking: str | None, host: str, port: int) -> None:
    """Streamable HTTP at `/mcp` (both eras on one endpoint); says where on
    standard error once it listens (`--http HOST:0` picks a free port)."""
    import uvicorn

    if hasattr(server, "http_app"):
        inner = server.http_app(path="/mcp")
    else:
        inner = server.streamable_http_app(host=host)
    app = screened_asgi(inner, checking)
    web = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(web.serve)
        while not web.started:
            if web.should_exit:
                return
            await anyio.sleep(0.01)
        bound = web.servers[0].sockets[0].getsockname()
        print(f"file_server.py: serving http://{bound[0]}:{bound[1]}/mcp", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
