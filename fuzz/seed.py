"""Seeds the corpus of every fuzz target from the project's own files.

- `rules_yaml`, `rules_dsl`, `format_roundtrip`: the rules in `rules/` and
  `tests/fixtures/` (valid, invalid and malformed);
- `when_expression`: every `when:` string of those rules;
- `resolvers_agree`: argument objects built from the bundled signatures in
  `generated/` (each variant's constant values, and the empty object), and
  the empty object for the hostile fixture's and the random sets' tools;
- `host_verify`, `diff_witnesses`: the signatures in `generated/`, with
  resolve results, and in pairs;
- `jsonrpc_host`, `jsonrpc_upstream`: JSON-RPC messages of each kind;
- `json_scan`: those messages, and `tools/list` answers with the real
  servers' listings in `tests/fixtures/real/`;
- `line_reader`: those messages as lines, with limits and buffer sizes
  around their lengths, a line without its newline, a blank line;
- `policy`: the example policies and the tests' policies;
- `cedar`: the example Cedar policies, and Cedar fragments;
- `jws_verify`: the RFC 8037 example JWS and a JWK;
- `jcs`: the signatures in `generated/` and JSON with the names and numbers
  where RFC 8785 texts could part (UTF-16 member order, escapes, integers
  past 2^53, exponents).

Usage: python3 fuzz/seed.py   (writes fuzz/corpus/<target>/, idempotent)
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def put(target: str, data: bytes) -> None:
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def rules_files(suffixes: tuple[str, ...]) -> list[Path]:
    files = [p for p in (ROOT / "rules").rglob("*") if p.suffix in suffixes]
    files += [p for p in (ROOT / "tests" / "fixtures").rglob("*") if p.suffix in suffixes]
    return sorted(p for p in files if p.is_file() and p.stat().st_size < 64 * 1024)


def main() -> None:
    yaml_files = rules_files((".yaml", ".yml"))
    dsl_files = rules_files((".rules",))
    # (files, their target, the format_roundtrip selector, where `when` is)
    for files, target, selector, when_pattern in (
        (yaml_files, "rules_yaml", b"\x00", rb'when:\s*"((?:[^"\\\n]|\\.)*)"'),
        (dsl_files, "rules_dsl", b"\x01", rb"when (.*?) \{"),
    ):
        for path in files:
            data = path.read_bytes()
            put(target, data)
            put("format_roundtrip", selector + data)
            for when in re.findall(when_pattern, data):
                put("when_expression", when)

    signatures = sorted((ROOT / "generated").glob("*.signature.json"))
    documents = [json.loads(p.read_text()) for p in signatures]
    for index, document in enumerate(documents):
        text = json.dumps(document).encode()
        tools = document.get("tools", [])
        listing = json.dumps({"tools": [{k: v for k, v in t.items() if k != "resolvedVariants"} for t in tools]})
        put("host_verify", text + b"\x00" + listing.encode())
        put("jcs", text)
        put("diff_witnesses", text + b"\x00" + text)
        other = documents[(index + 1) % len(documents)]
        put("diff_witnesses", text + b"\x00" + json.dumps(other).encode())
        for tool_index, tool in enumerate(tools):
            for variant in tool.get("resolvedVariants", []):
                patterns = variant.get("when", {}).get("argumentPatterns", {})
                arguments = {}
                for name, pattern in patterns.items():
                    if not isinstance(pattern, dict):
                        continue
                    if "const" in pattern:
                        arguments[name] = pattern["const"]
                    elif pattern.get("enum"):
                        arguments[name] = pattern["enum"][0]
                result = {"resultType": "complete", "name": tool["name"],
                          "annotations": variant.get("annotations", {}), "arguments": arguments}
                put("host_verify", text + b"\x00" + json.dumps(result).encode())
                # The target's servers are the bundled ones in this order,
                # then the hostile fixture, then the random sets.
                selector = bytes([index, tool_index % 256])
                put("resolvers_agree", selector + json.dumps(arguments).encode())
            put("resolvers_agree", bytes([index, tool_index % 256]) + b"{}")
    # The hostile fixture and the golden crate's random sets (their files are
    # in its build directory; `SETS` in tests/golden-crate/build.rs): each
    # tool, without arguments. The target takes both bytes modulo what it
    # has, so a count that drifts only wastes a seed.
    built_files = 1 + 40
    for index in range(len(documents), len(documents) + built_files):
        for tool_index in range(4):
            put("resolvers_agree", bytes([index, tool_index]) + b"{}")

    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {"cursor": "2"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/resolve", "params": {"name": "manage_files", "arguments": {"action": "read"},
         "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                   "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tool-resolution": {}}}}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "manage_files", "arguments": {"action": "delete", "path": "x"}}},
        {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "ok"}]}},
        {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "Method not found"}},
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        {"jsonrpc": "2.0", "id": "mcp-resolve-ask-1", "result": {"action": "accept", "content": {}}},
    ]
    lines = "\n".join(json.dumps(m) for m in messages).encode()
    for target in ("jsonrpc_host", "jsonrpc_upstream"):
        put(target, lines)
        for message in messages:
            put(target, json.dumps(message).encode())
        put(target, b'{"id":1,"id":2,"method":"a","method":"b"}\n[1,2]\n{"jsonrpc":"2.0"')
    put("json_scan", lines)
    for path in sorted((ROOT / "tests" / "fixtures" / "real").glob("*.json")):
        result = json.loads(path.read_text())
        if isinstance(result, dict) and "tools" in result:
            answer = {"jsonrpc": "2.0", "id": 1, "result": result}
            put("json_scan", json.dumps(answer, separators=(",", ":")).encode())
            put("json_scan", json.dumps(answer).encode())
    # The line reader's input: a limit, a reader buffer size, then lines.
    for limit, capacity in ((255, 31), (40, 0), (60, 7), (8, 3)):
        put("line_reader", bytes([limit, capacity]) + lines + b"\n\n\r\n" + lines[:50])

    for path in sorted((ROOT / "docs" / "policies").glob("*.yaml")) + sorted((ROOT / "tests" / "fixtures" / "proxy").glob("*policy*.yaml")):
        put("policy", path.read_bytes())
    put("policy", (ROOT / "tests" / "fixtures" / "policies" / "rich.yaml").read_bytes())
    for path in sorted((ROOT / "docs" / "policies").glob("*.cedar")):
        put("cedar", path.read_bytes())
    for text in (
        b'permit(principal, action, resource) when { context.resolution.readOnlyHint };',
        b'@id("a") @ask("b") permit(principal == FileServer::User::"x", action in [FileServer::Action::"manage_files"], resource) when { context.input.path like "*/etc/*" && context.resolution has variant };',
        b'forbid(principal, action, resource) unless { context.session.tokenScopes.containsAll(context.resolution.requiredScopes) };',
        b'permit(principal == ?principal, action, resource);',
    ):
        put("cedar", text)

    put("jws_verify", b"eyJhbGciOiJFZERTQSJ9..hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg\n")
    put("jws_verify", b'{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}')
    put("jws_verify", b'{"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}]}')
    for text in (
        r'{"\ue000":1,"\ud83d\ude00":2,"a":[1e21,-0.0,0.1,9007199254740993,18446744073709551615]}',
        r'{"":{"\u0001\n\"\\\u007f":[],"b":{}},"é":5e-324,"A":-9223372036854775808}',
    ):
        put("jcs", text.encode())
    for target in sorted({p.parent.name for p in CORPUS.glob("*/*")}):
        print(f"{target}: {len(list((CORPUS / target).iterdir()))} seeds")


if __name__ == "__main__":
    main()
