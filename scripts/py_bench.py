"""Speed of a generated Python resolver, side by side with two baselines in
the same run, its dispatch at 10 and at 1,000 tools, and the generator at
10,000 tools. Prints a Markdown table (microseconds per call: the median of
the blocks, and the spread of the middle half).

    PYTHON scripts/py_bench.py MCP_RESOLVE [BLOCKS]

PYTHON is the runtime's virtual environment (scripts/install-py-runtime.sh,
target/py-runtime/bin/python) with the naive baseline's validator added
(`pip install jsonschema==4.26.0`); MCP_RESOLVE the command that generates
the modules (a release build for figures).

For `manage_files` (rules/file-server.yaml), a full resolve (validation
included, then the `tools/resolve` result text):
- generated: the module `generate --lang python` writes;
- naive: `jsonschema.validate(args, schema)` on each call, then an `if`
  chain building the result and serialising it;
- hand-written: the same jsonschema-rs validator the runtime uses, compiled
  once the same way, looked up in a dict by the tool's name, then an `if`
  chain returning result texts made once.
For the generated rule sets of 10 and 1,000 tools x 5 variants
(scripts/gen_large_rules.py), the generated module on calls spread over every
tool, and the hand-written baseline for 1,000 (a dict from the name to the
tool's validator and texts, then direct tests).
"""

from __future__ import annotations

import importlib.util
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import jsonschema
import jsonschema_rs

ROOT = Path(__file__).resolve().parent.parent
PER_BLOCK = 20_000


def load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def core(r: bool, d: bool, i: bool, o: bool) -> dict[str, bool]:
    return {"readOnlyHint": r, "destructiveHint": d, "idempotentHint": i, "openWorldHint": o}


def text(name: str, a: dict[str, bool]) -> str:
    return json.dumps(
        {"resultType": "complete", "name": name, "annotations": a}, separators=(",", ":")
    )


def file_server_baselines(schema: dict[str, Any]) -> tuple[Callable[..., str], Callable[..., str]]:
    def naive(name: str, args: dict[str, Any]) -> str:
        if name != "manage_files":
            raise ValueError(f"unknown tool: {name}")
        jsonschema.validate(args, schema)
        action = args["action"]
        if action == "read":
            a = core(True, False, True, False)
        elif action == "append":
            a = core(False, False, False, False)
        elif action == "replace" or action == "delete":
            a = core(False, True, True, False)
        else:
            a = core(False, True, False, False)
        return text(name, a)

    validator = jsonschema_rs.validator_for(schema, validate_formats=False)
    read = text("manage_files", core(True, False, True, False))
    append = text("manage_files", core(False, False, False, False))
    overwrite = text("manage_files", core(False, True, True, False))
    static = text("manage_files", core(False, True, False, False))

    # Dict dispatch, as a resolver for any number of tools is written.
    tools = {"manage_files": validator}

    def hand_written(name: str, args: dict[str, Any]) -> str:
        validator = tools.get(name)
        if validator is None:
            raise ValueError(f"unknown tool: {name}")
        if not validator.is_valid(args):
            raise ValueError("invalid arguments for tool manage_files")
        action = args["action"]
        if action == "read":
            return read
        if action == "append":
            return append
        if action == "replace" or action == "delete":
            return overwrite
        return static

    return naive, hand_written


RE = {"a0": re.compile(r"\A/tmp/0"), "a3": re.compile(r"\A/tmp/3")}


