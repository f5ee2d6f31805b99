#!/usr/bin/env python3
"""Two proxy binaries' CPU per request, paired: each binary started in turn
(A B, then B A, …), ROUNDS times each, in front of the same server; after 300
requests to warm up, N requests one at a time, and the CPU all the proxy's
threads used meanwhile (`/proc/PID/task/*/schedstat`) per request. Prints each
binary's median and every start's figure, then the median of B less A over
the rounds and every round's difference, sorted. On a noisy machine the
pairing is what resolves a few µs: both binaries of a round see the same
minute.

Usage: scripts/cpu_ab.py ROUNDS N METHOD PARAMS BIN_A BIN_B -- PROXY ARGS…
  e.g. scripts/cpu_ab.py 12 2500 tools/list '{}' OLD/mcp-resolve NEW/mcp-resolve -- \\
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


def run(binary: str, args: list, method: str, params: dict, n: int) -> float:
    """µs of the proxy's CPU per request, over n requests."""
    p = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def request(i: int, m: str, pa: dict) -> None:
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": pa}) + "\n").encode())
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit(f"{binary} stopped")
            if json.loads(line).get("id") == i:
                return

    request(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cpu_ab", "version": "1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    p.stdin.flush()
    for i in range(300):
        request(i + 1, method, params)
    before = cpu_ns(p.pid)
    for i in range(n):
        request(i + 1000, method, params)
    spent = cpu_ns(p.pid) - before
    p.stdin.close()
    p.wait()
    return spent / n / 1000


def main() -> None:
    if len(sys.argv) < 8 or sys.argv[7] != "--":
        raise SystemExit(__doc__)
    rounds, n, method, params = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
    binaries, args = sys.argv[5:7], sys.argv[8:]
    figures = {b: [] for b in binaries}
    for r in range(rounds):
        for b in binaries if r % 2 == 0 else binaries[::-1]:
            figures[b].append(run(b, args, method, params, n))
    for b in binaries:
        each = " ".join(f"{x:.1f}" for x in figures[b])
        print(f"{b}: median {statistics.median(figures[b]):.2f} µs ({each})")
    paired = sorted(y - x for x, y in zip(*figures.values()))
    print(f"B less A, paired by round: median {statistics.median(paired):+.2f} µs ({' '.join(f'{d:+.1f}' for d in paired)})")


if __name__ == "__main__":
    main()
