#!/usr/bin/env python3
"""The instructions, pages and lines of code a proxy (or relay) runs per
request, on each of its threads, measured with callgrind.

Why pages and lines: on the virtual machines this project is measured on, a
request finds much of its code cold after each system call, and the distinct
4 KiB pages and 64-byte lines of code it runs say how far its code is spread
and how much of it is fetched again (docs/performance.md gives what they
were measured to cost). This script runs COMMAND under `valgrind
--tool=callgrind` with a raw JSON-RPC client (no SDK): an `initialize` and
WARM requests one at a time, then callgrind's counts are zeroed
(`callgrind_control --zero`), N requests run, and the counts are dumped
before the client hangs up; start-up, the first requests' one-time work and
shutdown are left out. Per request, per thread:

- instructions;
- the pages of code that run at least 5 instructions a request (code every
  request runs), counted by the crate (or library) of the function that
  runs most of each page;
- the 64-byte lines of code run at least once a request: what a request
  fetches into the instruction cache when it finds its code cold.

It runs --repeat times (3) and the run whose requests ran least is taken:
now and then a run does work of its own that is not the requests'.

Usage:
  code_pages.py [--warm N] [--requests N] [--repeat N] [--method M] [--call 'TOOL JSON']
                [--pages] [--http] -- COMMAND...

  code_pages.py --call 'manage_files {"path": "notes.txt", "action": "read"}' -- \\
      target/release/mcp-resolve proxy rules/file-server.yaml --no-probe -- \\
      target/release/file-server --root /tmp/sandbox

--pages also lists, for each thread, its pages with the functions that run most
of each. --http drives COMMAND as a proxy's HTTP route instead: COMMAND names
`--listen 127.0.0.1:0`, and the client is scripts/listen_ab.py's (one keep-alive
connection in an `initialize` session, a host's `Accept`, answers as event
streams):

  code_pages.py --http --call 'manage_files {"path": "notes.txt", "action": "read"}' -- \\
      target/release/mcp-resolve proxy rules/file-server.yaml --no-probe \\
      --listen 127.0.0.1:0 -- target/release/file-server --root /tmp/sandbox

Needs valgrind (Debian's package). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile


def control(process: subprocess.Popen, what: str) -> None:
    """Tells the callgrind that runs `process` to `--zero` or `--dump`."""
    done = subprocess.run(["callgrind_control", what, str(process.pid)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"callgrind_control {what} failed: {done.stderr.strip() or done.stdout.strip()}")


def drive(command: list[str], warm: int, n: int, method: str, params: dict) -> None:
    """`initialize` and `warm` requests `method` one at a time, the counts
    zeroed, `n` more, the counts dumped."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)

    def request(i: int, m: str, p: dict) -> None:
        process.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p})
                             + "\n").encode())
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                sys.exit(f"the command ended before answering request {i}")
            if json.loads(line).get("id") == i:
                return

    try:
        request(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "code_pages", "version": "1"}})
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        process.stdin.flush()
        for i in range(warm + n):
            if i == warm:
                control(process, "--zero")
            request(i + 1, method, params)
        control(process, "--dump")
    finally:
        process.stdin.close()
        process.wait()


def drive_http(command: list[str], warm: int, n: int, method: str, params: dict) -> None:
    """As `drive`, over the proxy's HTTP route (COMMAND listens)."""
    from listen_ab import Listening  # (only this mode needs it)

    route = Listening(command, True)
    try:
        for i in range(warm + n):
            if i == warm:
                control(route.process, "--zero")
            route.request(method, params)
        control(route.process, "--dump")
    finally:
        route.close()


