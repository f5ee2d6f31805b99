#!/usr/bin/env python3
"""Writes a large rules file for performance measurements.

usage: gen_large_rules.py TOOLS VARIANTS > large.yaml
Each tool has an `action` enum with VARIANTS values, a path pattern and a
nested option; each variant matches one action (some with extra conditions).
"""
import sys

tools, variants = int(sys.argv[1]), int(sys.argv[2])
out = ["version: 1", "server: { name: large, version: 1.0.0 }", "tools:"]
for t in range(tools):
    actions = ", ".join(f"a{v}" for v in range(variants))
    out += [
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
print("\n".join(out))
