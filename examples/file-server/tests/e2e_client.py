"""End-to-end test of the example file server with the Python MCP SDK.

Drives `file-server` with the `mcp` package from PyPI (a client nobody on this
project wrote) and checks, through the real protocol:

* `tools/list`: static annotations and resolvable markers, a subset of the
  signature;
* `signature`: the fingerprint, recomputed with an independent RFC 8785
  implementation (`rfc8785`);
* `tools/resolve`: every variant of every tool, each result compared with what
  the signature declares for those arguments (host-side evaluation recipe of
  docs/signature.md, run with the `jsonschema` package), and every result put
  through the client-side conservative-bound check;
* errors: unknown tool, tool without the marker, invalid arguments, missing
  client capability (-32021), arguments the call would refuse (a path that
  leaves the sandbox, `append` without `content`);
* `tools/call`: files really change in the sandbox, escapes are refused;
* the `sep1862` and `annotations` dialects and streamable HTTP;
* latency of `tools/resolve` through the client: median and p99.

Usage: python e2e_client.py --server PATH/TO/file-server [--requests N]
Exits non-zero on the first failed check; prints a transcript on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jsonschema
from mcp import Client, StdioServerParameters
from mcp.client import advertise
from mcp.shared.exceptions import MCPError
from mcp_types import Request, RequestParams
from pydantic import ConfigDict, TypeAdapter

# The extension's checks, shared with the conformance suite.
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "conformance"))
from extension import (  # noqa: E402
    CORE_DEFAULTS, CORE_RESULT_META, EXTENSION, RESULT_SCHEMA, VARIANT_EXTENSION, candidates, core, declared,
    fingerprint_of, schema_errors, selftest, within_conservative_bound,
)

RAW = TypeAdapter(dict[str, Any])


class Failure(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failure(message)


def log(direction: str, method: str, payload: Any) -> None:
    text = json.dumps(payload, separators=(",", ":"), sort_keys=True)
    if len(text) > 300:
        text = text[:297] + "..."
    print(f"{direction} {method} {text}", flush=True)


# --- custom requests -------------------------------------------------------


class ResolveParams(RequestParams):
    model_config = ConfigDict(extra="allow")
    name: str
    arguments: Any = None


class ResolveRequest(Request[ResolveParams, str]):
    method: str = "tools/resolve"
    params: ResolveParams


class SignatureRequest(Request[RequestParams | None, str]):
    method: str = "signature"
    params: RequestParams | None = None


async def resolve(client: Client, name: str, arguments: Any, method: str = "tools/resolve") -> dict[str, Any]:
    params = ResolveParams(name=name, arguments=arguments)
    return await client.session.send_request(ResolveRequest(method=method, params=params), RAW)


async def resolve_error(client: Client, name: str, arguments: Any, method: str = "tools/resolve") -> MCPError:
    try:
        result = await resolve(client, name, arguments, method)
    except MCPError as e:
        log("<-", f"{method} error", {"code": e.code, "message": e.message, "data": e.data})
        return e
    raise Failure(f"{method} {name} {arguments!r} succeeded ({result!r}); an error was expected")


def server_refuses(name: str, arguments: dict[str, Any]) -> bool:
    """The example server's own check beyond the schema that candidates can hit:
    writing actions need `content` (candidates' paths stay in the sandbox)."""
    return (name == "manage_files" and arguments.get("action") in ("append", "replace")
            and "content" not in arguments)


# --- the checks ------------------------------------------------------------


async def check_listing(client: Client, signature: dict[str, Any]) -> dict[str, dict[str, Any]]:
    caps = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
    log("<-", "capabilities", caps)
    check(EXTENSION in (caps.get("extensions") or {}), "the extension capability is not advertised")
    check("signature" in (caps.get("experimental") or {}), "the signature capability is not advertised")

    listed = await client.list_tools()
    tools = {t.name: t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools}
    log("<-", "tools/list", sorted(tools))
    by_name = {t["name"]: t for t in signature["tools"]}
    check(set(tools) <= set(by_name), f"tools/list {sorted(tools)} is not a subset of the signature")
    for name, tool in tools.items():
        sig = by_name[name]
        check(core(tool.get("annotations", {})) == core(sig["annotations"]),
              f"{name}: static annotations differ from the signature")
        check(tool["inputSchema"] == sig["inputSchema"], f"{name}: inputSchema differs from the signature")
        marked = (tool.get("_meta") or {}).get(EXTENSION, {}).get("resolvable") is True
        check(marked == bool(sig.get("resolvedVariants")), f"{name}: resolvable marker is {marked}")
    return tools


async def check_every_variant(client: Client, tools: dict[str, dict[str, Any]],
                              signature: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Resolves every candidate of every resolvable tool; returns the calls made."""
    calls = []
    for sig in signature["tools"]:
        if not sig.get("resolvedVariants"):
            continue
        name = sig["name"]
        static = tools[name]["annotations"]
        seen = set()
        for arguments in candidates(sig["inputSchema"]):
            if not jsonschema.Draft202012Validator(sig["inputSchema"]).is_valid(arguments):
                continue
            if server_refuses(name, arguments):
                e = await resolve_error(client, name, arguments)
                check(e.code == -32602, f"{name} {arguments}: the server's own check: code {e.code}")
                continue
            variant, expected = declared(sig, arguments)
            result = await resolve(client, name, arguments)
            problems = schema_errors(RESULT_SCHEMA, result)
            check(not problems and result["name"] == name, f"bad result {result}: {problems}")
            # The session declared the companion extension: the variant that matched.
            entry = (result.get("_meta") or {}).get(VARIANT_EXTENSION) or {}
            check(entry.get("variant") == variant,
                  f"{name} {arguments}: _meta names variant {entry.get('variant')!r}, the signature {variant!r}")
            check(result["annotations"] == core(expected),
                  f"{name} {arguments}: resolved {result['annotations']}, "
                  f"signature declares {variant} {core(expected)}")
            violation = within_conservative_bound(static, result["annotations"])
            check(violation is None, f"{name} {arguments}: outside the conservative bound: {violation}")
            if variant not in seen:
                log("->", "tools/resolve", {"name": name, "arguments": arguments})
                log("<-", "tools/resolve", result)
            seen.add(variant)
            calls.append((name, arguments))
        declared_names = {v["name"] for v in sig["resolvedVariants"]}
        check(declared_names <= seen, f"{name}: variants never resolved: {sorted(declared_names - seen)}")
        print(f"ok {name}: {len(seen & declared_names)}/{len(declared_names)} variants resolved "
              f"and equal to the signature", flush=True)
    return calls


async def check_errors(client: Client, tools: dict[str, dict[str, Any]]) -> None:
    e = await resolve_error(client, "no_such_tool", {})
    check(e.code == -32602, f"unknown tool: code {e.code}")
    unmarked = [n for n, t in tools.items() if EXTENSION not in (t.get("_meta") or {})]
    check(bool(unmarked), "the example should have a tool without the resolvable marker")
    e = await resolve_error(client, unmarked[0], {})
    check(e.code == -32602, f"unmarked tool: code {e.code}")
    e = await resolve_error(client, "manage_files", {"path": "a", "action": "rename"})
    check(e.code == -32602 and e.data, f"invalid arguments: code {e.code}, data {e.data!r}")
    e = await resolve_error(client, "manage_files", {"action": "read"})
    check(e.code == -32602, f"missing required argument: code {e.code}")
    e = await resolve_error(client, "manage_files", ["read"])
    check(e.code == -32602, f"non-object arguments: code {e.code}")
    nested: Any = "deep"
    for _ in range(100):
        nested = [nested]
    e = await resolve_error(client, "manage_files", {"path": "a", "action": "read", "content": nested})
    check(e.code == -32602, f"deeply nested arguments: code {e.code}")
    print("ok errors: unknown tool, unmarked tool, invalid arguments -> -32602", flush=True)
    # The server's own checks apply to resolve as to the call: what the call
    # refuses never resolves.
    for arguments in [{"path": "../outside.txt", "action": "read"},
                      {"path": "/etc/hostname", "action": "read"},
                      {"path": "sub/../../outside.txt", "action": "delete"},
                      {"path": "notes.txt", "action": "append"},
                      {"path": "notes.txt", "action": "replace"}]:
        e = await resolve_error(client, "manage_files", arguments)
        check(e.code == -32602, f"{arguments}: code {e.code}")
    for arguments in [{"source": "notes.txt", "destination": "../x"},
                      {"source": "/etc/hostname", "destination": "x"}]:
        e = await resolve_error(client, "copy_file", arguments)
        check(e.code == -32602, f"copy_file {arguments}: code {e.code}")
    print("ok resolve applies the call's checks: escapes and missing content -> -32602", flush=True)


async def call_text(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(name, arguments)
    text = "".join(getattr(c, "text", "") for c in result.content)
    log("->", "tools/call", {"name": name, "arguments": arguments})
    log("<-", "tools/call", {"isError": result.is_error, "text": text})
    return bool(result.is_error), text


async def check_calls(client: Client, root: Path, outside: Path) -> None:
    notes = root / "notes.txt"
    error, _ = await call_text(client, "manage_files", {"path": "notes.txt", "action": "append", "content": " more"})
    check(not error and notes.read_text() == "first line more", f"append did not change the file: {notes.read_text()!r}")
    error, text = await call_text(client, "manage_files", {"path": "notes.txt", "action": "read"})
    check(not error and text == "first line more", f"read returned {text!r}")
    error, _ = await call_text(client, "manage_files", {"path": "sub/new.txt", "action": "replace", "content": "new"})
    check(not error and (root / "sub/new.txt").read_text() == "new", "replace did not write the file")
    error, _ = await call_text(client, "copy_file", {"source": "notes.txt", "destination": "sub/new.txt"})
    check(error and (root / "sub/new.txt").read_text() == "new", "copy without overwrite replaced a file")
    error, _ = await call_text(client, "copy_file", {"source": "notes.txt", "destination": "sub/new.txt", "overwrite": True})
    check(not error and (root / "sub/new.txt").read_text() == "first line more", "copy with overwrite failed")
    error, _ = await call_text(client, "manage_files", {"path": "sub/new.txt", "action": "delete"})
    check(not error and not (root / "sub/new.txt").exists(), "delete did not remove the file")
    error, text = await call_text(client, "list_directory", {})
    check(not error and "notes.txt" in text.split("\n"), f"list_directory: {text!r}")
    error, text = await call_text(client, "manage_files", {"path": "notes.txt", "action": "explode"})
    check(error, "a call with invalid arguments must be a tool error")
    for path in ["../outside.txt", str(outside), "sub/../../outside.txt", "escape.txt", "up/outside.txt"]:
        for arguments in [{"path": path, "action": "read"},
                          {"path": path, "action": "replace", "content": "pwned"},
                          {"path": path, "action": "append", "content": "pwned"}]:
            error, text = await call_text(client, "manage_files", arguments)
            check(error, f"{arguments} escaped the sandbox: {text!r}")
    check(outside.read_text() == "outside", "a file outside the sandbox changed")
    print("ok tools/call: files change in the sandbox; escapes and symlinks out are refused", flush=True)


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return (statistics.median(samples) * 1e3,
            samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1e3)


async def measure(client: Client, calls: list[tuple[str, dict[str, Any]]], n: int) -> None:
    """Times `tools/resolve` through the client, interleaved with a baseline:
    the same round trip for a method the server rejects without doing any work
    (-32601; the 2026-07-28 protocol has no `ping`)."""
    resolve_samples, ping_samples = [], []
    for i in range(n):
        name, arguments = calls[i % len(calls)]
        start = time.perf_counter()
        await resolve(client, name, arguments)
        resolve_samples.append(time.perf_counter() - start)
        start = time.perf_counter()
        try:
            await client.session.send_request(ResolveRequest(method="no/such/method", params=ResolveParams(
                name=name, arguments=arguments)), RAW)
        except MCPError as e:
            check(e.code == -32601, f"baseline: code {e.code}")
        ping_samples.append(time.perf_counter() - start)
    for label, samples in [("tools/resolve", resolve_samples), ("baseline (-32601)", ping_samples)]:
        median, p99 = percentiles(samples)
        print(f"latency {label} over stdio, {n} requests: median {median:.3f} ms, p99 {p99:.3f} ms",
              flush=True)


def stdio(server: str, root: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=server, args=["--root", str(root), *extra])


async def main_async(args: argparse.Namespace) -> None:
    selftest()
    with tempfile.TemporaryDirectory(prefix="file-server-e2e-") as tmp:
        base = Path(tmp)
        root = base / "root"
        (root / "sub").mkdir(parents=True)
        (root / "notes.txt").write_text("first line")
        outside = base / "outside.txt"
        outside.write_text("outside")
        os.symlink(outside, root / "escape.txt")
        os.symlink(base, root / "up")

        resolving = [advertise(EXTENSION)]
        with_variants = [advertise(EXTENSION), advertise(VARIANT_EXTENSION)]
        async with Client(stdio(args.server, root), extensions=with_variants) as client:
            print(f"connected: protocol {client.session.protocol_version}", flush=True)
            signature = await client.session.send_request(SignatureRequest(), RAW)
            log("<-", "signature", {"fingerprint": signature["fingerprint"],
                                    "tools": [t["name"] for t in signature["tools"]]})
            check(signature.get("resultType") == "complete", "the signature result has no resultType")
            check(signature["fingerprint"] == fingerprint_of(signature), "signature fingerprint does not verify")
            print("ok signature: fingerprint verified with rfc8785 + sha256", flush=True)
            tools = await check_listing(client, signature)
            print("ok tools/list: static annotations and markers match the signature", flush=True)
            calls = await check_every_variant(client, tools, signature)
            await check_errors(client, tools)
            await check_calls(client, root, outside)
            await measure(client, calls, args.requests)

        # A client that does not declare the extension: no marker, -32021.
        async with Client(stdio(args.server, root)) as client:
            listed = await client.list_tools()
            marked = [t.name for t in listed.tools if EXTENSION in (t.meta or {})]
            check(not marked, f"the marker is listed to a client without the extension: {marked}")
            e = await resolve_error(client, "manage_files", {"path": "a", "action": "read"})
            check(e.code == -32021, f"missing capability: code {e.code}")
            print("ok missing client capability -> -32021, no resolvable marker listed", flush=True)

        # Settings this version does not know are unsupported (the extension's MUST),
        # per request and in a legacy session's initialize alike.
        future = [advertise(EXTENSION, {"futureRequiredMode": True})]
        for mode in ("auto", "legacy"):
            async with Client(stdio(args.server, root), extensions=future, mode=mode) as client:
                e = await resolve_error(client, "manage_files", {"path": "a", "action": "read"})
                check(e.code == -32021, f"non-empty settings ({mode}): code {e.code}")
        print("ok non-empty extension settings -> -32021", flush=True)

        # The legacy handshake: the capability declared in `initialize`.
        async with Client(stdio(args.server, root), extensions=resolving, mode="legacy") as client:
            result = await resolve(client, "manage_files", {"path": "a", "action": "read"})
            check(result["annotations"]["readOnlyHint"] is True, f"legacy session: {result}")
            print(f"ok legacy session ({client.session.protocol_version}): capability from initialize", flush=True)

        # The other dialects (no extension capability involved).
        async with Client(stdio(args.server, root, "--dialect", "sep1862")) as client:
            result = await resolve(client, "copy_file", {"source": "a", "destination": "b"})
            log("<-", "tools/resolve (sep1862)", result)
            tool = result["tool"]
            check(tool["name"] == "copy_file" and tool["resolve"] is True, f"sep1862: {result}")
            check(tool["annotations"]["destructiveHint"] is False, f"sep1862 keep_existing: {result}")
            check(tool["securitySchemes"][0]["type"] == "oauth2", f"sep1862 scopes: {result}")
            print("ok dialect sep1862: {tool: Tool} with securitySchemes", flush=True)
        async with Client(stdio(args.server, root, "--dialect", "annotations")) as client:
            result = await resolve(client, "manage_files", {"path": "a", "action": "append", "content": "x"},
                                   method="tools/annotations")
            log("<-", "tools/annotations", result)
            # Besides `annotations`, only what the protocol puts in every
            # 2026-07-28 result (`resultType`, the server's `_meta` identity).
            check(set(result) - {"resultType", "_meta"} == {"annotations"}
                  and result["annotations"]["destructiveHint"] is False,
                  f"annotations dialect: {result}")
            e = await resolve_error(client, "manage_files", {"path": "a", "action": "read"})
            check(e.code == -32601, f"tools/resolve in the annotations dialect: code {e.code}")
            print("ok dialect annotations: tools/annotations", flush=True)

        await check_http(args.server, root)


async def check_http(server: str, root: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        server, "--root", str(root), "--http", f"127.0.0.1:{port}",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    try:
        line = await asyncio.wait_for(process.stderr.readline(), timeout=30)
        check(b"serving" in line, f"http server did not start: {line!r}")
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url, extensions=[advertise(EXTENSION)]) as client:
            listed = await client.list_tools()
            result = await resolve(client, "manage_files", {"path": "notes.txt", "action": "read"})
            check(result["annotations"]["readOnlyHint"] is True, f"http resolve: {result}")
            extensions = set(result.get("_meta") or {}) - CORE_RESULT_META
            check(not extensions, f"result _meta for an extension the client did not declare: {result}")
            log("<-", "tools/resolve (http)", result)
            print(f"ok streamable HTTP: {len(listed.tools)} tools, resolve works", flush=True)
    finally:
        process.terminate()
        await process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True, help="path to the file-server binary")
    parser.add_argument("--requests", type=int, default=1000, help="resolve requests to time")
    args = parser.parse_args()
    try:
        asyncio.run(main_async(args))
    except Failure as failure:
        print(f"FAILED: {failure}", flush=True)
        return 1
    print("all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
