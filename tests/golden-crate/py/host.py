"""The Python side of the golden crate's host agreement test: for each
signature document DIR/sN.signature.json, the host library
(``mcp_resolve_host``) resolves the calls in DIR/sN.calls.jsonl (one
``[tool, arguments]`` per line) locally, into DIR/sN.host.jsonl, one line per
call: ``{"ok": [variant, [[hint, value], ...], requiredScopes, extension]}``
(the extension result as JSON text), or ``{"error": {"kind", "message"}}``
for the violation it reports. A document the library refuses to load gives
the one line ``{"refused": message}``.

usage: python host.py DIR COUNT
"""

import json
import sys
from pathlib import Path

from mcp_resolve_host import Signature, SignatureError, Violation


def dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def main() -> None:
    work, count = Path(sys.argv[1]), int(sys.argv[2])
    for n in range(count):
        path = work / f"s{n}.signature.json"
        if not path.exists():
            continue
        out_path = work / f"s{n}.host.jsonl"
        try:
            signature = Signature.from_json(path.read_text(encoding="utf-8"))
        except SignatureError as e:
            out_path.write_text(dumps({"refused": str(e)}) + "\n", encoding="utf-8")
            continue
        out = []
        for line in (work / f"s{n}.calls.jsonl").read_text(encoding="utf-8").splitlines():
            if not line:
                continue
            tool, args = json.loads(line)
            try:
                e = signature.expect(tool, args)
                out.append(dumps({"ok": [
                    e.variant.name if e.variant is not None else None,
                    [[hint, value] for hint, value in e.annotations.items()],
                    list(e.required_scopes),
                    dumps(e.extension_result()),
                ]}))
            except Violation as v:
                out.append(dumps({"error": {"kind": v.kind, "message": v.message}}))
        out_path.write_text("\n".join(out) + "\n", encoding="utf-8")


main()