def large_hand_written(module: Any) -> Callable[..., str]:
    tools: dict[str, tuple[Any, list[str], str]] = {}
    for tool in json.loads(module.SIGNATURE_JSON)["tools"]:
        first = {v["name"]: v["annotations"] for v in reversed(tool["resolvedVariants"])}
        texts = []
        for v in ["v0", "v1", "v2", "v3", "v4"]:
            a = first[v]
            texts.append(
                text(
                    tool["name"],
                    core(a["readOnlyHint"], a["destructiveHint"], a["idempotentHint"], a["openWorldHint"]),
                )
            )
        s = tool["annotations"]
        fallback = text(
            tool["name"],
            core(s["readOnlyHint"], s["destructiveHint"], s["idempotentHint"], s["openWorldHint"]),
        )
        validator = jsonschema_rs.validator_for(tool["inputSchema"], validate_formats=False)
        tools[tool["name"]] = (validator, texts, fallback)

    def land(args: dict[str, Any]) -> int:
        options = args.get("options")
        loose = options is None or "force" not in options
        action = args["action"]
        count = args.get("count")
        if action == "a0":
            return 0 if "path" in args and RE["a0"].search(args["path"]) else -1
        if action == "a1":
            return 1 if (count is not None and count <= 1) or loose else -1
        if action == "a2":
            return 2
        if action == "a3":
            return 3 if "path" in args and RE["a3"].search(args["path"]) else -1
        if action == "a4":
            return 4 if (count is not None and count <= 4) or loose else -1
        return -1

    def hand_written(name: str, args: dict[str, Any]) -> str:
        tool = tools.get(name)
        if tool is None:
            raise ValueError(f"unknown tool: {name}")
        validator, texts, fallback = tool
        if not validator.is_valid(args):
            raise ValueError(f"invalid arguments for tool {name}")
        v = land(args)
        return fallback if v < 0 else texts[v]

    return hand_written


def large_calls(tools: int) -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            f"tool_{(k * 7919) % tools}",
            {"action": f"a{k % 5}", "path": f"/tmp/{k % 5}", "count": k % 7},
        )
        for k in range(4096)
    ]


def block(fn: Callable[[str, Any], str], calls: list[tuple[str, Any]]) -> float:
    n = len(calls)
    sink = 0
    start = time.perf_counter_ns()
    for i in range(PER_BLOCK):
        name, args = calls[i % n]
        sink += len(fn(name, args))
    elapsed = time.perf_counter_ns() - start
    assert sink > 0
    return elapsed / PER_BLOCK / 1000


def block_resolved(resolve: Callable[[str, Any], Any], calls: list[tuple[str, Any]]) -> float:
    """`block` for a generated module's `resolve`, then the result text of
    the `Resolved` it returns, called as a server calls them (no wrapper
    function, which would cost the generated module a Python frame the
    baselines do not pay)."""
    n = len(calls)
    sink = 0
    start = time.perf_counter_ns()
    for i in range(PER_BLOCK):
        name, args = calls[i % n]
        sink += len(resolve(name, args).result_json("extension"))
    elapsed = time.perf_counter_ns() - start
    assert sink > 0
    return elapsed / PER_BLOCK / 1000


