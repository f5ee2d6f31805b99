#!/usr/bin/env python3
"""Round-trip latency and the proxy's CPU per request over streamable HTTP
(`mcp-resolve proxy --listen --upstream`), side by side in one run: the
server directly, through a TCP byte relay (socat, the physical floor of any
HTTP proxy here, when Debian's `socat` is installed), through
`mcp-resolve proxy` and (with `--baseline`)
through an earlier proxy binary.

The server is `tests/fixtures/proxy/v2_server.mjs` over HTTP (the TypeScript
SDK v2), started once; every route reaches the same process. A raw client
(Python's http.client on one keep-alive connection: only the transport and
the proxy are measured) sends, for each kind, N requests one at a time:
2026-07-28 `tools/list` and `tools/call` (with their SEP-2243 headers, which
the proxy checks), and the same in an `initialize` session. The routes take
turns round by round, in an order shuffled with a fixed seed, so drift in
the machine's load hits all of them. CPU is what the proxy's process (or the
relay's) used per request, from `/proc/PID/task/*/schedstat`.

With `--paired BLOCKS` (and `--baseline`) it measures only the two proxies'
CPU, side by side as scripts/cpu_ab.py does for stdio: request by request
in turn (the order flipped every request), so both see the same millisecond
of a noisy machine, and prints per kind each binary's median per block of N
requests, the median of proxy less baseline and every block's difference.
Two copies of one binary give the method's own spread (A/A).

Usage:
  http_latency.py --proxy BIN [--baseline BIN] --server-dir DIR \
      [--requests N] [--rounds N] [--paired BLOCKS]
  (DIR: a directory where `node v2_server.mjs` resolves the TypeScript SDK
  v2, as target/ts-client after scripts/install-ts-client.sh)

Prints a Markdown table (docs/performance.md keeps the figures).
"""

