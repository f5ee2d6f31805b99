"""The Python side of the golden crate's `python` test: for each generated
module DIR/sN.py, answers the calls in DIR/sN.calls.jsonl (one
`[tool, arguments]` per line) into DIR/sN.out.jsonl, one line per call:
`{"ok": [variant, annotations, requiredScopes, extension, sep1862,
annotations-dialect]}` with the three result texts as the module returned
them, or `{"error": {code, message, data}}`; the module's `resolve_json`
must give the same texts or error in every dialect.

usage: python agree.py DIR COUNT
"""

import importlib.util
import json
import sys
from pathlib import Path

import mcp_resolve_runtime as rt


def main() -> None:
    work, count = Path(sys.argv[1]), int(sys.argv[2])
    for n in range(count):
        calls = work / f"s{n}.calls.jsonl"
        if not calls.exists():
            continue  # a set the generator refused
        spec = importlib.util.spec_from_file_location(f"s{n}", work / f"s{n}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out = []
        for line in calls.read_text(encoding="utf-8").splitlines():
            if not line:
                continue
            tool, args = json.loads(line)
            try:
                r = module.resolve(tool, args)
                answer = {
                    "ok": [
                        r.variant,
                        dict(r.annotations),
                        list(r.required_scopes),
                        r.result_json("extension"),
                        r.result_json("sep1862"),
                        r.result_json("annotations"),
                    ]
                }
            except rt.RpcError as e:
                answer = {"error": e.to_json()}
            # `resolve_json` has its own fast path: it must give the same
            # texts, or the same error.
            for at, dialect in enumerate(rt.DIALECTS):
                try:
                    text = {"ok": module.resolve_json(tool, args, dialect)}
                except rt.RpcError as e:
                    text = {"error": e.to_json()}
                same = (
                    text == {"ok": answer["ok"][3 + at]}
                    if "ok" in answer
                    else text == {"error": answer["error"]}
                )
                if not same:
                    answer = {"resolve_json differs": [dialect, text, answer]}
                    break
            out.append(json.dumps(answer, ensure_ascii=False))
        (work / f"s{n}.out.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


main()
