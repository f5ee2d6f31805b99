//! A CEL `when` expression inside a fixed rules file: parsed, type-checked
//! against the tool's schema and analysed (reachability, exhaustiveness).
#![no_main]

use libfuzzer_sys::fuzz_target;

const HEAD: &str = r#"version: 1
server: { name: s, version: "1" }
tools:
  - name: t
    inputSchema:
      type: object
      properties:
        action: { type: string, enum: [read, write, delete] }
        path: { type: string }
        count: { type: integer, minimum: 0 }
        tags: { type: array, items: { type: string } }
        opts: { type: object, properties: { force: { type: boolean } } }
      required: [action]
    annotations: { readOnlyHint: false, destructiveHint: true }
    variants:
      - name: v
        annotations: { readOnlyHint: true }
        when: "#;

fuzz_target!(|expression: &str| {
    // A JSON string is a YAML double-quoted scalar.
    let quoted = serde_json::to_string(expression).unwrap_or_default();
    let text = format!("{HEAD}{quoted}\n");
    let _ = mcp_resolve::load_str("fuzz.yaml", &text);
});
