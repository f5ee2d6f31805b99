#!/usr/bin/env python3
"""The scale benchmark: `check`, `signature`, `generate` and `diff` of one
server of N tools x V variants (`gen_large_rules.py`, files of 1,000 tools),
whole process, wall time and peak memory (GNU time), for each N given.

`diff` compares the signature of a copy in which 1% of the tools differ (the
first variant of every hundredth tool is not read-only) with the server's:
ten widenings per thousand tools, each with a witness to find.

`build` is what the generated code costs a server crate: a crate of its own
that includes the generated file and depends on the runtime, built with
`cargo build` (the dev profile, no incremental cache), its dependencies built
beforehand so only the generated code is timed. `--no-build` skips it.

usage: scripts/scale.py [--bin target/release/mcp-resolve] [--sizes 1000,2500,5000,10000]
                        [--variants 8] [--runs 3] [--work target/scale] [--no-build]
                        [--baseline DIR]

`--baseline DIR` measures a checkout of another commit (say, a `git worktree`
of the one before a change, built with `cargo build --release`) in the same
run: its binary, and its generated code built against its own runtime. Its
rows come first, marked "baseline".

Each command runs `--runs` times in turn (check, signature, generate, diff,
then again); a cell is the fastest run's wall time, with the largest peak
memory of the runs: on a shared machine the fastest run is the one least
disturbed by others.

Build the binary first (`cargo build --release`). Prints a Markdown table
(docs/performance.md keeps the figures); per-tool figures show whether the
cost grows linearly.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """The fastest run's wall time and the largest peak memory of `runs`."""
    return min(r[0] for r in runs), max(r[1] for r in runs)


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


def crate_build(work: Path, code: Path, root: Path = ROOT) -> tuple[float, float]:
    """Wall time and peak memory of building a crate around `code`, with the
    runtime of the checkout at `root`."""
    crate = work / "crate"
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(
        "[package]\nname = \"scale-crate\"\nversion = \"0.0.0\"\nedition = \"2021\"\n"
        "publish = false\n\n[dependencies]\n"
        f"mcp-resolve-runtime = {{ path = {json.dumps(str(root / 'crates' / 'runtime'))} }}\n\n[workspace]\n"
    )
    shutil.copy(root / "Cargo.lock", crate / "Cargo.lock")
    env = dict(os.environ, CARGO_INCREMENTAL="0", CARGO_TARGET_DIR=str(work / "crate-target"))
    lib = crate / "src" / "lib.rs"
    # Dependencies first, with an empty crate.
    lib.write_text("")
    subprocess.run(["cargo", "build", "-q", "--manifest-path", str(crate / "Cargo.toml")],
                   env=env, check=True)
    lib.write_text(f"include!({json.dumps(str(code.resolve()), ensure_ascii=False)});\n")
    result = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", "cargo", "build", "-q",
         "--manifest-path", str(crate / "Cargo.toml")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    if result.returncode != 0 or not re.fullmatch(r"[\d.]+ \d+", last):
        sys.exit(f"building the generated code failed:\n{result.stderr[-2000:]}")
    seconds, kib = last.split()
    return float(seconds), int(kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "mcp-resolve"))
    parser.add_argument("--sizes", default="1000,2500,5000,10000")
    parser.add_argument("--variants", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of each command; the fastest is reported")
    parser.add_argument("--work", default=str(ROOT / "target" / "scale"))
    parser.add_argument("--no-build", action="store_true",
                        help="do not build the generated code")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also measure the checkout at DIR (built), first")
    args = parser.parse_args()
    targets = []
    if args.baseline:
        base = Path(args.baseline).resolve()
        targets.append(("baseline", str(base / "target" / "release" / "mcp-resolve"), base))
    targets.append(("", args.bin, ROOT))
    for _, binary, _ in targets:
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
        for label, binary, root in targets:
            rows.append((label, n, *measure(binary, root, rules, other, work, n, args)))

    print(f"| tools × {args.variants} variants | `check` | `signature` | `generate` (output) "
          f"| `diff` (1% changed) | build of the generated code "
          f"| per tool: check / signature / generate / diff / build |")
    print("|---|---|---|---|---|---|---|")
    for label, n, check, signature, generate, size, diff, build in rows:
        cell = lambda t: f"{t[0]:.2f} s, {t[1]:.0f} MiB" if t else "—"
        per = " / ".join(f"{t[0] / n * 1000:.2f}" if t else "—"
                         for t in (check, signature, generate, diff, build))
        name = f"{n:,} ({label})" if label else f"{n:,}"
        print(f"| {name} | {cell(check)} | {cell(signature)} | {cell(generate)} "
              f"({size / 1e6:.1f} MB) | {cell(diff)} | {cell(build)} | {per} ms |")


def measure(binary: str, root: Path, rules: Path, other: Path, work: Path, n: int, args):
    """One binary's row for `n` tools: check, signature, generate, the
    generated file's size, diff, and the build of the generated code."""
    sig, sig_other, code = (work / f"sig-{n}.json", work / f"sig-{n}-changed.json",
                            work / f"resolve-{n}.rs")
    for path in (sig, sig_other, code):
        path.unlink(missing_ok=True)
    timed([binary, "signature", str(other), "-o", str(sig_other)])
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in
                                                  ("check", "signature", "generate", "diff")}
    for _ in range(max(1, args.runs)):
        runs["check"].append(timed([binary, "check", str(rules)], ok=(0, 1)))
        runs["signature"].append(timed([binary, "signature", str(rules), "-o", str(sig)]))
        runs["generate"].append(timed([binary, "generate", str(rules), "-o", str(code)]))
        # From the changed copy (read-only variants lost) to the server:
        # those variants widen, and each needs its witness.
        runs["diff"].append(timed([binary, "diff", str(sig_other), str(sig)], ok=(1,)))
    check, signature, generate, diff = (best(runs[k]) for k in
                                        ("check", "signature", "generate", "diff"))
    build = None if args.no_build else crate_build(work, code, root)
    return check, signature, generate, code.stat().st_size, diff, build


if __name__ == "__main__":
    main()
