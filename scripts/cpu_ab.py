#!/usr/bin/env python3
"""Two proxy binaries' CPU per request, side by side: both binaries run at
once, each in front of its own server, and requests go to them in turn,
one at a time (A B A B …, the order flipped every request), so that both
see the same millisecond of a noisy machine. The CPU all of a proxy's
threads used (`/proc/PID/task/*/schedstat`, nanoseconds) is read before and
after each block of N requests per binary; B less A is taken block by block.

Each start runs BLOCKS blocks after 300 requests each to warm up; --starts
(3) starts both anew, the roles of first and second swapped every start
(a process's own layout in memory moves its figures by a few tenths of a
µs). Prints each binary's median per block, then the median of B less A
and every block's difference, sorted. Two copies of the same binary give
the method's own spread on the machine (A/A): about ±1 µs a block for a
listing on the 2-core virtual machine of docs/performance.md, where
binaries started in turn rather than side by side spread ±15 µs.

Usage: scripts/cpu_ab.py [--starts S] BLOCKS N METHOD PARAMS BIN_A BIN_B -- PROXY ARGS…
  e.g. scripts/cpu_ab.py 10 500 tools/list '{}' OLD/mcp-resolve NEW/mcp-resolve -- \\
         proxy rules/real-server-filesystem.yaml -- mcp-server-filesystem /srv/files
"""

import glob
import json
import statistics
import subprocess
import sys


def cpu_ns(pid: int) -> int:
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError):
            pass  # a thread that ended meanwhile
    return total


class Proxy:
    """One binary in front of its server, asked one request at a time."""

    def __init__(self, binary: str, args: list) -> None:
        self.binary = binary
        self.process = subprocess.Popen([binary, *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "cpu_ab", "version": "1"}})
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> None:
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()
        while True:
            answer = self.process.stdout.readline()
            if not answer:
                raise SystemExit(f"{self.binary} stopped")
            message = json.loads(answer)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit(f"{self.binary} answered an error: {message['error']}")
                return

    def cpu_ns(self) -> int:
        return cpu_ns(self.process.pid)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def start(binaries: list, args: list, blocks: int, n: int, method: str, params: dict) -> list:
    """One start of both: per block, each binary's µs per request."""
    proxies = [Proxy(b, args) for b in binaries]
    try:
        for _ in range(300):
            for proxy in proxies:
                proxy.request(method, params)
        figures = []
        for _ in range(blocks):
            before = [p.cpu_ns() for p in proxies]
            for i in range(n):
                for proxy in proxies if i % 2 == 0 else proxies[::-1]:
                    proxy.request(method, params)
            figures.append([(p.cpu_ns() - b) / n / 1000 for p, b in zip(proxies, before)])
        return figures
    finally:
        for proxy in proxies:
            proxy.close()


def main() -> None:
    argv = sys.argv[1:]
    starts = 3
    if argv[:1] == ["--starts"]:
        starts, argv = int(argv[1]), argv[2:]
    if len(argv) < 7 or argv[6] != "--":
        raise SystemExit(__doc__)
    blocks, n, method, params = int(argv[0]), int(argv[1]), argv[2], json.loads(argv[3])
    a, b = argv[4], argv[5]
    args = argv[7:]
    per_a, per_b = [], []
    for s in range(starts):
        if s % 2 == 0:
            figures = start([a, b], args, blocks, n, method, params)
        else:
            figures = [f[::-1] for f in start([b, a], args, blocks, n, method, params)]
        per_a += [f[0] for f in figures]
        per_b += [f[1] for f in figures]
    print(f"A {a}: median {statistics.median(per_a):.2f} µs a request")
    print(f"B {b}: median {statistics.median(per_b):.2f} µs a request")
    diffs = sorted(y - x for x, y in zip(per_a, per_b))
    middle = diffs[len(diffs) // 4], diffs[(3 * len(diffs)) // 4]
    print(f"B less A, block by block: median {statistics.median(diffs):+.2f} µs "
          f"(middle half {middle[0]:+.2f} to {middle[1]:+.2f}; "
          f"{sum(d < 0 for d in diffs)} of {len(diffs)} blocks below zero)")
    print("  " + " ".join(f"{d:+.1f}" for d in diffs))


if __name__ == "__main__":
    main()
