"""Conformance suite for servers of the tool-resolution extension, over raw
JSON-RPC: no SDK between the suite and the server, so every byte the server
answers is checked.

Usage:
  suite.py [--legacy] --stdio -- COMMAND ARGS...   a server started per session on stdio
  suite.py [--legacy] --http URL                   a streamable HTTP endpoint

In the 2026-07-28 style the cases share one session (one server process on
stdio) where a request stands alone: the server must answer each by its own
capabilities, carrying nothing over from the one before. Discovery, framing,
early notifications and `initialize` sessions get sessions of their own.

With --legacy every case runs in `initialize` sessions (2025-11-25), with the
client capabilities declared once per session, for servers (and proxies in
front of servers) that do not speak the 2026-07-28 style.

Each case prints `ok CASE: …` or `FAILED CASE: …`; the exit status is 1 when
any case failed. Cases (docs/serving.md maps them to the extension's
requirements):

  discover            the extension advertised with `{}` (server/discover,
                      and initialize in a legacy session)
  signature           if advertised: `resultType`, the fingerprint (RFC 8785)
  list-marker         `{"resolvable": true}` on resolvable tools; not listed
                      to a client without the extension
  resolve-results     every candidate argument object of every resolvable
                      tool: the result schema, the tool's name, the
                      conservative bound against the listed annotations,
                      the same answer twice, `_meta` only of negotiated
                      extensions, and (with a signature) the declared variant
  negotiated-meta     the companion variant extension's `_meta`, only when
                      the client declares it
  capability-missing  -32021 (no client capabilities, no extensions, other
                      extensions only), with `requiredCapabilities`
  capability-settings -32021 for settings other than `{}` (non-empty, `true`,
                      `null`)
  invalid-params      -32602: unknown tool, unmarked tool, arguments the
                      schema rejects, missing or non-object arguments, a
                      missing or non-string name
  unknown-method      -32601
  framing             -32700 / -32600 / -32602 with the right `id` for
                      malformed messages, and the session goes on
  early-notification  a session that starts with a notification goes on
  legacy-session      an `initialize` session (2025-11-25): the capability
                      from initialize; -32021 without it or with settings
"""

from __future__ import annotations

import argparse
import base64
import json
import queue
import subprocess
import sys
import tempfile
import threading
import traceback
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import extension as ext  # noqa: E402

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TIMEOUT = 20.0
CLIENT_INFO = {"name": "mcp-resolve-conformance", "version": "1"}


