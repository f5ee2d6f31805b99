"""Evaluates CEL expressions with cel-python, the independent implementation
the differential test (tests/cel_differential.rs) compares mcp-resolve with.

Input (argv[1]): {"cases": [{"expr": "...", "args": {...}}, ...]}, where
arguments are bound as `args`. Output (stdout): a JSON list, per case `true`,
`false`, or an error string.
"""
import json
import sys

import celpy


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    env = celpy.Environment()
    programs = {}
    out = []
    for case in cases:
        expr = case["expr"]
        try:
            if expr not in programs:
                programs[expr] = env.program(env.compile(expr))
            value = programs[expr].evaluate({"args": celpy.json_to_cel(case["args"])})
            out.append(bool(value) if isinstance(value, celpy.celtypes.BoolType) else f"not a bool: {value!r}")
        except Exception as e:  # noqa: BLE001 - every failure is reported
            out.append(f"error: {type(e).__name__}: {e}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
