#!/usr/bin/env python3
"""Writes a large rules set for performance measurements.

usage: gen_large_rules.py TOOLS VARIANTS > large.yaml
       gen_large_rules.py TOOLS VARIANTS --out-dir DIR [--per-file K]

Each tool has an `action` enum with VARIANTS values, a path pattern and a
nested option; each variant matches one action (some with extra conditions).
With --out-dir, the tools are written to DIR/large-NNNN.yaml, K tools a file
(default 1000), all of one server, so every file stays under the file-size
limit; pass DIR to any command.
"""
import os
import sys


def tool_lines(t, variants):
    actions = ", ".join(f"a{v}" for v in range(variants))
    out = [
        f"  - name: tool_{t}",
        f"    description: generated tool {t}",
        "    inputSchema:",
        "      type: object",
        "      properties:",
        f"        action: {{ type: string, enum: [{actions}] }}",
        "        path: { type: string }",
        "        count: { type: integer, minimum: 0, maximum: 1000 }",
        "        options: { type: object, properties: { force: { type: boolean } } }",
        "      required: [action]",
        "    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true }",
        "    requiredScopes: [read, write]",
        "    variants:",
    ]
    for v in range(variants):
        out.append(f"      - name: v{v}")
        if v % 3 == 0:
            out.append(f"        when: {{ action: a{v}, path: {{ pattern: \"^/tmp/{v}\" }} }}")
        elif v % 3 == 1:
            out.append(f"        when: [{{ action: a{v}, count: {{ maximum: {v} }} }}, {{ action: a{v}, options.force: {{ absent: true }} }}]")
        else:
            out.append(f"        when: {{ action: a{v} }}")
        if v % 2 == 0:
            out.append("        annotations: { readOnlyHint: true, destructiveHint: false }")
            out.append("        requiredScopes: [read]")
        else:
            out.append("        annotations: { destructiveHint: false }")
    return out


HEADER = ["version: 1", "server: { name: large, version: 1.0.0 }", "tools:"]


def main(argv):
    if len(argv) not in (2, 4, 6):
        sys.exit(__doc__)
    tools, variants = int(argv[0]), int(argv[1])
    opts = dict(zip(argv[2::2], argv[3::2]))
    if "--out-dir" not in opts:
        out = list(HEADER)
        for t in range(tools):
            out += tool_lines(t, variants)
        print("\n".join(out))
        return
    out_dir, per_file = opts["--out-dir"], int(opts.get("--per-file", "1000"))
    os.makedirs(out_dir, exist_ok=True)
    for n, start in enumerate(range(0, tools, per_file)):
        out = list(HEADER)
        for t in range(start, min(tools, start + per_file)):
            out += tool_lines(t, variants)
        with open(os.path.join(out_dir, f"large-{n:04}.yaml"), "w") as f:
            f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
