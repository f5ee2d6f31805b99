#!/usr/bin/env python3
"""The workload `scripts/pgo.sh` trains the profile-guided build on: what the
binary does most, run by the instrumented binary.

- the compiler: `check` of every rules file in `rules/`, `signature` and
  `explain` of the example server's rules;
- the proxy in front of the example server (`examples/file-server`, its root
  a fresh temporary directory): `initialize` declaring the resolution
  extension, then rounds of `tools/list`, a forwarded `tools/call` and a
  `tools/resolve` the proxy answers from the rules;
- the same in front of the real `@modelcontextprotocol/server-filesystem`
  (14 tools) when `--real-servers DIR` holds it (`scripts/install-real-servers.sh`).

Every answer is checked (a listing with tools, a call's content, a resolution
with annotations): a workload that stopped working fails here instead of
training the build on error paths. Exits non-zero on the first failure; a
proxy that stops answering is stopped after `--limit` seconds (600 by default)
and fails the run instead of hanging it.

Usage: scripts/pgo_train.py MCP_RESOLVE FILE_SERVER [--rounds N] [--real-servers DIR] [--limit S]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTENSION = "io.modelcontextprotocol/tool-resolution"


class Host:
    """A host speaking MCP to a proxy on its stdio, one request at a time."""

    def __init__(self, command: list[str], limit: float) -> None:
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next_id = 0
        # Past the limit the proxy is stopped (a read waiting on it ends).
        self.watchdog = threading.Timer(limit, self.stop)
        self.watchdog.daemon = True
        self.watchdog.start()

    def stop(self) -> None:
        """SIGTERM first: the proxy then stops its server (a SIGKILL would
        leave the server behind); SIGKILL if it is still running 10 s on."""
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        while True:
            answer = self.process.stdout.readline()
            if not answer:
                raise SystemExit(f"pgo_train: the proxy stopped (or ran past --limit) during {method}")
            message = json.loads(answer)
            if message.get("id") == self.next_id:
                if "result" not in message:
                    raise SystemExit(f"pgo_train: {method} failed: {answer.decode().strip()}")
                return message["result"]

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"extensions": {EXTENSION: {}}},
                "clientInfo": {"name": "pgo-train", "version": "1"},
            },
        )
        assert self.process.stdin
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.process.stdin.flush()

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.stop()
            raise SystemExit("pgo_train: the proxy did not stop when its input ended")
        finally:
            self.watchdog.cancel()
        if code != 0:
            raise SystemExit(f"pgo_train: the proxy exited with {code}")


def rounds(host: Host, n: int, call: dict, resolve: dict) -> None:
    host.initialize()
    for _ in range(n):
        if not host.request("tools/list", {}).get("tools"):
            raise SystemExit("pgo_train: a listing without tools")
        result = host.request("tools/call", call)
        if result.get("isError") or not result.get("content"):
            raise SystemExit(f"pgo_train: the call failed: {result}")
        if "annotations" not in host.request("tools/resolve", resolve):
            raise SystemExit("pgo_train: a resolution without annotations")
    host.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mcp_resolve")
    parser.add_argument("file_server")
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--real-servers", type=Path)
    parser.add_argument("--limit", type=float, default=600.0, help="seconds a proxy may run")
    args = parser.parse_args()
    binary = str(Path(args.mcp_resolve).resolve())

    rules = sorted(str(p) for p in (ROOT / "rules").iterdir() if p.suffix in (".yaml", ".rules"))
    for command in (["check", *rules], ["signature", "rules/file-server.yaml"], ["explain", "rules/file-server.yaml"]):
        subprocess.run([binary, *command], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)

    with tempfile.TemporaryDirectory(prefix="mcp-resolve-pgo-") as sandbox:
        (Path(sandbox) / "notes.txt").write_text("Meeting notes: ship the proxy on Friday.\n")
        file_server = str(Path(args.file_server).resolve())
        rounds(
            Host([binary, "proxy", "rules/file-server.yaml", "--", file_server, "--root", sandbox], args.limit),
            args.rounds,
            {"name": "manage_files", "arguments": {"path": "notes.txt", "action": "read"}},
            {"name": "manage_files", "arguments": {"path": "notes.txt", "action": "delete"}},
        )
        real = args.real_servers / "node" / "node_modules" / ".bin" / "mcp-server-filesystem" if args.real_servers else None
        if real and real.exists():
            notes = str(Path(sandbox) / "notes.txt")
            rounds(
                Host([binary, "proxy", "rules/real-server-filesystem.yaml", "--", str(real), sandbox], args.limit),
                args.rounds // 2,
                {"name": "read_text_file", "arguments": {"path": notes}},
                {"name": "edit_file", "arguments": {"path": notes, "edits": [], "dryRun": True}},
            )
        elif args.real_servers:
            raise SystemExit(f"pgo_train: no server-filesystem under {args.real_servers}")
    print("pgo_train: done", file=sys.stderr)


if __name__ == "__main__":
    main()
