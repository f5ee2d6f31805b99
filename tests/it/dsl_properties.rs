//! Property tests of the text front ends and printers: no input makes them
//! panic or hang, and `convert` YAML → `.rules` → YAML keeps the IR (and the
//! signature) of generated rule sets exactly.

use std::path::Path;

use mcp_resolve::emit::signature::{signature, to_pretty};
use mcp_resolve::format::{Syntax, format_file};
use mcp_resolve::internals::parse::expr::parse_expression;
use mcp_resolve::source::FileId;
use proptest::prelude::*;

const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "!",
    "-",
    "&&",
    "||",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    " in ",
    ".",
    ",",
    ":",
    "\"",
    "'",
    "\"\"\"",
    "r\"",
    "b'",
    "\\",
    "\\u",
    "`",
    "//",
    "\n",
    " ",
    "has(",
    "size(",
    ".startsWith(",
    ".matches(",
    ".satisfies(",
    "a",
    "b.c",
    "1",
    "-2.5e3",
    "0x1F",
    "true",
    "null",
    "\"x\"",
    "tool",
    "variant",
    "when",
    "inputSchema",
    "annotations",
    "version",
    "server",
    "hint",
    "requiredScopes",
    "resolvable",
    "é",
    "\u{0}",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..60).prop_map(|t| t.concat())
}