def profile(path: str) -> tuple[int, dict, dict, dict]:
    """A callgrind profile (`--dump-instr=yes`, uncompressed): its total,
    the instructions run per page of code, per page per function, and per
    64-byte line of code."""
    total, pages, code_lines = 0, collections.Counter(), collections.Counter()
    functions: dict = collections.defaultdict(collections.Counter)
    obj = function = None
    after_call = False
    with open(path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if line.startswith("summary:"):
                total = int(line.split()[1])
            elif line.startswith("ob="):
                obj = os.path.basename(line[3:].strip())
            elif line.startswith("fn="):
                function = line[3:].strip()
            elif line.startswith("calls="):
                after_call = True  # the next line is the call's inclusive cost
            else:
                m = re.match(r"^0x([0-9a-f]+) \d+ (\d+)", line)
                if m:
                    if not after_call:
                        address, count = int(m.group(1), 16), int(m.group(2))
                        page = (obj, address >> 12)
                        pages[page] += count
                        functions[page][function] += count
                        code_lines[(obj, address >> 6)] += count
                    after_call = False
    return total, pages, functions, code_lines


def dumped(prefix: str) -> dict:
    """The profiles of callgrind's dump (`PREFIX.PID.1-THREAD`: the counted
    requests alone) by thread, the threads that ran nothing left out."""
    threads = {}
    for path in glob.glob(f"{prefix}.*.1-*"):
        profiled = profile(path)
        if profiled[0] > 0:
            threads[int(path.rsplit("-", 1)[1])] = profiled
    if not threads:
        sys.exit(f"callgrind wrote no dump of the counted requests ({prefix}.PID.1-THREAD)")
    return threads


def owner(function: str) -> str:
    """The crate (or C library function) a symbol belongs to."""
    name = re.sub(r"^[<&*\s]+|(mut|dyn|impl) ", "", function)
    return name.split("::")[0] if "::" in name else name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warm", type=int, default=200,
                        help="requests before the counts are zeroed (default 200)")
    parser.add_argument("--requests", type=int, default=1000,
                        help="requests counted (default 1000)")
    parser.add_argument("--method", default="tools/call")
    parser.add_argument("--call", help="'TOOL JSON-ARGUMENTS': the params of a tools/call")
    parser.add_argument("--params", default="{}", help="the params (JSON) of another method")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs; the one whose requests ran least is taken (default 3)")
    parser.add_argument("--pages", action="store_true",
                        help="also list each thread's pages with their functions")
    parser.add_argument("--http", action="store_true",
                        help="COMMAND is a proxy listening on 127.0.0.1:0; ask it over HTTP")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    if args.warm < 0 or args.requests < 1 or args.repeat < 1:
        parser.error("--warm is at least 0, --requests and --repeat at least 1")
    if args.call:
        tool, arguments = args.call.split(" ", 1)
        params = {"name": tool, "arguments": json.loads(arguments)}
    else:
        params = json.loads(args.params)
    runs = []
    with tempfile.TemporaryDirectory() as out:
        for repeat in range(args.repeat):
            prefix = f"{out}/run{repeat}"
            # (Quiet: over HTTP the proxy's first line on stderr says
            # where it listens.)
            (drive_http if args.http else drive)(
                ["valgrind", "-q", "--tool=callgrind", "--separate-threads=yes",
                 "--dump-instr=yes", "--compress-pos=no", "--compress-strings=no",
                 f"--callgrind-out-file={prefix}.%p", *args.command],
                args.warm, args.requests, args.method, params)
            runs.append(dumped(prefix))
    # The run whose requests ran least: now and then a run does work of its
    # own (a table grown, a collection) that is not the requests'.
    run = min(runs, key=lambda threads: sum(r[0] for r in threads.values()))
    n = args.requests
    print(f"{args.method}, {n} requests one at a time after {args.warm}; per request:\n")
    listing = []
    print("| thread | instructions | pages of code | lines of code | by crate |")
    print("|---|---:|---:|---:|---|")
    for thread in sorted(run):
        total, pages, functions, code_lines = run[thread]
        grown = [p for p, v in pages.items() if v >= 5 * n]
        lines_run = sum(v >= n for v in code_lines.values())
        crates = collections.Counter(owner(functions[p].most_common(1)[0][0] or "?")
                                     for p in grown)
        listed = ", ".join(f"{name} {k}" for name, k in crates.most_common(8))
        print(f"| {thread} | {total / n:,.0f} | {len(grown)} | {lines_run} | {listed} |")
        if args.pages and grown:
            listing.append((thread, grown, functions))
    for thread, grown, functions in listing:
        print(f"\nThread {thread}:\n")
        print("| page | instructions a request | functions (instructions a request) |")
        print("|---|---:|---|")
        for page in sorted(grown):
            ran = {f: v / n for f, v in functions[page].items()}
            named = ", ".join(f"`{short(f)}` {v:,.0f}"
                              for f, v in sorted(ran.items(), key=lambda fv: -fv[1])[:3]
                              if v >= 1)
            print(f"| {page[0]}+{page[1]:x} | {sum(ran.values()):,.0f} | {named} |")
    return 0


def short(function: str) -> str:
    """A symbol without its generic arguments' paths, for a table."""
    return re.sub(r"\b(?:[a-z_][a-z0-9_]*::)+", "", function or "?")[:90]


if __name__ == "__main__":
    sys.exit(main())