import argparse
import http.client
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "tests/fixtures/proxy/v2_server.yaml")
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "http-latency", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}
CALL = {"name": "slow", "arguments": {"host": "bench", "call": 0, "steps": 0, "delayMs": 0}}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """The CPU time of `pid`'s threads and of its children's (socat forks
    one per connection)."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{task}/children") as f:
                total += sum(cpu_seconds(int(child)) * 1e9 for child in f.read().split())
        except OSError:
            pass
    return total / 1e9


class Route:
    """One way to the server: an address, and the process whose CPU counts."""

    def __init__(self, name, port, process=None):
        self.name, self.port, self.process = name, port, process
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.session = None

    def reconnect(self):
        """A new keep-alive connection (a server closes idle ones)."""
        self.connection.close()
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def post(self, message, headers):
        body = json.dumps(message)
        all_headers = {"Content-Type": "application/json",
                       "Accept": "application/json, text/event-stream", **headers}
        if self.session:
            all_headers["Mcp-Session-Id"] = self.session
        self.connection.request("POST", "/mcp", body, all_headers)
        response = self.connection.getresponse()
        text = response.read()
        if response.status not in (200, 202):
            raise RuntimeError(f"{self.name}: HTTP {response.status}: {text[:200]!r}")
        session = response.getheader("Mcp-Session-Id")
        if session:
            self.session = session
        return text

    def initialize(self):
        self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "http-latency", "version": "1"}}}, {})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                  {"MCP-Protocol-Version": "2025-11-25"})


def kinds():
    """(name, message, headers, in a session) of each request kind."""
    modern = {"MCP-Protocol-Version": "2026-07-28"}
    return [
        ("tools/list 2026-07-28", {"method": "tools/list", "params": {"_meta": META}},
         {**modern, "Mcp-Method": "tools/list"}, False),
        ("tools/call 2026-07-28", {"method": "tools/call", "params": {**CALL, "_meta": META}},
         {**modern, "Mcp-Method": "tools/call", "Mcp-Name": "slow"}, False),
        ("tools/list session", {"method": "tools/list", "params": {}},
         {"MCP-Protocol-Version": "2025-11-25"}, True),
        ("tools/call session", {"method": "tools/call", "params": CALL},
         {"MCP-Protocol-Version": "2025-11-25"}, True),
    ]


def measure(route, kind, n):
    _, message, headers, in_session = kind
    # A fresh connection for each block (a server closes idle ones), opened
    # by an untimed request.
    route.reconnect()
    if in_session and route.session is None:
        route.initialize()
    saved = route.session
    if not in_session:
        route.session = None
    route.post({"jsonrpc": "2.0", "id": 0, **message}, headers)
    times = []
    before = cpu_seconds(route.process.pid) if route.process else None
    for i in range(n):
        start = time.perf_counter()
        route.post({"jsonrpc": "2.0", "id": i + 1, **message}, headers)
        times.append(time.perf_counter() - start)
    cpu = (cpu_seconds(route.process.pid) - before) / n if route.process else None
    route.session = saved
    return times, cpu


def paired(first, second, kind, n, blocks):
    """CPU per request of two proxies asked in turn, block by block:
    [(first's, second's)] in µs."""
    _, message, headers, in_session = kind
    pairs = []
    for _ in range(blocks):
        for route in (first, second):
            route.reconnect()
            if in_session and route.session is None:
                route.initialize()
        saved = {route.name: route.session for route in (first, second)}
        if not in_session:
            first.session = second.session = None
        for route in (first, second):
            route.post({"jsonrpc": "2.0", "id": 0, **message}, headers)
        before = [cpu_seconds(route.process.pid) for route in (first, second)]
        for i in range(n):
            for route in ((first, second) if i % 2 == 0 else (second, first)):
                route.post({"jsonrpc": "2.0", "id": i + 1, **message}, headers)
        after = [cpu_seconds(route.process.pid) for route in (first, second)]
        pairs.append(tuple((a - b) / n * 1e6 for a, b in zip(after, before)))
        for route in (first, second):
            route.session = saved[route.name]
    return pairs


def report_paired(routes, args):
    baseline = next(route for route in routes if route.name == "baseline")
    proxy = next(route for route in routes if route.name == "proxy")
    print(f"{args.paired} blocks × {args.requests} requests per binary and kind, in turn; "
          f"CPU µs per request of the proxy's process")
    print()
    print("| request | baseline | proxy | proxy − baseline (median) | every block's difference |")
    print("|---|---:|---:|---:|---|")
    for kind in kinds():
        paired(baseline, proxy, kind, min(200, args.requests), 1)  # warm-up
        pairs = paired(baseline, proxy, kind, args.requests, args.paired)
        differences = sorted(b - a for a, b in pairs)
        print(f"| {kind[0]} | {statistics.median(a for a, _ in pairs):.1f} "
              f"| {statistics.median(b for _, b in pairs):.1f} "
              f"| {statistics.median(differences):+.1f} "
              f"| {' '.join(f'{d:+.1f}' for d in differences)} |")


def start_listening(binary, upstream):
    process = subprocess.Popen(
        [binary, "proxy", RULES, "--no-probe", "--listen", "127.0.0.1:0", "--upstream", upstream],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = process.stderr.readline()
    url = next(w for w in line.split() if w.startswith("http://"))
    return process, int(url.split(":")[2].split("/")[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--baseline")
    parser.add_argument("--server-dir", required=True)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--paired", type=int, metavar="BLOCKS")
    args = parser.parse_args()
    if args.paired and not args.baseline:
        parser.error("--paired compares --proxy with --baseline")

    log = tempfile.mktemp(prefix="http-latency-")
    # ES modules resolve from the file's place: a copy in a directory of its
    # own whose node_modules links to the SDK's (nothing is written there).
    scratch = tempfile.mkdtemp(prefix="http-latency-")
    os.symlink(os.path.join(os.path.abspath(args.server_dir), "node_modules"),
               os.path.join(scratch, "node_modules"))
    script = os.path.join(scratch, "v2_server.mjs")
    shutil.copy(os.path.join(ROOT, "tests/fixtures/proxy/v2_server.mjs"), script)
    server = subprocess.Popen(["node", script, "http", log], cwd=scratch,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(server.stdout.readline())
    upstream = f"http://127.0.0.1:{port}/mcp"
    children = []
    routes = [Route("direct", port)]
    socat = shutil.which("socat")
    if socat and not args.paired:
        relay_port = free_port()
        relay = subprocess.Popen([socat, f"TCP-LISTEN:{relay_port},bind=127.0.0.1,reuseaddr,fork,nodelay",
                                  f"TCP:127.0.0.1:{port},nodelay"])
        children.append(relay)
        time.sleep(0.5)
        routes.append(Route("socat relay", relay_port, relay))
    for name, binary in [("proxy", args.proxy), ("baseline", args.baseline)]:
        if binary:
            process, listen_port = start_listening(binary, upstream)
            children.append(process)
            routes.append(Route(name, listen_port, process))
    try:
        if args.paired:
            report_paired(routes, args)
            return 0
        results = {}
        order = random.Random(7)
        for kind in kinds():
            for route in routes:
                measure(route, kind, min(200, args.requests))  # warm-up
            for _ in range(args.rounds):
                shuffled = routes[:]
                order.shuffle(shuffled)
                for route in shuffled:
                    times, cpu = measure(route, kind, args.requests)
                    entry = results.setdefault((kind[0], route.name), {"times": [], "cpu": []})
                    entry["times"].extend(times)
                    if cpu is not None:
                        entry["cpu"].append(cpu)
        print(f"{args.requests} requests × {args.rounds} rounds per route and kind, one at a time, "
              f"keep-alive; CPU: the route's own process per request")
        print()
        print("| request | route | p50 µs | p99 µs | CPU µs/request |")
        print("|---|---|---:|---:|---:|")
        for kind in kinds():
            for route in routes:
                entry = results[(kind[0], route.name)]
                times = sorted(entry["times"])
                p50 = statistics.median(times) * 1e6
                p99 = times[int(len(times) * 0.99)] * 1e6
                cpu = f"{statistics.median(entry['cpu']) * 1e6:.1f}" if entry["cpu"] else "–"
                print(f"| {kind[0]} | {route.name} | {p50:.0f} | {p99:.0f} | {cpu} |")
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait(timeout=10)
        server.stdin.close()
        server.wait(timeout=10)
        if os.path.exists(log):
            os.remove(log)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