fn bundled_texts() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["rules", "tests/fixtures/forms"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "rules")
            ) {
                out.push((
                    path.to_string_lossy().into_owned(),
                    std::fs::read_to_string(&path).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn expression_parser_never_panics(text in prop_oneof![token_soup(), any::<String>()]) {
        let map = |i: usize| i.min(text.len());
        let _ = parse_expression(&text, FileId(0), &map);
        let yaml = format!("version: 1\nserver: {{ name: s, version: '1' }}\ntools:\n  - name: t\n    inputSchema: {{ type: object }}\n    variants:\n      - name: v\n        when: {}\n", serde_json::to_string(&text).unwrap());
        let _ = mcp_resolve::load_str("p.yaml", &yaml);
    }

    #[test]
    fn rules_parser_never_panics(text in prop_oneof![token_soup(), any::<String>()]) {
        let project = mcp_resolve::load_str("p.rules", &text);
        let _ = format_file(Path::new("p.rules"), &text, Syntax::Rules);
        // Whatever it read, it says something or declares something.
        prop_assert!(!project.diagnostics.is_empty() || !project.files.is_empty());
    }

    #[test]
    fn mutated_files_never_panic_and_fmt_stays_idempotent(
        which in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        len in 0usize..40,
        insert in prop::sample::select(TOKENS),
    ) {
        let files = bundled_texts();
        let (name, text) = &files[which.index(files.len())];
        let mut cut = at.index(text.len().max(1)).min(text.len());
        while !text.is_char_boundary(cut) { cut -= 1; }
        let mut end = (cut + len).min(text.len());
        while !text.is_char_boundary(end) { end -= 1; }
        let mutated = format!("{}{insert}{}", &text[..cut], &text[end..]);
        let path = Path::new(name);
        let _ = mcp_resolve::load_str(name, &mutated);
        if let Ok(once) = format_file(path, &mutated, Syntax::of(path)) {
            let twice = format_file(path, &once, Syntax::of(path)).unwrap();
            prop_assert_eq!(once, twice);
        }
    }
}

// ---------------------------------------------------------------------------
// Generated rule sets for the round trip.

fn scalar_for(arg: &str) -> BoxedStrategy<String> {
    match arg {
        "mode" => prop::sample::select(vec!["read", "write", "list", "\"odd: one\""])
            .prop_map(str::to_string)
            .boxed(),
        "path" => prop::sample::select(vec!["/tmp/a", "notes.md", "\"\"", "\"quote\\\"d\""])
            .prop_map(str::to_string)
            .boxed(),
        "count" | "opts.depth" => (-3i64..20).prop_map(|n| n.to_string()).boxed(),
        "ratio" => prop::sample::select(vec!["0.5", "1.25", "-2.0", "3"])
            .prop_map(str::to_string)
            .boxed(),
        _ => prop::sample::select(vec!["true", "false"])
            .prop_map(str::to_string)
            .boxed(),
    }
}

fn keyword_for(arg: &'static str, depth: u32) -> BoxedStrategy<String> {
    let leaf = match arg {
        "mode" | "path" => prop_oneof![
            scalar_for(arg).prop_map(|v| format!("{{ const: {v} }}")),
            prop::collection::vec(scalar_for(arg), 1..3)
                .prop_map(|v| format!("{{ enum: [{}] }}", v.join(", "))),
            prop::sample::select(vec!["^/tmp/", "\\\\.md$", "a+", "^read$"])
                .prop_map(|p| format!("{{ pattern: \"{p}\" }}")),
            (0u64..5).prop_map(|n| format!("{{ minLength: {n} }}")),
            (0u64..9).prop_map(|n| format!("{{ maxLength: {n} }}")),
            Just("{ type: string }".to_string()),
        ]
        .boxed(),
        "count" | "opts.depth" | "ratio" => prop_oneof![
            scalar_for(arg).prop_map(|v| format!("{{ minimum: {v} }}")),
            scalar_for(arg).prop_map(|v| format!("{{ maximum: {v} }}")),
            scalar_for(arg).prop_map(|v| format!("{{ exclusiveMinimum: {v} }}")),
            scalar_for(arg).prop_map(|v| format!("{{ exclusiveMaximum: {v} }}")),
            scalar_for(arg).prop_map(|v| format!("{{ const: {v} }}")),
            Just("{ type: [integer, number] }".to_string()),
        ]
        .boxed(),
        _ => scalar_for(arg)
            .prop_map(|v| format!("{{ const: {v} }}"))
            .boxed(),
    };
    if depth == 0 {
        return leaf;
    }
    prop_oneof![
        3 => leaf,
        1 => keyword_for(arg, depth - 1).prop_map(|k| format!("{{ not: {k} }}")),
        1 => prop::collection::vec(keyword_for(arg, depth - 1), 0..3).prop_map(|ks| format!("{{ anyOf: [{}] }}", ks.join(", "))),
        1 => prop::collection::vec(keyword_for(arg, depth - 1), 0..3).prop_map(|ks| format!("{{ allOf: [{}] }}", ks.join(", "))),
    ]
    .boxed()
}

const ARGS: &[&str] = &[
    "mode",
    "path",
    "count",
    "ratio",
    "flag",
    "opts.depth",
    "opts.force",
    "any",
];

fn matcher() -> BoxedStrategy<(String, String)> {
    prop::sample::select(ARGS)
        .prop_flat_map(|arg| {
            let m = prop_oneof![
                3 => scalar_for(arg),
                2 => keyword_for(arg, 2),
                1 => prop::collection::vec(scalar_for(arg), 1..3).prop_map(|v| format!("[{}]", v.join(", "))),
                1 => prop::sample::select(vec!["{ absent: true }", "{ absent: false }", "{}"]).prop_map(str::to_string),
            ];
            (Just(arg.to_string()), m)
        })
        .boxed()
}

fn when() -> BoxedStrategy<String> {
    let conj = prop::collection::vec(matcher(), 1..4).prop_map(|ms| {
        let mut seen = std::collections::BTreeSet::new();
        let parts: Vec<String> = ms
            .into_iter()
            .filter(|(a, _)| seen.insert(a.clone()))
            .map(|(a, m)| format!("{a}: {m}"))
            .collect();
        format!("{{ {} }}", parts.join(", "))
    });
    prop_oneof![
        3 => conj.clone(),
        1 => prop::collection::vec(conj, 1..3).prop_map(|cs| format!("[{}]", cs.join(", "))),
        1 => Just("{}".to_string()),
    ]
    .boxed()
}

fn rule_set() -> impl Strategy<Value = String> {
    let hints = [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ];
    let variant = (
        when(),
        prop::collection::vec((prop::sample::select(hints.to_vec()), any::<bool>()), 0..3),
    );
    prop::collection::vec(variant, 1..5).prop_map(|vs| {
        let mut out = String::from(
            "# generated\nversion: 1\nserver: { name: gen, version: 0.1.0 }\ntools:\n  - name: tool\n    inputSchema:\n      type: object\n      properties:\n        mode: { type: string }\n        path: { type: string }\n        count: { type: integer }\n        ratio: { type: number }\n        flag: { type: boolean }\n        any: {}\n        opts:\n          type: object\n          properties:\n            depth: { type: [integer, string] }\n            force: { type: boolean }\n    variants:\n",
        );
        for (i, (w, hs)) in vs.iter().enumerate() {
            out.push_str(&format!("      - name: v{i}\n        when: {w}\n"));
            let mut seen = std::collections::BTreeSet::new();
            let hs: Vec<String> = hs
                .iter()
                .filter(|(h, _)| seen.insert(*h))
                .map(|(h, b)| format!("{h}: {b}"))
                .collect();
            if !hs.is_empty() {
                out.push_str(&format!("        annotations: {{ {} }}\n", hs.join(", ")));
            }
        }
        out
    })
}

fn sig(path: &str, text: &str) -> Option<String> {
    let p = mcp_resolve::load_str(path, text);
    let server = p.single_server().ok()?;
    Some(to_pretty(&signature(server)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn convert_round_trip_keeps_the_ir(yaml in rule_set()) {
        let original = mcp_resolve::load_str("gen.yaml", &yaml);
        let front_end_ok = !original.diagnostics.iter().any(|d| {
            matches!(d.code.as_str(), "syntax" | "unknown-field" | "missing-field" | "invalid-value")
        });
        prop_assert!(front_end_ok, "generator made an unreadable file:\n{yaml}\n{:?}", original.diagnostics);
        let rules = format_file(Path::new("gen.yaml"), &yaml, Syntax::Rules)
            .unwrap_or_else(|e| panic!("{e:?}\n{yaml}"));
        let back = format_file(Path::new("gen.rules"), &rules, Syntax::Yaml)
            .unwrap_or_else(|e| panic!("{e:?}\n{rules}"));
        let via_rules = mcp_resolve::load_str("gen.rules", &rules);
        let returned = mcp_resolve::load_str("gen.yaml", &back);
        prop_assert_eq!(&original.servers, &via_rules.servers, "{}\n{}", yaml, rules);
        prop_assert_eq!(&original.servers, &returned.servers, "{}\n{}", yaml, back);
        prop_assert_eq!(sig("gen.yaml", &yaml), sig("gen.rules", &rules));
        // Both printed forms are canonical.
        prop_assert_eq!(format_file(Path::new("gen.rules"), &rules, Syntax::Rules).unwrap(), rules.clone());
        let yaml_fmt = format_file(Path::new("gen.yaml"), &yaml, Syntax::Yaml).unwrap();
        prop_assert_eq!(format_file(Path::new("gen.yaml"), &yaml_fmt, Syntax::Yaml).unwrap(), yaml_fmt);
    }
}
