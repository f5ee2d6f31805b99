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

`--floor LINE_RELAY` adds the floors of both routes, asked in the same
turns: `line-relay --threads` (two threads of blocking I/O moving lines,
the stdio route's floor) and `line-relay --http` (one thread of blocking
I/O taking the host's POSTs, no HTTP library: the HTTP route's floor), from
`cargo build --release -p mcp-resolve-benches --bin line-relay`; their
ratio is what HTTP itself costs over a pipe. A third, `line-relay --axum`,
is the same exchange on the proxy's own HTTP stack (axum on hyper, on a
current-thread tokio runtime): what the route costs before the proxy does
anything, printed over the stdio route as well.

Each start warms up with 300 requests a route, then runs BLOCKS blocks;
--starts (3) starts the routes anew, their order turned every start.
Prints each route's median µs per request and the median ratio of the HTTP
route to the stdio route, block by block, with its middle half.

Usage: scripts/listen_ab.py [--starts S] [--json] [--floor LINE_RELAY] BLOCKS N METHOD PARAMS BIN -- RULES -- SERVER ARGS…
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

    def __init__(self, command: list, events: bool) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True)
        line = self.process.stderr.readline()
        urls = [w for w in line.split() if w.startswith("http://")]
        if not urls:
            self.process.kill()
            raise SystemExit(f"{command[0]} did not say where it listens: {line!r}")
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


def started(name: str, binary: str, floor: str, rules: str, server: list, events: bool):
    """The route `name` started, in front of its own server."""
    if name == "stdio":
        return Proxy(binary, ["proxy", rules, "--no-probe", "--", *server])
    if name == "http":
        return Listening([binary, "proxy", rules, "--no-probe", "--listen", "127.0.0.1:0", "--",
                          *server], events)
    if name == "stdio floor":
        return Proxy(floor, ["--threads", *server])
    if name == "axum floor":
        return Listening([floor, "--axum", *server], events)
    return Listening([floor, "--http", *server], events)


def start(order: list, binary: str, floor: str, rules: str, server: list, events: bool,
          blocks: int, n: int, method: str, params: dict) -> list:
    """One start of the routes: per block, {route: µs per request}."""
    routes = {}
    try:
        for name in order:
            routes[name] = started(name, binary, floor, rules, server, events)
        ordered = [routes[name] for name in order]
        for _ in range(300):
            for one in ordered:
                one.request(method, params)
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
    starts, events, floor = 3, True, None
    while argv[:1] in (["--starts"], ["--json"], ["--floor"]):
        if argv[0] == "--starts":
            starts, argv = int(argv[1]), argv[2:]
        elif argv[0] == "--floor":
            floor, argv = argv[1], argv[2:]
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
    names = ["stdio", "http"] + (["stdio floor", "http floor", "axum floor"] if floor else [])
    figures = []
    for s in range(starts):
        order = names[s % len(names):] + names[:s % len(names)]
        figures += start(order, binary, floor, rules, server, events, blocks, n, method, params)
    accept = "an event stream" if events else "one JSON body"
    print(f"{method}, {len(figures)} blocks of {n} ({accept} over HTTP)")
    print("| route | µs of the route's CPU a request (median of blocks) |")
    print("|---|---:|")
    labels = {"stdio": "stdio", "http": "`--listen`", "stdio floor": "stdio floor (`line-relay --threads`)",
              "http floor": "HTTP floor (`line-relay --http`)",
              "axum floor": "the HTTP stack's floor (`line-relay --axum`)"}
    for name in names:
        print(f"| {labels[name]} | {statistics.median(f[name] for f in figures):.1f} |")
    for over, under, what in (("http", "stdio", "HTTP over stdio"),
                              ("http floor", "stdio floor", "the HTTP floor over the stdio floor"),
                              ("axum floor", "stdio", "the HTTP stack's floor over the stdio route")):
        if over not in names:
            continue
        ratios = sorted(f[over] / f[under] for f in figures)
        middle = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
        print(f"{what}, block by block: median {statistics.median(ratios):.2f}× "
              f"(middle half {middle[0]:.2f}× to {middle[1]:.2f}×)")


if __name__ == "__main__":
    main()
