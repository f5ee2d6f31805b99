#!/usr/bin/env python3
"""The scale benchmark: `check`, `signature`, `generate` and `diff` of one
server of N tools x V variants (`gen_large_rules.py`, files of 1,000 tools),
whole process, wall time and peak memory (GNU time), for each N given.

`diff` compares the signature of a copy in which 1% of the tools differ (the
first variant of every hundredth tool is not read-only) with the server's:
ten widenings per thousand tools, each with a witness to find.

usage: scripts/scale.py [--bin target/release/mcp-resolve] [--sizes 1000,2500,5000,10000]
                        [--variants 8] [--work target/scale]

Build the binary first (`cargo build --release`). Prints a Markdown table
(docs/performance.md keeps the figures); per-tool figures show whether the
cost grows linearly.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(command: list[str], ok: tuple[int, ...] = (0,)) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MiB) of `command`."""
    result = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    if result.returncode not in ok or not re.fullmatch(r"[\d.]+ \d+", last):
        sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    seconds, kib = last.split()
    return float(seconds), int(kib) / 1024


def generate_rules(tools: int, variants: int, out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_large_rules.py"), str(tools), str(variants),
         "--out-dir", str(out)],
        check=True,
    )


def changed_copy(rules: Path, out: Path) -> None:
    """`rules` with the first variant of every hundredth tool made writable."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for path in sorted(rules.glob("*.yaml")):
        lines = path.read_text().splitlines()
        tool = None
        for i, line in enumerate(lines):
            m = re.match(r"  - name: tool_(\d+)$", line)
            if m:
                tool = int(m.group(1))
            if (tool is not None and tool % 100 == 0
                    and line == "        annotations: { readOnlyHint: true, destructiveHint: false }"):
                lines[i] = "        annotations: { destructiveHint: false }"
                tool = None  # the first variant only
        (out / path.name).write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "mcp-resolve"))
    parser.add_argument("--sizes", default="1000,2500,5000,10000")
    parser.add_argument("--variants", type=int, default=8)
    parser.add_argument("--work", default=str(ROOT / "target" / "scale"))
    args = parser.parse_args()
    binary = args.bin
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary} is not built (cargo build --release)")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)

    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        rules = work / f"rules-{n}"
        generate_rules(n, args.variants, rules)
        other = work / f"rules-{n}-changed"
        changed_copy(rules, other)
        sig, sig_other, code = (work / f"sig-{n}.json", work / f"sig-{n}-changed.json",
                                work / f"resolve-{n}.rs")
        for path in (sig, sig_other, code):
            path.unlink(missing_ok=True)
        check = timed([binary, "check", str(rules)], ok=(0, 1))
        signature = timed([binary, "signature", str(rules), "-o", str(sig)])
        timed([binary, "signature", str(other), "-o", str(sig_other)])
        generate = timed([binary, "generate", str(rules), "-o", str(code)])
        # From the changed copy (read-only variants lost) to the server:
        # those variants widen, and each needs its witness.
        diff = timed([binary, "diff", str(sig_other), str(sig)], ok=(1,))
        rows.append((n, check, signature, generate, code.stat().st_size, diff))

    print(f"| tools × {args.variants} variants | `check` | `signature` | `generate` (output) "
          f"| `diff` (1% changed) | per tool: check / signature / generate / diff |")
    print("|---|---|---|---|---|---|")
    for n, check, signature, generate, size, diff in rows:
        cell = lambda t: f"{t[0]:.2f} s, {t[1]:.0f} MiB"
        per = " / ".join(f"{t[0] / n * 1000:.2f}" for t in (check, signature, generate, diff))
        print(f"| {n:,} | {cell(check)} | {cell(signature)} | {cell(generate)} "
              f"({size / 1e6:.0f} MB) | {cell(diff)} | {per} ms |")


if __name__ == "__main__":
    main()