class Failure(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failure(message)


def caps(*extensions: str, settings: Any = None) -> dict[str, Any]:
    """Client capabilities declaring `extensions` (settings `{}` unless given)."""
    return {"extensions": {e: ({} if settings is None else settings) for e in extensions}}


def meta(capabilities: dict[str, Any] | None) -> dict[str, Any]:
    m: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    if capabilities is not None:
        m["io.modelcontextprotocol/clientCapabilities"] = capabilities
    return m


# --- transports -------------------------------------------------------------


class StdioSession:
    """One server process; messages are lines."""

    def __init__(self, command: list[str]):
        # Its stderr is kept (not shown) for the message of a failure.
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-2000:].decode(errors="replace")

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def receive(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            try:
                line = self.lines.get(timeout=TIMEOUT)
            except queue.Empty:
                raise Failure(f"no answer within {TIMEOUT} s (the process is "
                              f"{'running' if self.process.poll() is None else 'gone'}; "
                              f"its stderr so far: {self.stderr_text()!r})") from None
            if line is None:
                raise Failure(f"the server closed its output (exit {self.process.poll()})")
            try:
                message = json.loads(line)
            except ValueError:
                raise Failure(f"the server wrote a line that is not JSON: {line[:200]!r}") from None
            if isinstance(message, dict) and wanted(message):
                return message

    def exchange(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
        self.send(json.dumps(message).encode())
        try:
            return self.receive(lambda m: m.get("id") == message["id"] and "method" not in m)
        except Failure as e:
            raise Failure(f"{message.get('method')}: {e}") from None

    def raw(self, data: bytes) -> tuple[int | None, dict[str, Any]]:
        """Sends bytes that are not a well-formed request; the answer with `id: null`
        or, for a request whose id survives, with that id."""
        self.send(data)
        return None, self.receive(lambda m: "method" not in m)

    def notify(self, message: dict[str, Any]) -> None:
        self.send(json.dumps(message).encode())

    def close(self) -> None:
        try:
            if self.process.stdin:
                self.process.stdin.close()
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class HttpSession:
    """Streamable HTTP: one POST per message; a legacy session has an id."""

    def __init__(self, url: str, protocol: str = MODERN):
        self.url = url
        self.protocol = protocol
        self.session_id: str | None = None

    def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, list[dict[str, Any]]]:
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
        if self.session_id:
            h["Mcp-Session-Id"] = self.session_id
        request = urllib.request.Request(self.url, data=body, headers=h, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                status, kind, text = response.status, response.headers.get("Content-Type", ""), response.read()
                session = response.headers.get("Mcp-Session-Id")
                if session:
                    self.session_id = session
        except urllib.error.HTTPError as e:
            status, kind, text = e.code, e.headers.get("Content-Type", ""), e.read()
        return status, parse_body(kind, text)

    def headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        h = {"MCP-Protocol-Version": self.protocol}
        method = message.get("method")
        if isinstance(method, str):
            h["Mcp-Method"] = method
            name = (message.get("params") or {}).get("name") if isinstance(message.get("params"), dict) else None
            if method == "tools/call" and isinstance(name, str):
                h["Mcp-Name"] = "=?base64?" + base64.b64encode(name.encode()).decode() + "?="
        return h

    def exchange(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
        status, messages = self.post(json.dumps(message).encode(), {**self.headers_for(message), **(headers or {})})
        answers = [m for m in messages if m.get("id") == message["id"] and "method" not in m]
        check(bool(answers), f"HTTP {status} without an answer to id {message['id']}: {messages}")
        answer = answers[0]
        if "error" in answer:
            check(status in (200, 400, 404), f"HTTP {status} for an error answer")
        else:
            check(status == 200, f"HTTP {status} for a result")
        return answer

    def raw(self, data: bytes) -> tuple[int | None, dict[str, Any]]:
        status, messages = self.post(data, {"MCP-Protocol-Version": self.protocol, "Mcp-Method": "tools/list"})
        check(len(messages) == 1, f"HTTP {status}: expected one JSON-RPC error, got {messages}")
        return status, messages[0]

    def notify(self, message: dict[str, Any]) -> None:
        status, _ = self.post(json.dumps(message).encode(), self.headers_for(message))
        check(status in (200, 202), f"a notification got HTTP {status}")

    def close(self) -> None:
        """Ends a session the server assigned (a server may refuse: 405)."""
        if not self.session_id:
            return
        request = urllib.request.Request(self.url, headers={"Mcp-Session-Id": self.session_id}, method="DELETE")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT):
                pass
        except urllib.error.HTTPError as e:
            check(e.code in (404, 405), f"DELETE of the session: HTTP {e.code}")
        self.session_id = None


def parse_body(kind: str, text: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a response body (JSON, or server-sent events)."""
    if not text.strip():
        return []
    if "text/event-stream" in kind:
        out = []
        for event in text.decode("utf-8", "replace").split("\n\n"):
            data = "\n".join(line[5:].lstrip() for line in event.splitlines() if line.startswith("data:"))
            if data.strip():
                out.append(json.loads(data))
        return out
    try:
        value = json.loads(text)
    except ValueError:
        raise Failure(f"the body is neither JSON nor events: {text[:200]!r}") from None
    return value if isinstance(value, list) else [value]


class Target:
    def __init__(self, stdio: list[str] | None, url: str | None, legacy: bool = False):
        self.stdio, self.url, self.legacy = stdio, url, legacy
        self.kind = ("stdio" if stdio else "http") + (", legacy" if legacy else "")
        self._kept: Kept | None = None

    def session(self, protocol: str = MODERN) -> StdioSession | HttpSession:
        return StdioSession(self.stdio) if self.stdio else HttpSession(self.url or "", protocol)

    def kept(self) -> Kept:
        """The one 2026-07-28 session the cases share: each request stands alone
        with its own capabilities, so one server process answers them all, and
        must carry nothing of one request into the next."""
        if self._kept is None:
            self._kept = Kept(self.session())
        return self._kept

    def close(self) -> None:
        """Ends the shared session (after a failed case too: the next starts afresh)."""
        if self._kept is not None:
            self._kept.session.close()
            self._kept = None


class Kept:
    """The shared session as a case sees it: closing it is the target's."""

    def __init__(self, session: StdioSession | HttpSession):
        self.session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    def close(self) -> None:
        pass


# --- a client over one session ---------------------------------------------


class Client:
    def __init__(self, session: StdioSession | HttpSession, legacy: bool = False):
        self.session = session
        self.legacy = legacy
        self.ids = 0

    def message(self, method: str, params: dict[str, Any] | None, capabilities: dict[str, Any] | None) -> dict[str, Any]:
        self.ids += 1
        params = dict(params or {})
        if not self.legacy:
            params["_meta"] = {**meta(capabilities), **params.get("_meta", {})}
        return {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}

    def call(self, method: str, params: dict[str, Any] | None = None,
             capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.session.exchange(self.message(method, params, capabilities))

    def result(self, method: str, params: dict[str, Any] | None = None,
               capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = self.call(method, params, capabilities)
        check("result" in answer, f"{method}: error {answer.get('error')}")
        return answer["result"]

    def error(self, code: int, method: str, params: dict[str, Any] | None = None,
              capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        message = self.message(method, params, capabilities)
        answer = self.session.exchange(message)
        problems = ext.schema_errors(ext.error_schema(code), answer)
        check(not problems and answer["id"] == message["id"],
              f"{method} {json.dumps(params)[:200]}: expected error {code}, got {json.dumps(answer)[:300]} "
              f"({'; '.join(problems)})")
        return answer["error"]


def legacy_client(target: Target, capabilities: dict[str, Any],
                  before: list[dict[str, Any]] | None = None) -> tuple[Client, dict[str, Any]]:
    """An `initialize` session declaring `capabilities`; `before`: notifications
    sent ahead of `initialize`."""
    session = target.session(LEGACY)
    for notification in before or []:
        session.notify(notification)
    client = Client(session, legacy=True)
    init = client.result("initialize", {"protocolVersion": LEGACY, "capabilities": capabilities,
                                        "clientInfo": CLIENT_INFO})
    session.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return client, init


def open_client(target: Target, capabilities: dict[str, Any] | None) -> Client:
    """A client whose requests declare `capabilities`: per request in the
    2026-07-28 style, on the session the cases share, or at `initialize`
    with --legacy, in a session of its own (None: no capabilities at all,
    which a legacy session can only say as `{}`)."""
    if target.legacy:
        return legacy_client(target, capabilities or {})[0]
    return Client(target.kept())


# --- the cases --------------------------------------------------------------


class State:
    """What the first cases learn about the server."""

    def __init__(self) -> None:
        self.server_extensions: set[str] = set()
        self.tools: dict[str, dict[str, Any]] = {}
        self.marked: list[str] = []
        self.signature: dict[str, dict[str, Any]] | None = None


def case_discover(target: Target, state: State) -> str:
    client, init = legacy_client(target, caps(ext.EXTENSION))
    client.session.close()
    legacy = (init.get("capabilities") or {}).get("extensions") or {}
    check(legacy.get(ext.EXTENSION) == {}, f"initialize: extensions are {legacy}")
    discovered = init
    if not target.legacy:
        session = target.session()
        try:
            discovered = Client(session).result("server/discover", {}, caps(ext.EXTENSION))
        finally:
            session.close()
    extensions = (discovered.get("capabilities") or {}).get("extensions") or {}
    check(extensions.get(ext.EXTENSION) == {}, f"capabilities.extensions[{ext.EXTENSION}] is {extensions.get(ext.EXTENSION)!r}")
    check(set(extensions) == set(legacy), f"server/discover offers {sorted(extensions)}, initialize {sorted(legacy)}")
    state.server_extensions = set(extensions)
    state.signature_advertised = "signature" in ((discovered.get("capabilities") or {}).get("experimental") or {})
    return f"extensions {sorted(extensions)}"


def case_signature(target: Target, state: State) -> str:
    if not getattr(state, "signature_advertised", False):
        return "not advertised (nothing to check)"
    client = open_client(target, caps(ext.EXTENSION))
    try:
        document = client.result("signature", {}, caps(ext.EXTENSION))
    finally:
        client.session.close()
    check(document.get("resultType") == "complete", "the signature result has no resultType")
    check(document.get("fingerprint") == ext.fingerprint_of(document), "the fingerprint does not verify")
    state.signature = {t["name"]: t for t in document["tools"]}
    return f"{len(document['tools'])} tools, {document['fingerprint'][:19]}…"


def case_list_marker(target: Target, state: State) -> str:
    listed, plain = [], []
    for out, capabilities in [(listed, caps(ext.EXTENSION)), (plain, {})]:
        client = open_client(target, capabilities)
        try:
            out.extend(client.result("tools/list", {}, capabilities)["tools"])
        finally:
            client.session.close()
    state.tools = {t["name"]: t for t in listed}
    for tool in listed:
        marker = (tool.get("_meta") or {}).get(ext.EXTENSION)
        check(marker in (None, {"resolvable": True}), f"{tool['name']}: marker {marker!r}")
        if marker:
            state.marked.append(tool["name"])
        if state.signature is not None:
            check(bool(state.signature.get(tool["name"], {}).get("resolvedVariants")) == bool(marker),
                  f"{tool['name']}: marker {marker!r} but the signature says otherwise")
    check(bool(state.marked), "no tool is marked resolvable")
    leaked = [t["name"] for t in plain if ext.EXTENSION in (t.get("_meta") or {})]
    check(not leaked, f"the marker is listed to a client without the extension: {leaked}")
    return f"{len(state.marked)} of {len(listed)} tools resolvable"


def resolve_all(client: Client, state: State, capabilities: dict[str, Any],
                negotiated: set[str]) -> tuple[int, int, dict[str, set[str | None]]]:
    answered = refused = 0
    variants: dict[str, set[str | None]] = {}
    for name in state.marked:
        tool = state.tools[name]
        for arguments in ext.candidates(tool["inputSchema"]):
            params = {"name": name, "arguments": arguments}
            first = client.call("tools/resolve", params, capabilities)
            if "error" in first:
                # A server's own checks beyond the schema may refuse: -32602 only.
                check(first["error"].get("code") == -32602, f"{name} {arguments}: error {first['error']}")
                refused += 1
                continue
            result = first["result"]
            problems = ext.schema_errors(ext.RESULT_SCHEMA, result)
            check(not problems, f"{name} {arguments}: {'; '.join(problems)}")
            check(result["name"] == name, f"{name}: the result names {result['name']!r}")
            bound = ext.within_conservative_bound(tool.get("annotations") or {}, result["annotations"])
            check(bound is None, f"{name} {arguments}: outside the conservative bound: {bound}")
            leak = ext.meta_is_negotiated(result, negotiated, state.server_extensions)
            check(leak is None, f"{name} {arguments}: {leak}")
            again = client.call("tools/resolve", params, capabilities)
            check(again.get("result") == result, f"{name} {arguments}: a second answer differs: {again}")
            variant = None
            if state.signature is not None:
                variant, annotations = ext.declared(state.signature[name], arguments)
                check(result["annotations"] == ext.core(annotations),
                      f"{name} {arguments}: {result['annotations']}, the signature declares {variant}")
            if ext.VARIANT_EXTENSION in negotiated and ext.VARIANT_EXTENSION in state.server_extensions:
                entry = (result.get("_meta") or {}).get(ext.VARIANT_EXTENSION)
                check(isinstance(entry, dict) and isinstance(entry.get("requiredScopes"), list),
                      f"{name} {arguments}: no variant _meta: {result}")
                if state.signature is not None:
                    check(entry["variant"] == variant, f"{name} {arguments}: variant {entry['variant']!r}, "
                          f"the signature declares {variant!r}")
                variants.setdefault(name, set()).add(entry["variant"])
            answered += 1
    check(answered > 0, "no candidate resolved")
    return answered, refused, variants


def case_resolve_results(target: Target, state: State) -> str:
    client = open_client(target, caps(ext.EXTENSION))
    try:
        answered, refused, _ = resolve_all(client, state, caps(ext.EXTENSION), {ext.EXTENSION})
    finally:
        client.session.close()
    return f"{answered} answers checked ({refused} refused by the server's own checks)"


def case_negotiated_meta(target: Target, state: State) -> str:
    if ext.VARIANT_EXTENSION not in state.server_extensions:
        return "the server does not offer the variant extension (results carry no _meta)"
    declared = {ext.EXTENSION, ext.VARIANT_EXTENSION}
    client = open_client(target, caps(*declared))
    try:
        answered, _, variants = resolve_all(client, state, caps(*declared), declared)
    finally:
        client.session.close()
    return f"{answered} answers, variants {sorted((k, sorted(map(str, v))) for k, v in variants.items())}"


def some_call(state: State) -> dict[str, Any]:
    name = state.marked[0]
    return {"name": name, "arguments": ext.candidates(state.tools[name]["inputSchema"])[0]}


def case_capability_missing(target: Target, state: State) -> str:
    declared: list[dict[str, Any] | None] = [{}, {"extensions": {}}, caps("com.example/other")]
    if not target.legacy:
        declared.append(None)  # no client capabilities in `_meta` at all
    for capabilities in declared:
        client = open_client(target, capabilities)
        try:
            client.error(-32021, "tools/resolve", some_call(state), capabilities)
        finally:
            client.session.close()
    return f"{len(declared)} requests"


def case_capability_settings(target: Target, state: State) -> str:
    # `true` and `null` are not capability objects at all: `initialize`
    # may reject them as malformed, so a legacy session only says non-empty.
    settings_list: list[Any] = [{"futureRequiredMode": True}] + ([] if target.legacy else [True, None])
    for settings in settings_list:
        capabilities = {"extensions": {ext.EXTENSION: settings}}
        client = open_client(target, capabilities)
        try:
            client.error(-32021, "tools/resolve", some_call(state), capabilities)
        finally:
            client.session.close()
    return "non-empty" + ("" if target.legacy else ", true, null")


def case_invalid_params(target: Target, state: State) -> str:
    call = some_call(state)
    name = call["name"]
    schema = state.tools[name]["inputSchema"]
    unmarked = [n for n in state.tools if n not in state.marked]
    invalid = ext.invalid_variant(schema, call["arguments"])
    cases: list[tuple[str, dict[str, Any]]] = [
        ("unknown tool", {"name": "no_such_tool_" + "x" * 8, "arguments": {}}),
        ("missing arguments", {"name": name}),
        ("non-object arguments", {"name": name, "arguments": [call["arguments"]]}),
        ("null arguments", {"name": name, "arguments": None}),
        ("missing name", {"arguments": call["arguments"]}),
        ("non-string name", {"name": 7, "arguments": call["arguments"]}),
    ]
    if unmarked:
        cases.append(("unmarked tool", {"name": unmarked[0], "arguments": {}}))
    if invalid is not None:
        cases.append(("arguments the schema rejects", {"name": name, "arguments": invalid}))
    client = open_client(target, caps(ext.EXTENSION))
    try:
        for label, params in cases:
            try:
                client.error(-32602, "tools/resolve", params, caps(ext.EXTENSION))
            except Failure as e:
                raise Failure(f"{label}: {e}") from None
    finally:
        client.session.close()
    return ", ".join(label for label, _ in cases)


def case_unknown_method(target: Target, state: State) -> str:
    client = open_client(target, caps(ext.EXTENSION))
    try:
        client.error(-32601, "tools/no-such-method", {}, caps(ext.EXTENSION))
    finally:
        client.session.close()
    return "tools/no-such-method"


FRAMING = [
    # (label, bytes, code, id)
    ("not JSON", b"{this is not json", -32700, None),
    ("batch", b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', -32600, None),
    ("not an object", b"42", -32600, None),
    ("object id", b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', -32600, None),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":901,"method":"tools/list","params":{}}', -32600, 901),
    ("method not a string", b'{"jsonrpc":"2.0","id":902,"method":7}', -32600, 902),
    ("params an array", b'{"jsonrpc":"2.0","id":903,"method":"tools/list","params":[]}', -32602, 903),
    ("params a string", b'{"jsonrpc":"2.0","id":"s","method":"tools/list","params":"x"}', -32602, "s"),
    ("_meta an array", b'{"jsonrpc":"2.0","id":904,"method":"tools/list","params":{"_meta":[]}}', -32602, 904),
]


def case_framing(target: Target, state: State) -> str:
    # A session of its own: what it is sent is malformed on purpose.
    if target.legacy:
        client = legacy_client(target, caps(ext.EXTENSION))[0]
    else:
        client = Client(target.session())
    session = client.session
    try:
        client.result("tools/list", {}, caps(ext.EXTENSION))
        for label, data, code, id_ in FRAMING:
            status, answer = session.raw(data)
            problems = ext.schema_errors(ext.error_schema(code), answer)
            check(not problems and answer.get("id") == id_,
                  f"{label}: expected {code} with id {id_!r}, got {json.dumps(answer)[:200]} {problems}")
            check(status in (None, 400), f"{label}: HTTP {status}, expected 400")
        # The session goes on.
        client.result("tools/resolve", some_call(state), caps(ext.EXTENSION))
    finally:
        session.close()
    return f"{len(FRAMING)} malformed messages answered, the session went on"


EARLY = [{"jsonrpc": "2.0", "method": "notifications/initialized"},
         {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}]


def case_early_notification(target: Target, state: State) -> str:
    if target.legacy:
        client, _ = legacy_client(target, caps(ext.EXTENSION), before=EARLY)
    else:
        client = Client(target.session())
        for notification in EARLY:
            client.session.notify(notification)
    try:
        client.result("tools/resolve", some_call(state), caps(ext.EXTENSION))
    finally:
        client.session.close()
    return "answered after two notifications" + (" sent before initialize" if target.legacy else "")


def case_legacy_session(target: Target, state: State) -> str:
    client, _ = legacy_client(target, caps(ext.EXTENSION))
    try:
        result = client.result("tools/resolve", some_call(state))
        problems = ext.schema_errors(ext.RESULT_SCHEMA, result)
        check(not problems, f"legacy result: {'; '.join(problems)}")
    finally:
        client.session.close()
    for label, capabilities in [("without the extension", {}),
                                ("with settings", caps(ext.EXTENSION, settings={"futureRequiredMode": True}))]:
        client, _ = legacy_client(target, capabilities)
        try:
            client.error(-32021, "tools/resolve", some_call(state))
        except Failure as e:
            raise Failure(f"{label}: {e}") from None
        finally:
            client.session.close()
    return "declared: resolved; undeclared and non-empty settings: -32021"


CASES: list[tuple[str, Callable[[Target, State], str]]] = [
    ("discover", case_discover),
    ("signature", case_signature),
    ("list-marker", case_list_marker),
    ("resolve-results", case_resolve_results),
    ("negotiated-meta", case_negotiated_meta),
    ("capability-missing", case_capability_missing),
    ("capability-settings", case_capability_settings),
    ("invalid-params", case_invalid_params),
    ("unknown-method", case_unknown_method),
    ("framing", case_framing),
    ("early-notification", case_early_notification),
    ("legacy-session", case_legacy_session),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--http", metavar="URL", help="a streamable HTTP endpoint")
    parser.add_argument("--stdio", action="store_true", help="start the command after `--` per session")
    parser.add_argument("--legacy", action="store_true",
                        help="run every case in initialize sessions (2025-11-25)")
    parser.add_argument("command", nargs="*", help="the server command (with --stdio)")
    args = parser.parse_args()
    if bool(args.http) == bool(args.stdio) or (args.stdio and not args.command):
        parser.error("give either --http URL or --stdio -- COMMAND ARGS...")
    ext.selftest()
    target = Target(args.command if args.stdio else None, args.http, args.legacy)
    state = State()
    failed = 0
    for name, case in CASES:
        try:
            detail = case(target, state)
            print(f"ok {name} ({target.kind}): {detail}", flush=True)
        except Failure as e:
            failed += 1
            print(f"FAILED {name} ({target.kind}): {e}", flush=True)
            target.close()
        except Exception:  # noqa: BLE001 - a crash of one case is a failure of it
            failed += 1
            print(f"FAILED {name} ({target.kind}): {traceback.format_exc()}", flush=True)
            target.close()
        if failed and name in ("discover", "list-marker"):
            print("later cases need what these learn; stopping", flush=True)
            break
    target.close()
    print(f"{len(CASES) - failed} of {len(CASES)} cases passed" if not failed else f"{failed} case(s) failed",
          flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
