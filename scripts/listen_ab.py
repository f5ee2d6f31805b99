#!/usr/bin/env python3
"""The proxy's CPU per forwarded request over its HTTP route (`--listen`,
a stdio server behind it) beside its stdio route, side by side: one binary
started twice, each copy in front of its own server, asked in turn one
request at a time (the order flipped every request), so that both routes
see the same millisecond of a noisy machine. The CPU all of a proxy's
threads used (`/proc/PID/task/*/schedstat`) is read before and after each
block of N requests per route.

The HTTP host is Python's http.client on one keep-alive connection, in an
`initialize` session (`Mcp-Session-Id`), sending what a host sends:
`Accept: application/json, text/event-stream` (the proxy answers with an
event stream) and `MCP-Protocol-Version`; `--json` accepts JSON alone (the
proxy answers with one JSON body).

Each start warms up with 300 requests a route, then runs BLOCKS blocks;
--starts (3) starts both anew, the order of the routes swapped every start.
Prints each route's median µs per request and the median ratio of the HTTP
route to the stdio route, block by block, with its middle half.

Usage: scripts/listen_ab.py [--starts S] [--json] BLOCKS N METHOD PARAMS BIN -- RULES -- SERVER ARGS…
  e.g. scripts/listen_ab.py 8 400 tools/list '{}' target/release/mcp-resolve -- \\
         rules/real-server-filesystem.yaml -- mcp-server-filesystem /srv/files
"""

import http.client
import json
import statistics
import subprocess
import sys
import urllib.parse

from cpu_ab import Proxy, cpu_ns

VERSION = "2025-06-18"


class Listening:
    """The binary's `--listen` route in front of its server, one session."""

    def __init__(self, binary: str, rules: str, server: list, events: bool) -> None:
        self.process = subprocess.Popen(
            [binary, "proxy", rules, "--no-probe", "--listen", "127.0.0.1:0", "--", *server],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        urls = [w for w in line.split() if w.startswith("http://")]
        if not urls:
            self.process.kill()
            raise SystemExit(f"{binary} --listen did not say where it listens: {line!r}")
        url = urllib.parse.urlsplit(urls[0])
        self.path = url.path or "/"
        self.connection = http.client.HTTPConnection(url.hostname, url.port)
        self.accept = "application/json, text/event-stream" if events else "application/json"
        self.session = None
        self.next_id = 0
        self.request("initialize", {"protocolVersion": VERSION, "capabilities": {},
                                    "clientInfo": {"name": "listen_ab", "version": "1"}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message: dict) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": self.accept,
                   "MCP-Protocol-Version": VERSION}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        self.connection.request("POST", self.path, json.dumps(message), headers)
        response = self.connection.getresponse()
        body = response.read()
        if response.status >= 300:
            raise SystemExit(f"--listen answered {response.status}: {body[:200]!r}")
        self.session = response.getheader("Mcp-Session-Id") or self.session
        return body

    def request(self, method: str, params: dict) -> None:
        self.next_id += 1
        body = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        text = body.decode()
        if text.lstrip().startswith("{"):
            messages = [text]
        else:
            messages = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        for message in messages:
            answer = json.loads(message)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise SystemExit(f"--listen answered an error: {answer['error']}")
                return
        raise SystemExit(f"--listen gave no answer to request {self.next_id}: {text[:200]!r}")

    def cpu_ns(self) -> int:
        return cpu_ns(self.process.pid)

    def close(self) -> None:
        self.connection.close()
        self.process.terminate()
        self.process.wait()


def start(order: list, binary: str, rules: str, server: list, events: bool,
          blocks: int, n: int, method: str, params: dict) -> list:
    """One start of both routes: per block, {route: µs per request}."""
    routes = {}
    try:
        for name in order:
            routes[name] = (Proxy(binary, ["proxy", rules, "--no-probe", "--", *server])
                            if name == "stdio" else Listening(binary, rules, server, events))
        ordered = [routes[name] for name in order]
        for _ in range(300):
            for route in ordered:
                route.request(method, params)
        figures = []
        for _ in range(blocks):
            before = [r.cpu_ns() for r in ordered]
            for i in range(n):
                for route in ordered if i % 2 == 0 else ordered[::-1]:
                    route.request(method, params)
            spent = [(r.cpu_ns() - b) / n / 1000 for r, b in zip(ordered, before)]
            figures.append(dict(zip(order, spent)))
        return figures
    finally:
        for route in routes.values():
            route.close()


def main() -> None:
    argv = sys.argv[1:]
    starts, events = 3, True
    while argv[:1] in (["--starts"], ["--json"]):
        if argv[0] == "--starts":
            starts, argv = int(argv[1]), argv[2:]
        else:
            events, argv = False, argv[1:]
    if len(argv) < 8 or argv[5] != "--" or "--" not in argv[6:]:
        raise SystemExit(__doc__)
    blocks, n, method, params, binary = int(argv[0]), int(argv[1]), argv[2], json.loads(argv[3]), argv[4]
    rest = argv[6:]
    cut = rest.index("--")
    rules, server = rest[0], rest[cut + 1:]
    if cut != 1 or not server:
        raise SystemExit(__doc__)
    figures = []
    for s in range(starts):
        order = ["stdio", "http"] if s % 2 == 0 else ["http", "stdio"]
        figures += start(order, binary, rules, server, events, blocks, n, method, params)
    stdio = [f["stdio"] for f in figures]
    listen = [f["http"] for f in figures]
    ratios = sorted(h / s for s, h in zip(stdio, listen))
    middle = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
    accept = "an event stream" if events else "one JSON body"
    print(f"{method}, {len(figures)} blocks of {n} ({accept} over HTTP)")
    print(f"| route | µs of the proxy's CPU a request (median of blocks) |")
    print(f"|---|---:|")
    print(f"| stdio | {statistics.median(stdio):.1f} |")
    print(f"| `--listen` | {statistics.median(listen):.1f} |")
    print(f"HTTP over stdio, block by block: median {statistics.median(ratios):.2f}× "
          f"(middle half {middle[0]:.2f}× to {middle[1]:.2f}×)")


if __name__ == "__main__":
    main()