def block_json(resolve_json: Callable[[str, Any, str], str], calls: list[tuple[str, Any]]) -> float:
    """`block` for a generated module's `resolve_json`: the result text,
    as the baselines give it."""
    n = len(calls)
    sink = 0
    start = time.perf_counter_ns()
    for i in range(PER_BLOCK):
        name, args = calls[i % n]
        sink += len(resolve_json(name, args, "extension"))
    elapsed = time.perf_counter_ns() - start
    assert sink > 0
    return elapsed / PER_BLOCK / 1000


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python scripts/py_bench.py MCP_RESOLVE [BLOCKS]")
    bin_ = sys.argv[1]
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sources = {"file_server": ROOT / "rules/file-server.yaml"}
        for tools in (10, 1000):
            out = work / f"large-{tools}"
            out.mkdir()
            subprocess.run(
                [sys.executable, str(ROOT / "scripts/gen_large_rules.py"), str(tools), "5", "--out-dir", str(out)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            sources[f"large_{tools}"] = out
        modules = {}
        for name, source in sources.items():
            subprocess.run(
                [bin_, "generate", "--lang", "python", str(source), "-o", str(work / f"{name}.py")],
                check=True,
            )
            modules[name] = load(work / f"{name}.py", name)

        # The generator at 10,000 tools x 8 variants.
        big = work / "large-10000"
        big.mkdir()
        subprocess.run(
            [sys.executable, str(ROOT / "scripts/gen_large_rules.py"), "10000", "8", "--out-dir", str(big)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        generate_seconds = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run(
                [bin_, "generate", "--lang", "python", str(big), "-o", str(work / "big.py")],
                check=True,
            )
            generate_seconds.append(time.perf_counter() - start)

    file_server = modules["file_server"]
    schema = json.loads(file_server.SIGNATURE_JSON)["tools"][0]["inputSchema"]
    naive, hand_written = file_server_baselines(schema)
    large_1000_hand = large_hand_written(modules["large_1000"])

    def generated(module: Any) -> Callable[[str, Any], str]:
        return lambda name, args: module.resolve(name, args).result_json("extension")

    file_calls = [
        ("manage_files", {"path": f"notes/{i}.md", "action": action, "content": "x"})
        for i, action in enumerate(["read", "append", "replace", "delete"])
    ]
    calls10, calls1000 = large_calls(10), large_calls(1000)

    # Agreement before timing.
    for name, args in file_calls:
        want = generated(file_server)(name, args)
        assert naive(name, args) == want and hand_written(name, args) == want, (name, args)
    for name, args in calls1000:
        want = generated(modules["large_1000"])(name, args)
        assert large_1000_hand(name, args) == want, (name, args, want)

    # (how to time it, the function, the calls)
    Run = tuple[Callable[..., float], Callable[[str, Any], Any], list[tuple[str, Any]]]
    runs: dict[str, Run] = {
        "manage_files: generated `resolve_json`": (block_json, file_server.resolve_json, file_calls),
        "manage_files: generated `resolve` then `result_json`": (block_resolved, file_server.resolve, file_calls),
        "manage_files: naive (jsonschema.validate + if chain)": (block, naive, file_calls),
        "manage_files: hand-written (same jsonschema-rs validator, texts made once)": (block, hand_written, file_calls),
        "10 tools x 5 variants: generated": (block_json, modules["large_10"].resolve_json, calls10),
        "1,000 tools x 5 variants: generated": (block_json, modules["large_1000"].resolve_json, calls1000),
        "1,000 tools x 5 variants: hand-written": (block, large_1000_hand, calls1000),
    }
    results: dict[str, list[float]] = {k: [] for k in runs}
    for timed, fn, calls in runs.values():
        timed(fn, calls)  # warm-up
    for _ in range(blocks):
        for label, (timed, fn, calls) in runs.items():
            results[label].append(timed(fn, calls))

    print(f"Python {sys.version.split()[0]}, {blocks} blocks of {PER_BLOCK:,} calls\n")
    print("| resolver | µs per call (median) | middle half |")
    print("|---|---:|---|")
    for label, values in results.items():
        q = statistics.quantiles(values, n=4)
        print(f"| {label} | {statistics.median(values):.2f} | {q[0]:.2f}–{q[2]:.2f} |")
    median = {k: statistics.median(v) for k, v in results.items()}
    gen = median["manage_files: generated `resolve_json`"]
    print()
    print(f"- generated / hand-written (manage_files): {gen / median['manage_files: hand-written (same jsonschema-rs validator, texts made once)']:.2f}x")
    print(f"- naive / generated (manage_files): {median['manage_files: naive (jsonschema.validate + if chain)'] / gen:.1f}x")
    print(f"- generated / hand-written (1,000 tools): {median['1,000 tools x 5 variants: generated'] / median['1,000 tools x 5 variants: hand-written']:.2f}x")
    print(f"- 1,000 tools / 10 tools (generated): {median['1,000 tools x 5 variants: generated'] / median['10 tools x 5 variants: generated']:.2f}x")
    print(
        f"- generate --lang python, 10,000 tools x 8 variants: median {statistics.median(generate_seconds):.2f} s "
        f"({min(generate_seconds):.2f}–{max(generate_seconds):.2f}, 5 runs)"
    )


main()
