//! The conservative-bound check against an independent, table-driven oracle:
//! every combination of absent/true/false for the four core hints on the
//! static side and on the variant side (3^4 × 3^4 = 6,561 rule files).

use mcp_resolve::diagnostic::Code;
use mcp_resolve::hints::HintTableExt;

const HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];
/// MCP defaults, written out independently of the compiler's table.
const DEFAULTS: [bool; 4] = [false, true, false, true];

/// `None` = absent, else the written value.
type Written = [Option<bool>; 4];

fn all_written() -> Vec<Written> {
    let opts = [None, Some(true), Some(false)];
    let mut out = Vec::new();
    for a in opts {
        for b in opts {
            for c in opts {
                for d in opts {
                    out.push([a, b, c, d]);
                }
            }
        }
    }
    out
}

/// One row per rule of the extension's reference client: a pattern over the
/// static set S and one over the resolved set R (index, required value), and
/// the hint blamed when both patterns hold.
struct Forbidden {
    s: &'static [(usize, bool)],
    r: &'static [(usize, bool)],
    blame: usize,
}

const FORBIDDEN: &[Forbidden] = &[
    // static read-only, resolved not read-only
    Forbidden {
        s: &[(0, true)],
        r: &[(0, false)],
        blame: 0,
    },
    // static writes but non-destructive; resolved writes destructively
    Forbidden {
        s: &[(0, false), (1, false)],
        r: &[(0, false), (1, true)],
        blame: 1,
    },
    // static idempotent; resolved writes non-idempotently
    Forbidden {
        s: &[(2, true)],
        r: &[(0, false), (2, false)],
        blame: 2,
    },
    // static closed-world; resolved open-world
    Forbidden {
        s: &[(3, false)],
        r: &[(3, true)],
        blame: 3,
    },
];

fn matches(set: &[bool; 4], pattern: &[(usize, bool)]) -> bool {
    pattern.iter().all(|(i, v)| set[*i] == *v)
}

fn yaml_map(w: &Written) -> String {
    let entries: Vec<String> = w
        .iter()
        .zip(HINTS)
        .filter_map(|(v, h)| v.map(|v| format!("{h}: {v}")))
        .collect();
    format!("{{ {} }}", entries.join(", "))
}

#[test]
fn worst_case_matches_the_oracle_on_every_combination() {
    let mut checked = 0;
    let mut rejected = 0;
    for s in all_written() {
        // Effective static set: written over the defaults.
        let s_eff: [bool; 4] = std::array::from_fn(|i| s[i].unwrap_or(DEFAULTS[i]));
        // A file per static set, one variant per resolved combination, so each
        // compile checks 81 pairs (the oracle is evaluated per variant).
        let mut text = format!(
            "version: 1\nserver: {{ name: s, version: '1' }}\ntools:\n  - name: t\n    inputSchema: {{ type: object, properties: {{ k: {{ type: integer }} }} }}\n    annotations: {}\n    variants:\n",
            yaml_map(&s)
        );
        let rs = all_written();
        for (i, r) in rs.iter().enumerate() {
            text.push_str(&format!(
                "      - name: v{i}\n        when: {{ k: {i} }}\n        annotations: {}\n",
                yaml_map(r)
            ));
        }
        let project = mcp_resolve::load_str("oracle.yaml", &text);
        for (i, r) in rs.iter().enumerate() {
            // Variants inherit unspecified hints from the static set.
            let r_eff: [bool; 4] = std::array::from_fn(|j| r[j].unwrap_or(s_eff[j]));
            let mut expected: Vec<&str> = FORBIDDEN
                .iter()
                .filter(|f| matches(&s_eff, f.s) && matches(&r_eff, f.r))
                .map(|f| HINTS[f.blame])
                .collect();
            expected.sort_unstable();
            let name = format!("v{i}");
            let mut actual: Vec<&str> = project
                .diagnostics
                .iter()
                .filter(|d| d.code == Code::WorstCase && d.variant.as_deref() == Some(&name))
                .map(|d| {
                    HINTS
                        .into_iter()
                        .find(|h| d.message.contains(&format!("`{h}:")))
                        .expect("message names the hint")
                })
                .collect();
            actual.sort_unstable();
            assert_eq!(actual, expected, "static {s:?} variant {r:?}");
            checked += 1;
            rejected += usize::from(!expected.is_empty());
        }
        assert!(
            project.diagnostics.iter().all(|d| matches!(
                d.code,
                Code::WorstCase | Code::MeaninglessHint | Code::NonExhaustive
            )),
            "unexpected diagnostics for static {s:?}"
        );
    }
    assert_eq!(checked, 6561);
    // The oracle must actually reject a meaningful share, or the test proves nothing.
    assert!(rejected > 1000 && rejected < 6000, "rejected {rejected}");
}

