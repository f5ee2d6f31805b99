#!/usr/bin/env python3
"""The instructions and the pages of code a proxy (or relay) runs per request,
on its main thread, measured with callgrind.

Why pages: on the virtual machines this project is measured on, a request
finds much of its code cold after each system call, and the distinct 4 KiB
pages of code it runs say how far its code is spread (docs/performance.md
gives what a page and an instruction were measured to cost). This
script runs COMMAND twice under `valgrind --tool=callgrind` with a raw
JSON-RPC client (no SDK): an `initialize`, then N and N + EXTRA requests one at
a time. The difference between the two runs is the requests' own work, with
start-up and shutdown taken out:

- instructions per request, per thread;
- the pages of code whose instruction count grows by at least 5 a request
  (code every request runs), counted by the crate (or library) of the
  function that runs most of each page.

Each length runs --repeat times (3) and the least is taken: now and then a
run does work of its own that is not the requests'.

Usage:
  code_pages.py [--requests N] [--extra N] [--repeat N] [--method M] [--call 'TOOL JSON']
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


def drive(command: list[str], n: int, method: str, params: dict) -> None:
    """`initialize`, then `n` requests `method` one at a time."""
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

    request(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "code_pages", "version": "1"}})
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    process.stdin.flush()
    for i in range(n):
        request(i + 1, method, params)
    process.stdin.close()
    process.wait()


def drive_http(command: list[str], n: int, method: str, params: dict) -> None:
    """As `drive`, over the proxy's HTTP route (COMMAND listens)."""
    from listen_ab import Listening  # (only this mode needs it)

    route = Listening(command, True)
    try:
        for _ in range(n):
            route.request(method, params)
    finally:
        route.close()


def profile(path: str) -> tuple[int, dict, dict]:
    """A callgrind profile (`--dump-instr=yes`, uncompressed): its total,
    the instructions run per page of code, and per page per function."""
    total, pages = 0, collections.Counter()
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
                        page = (obj, int(m.group(1), 16) >> 12)
                        pages[page] += int(m.group(2))
                        functions[page][function] += int(m.group(2))
                    after_call = False
    return total, pages, functions


def owner(function: str) -> str:
    """The crate (or C library function) a symbol belongs to."""
    name = re.sub(r"^[<&*\s]+|(mut|dyn|impl) ", "", function)
    return name.split("::")[0] if "::" in name else name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--extra", type=int, default=1000)
    parser.add_argument("--method", default="tools/call")
    parser.add_argument("--call", help="'TOOL JSON-ARGUMENTS': the params of a tools/call")
    parser.add_argument("--params", default="{}", help="the params (JSON) of another method")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each length; the least is taken (default 3)")
    parser.add_argument("--pages", action="store_true",
                        help="also list each thread's pages with their functions")
    parser.add_argument("--http", action="store_true",
                        help="COMMAND is a proxy listening on 127.0.0.1:0; ask it over HTTP")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    if args.call:
        tool, arguments = args.call.split(" ", 1)
        params = {"name": tool, "arguments": json.loads(arguments)}
    else:
        params = json.loads(args.params)
    counts = (args.requests, args.requests + args.extra)
    runs: dict = {n: {} for n in counts}
    with tempfile.TemporaryDirectory() as out:
        for repeat in range(args.repeat):
            for n in counts:
                prefix = f"{out}/run{n}.{repeat}"
                # (Quiet: over HTTP the proxy's first line on stderr says
                # where it listens.)
                (drive_http if args.http else drive)(
                    ["valgrind", "-q", "--tool=callgrind", "--separate-threads=yes",
                     "--dump-instr=yes", "--compress-pos=no", "--compress-strings=no",
                     f"--callgrind-out-file={prefix}.%p", *args.command],
                    n, args.method, params)
                for path in glob.glob(f"{prefix}.*"):
                    m = re.search(r"-(\d+)$", path)
                    if not m:
                        continue  # the process's own file: its threads have theirs
                    thread = int(m.group(1))
                    run = profile(path)
                    # The least of the repeats: now and then a run does
                    # work of its own (a table grown, a collection) that is
                    # not the requests'.
                    if thread not in runs[n] or run[0] < runs[n][thread][0]:
                        runs[n][thread] = run
    first, second = (runs[n] for n in counts)
    print(f"{args.method}, {counts[0]} and {counts[1]} requests one at a time; per request:\n")
    listing = []
    print("| thread | instructions | pages of code | by crate |")
    print("|---|---:|---:|---|")
    for thread in sorted(second):
        total, pages, functions = second[thread]
        before = first.get(thread, (0, {}, {}))
        grown = [p for p, v in pages.items() if v - before[1].get(p, 0) >= 5 * args.extra]
        crates = collections.Counter(owner(functions[p].most_common(1)[0][0] or "?")
                                     for p in grown)
        listed = ", ".join(f"{name} {k}" for name, k in crates.most_common(8))
        print(f"| {thread} | {(total - before[0]) / args.extra:,.0f} | {len(grown)} | {listed} |")
        if args.pages and grown:
            listing.append((thread, grown, functions, before[2]))
    for thread, grown, functions, earlier in listing:
        print(f"\nThread {thread}:\n")
        print("| page | instructions a request | functions (instructions a request) |")
        print("|---|---:|---|")
        for page in sorted(grown):
            grew = {f: (v - earlier.get(page, {}).get(f, 0)) / args.extra
                    for f, v in functions[page].items()}
            named = ", ".join(f"`{short(f)}` {v:,.0f}"
                              for f, v in sorted(grew.items(), key=lambda fv: -fv[1])[:3]
                              if v >= 1)
            print(f"| {page[0]}+{page[1]:x} | {sum(grew.values()):,.0f} | {named} |")
    return 0


def short(function: str) -> str:
    """A symbol without its generic arguments' paths, for a table."""
    return re.sub(r"\b(?:[a-z_][a-z0-9_]*::)+", "", function or "?")[:90]


if __name__ == "__main__":
    sys.exit(main())
