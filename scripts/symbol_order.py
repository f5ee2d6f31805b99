#!/usr/bin/env python3
"""A linker symbol order for the proxy: the functions a request runs, hottest
first, from callgrind, for lld's `--symbol-ordering-file`, which then links them
side by side (fewer pages of code a request).

Runs BINARY as `proxy RULES --no-probe -- SERVER…` under callgrind once per
request kind (50 requests one at a time, then 200 counted, as
scripts/code_pages.py does) and keeps the functions of BINARY that run at
least 3 instructions a request. The kinds: a `tools/list`, and each
`--call 'TOOL JSON'`.

Symbols are written mangled, as the linker names them; their hashes change
with the compiler and the crates' features, so an order is made for, and
from, one build. It is not part of `cargo build --release`
(docs/performance.md gives what it saves):

  python3 scripts/symbol_order.py --out target/order.txt \\
      --call 'list_allowed_directories {}' --call 'read_text_file {"path": "DIR/a.txt"}' \\
      -- target/release/mcp-resolve rules/real-server-filesystem.yaml -- \\
      mcp-server-filesystem DIR
  cargo rustc --release --bin mcp-resolve -- \\
      -C link-arg=-Wl,--symbol-ordering-file=target/order.txt \\
      -C link-arg=-Wl,--no-warn-symbol-ordering

Needs valgrind (Debian's package) and lld, the linker rustc uses on
x86_64 Linux.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from code_pages import drive, dumped  # noqa: E402  (its client and its reading)

# Requests before callgrind's counts are zeroed, and requests counted.
WARM, COUNTED = 50, 200


def counts(binary: str, command: list[str], method: str, params: dict,
           prefix: str) -> collections.Counter:
    """Instructions per function of `binary` over `COUNTED` requests."""
    drive(["valgrind", "-q", "--tool=callgrind", "--separate-threads=yes", "--demangle=no",
           "--dump-instr=yes", "--compress-pos=no", "--compress-strings=no",
           f"--callgrind-out-file={prefix}.%p", *command], WARM, COUNTED, method, params)
    total: collections.Counter = collections.Counter()
    name = os.path.basename(binary)
    for _, _, functions, _ in dumped(prefix).values():
        for (obj, _), on_page in functions.items():
            if obj == name:
                total.update(on_page)
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="the order file to write")
    parser.add_argument("--call", action="append", default=[],
                        help="'TOOL JSON-ARGUMENTS': a tools/call to include (repeatable)")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="-- BINARY RULES -- SERVER…")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if len(command) < 3:
        parser.error("give -- BINARY RULES -- SERVER…")
    binary, rules, *server = command
    server = server[1:] if server[:1] == ["--"] else server
    proxy = [binary, "proxy", rules, "--no-probe", "--", *server]
    kinds = [("tools/list", {})]
    for call in args.call:
        tool, _, arguments = call.partition(" ")
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as error:
            parser.error(f"--call {call!r}: the arguments are not JSON ({error})")
        kinds.append(("tools/call", {"name": tool, "arguments": arguments}))
    hot: collections.Counter = collections.Counter()
    with tempfile.TemporaryDirectory() as work:
        for k, (method, params) in enumerate(kinds):
            prefix = os.path.join(work, f"cg{k}")
            for function, count in counts(binary, proxy, method, params, prefix).items():
                per_request = count / COUNTED
                if per_request >= 3:
                    hot[function] = max(hot[function], per_request)
    with open(args.out, "w", encoding="utf-8") as out:
        out.writelines(f"{function}\n" for function, _ in hot.most_common())
    print(f"{len(hot)} functions run per request: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
