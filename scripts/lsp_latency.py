#!/usr/bin/env python3
"""How long `mcp-resolve lsp` takes to publish diagnostics after an edit of
a large rules file, and whether its memory stays flat over many edits.

Opens a generated file of TOOLS tools (scripts/gen_large_rules.py), then
makes EDITS edits one at a time — each changes one tool's static
`openWorldHint` in place, so every other edit breaks the bound — waiting for
both passes of diagnostics after each: the cheap checks and the pattern
analysis. Prints p50/p99 of both from the edit, and the server's resident
memory (VmRSS) after the first 10 edits and after all of them.

Usage:
  lsp_latency.py --bin [NAME=]PATH [--bin NAME=PATH ...] [--tools 1000] [--edits 1000]

With several binaries (the one before a change, the one after), each gets
its own session on the same file and edits, one after the other, and the
table has a column for each.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def quantile(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


class Server:
    def __init__(self, binary):
        self.process = subprocess.Popen([binary, "lsp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)

    def send(self, message):
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def receive(self):
        length = None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit("the server closed its output")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.process.stdout.read(length))

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


def measure(binary, text, edits):
    """One server's session: open, then `edits` edits each waited for."""
    uri = "file:///bench/large.yaml"
    server = Server(binary)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    server.receive()
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def wait_both(version):
        cheap = analysed = None
        while analysed is None:
            message = server.receive()
            if message.get("method") == "textDocument/publishDiagnostics" \
                    and message["params"].get("version") == version:
                if cheap is None:
                    cheap = time.perf_counter()
                else:
                    analysed = time.perf_counter()
        return cheap, analysed

    started = time.perf_counter()
    server.send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                 "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1,
                                             "text": text}}})
    cheap, analysed = wait_both(1)
    opened = (cheap - started, analysed - started)
    marker = "openWorldHint: true }"
    spots = [i for i in range(len(text)) if text.startswith(marker, i)]
    cheap_times, analysed_times = [], []
    rss_early = None
    rss_by = []  # after every 1,000th edit
    current = text
    for edit in range(edits):
        at = spots[(edit * 7919) % len(spots)]
        old = current[at:at + len(marker)]
        new = "openWorldHint: false}" if old == marker else marker
        current = current[:at] + new + current[at + len(marker):]
        version = edit + 2
        started = time.perf_counter()
        server.send({"jsonrpc": "2.0", "method": "textDocument/didChange",
                     "params": {"textDocument": {"uri": uri, "version": version},
                                "contentChanges": [{"text": current}]}})
        cheap, analysed = wait_both(version)
        cheap_times.append(cheap - started)
        analysed_times.append(analysed - started)
        if edit == 9:
            rss_early = server.rss_kib()
        if (edit + 1) % 1000 == 0:
            rss_by.append(server.rss_kib())
    rss_late = server.rss_kib()
    server.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    server.send({"jsonrpc": "2.0", "method": "exit"})
    server.process.wait(timeout=30)
    return {"opened": opened, "cheap": cheap_times, "analysed": analysed_times,
            "rss": (rss_early, rss_late), "rss_by": rss_by}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", action="append", required=True,
                        help="PATH or NAME=PATH; repeat to compare binaries side by side")
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--edits", type=int, default=1000)
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    text = subprocess.run([sys.executable, os.path.join(here, "gen_large_rules.py"),
                           str(args.tools), "3"], check=True, capture_output=True,
                          text=True).stdout
    binaries = [b.split("=", 1) if "=" in b else (b, b) for b in args.bin]
    results = [(name, measure(path, text, args.edits)) for name, path in binaries]

    ms = lambda s: f"{s * 1e3:,.0f}"
    print(f"{args.tools} tools ({len(text):,} bytes), {args.edits} edits, each waited for\n")
    print("| ms, p50 / p99 | " + " | ".join(name for name, _ in results) + " |")
    print("|---|" + "---:|" * len(results))
    rows = [
        ("open: cheap checks / analysis", lambda r: f"{ms(r['opened'][0])} / {ms(r['opened'][1])}"),
        ("edit → cheap checks published",
         lambda r: f"{ms(quantile(r['cheap'], .5))} / {ms(quantile(r['cheap'], .99))}"),
        ("edit → analysis published",
         lambda r: f"{ms(quantile(r['analysed'], .5))} / {ms(quantile(r['analysed'], .99))}"),
        ("resident memory after 10 edits / all (MiB)",
         lambda r: f"{r['rss'][0] / 1024:.1f} / {r['rss'][1] / 1024:.1f}"),
    ]
    for label, cell in rows:
        print(f"| {label} | " + " | ".join(cell(r) for _, r in results) + " |")
    if args.edits >= 2000:
        print("\nresident memory (MiB) after each 1,000 edits: " + "; ".join(
            f"{name}: " + ", ".join(f"{k / 1024:.1f}" for k in r["rss_by"])
            for name, r in results))


if __name__ == "__main__":
    main()
