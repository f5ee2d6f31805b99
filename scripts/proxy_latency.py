#!/usr/bin/env python3
"""Round-trip latency and throughput of MCP requests to a server directly,
through a byte relay, through `mcp-resolve proxy` and (with `--baseline`)
through an earlier proxy binary, side by side in one run.

A raw JSON-RPC client (no SDK, so only the transport and the proxy are
measured) opens an `initialize` session on stdio per route, warms up, then
for each request kind sends N requests one at a time (p50, p99) and N
requests pipelined (throughput), the routes interleaved in rounds so drift
in the machine's load hits all of them: every one-at-a-time round first,
then the pipelined ones (a burst of pipelined requests leaves work behind it,
a telemetry worker's batch or an exporter's, that would otherwise fall on the
next latency window). Each round takes the routes in a different order
(shuffled with a fixed seed: the same orders every run): what one route
leaves running when its turn ends falls on whichever route comes next, and a
fixed order would always charge it to the same one. The byte relay is `cat` each way
(`sh -c 'cat | SERVER | cat'`): two extra pipe hops that do nothing, the
physical floor of any proxy on this machine. `tools/resolve` is answered
by the proxies themselves. The CPU column is the time the relay's two
`cat`s or the proxy process used per request (Linux `/proc/PID/schedstat`),
its own cost apart from waiting for wake-ups.

`--line-relay BIN` adds the route "tokio relay": `target/release/line-relay`
(`cargo build --release -p mcp-resolve-benches --bin line-relay`), a
current-thread tokio runtime that moves lines as the proxy reads and writes
them and does nothing else — the floor of a proxy built as this one is,
between the `cat` relay and the proxy. `--thread-relay` adds "thread relay"
(`line-relay --threads`): the same lines moved by two threads of blocking
I/O, one a direction — the floor of a design without an event loop.

`--fresh` starts every route anew (and warms it up) for each of its
one-at-a-time rounds: what a process draws at its start — where its
memory lands, which CPU its threads settle on — then varies between rounds
instead of staying with the route for the whole run. On a 2-core virtual
machine that draw moved one binary's p50 by tens of µs from one run to the
next, more than the differences measured.

`--variant NAME=ARGS` adds a route: the same proxy with more arguments
(`--variant 'otlp=--otlp http://127.0.0.1:4318'`: telemetry on, beside
the proxy with it off); `--baseline-variant NAME=ARGS` the same for the
baseline binary. A second table pairs each variant with the route it varies
(and the proxy with the baseline) round by round: the median of the rounds'
p50 differences, and their middle half — what drifts between rounds hits
both sides of a pair.

Usage:
  proxy_latency.py --proxy BIN [--baseline BIN] [--line-relay BIN] [--variant NAME=ARGS]... \
      --rules RULES [--requests N] [--rounds N] [--fresh] --call 'TOOL JSON' \
      [--resolve 'TOOL JSON'] \
      -- SERVER ARGS...

Prints a Markdown table (docs/performance.md keeps the figures).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
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
        # The processes whose CPU counts as the route's own (set by main).
        self.measured: list[int] = []

    def cpu(self) -> float | None:
        """CPU seconds of the route's own processes so far."""
        total = 0.0
        for pid in self.measured:
            used = cpu_seconds(pid)
            if used is None:
                return None
            total += used
        return total

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
    """The CPU time process `pid` has used, all its threads (Linux scheduler
    statistics, ns)."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        return None


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def children(pid: int) -> list[int]:
    """The child processes of `pid` (Linux)."""
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--proxy", required=True, help="the mcp-resolve binary")
    parser.add_argument("--baseline", help="an earlier mcp-resolve binary, measured beside it")
    parser.add_argument("--line-relay", help="the line-relay binary (the tokio floor), measured beside it")
    parser.add_argument("--thread-relay", action="store_true",
                        help="with --line-relay: also its two-thread blocking mode (line-relay --threads)")
    parser.add_argument("--rules", required=True)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--fresh", action="store_true",
                        help="start each route anew for each one-at-a-time round")
    parser.add_argument("--call", required=True, help="'TOOL JSON-ARGUMENTS' for tools/call")
    parser.add_argument("--resolve", help="'TOOL JSON-ARGUMENTS' for tools/resolve (default: --call)")
    parser.add_argument("--variant", action="append", default=[],
                        help="NAME=ARGS: the proxy again, with these arguments")
    parser.add_argument("--baseline-variant", action="append", default=[],
                        help="NAME=ARGS: the baseline binary again, with these arguments")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    tool, arguments = args.call.split(" ", 1)
    call = {"name": tool, "arguments": json.loads(arguments)}
    rtool, rarguments = (args.resolve or args.call).split(" ", 1)
    resolve = {"name": rtool, "arguments": json.loads(rarguments)}
    n, rounds = args.requests, args.rounds
    per_round = n // rounds

    routes: dict[str, list[str]] = {
        "direct": args.command,
        "relay": ["sh", "-c", 'cat | "$@" | cat', "relay", *args.command],
    }
    if args.line_relay:
        routes["tokio relay"] = [args.line_relay, *args.command]
        if args.thread_relay:
            routes["thread relay"] = [args.line_relay, "--threads", *args.command]
    elif args.thread_relay:
        parser.error("--thread-relay needs --line-relay")
    if args.baseline:
        routes["baseline"] = [args.baseline, "proxy", args.rules, "--no-probe", "--", *args.command]
    routes["proxy"] = [args.proxy, "proxy", args.rules, "--no-probe", "--", *args.command]
    # Each variant with the route it varies (its binary's plain route).
    variants = [(args.proxy, v, "proxy") for v in args.variant]
    if args.baseline_variant and not args.baseline:
        parser.error("--baseline-variant needs --baseline")
    variants += [(args.baseline, v, "baseline") for v in args.baseline_variant]
    # Each variant beside the route it varies (and the proxy beside the
    # baseline): the paired differences.
    pairs: list[tuple[str, str]] = [("proxy", "baseline")] if args.baseline else []
    for binary, variant, varied in variants:
        name, _, extra = variant.partition("=")
        pairs.append((name, varied))
        routes[name] = [binary, "proxy", args.rules, "--no-probe", *shlex.split(extra),
                        "--", *args.command]
    def start(name: str) -> Session:
        session = Session(routes[name])
        if name == "relay":
            session.measured = [c for c in children(session.process.pid) if comm(c) == "cat"]
        elif name != "direct":
            session.measured = [session.process.pid]
        return session

    sessions = {name: start(name) for name in routes}
    relays = ("direct", "relay", "tokio relay", "thread relay")
    proxies = [name for name in sessions if name not in relays]

    kinds = [("tools/list", {}), ("tools/call", call)]
    rows = []
    def warm(name: str) -> None:
        session = sessions[name]
        for method, params in kinds:
            session.latency(method, params, min(200, n))
        if name in proxies:
            session.latency("tools/resolve", resolve, min(200, n))

    try:
        for name in sessions:
            warm(name)
        for method, params in kinds + [("tools/resolve", resolve)]:
            names = list(sessions) if method != "tools/resolve" else proxies
            samples: dict[str, list[float]] = {name: [] for name in names}
            # Each one-at-a-time round's p50, for the paired differences.
            by_round: dict[str, list[float]] = {name: [] for name in names}
            rate: dict[str, list[float]] = {name: [] for name in names}
            cpu: dict[str, float] = {name: 0.0 for name in names}
            order = random.Random(f"{method} {len(names)}")
            # All one-at-a-time rounds first, then the pipelined ones: a
            # burst of pipelined requests leaves its export behind it, which
            # would land on the next latency window rather than on its own.
            for phase in ("latency", "throughput"):
                for _ in range(rounds):
                    shuffled = list(names)
                    order.shuffle(shuffled)
                    for name in shuffled:
                        if args.fresh and phase == "latency":
                            sessions[name].close()
                            sessions[name] = start(name)
                            warm(name)
                        session = sessions[name]
                        before = session.cpu()
                        if phase == "latency":
                            measured = session.latency(method, params, per_round)
                            samples[name] += measured
                            by_round[name].append(quantile(measured, .5))
                        else:
                            rate[name].append(session.throughput(method, params, per_round))
                        after = session.cpu()
                        if before is not None and after is not None:
                            cpu[name] += after - before
            rows.append((method, samples, {k: statistics.median(v) for k, v in rate.items()},
                         {k: v / (2 * rounds * per_round) for k, v in cpu.items()}, by_round))
    finally:
        for session in sessions.values():
            session.close()

    fresh = ", each route started anew for each one-at-a-time round" if args.fresh else ""
    print(f"{n} requests of each kind per route, one at a time (latency, µs) and pipelined "
          f"(throughput), routes interleaved in {rounds} rounds, in a shuffled order{fresh}\n")
    print("| request | route | p50 | Δ p50 vs direct | p99 | req/s | CPU per request (µs) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for method, samples, rate, per_request, _ in rows:
        direct = quantile(samples["direct"], .5) if "direct" in samples else None
        for name in samples:
            p50 = quantile(samples[name], .5)
            delta = "–" if direct is None or name == "direct" else \
                f"{us(p50 - direct)} ({(p50 / direct - 1) * 100:+.0f}%)"
            used = "–" if name == "direct" else f"{per_request[name] * 1e6:.1f}"
            print(f"| `{method}` | {name} | {us(p50)} | {delta} | {us(quantile(samples[name], .99))} "
                  f"| {rate[name]:,.0f} | {used} |")
    if pairs:
        print("\nPaired by round (each round's p50 less the same round's p50 of the route it "
              "is a variant of; the median over the rounds, and the middle half of them):\n")
        print("| request | route | vs | Δ p50, median of rounds | middle half of rounds |")
        print("|---|---|---|---:|---|")
        for method, _, _, _, by_round in rows:
            for name, reference in pairs:
                if name not in by_round or reference not in by_round:
                    continue
                deltas = sorted(a - b for a, b in zip(by_round[name], by_round[reference]))
                print(f"| `{method}` | {name} | {reference} | {us(quantile(deltas, .5))} "
                      f"| {us(quantile(deltas, .25))} to {us(quantile(deltas, .75))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
