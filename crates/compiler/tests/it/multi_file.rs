//! Several files per server, servers grouped by name, and the limits of
//! signature expansion.

use std::path::PathBuf;

use mcp_resolve::diagnostic::Code;
use mcp_resolve::emit::signature::signature;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const TOOL: &str =
    "  - name: NAME\n    inputSchema: { type: object, properties: { k: { type: integer } } }\n";

#[test]
fn files_of_one_server_merge_and_tool_names_are_unique_across_them() {
    let dir = temp_dir("merge");
    std::fs::write(
        dir.join("a.yaml"),
        format!(
            "version: 1\nserver: {{ name: s, version: '1' }}\ntools:\n{}",
            TOOL.replace("NAME", "one")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("b.yaml"),
        format!(
            "version: 1\ntools:\n{}{}",
            TOOL.replace("NAME", "two"),
            TOOL.replace("NAME", "one")
        ),
    )
    .unwrap();
    let project = mcp_resolve::load(std::slice::from_ref(&dir)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let server = project.single_server().unwrap();
    assert_eq!(
        server
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["one", "two", "one"]
    );
    let codes: Vec<Code> = project.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::DuplicateTool]);
    let d = &project.diagnostics[0];
    assert!(
        project
            .sources
            .get(d.span.unwrap().file)
            .unwrap()
            .path
            .ends_with("b.yaml")
    );
}

#[test]
fn files_that_disagree_on_the_server_are_reported() {
    let dir = temp_dir("mismatch");
    std::fs::write(dir.join("a.yaml"), "version: 1\nserver: { name: s, version: '1' }\nhints:\n  xHint: { worst: true, default: false }\ntools: []\n").unwrap();
    std::fs::write(dir.join("b.yaml"), "version: 1\nserver: { name: s, version: '2' }\nhints:\n  xHint: { worst: false, default: false }\ntools: []\n").unwrap();
    std::fs::write(
        dir.join("c.yaml"),
        "version: 1\nserver: { name: other, version: '1' }\ntools: []\n",
    )
    .unwrap();
    std::fs::write(dir.join("d.yaml"), "version: 1\ntools: []\n").unwrap();
    let project = mcp_resolve::load(std::slice::from_ref(&dir)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let codes: Vec<Code> = project.diagnostics.iter().map(|d| d.code).collect();
    // b: version and hint disagree with a; d: several servers, none named.
    assert_eq!(
        codes,
        [
            Code::ServerMismatch,
            Code::ServerMismatch,
            Code::MissingField
        ]
    );
    assert_eq!(project.servers.len(), 2);
    assert!(project.single_server().is_err());
}

#[test]
fn a_condition_that_expands_past_the_limit_is_reported_not_emitted() {
    // (a1 | b1) & (a2 | b2) & … over 9 arguments: 2^9 = 512 disjuncts.
    let props: Vec<String> = (0..9)
        .map(|i| format!("p{i}: {{ type: integer }}"))
        .collect();
    let mut text = format!(
        "version: 1\nserver: {{ name: s, version: '1' }}\ntools:\n  - name: t\n    inputSchema: {{ type: object, properties: {{ {} }} }}\n    variants:\n      - name: big\n        when:\n",
        props.join(", ")
    );
    // A structured `when` is an OR of ANDs and cannot multiply out; the
    // product below is what negated expressions produce, so set it on the IR.
    text.push_str("          - { p0: 1 }\n");
    let project = mcp_resolve::load_str("big.yaml", &text);
    assert!(
        project
            .diagnostics
            .iter()
            .all(|d| d.severity == mcp_resolve::diagnostic::Severity::Info)
    );
    let mut server = project.servers[0].clone();
    let leaf = |i: usize, v: i64| {
        mcp_resolve::ir::Cond::Test(
            mcp_resolve::ir::ArgPath {
                segments: vec![format!("p{i}")],
                loc: server.tools[0].variants[0].loc,
            },
            mcp_resolve::ir::Pred {
                kind: mcp_resolve::ir::PredKind::Const(v.into()),
                loc: server.tools[0].variants[0].loc,
            },
        )
    };
    let cond = mcp_resolve::ir::Cond::And(
        (0..9)
            .map(|i| mcp_resolve::ir::Cond::Or(vec![leaf(i, 1), leaf(i, 2)]))
            .collect(),
    );
    server.tools[0].variants[0].when = cond;
    let mut diags = Vec::new();
    mcp_resolve::internals::check::check_server(&server, 0, &mut diags);
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, Code::PatternTooComplex);
    // `signature` refuses such rules (they fail `check`); the emitter itself
    // writes no entries for the condition.
    let doc = signature(&server);
    assert_eq!(doc["tools"][0]["resolvedVariants"], serde_json::json!([]));
}

#[test]
fn nested_absence_and_negation_encode_as_documented() {
    let text = r#"
version: 1
server: { name: s, version: "1" }
tools:
  - name: t
    inputSchema:
      type: object
      properties:
        options: { type: object, properties: { force: { type: boolean } } }
        mode: { type: string }
    variants:
      - name: soft
        when: { options.force: { absent: true }, mode: { not: { const: hard } } }
"#;
    let project = mcp_resolve::load_str("n.yaml", text);
    // Only analysis infos (the variants do not cover every call).
    assert!(
        project
            .diagnostics
            .iter()
            .all(|d| d.severity == mcp_resolve::diagnostic::Severity::Info),
        "{:?}",
        project.diagnostics
    );
    let doc = signature(&project.servers[0]);
    let entries: Vec<&serde_json::Value> = doc["tools"][0]["resolvedVariants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["when"]["argumentPatterns"])
        .collect();
    assert_eq!(
        entries,
        [
            &serde_json::json!({"mode": {"not": {"const": "hard"}}, "options": false}),
            &serde_json::json!({"mode": {"not": {"const": "hard"}}, "options": {"properties": {"force": false}}}),
        ]
    );
}
