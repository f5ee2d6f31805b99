#!/usr/bin/env python3
"""Round-trip latency and throughput of MCP requests to a server directly
and through `mcp-resolve proxy`, side by side in one run.

A raw JSON-RPC client (no SDK, so only the transport and the proxy are
measured) opens an `initialize` session on stdio, warms up, then for each
request kind sends N requests one at a time (p50, p99, mean) and N requests
pipelined (throughput). The proxy's overhead is the difference between the
two columns; `tools/resolve` is answered by the proxy itself. The last
column is the CPU time the proxy process used per request (Linux
`/proc/PID/schedstat`), its own cost apart from waiting for wake-ups.

Usage:
  proxy_latency.py --proxy BIN --rules RULES [--requests N] \
      --call 'TOOL JSON' [--resolve 'TOOL JSON'] -- SERVER ARGS...

Prints a Markdown table (docs/performance.md keeps the figures).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time


class Session:
    def __init__(self, command: list[str]):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.ids = 0
        self.out = self.process.stdout
        self.initialize()

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self, wanted: int | None) -> dict:
        """The answer to request `wanted` (None: to any request)."""
        assert self.out is not None
        while True:
            line = self.out.readline()
            if not line:
                raise SystemExit(f"the server closed its output (exit {self.process.poll()})")
            message = json.loads(line)
            if "method" not in message and (wanted is None or message.get("id") == wanted):
                if "error" in message:
                    raise SystemExit(f"error answer: {message}")
                return message

    def request(self, method: str, params: dict) -> dict:
        self.ids += 1
        self.send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        return self.receive(self.ids)

    def initialize(self) -> None:
        caps = {"extensions": {"io.modelcontextprotocol/tool-resolution": {}}}
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": caps,
                                    "clientInfo": {"name": "proxy-latency", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def latency(self, method: str, params: dict, n: int) -> list[float]:
        samples = []
        for _ in range(n):
            start = time.perf_counter()
            self.request(method, params)
            samples.append(time.perf_counter() - start)
        return samples

    def throughput(self, method: str, params: dict, n: int) -> float:
        ids = range(self.ids + 1, self.ids + n + 1)
        self.ids += n
        start = time.perf_counter()

        def write() -> None:
            for id_ in ids:
                self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})

        # Written from a thread while answers are read here: a server whose
        # output pipe is full stops reading, so writing everything first
        # could deadlock.
        writer = threading.Thread(target=write)
        writer.start()
        # Answers may come in any order.
        waiting = set(ids)
        while waiting:
            waiting.discard(self.receive(None)["id"])
        writer.join()
        return n / (time.perf_counter() - start)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def cpu_seconds(pid: int) -> float | None:
    """The CPU time process `pid` has used (Linux scheduler statistics, ns)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--proxy", required=True, help="the mcp-resolve binary")
    parser.add_argument("--rules", required=True)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--call", required=True, help="'TOOL JSON-ARGUMENTS' for tools/call")
    parser.add_argument("--resolve", help="'TOOL JSON-ARGUMENTS' for tools/resolve (default: --call)")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    tool, arguments = args.call.split(" ", 1)
    call = {"name": tool, "arguments": json.loads(arguments)}
    rtool, rarguments = (args.resolve or args.call).split(" ", 1)
    resolve = {"name": rtool, "arguments": json.loads(rarguments)}
    proxied = [args.proxy, "proxy", args.rules, "--no-probe", "--", *args.command]
    n = args.requests

    kinds = [("tools/list", {}), ("tools/call", call)]
    rows = []
    sessions = {"direct": Session(args.command), "proxied": Session(proxied)}
    try:
        for session in sessions.values():  # warm-up
            for method, params in kinds:
                session.latency(method, params, min(200, n))
            if session is sessions["proxied"]:
                session.latency("tools/resolve", resolve, min(200, n))
        for method, params in kinds:
            # Interleaved rounds, so drift in the machine's load hits both.
            samples: dict[str, list[float]] = {"direct": [], "proxied": []}
            rate: dict[str, list[float]] = {"direct": [], "proxied": []}
            cpu = 0.0
            for _ in range(4):
                for name, session in sessions.items():
                    before = cpu_seconds(session.process.pid)
                    samples[name] += session.latency(method, params, n // 4)
                    rate[name].append(session.throughput(method, params, n // 4))
                    after = cpu_seconds(session.process.pid)
                    if name == "proxied" and before is not None and after is not None:
                        cpu += after - before
            per_request = cpu / (2 * 4 * (n // 4))
            rows.append((method, samples, {k: statistics.median(v) for k, v in rate.items()}, per_request))
        proxy = sessions["proxied"]
        before = cpu_seconds(proxy.process.pid)
        resolved = proxy.latency("tools/resolve", resolve, n)
        resolve_rate = proxy.throughput("tools/resolve", resolve, n)
        after = cpu_seconds(proxy.process.pid)
        resolve_cpu = (after - before) / (2 * n) if before is not None and after is not None else 0.0
    finally:
        for session in sessions.values():
            session.close()

    print(f"{n} requests of each kind, one at a time (latency, µs) and pipelined (throughput)\n")
    print("| request | direct p50 | proxied p50 | Δ p50 | direct p99 | proxied p99 | direct req/s "
          "| proxied req/s | proxy CPU per request |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for method, samples, rate, per_request in rows:
        d, p = sorted(samples["direct"]), sorted(samples["proxied"])
        q = lambda s, f: s[min(len(s) - 1, int(len(s) * f))]  # noqa: E731
        print(f"| `{method}` | {us(q(d, .5))} | {us(q(p, .5))} | {us(q(p, .5) - q(d, .5))} "
              f"({(q(p, .5) / q(d, .5) - 1) * 100:+.0f}%) | {us(q(d, .99))} | {us(q(p, .99))} "
              f"| {rate['direct']:,.0f} | {rate['proxied']:,.0f} | {per_request * 1e6:.1f} |")
    r = sorted(resolved)
    print(f"| `tools/resolve` (answered by the proxy) | – | {us(r[len(r) // 2])} | – | – "
          f"| {us(r[min(len(r) - 1, int(len(r) * .99))])} | – | {resolve_rate:,.0f} | {resolve_cpu * 1e6:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