#[test]
fn extra_hints_and_scopes_follow_their_worst_value() {
    let text = r#"
version: 1
server: { name: s, version: "1" }
hints:
  privateHint: { worst: true, default: false }
  safeModeHint: { worst: false, default: true }
tools:
  - name: t
    inputSchema: { type: object, properties: { k: { type: integer } } }
    annotations: { agencyHint: false, privateHint: false, safeModeHint: true }
    requiredScopes: [a]
    variants:
      - { name: agentic, when: { k: 1 }, annotations: { agencyHint: true } }
      - { name: private, when: { k: 2 }, annotations: { privateHint: true } }
      - { name: unsafe, when: { k: 3 }, annotations: { safeModeHint: false } }
      - { name: scoped, when: { k: 4 }, requiredScopes: [a, b] }
      - { name: fine, when: { k: 5 }, annotations: { agencyHint: false, privateHint: false }, requiredScopes: [] }
"#;
    let project = mcp_resolve::load_str("extra.yaml", text);
    let found: Vec<(Code, Option<&str>)> = project
        .diagnostics
        .iter()
        .map(|d| (d.code, d.variant.as_deref()))
        .collect();
    assert_eq!(
        found,
        vec![
            (Code::WorstCase, Some("agentic")),
            (Code::WorstCase, Some("private")),
            (Code::WorstCase, Some("unsafe")),
            (Code::ScopeNotDeclared, Some("scoped")),
        ]
    );
    // A static set already at the worst value admits every variant.
    let relaxed = text
        .replace(
            "agencyHint: false, privateHint: false, safeModeHint: true",
            "agencyHint: true, privateHint: true, safeModeHint: false",
        )
        .replace("requiredScopes: [a]", "requiredScopes: [a, b]");
    let project = mcp_resolve::load_str("extra.yaml", &relaxed);
    let codes: Vec<Code> = project.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        vec![Code::NonExhaustive],
        "{:?}",
        project.diagnostics
    );
}

#[test]
fn derived_static_annotations_bound_every_variant() {
    let text = r#"
version: 1
server: { name: s, version: "1" }
tools:
  - name: t
    inputSchema: { type: object, properties: { k: { type: integer } } }
    variants:
      - { name: a, when: { k: 1 }, annotations: { readOnlyHint: true, openWorldHint: false }, requiredScopes: [r] }
      - { name: b, when: { k: 2 }, annotations: { agencyHint: true }, requiredScopes: [w] }
"#;
    let project = mcp_resolve::load_str("derived.yaml", text);
    let codes: Vec<Code> = project.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, vec![Code::NonExhaustive]);
    let server = &project.servers[0];
    let tool = &server.tools[0];
    let json = server
        .hints
        .to_annotations(&tool.annotations)
        .complete_json();
    // Not provably exhaustive: the core defaults, and the worst extra hints.
    assert_eq!(
        json,
        serde_json::json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true, "agencyHint": true})
    );
    assert_eq!(tool.required_scopes, vec!["r".to_string(), "w".to_string()]);
}

#[test]
fn derived_static_annotations_of_an_exhaustive_tool_bound_only_the_variants() {
    // Every integer is < 0, 0..=10 or > 10: no call falls back to the defaults,
    // so the derived set is the tightest bound of the variants alone.
    let text = r#"
version: 1
server: { name: s, version: "1" }
tools:
  - name: t
    inputSchema: { type: object, properties: { k: { type: integer } }, required: [k] }
    variants:
      - { name: low, when: { k: { exclusiveMaximum: 0 } }, annotations: { readOnlyHint: true, openWorldHint: false } }
      - { name: mid, when: { k: { minimum: 0, maximum: 10 } }, annotations: { readOnlyHint: true, openWorldHint: false } }
      - { name: high, when: { k: { exclusiveMinimum: 10 } }, annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false } }
"#;
    let project = mcp_resolve::load_str("derived.yaml", text);
    assert!(project.diagnostics.is_empty(), "{:?}", project.diagnostics);
    let server = &project.servers[0];
    let json = server
        .hints
        .to_annotations(&server.tools[0].annotations)
        .complete_json();
    assert_eq!(
        json,
        serde_json::json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false, "agencyHint": false})
    );
    // One integer left uncovered (k == 0 excluded): back to the core defaults.
    let gap = text.replace(
        "minimum: 0, maximum: 10",
        "exclusiveMinimum: 0, maximum: 10",
    );
    let project = mcp_resolve::load_str("derived.yaml", &gap);
    let d = &project.diagnostics[0];
    assert_eq!(d.code, Code::NonExhaustive);
    assert!(
        d.help.as_deref().unwrap_or("").contains(r#"`{"k":0}`"#),
        "{d:?}"
    );
    let server = &project.servers[0];
    assert_eq!(
        server
            .hints
            .to_annotations(&server.tools[0].annotations)
            .complete_json()["destructiveHint"],
        true
    );
}
