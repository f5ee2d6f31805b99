//! Host-side verification (`mcp_resolve_host`) against servers built
//! from every bundled rules file: an honest server — the resolver of the same
//! rules — passes on every candidate call in every dialect; a lying server —
//! the resolver of the same rules with one hint of one variant flipped, or a
//! scope added — is caught on a call that lands in that variant, and the
//! violation says whether the lie is the dangerous direction.

use std::path::PathBuf;

use mcp_resolve::diff::candidate_calls;
use mcp_resolve::emit::signature::signature;
use mcp_resolve::ir::Server;
use mcp_resolve::resolve::Resolver;
use mcp_resolve_host::{Signature, ViolationKind, verify_resolution, worst_value};
use mcp_resolve_runtime::Dialect;
use serde_json::Value;

struct Bundle {
    file: String,
    server: Server,
    signature: Signature,
    /// Per resolvable tool: the calls its inputSchema accepts.
    calls: Vec<(String, Vec<Value>)>,
}

fn bundles() -> Vec<Bundle> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(crate::repo().join("rules"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "rules"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 5);
    paths
        .into_iter()
        .map(|path| {
            let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
            assert!(!project.has_errors(), "{}", path.display());
            let server = project.single_server().unwrap().clone();
            let doc = signature(&server);
            let fingerprint = doc["fingerprint"].as_str().unwrap().to_string();
            let signature = Signature::pinned(doc, &fingerprint).unwrap();
            let calls = signature
                .tools()
                .iter()
                .filter(|t| t.is_resolvable())
                .map(|t| {
                    let calls: Vec<Value> =
                        candidate_calls(&serde_json::to_value(t.def()).unwrap())
                            .unwrap()
                            .into_iter()
                            .filter(|c| t.accepts(c))
                            .collect();
                    assert!(!calls.is_empty(), "{}: {}", path.display(), t.name());
                    (t.name().to_string(), calls)
                })
                .collect();
            Bundle {
                file: path.display().to_string(),
                server,
                signature,
                calls,
            }
        })
        .collect()
}

#[test]
fn honest_servers_pass_on_every_call_in_every_dialect() {
    let mut checked = 0;
    for b in bundles() {
        let resolver = Resolver::new(&b.server).unwrap();
        for (tool, calls) in &b.calls {
            for args in calls {
                let resolution = resolver.resolve(tool, args).unwrap();
                for dialect in Dialect::ALL {
                    let result = resolver.resolve_result(tool, args, dialect).unwrap();
                    let expected = verify_resolution(&b.signature, tool, args, &result)
                        .unwrap_or_else(|e| panic!("{}: {tool} {args} {dialect}: {e}", b.file));
                    assert_eq!(
                        expected.variant().map(|v| v.name().to_string()),
                        resolution.variant,
                        "{}: {tool} {args}",
                        b.file
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

/// One lie: a flipped hint or an added scope on one variant of one tool.
struct Lie {
    tool: usize,
    variant: usize,
    hint: Option<usize>,
}

fn lies(server: &Server) -> Vec<Lie> {
    let mut out = Vec::new();
    for (t, tool) in server.tools.iter().enumerate() {
        for v in 0..tool.variants.len() {
            for h in 0..server.hints.defs().len() {
                out.push(Lie {
                    tool: t,
                    variant: v,
                    hint: Some(h),
                });
            }
            out.push(Lie {
                tool: t,
                variant: v,
                hint: None,
            });
        }
    }
    out
}

#[test]
fn lying_servers_are_caught_in_every_dialect_that_carries_the_lie() {
    let (mut lies_told, mut caught, mut unreachable) = (0, 0, 0);
    for b in bundles() {
        let honest = Resolver::new(&b.server).unwrap();
        for lie in lies(&b.server) {
            let mut server = b.server.clone();
            let tool = &mut server.tools[lie.tool];
            let name = tool.name.clone();
            let variant = &mut tool.variants[lie.variant];
            let variant_name = variant.name.clone();
            let hint_name = match lie.hint {
                Some(h) => {
                    let value = variant.annotations.get(h);
                    variant.annotations.set(h, !value);
                    Some(b.server.hints.defs()[h].name.to_string())
                }
                None => {
                    let loc = variant.loc;
                    variant
                        .required_scopes
                        .push(("lie:extra-scope".to_string(), loc));
                    None
                }
            };
            let liar = Resolver::new(&server).unwrap();
            let calls = &b.calls.iter().find(|(t, _)| *t == name).unwrap().1;
            // A call the honest server resolves to this variant.
            let Some(args) = calls.iter().find(|a| {
                honest.resolve(&name, a).unwrap().variant.as_deref() == Some(&variant_name)
                    && liar.resolve(&name, a).unwrap().variant.as_deref() == Some(&variant_name)
            }) else {
                // Earlier variants take every call (an unreachable-variant warning).
                unreachable += 1;
                continue;
            };
            let core = hint_name
                .as_deref()
                .is_some_and(|h| mcp_resolve_runtime::CORE_HINTS.contains(&h));
            for dialect in Dialect::ALL {
                // The extension dialect carries the core hints only, and no
                // dialect but SEP-1862 carries scopes.
                let carried = match (&hint_name, dialect) {
                    (Some(_), Dialect::Extension) => core,
                    (Some(_), _) => true,
                    (None, d) => d == Dialect::Sep1862,
                };
                let result = liar.resolve_result(&name, args, dialect).unwrap();
                let verdict = verify_resolution(&b.signature, &name, args, &result);
                if !carried {
                    assert!(verdict.is_ok(), "{}: {name} {dialect}", b.file);
                    continue;
                }
                lies_told += 1;
                let Err(violations) = verdict else {
                    panic!(
                        "{}: lie not caught: {name}/{variant_name} {hint_name:?} {dialect} {args}",
                        b.file
                    );
                };
                caught += 1;
                assert_eq!(violations.0.len(), 1, "{violations}");
                let v = &violations.0[0];
                assert_eq!(v.tool, name);
                match &hint_name {
                    Some(h) => {
                        assert_eq!(v.kind, ViolationKind::Annotation, "{v}");
                        assert!(v.message.contains(h.as_str()), "{v}");
                        let signed = b
                            .signature
                            .expect(&name, args)
                            .unwrap()
                            .annotations()
                            .get(h)
                            .unwrap();
                        // Dangerous exactly when the signature had the worst value.
                        let dangerous = worst_value(h).is_none_or(|w| w == signed);
                        assert_eq!(v.less_conservative, dangerous, "{v}");
                    }
                    None => {
                        assert_eq!(v.kind, ViolationKind::Scopes, "{v}");
                        assert!(v.less_conservative, "{v}");
                    }
                }
            }
        }
    }
    println!(
        "lying servers: {caught}/{lies_told} lies caught ({unreachable} unreachable variants skipped)"
    );
    assert_eq!(caught, lies_told);
    assert!(lies_told > 100, "{lies_told}");
}

#[test]
fn a_resolution_for_refused_arguments_or_an_unknown_tool_is_a_violation() {
    let b = bundles()
        .into_iter()
        .find(|b| b.file.ends_with("file-server.yaml"))
        .unwrap();
    let resolver = Resolver::new(&b.server).unwrap();
    let good = serde_json::json!({"path": "a", "action": "read"});
    let result = resolver
        .resolve_result("manage_files", &good, Dialect::Extension)
        .unwrap();
    let bad_args = serde_json::json!({"path": "a", "action": "rename"});
    let err = verify_resolution(&b.signature, "manage_files", &bad_args, &result).unwrap_err();
    assert_eq!(err.0[0].kind, ViolationKind::InvalidArguments);
    assert!(err.any_less_conservative());
    let err = verify_resolution(&b.signature, "no_such_tool", &good, &result).unwrap_err();
    assert_eq!(err.0[0].kind, ViolationKind::UnknownTool);
    // The result names another tool than the one asked about.
    let mut other = result.clone();
    other["name"] = serde_json::json!("other_tool");
    let err = verify_resolution(&b.signature, "manage_files", &good, &other).unwrap_err();
    assert_eq!(err.0[0].kind, ViolationKind::Malformed, "{err}");
    assert!(verify_resolution(&b.signature, "manage_files", &good, &result).is_ok());
}

/// Every member of MCP's `Tool` a rules file carries (title, `outputSchema`,
/// `annotations.title`, icons, execution, `_meta`) is listed verbatim, so a
/// server listing exactly that passes in every dialect — the extension's
/// marker inside `_meta` included — and a change to any of them is caught.
#[test]
fn every_tool_member_is_listed_verbatim_and_pinned() {
    use mcp_resolve::emit::tools::tools_list;
    use mcp_resolve_host::verify_tools_list;

    let path = crate::repo().join("tests/fixtures/forms/storage.structured.yaml");
    let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
    assert!(!project.has_errors());
    let server = project.single_server().unwrap();
    let doc = signature(server);
    let fingerprint = doc["fingerprint"].as_str().unwrap().to_string();
    let signature = Signature::pinned(doc, &fingerprint).unwrap();
    for dialect in Dialect::ALL {
        let listed = tools_list(server, dialect);
        let tool = &listed["tools"][0];
        assert_eq!(tool["annotations"]["title"], "Storage");
        assert_eq!(tool["execution"]["taskSupport"], "optional");
        assert_eq!(tool["outputSchema"]["type"], "object");
        assert_eq!(tool["_meta"]["example.com/ui"], "ui://storage/browser");
        assert!(tool["icons"][0]["src"].is_string());
        verify_tools_list(&signature, &listed).unwrap();

        let changes: [(&str, Value); 6] = [
            ("/annotations/title", Value::from("Storage (beta)")),
            ("/icons/0/src", Value::from("https://example.com/other.png")),
            ("/execution/taskSupport", Value::from("required")),
            ("/_meta/example.com~1ui", Value::from("ui://elsewhere")),
            ("/outputSchema/type", Value::from("array")),
            ("/title", Value::from("Store")),
        ];
        for (pointer, value) in changes {
            let mut changed = listed.clone();
            let tool = &mut changed["tools"][0];
            match tool.pointer_mut(pointer) {
                Some(slot) => *slot = value,
                None => {
                    tool.as_object_mut()
                        .unwrap()
                        .insert(pointer.trim_start_matches('/').into(), value);
                }
            }
            let err = verify_tools_list(&signature, &changed)
                .expect_err(&format!("{dialect:?}: a changed {pointer} passed"));
            assert!(
                err.0.iter().any(|v| v.kind == ViolationKind::ToolChanged),
                "{dialect:?} {pointer}: {err}"
            );
        }
    }
}

/// Every variant of every bundled rules file is verified by direct checks
/// (no keyword of its patterns falls back to `jsonschema`), and on every
/// candidate call they answer as the patterns' compiled JSON Schema does.
#[test]
fn bundled_patterns_run_as_direct_checks_that_agree_with_their_schema() {
    let mut compared = 0usize;
    for bundle in bundles() {
        for (name, calls) in &bundle.calls {
            let tool = bundle.signature.tool(name).unwrap();
            for variant in tool.variants() {
                assert!(
                    variant.has_direct_checks(),
                    "{}: tool `{name}`, variant `{}`: {:?}",
                    bundle.file,
                    variant.name(),
                    variant.argument_patterns()
                );
                for call in calls {
                    assert_eq!(
                        variant.matches(call),
                        variant.matches_by_schema(call),
                        "{}: tool `{name}`, variant `{}`, call {call}",
                        bundle.file,
                        variant.name()
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 100, "only {compared} comparisons");
}

/// `Check::from_schema` (what host verification evaluates patterns with)
/// against `jsonschema` with the patterns' options, on schemas built from
/// every keyword it translates (and some it does not) and on values where
/// the two could part: integers written as floats, numbers past 2^53,
/// non-ASCII lengths, keys that are missing, types a keyword does not
/// apply to.
mod direct_checks_differential {
    use mcp_resolve_host::matcher::Check;
    use mcp_resolve_runtime::pattern::pattern_validator_options;
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    fn number() -> impl Strategy<Value = Value> {
        prop_oneof![
            (-2i64..4).prop_map(Value::from),
            Just(json!(1.0)),
            Just(json!(1.5)),
            Just(json!(-0.5)),
            Just(json!(9007199254740993u64)),
            Just(json!(u64::MAX)),
            Just(json!(1e20)),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "", "a", "ab", "abc", "é", "éé", "/tmp/1", "a c", "1", "b",
        ])
        .prop_map(str::to_string)
    }

    fn key() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["a", "b", "c"]).prop_map(str::to_string)
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            number(),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..4)
                    .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    fn schema() -> impl Strategy<Value = Value> {
        let types = prop::sample::select(vec![
            "null", "boolean", "object", "array", "number", "string", "integer",
        ]);
        let leaf = prop_oneof![
            any::<bool>().prop_map(Value::Bool),
            value().prop_map(|v| json!({ "const": v })),
            prop::collection::vec(value(), 1..4).prop_map(|v| json!({ "enum": v })),
            prop::collection::vec(text(), 1..4).prop_map(|v| json!({ "enum": v })),
            types.clone().prop_map(|t| json!({ "type": t })),
            prop::collection::vec(types, 1..3).prop_map(|t| json!({ "type": t })),
            prop::sample::select(vec!["^a", "b$", "a.c", "^/tmp/[0-9]+", "é", "\\d", "("])
                .prop_map(|p| json!({ "pattern": p })),
            (
                prop::sample::select(vec!["minLength", "maxLength", "minItems", "maxItems"]),
                0u64..4
            )
                .prop_map(|(k, n)| json!({ k: n })),
            (
                prop::sample::select(vec![
                    "minimum",
                    "maximum",
                    "exclusiveMinimum",
                    "exclusiveMaximum"
                ]),
                number()
            )
                .prop_map(|(k, n)| json!({ k: n })),
            prop::collection::vec(key(), 0..3).prop_map(|keys| json!({ "required": keys })),
            Just(json!({ "description": "said nothing", "title": "t" })),
            Just(json!({ "minProperties": 1 })),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|s| json!({ "not": s })),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|s| json!({ "anyOf": s })),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|s| json!({ "allOf": s })),
                inner.clone().prop_map(|s| json!({ "items": s })),
                inner.clone().prop_map(|s| json!({ "contains": s })),
                prop::collection::vec((key(), inner.clone()), 1..3).prop_map(|props| {
                    json!({ "properties": props.into_iter().collect::<Map<_, _>>() })
                }),
                // Several keywords in one schema object.
                prop::collection::vec(inner, 2..4).prop_map(|parts| {
                    let mut all = Map::new();
                    for part in parts {
                        if let Value::Object(keywords) = part {
                            all.extend(keywords);
                        }
                    }
                    Value::Object(all)
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        #[test]
        fn direct_checks_answer_as_the_schema_does(
            schema in schema(),
            values in prop::collection::vec(value(), 1..6),
        ) {
            let Ok(validator) = pattern_validator_options().build(&schema) else {
                return Ok(());
            };
            let Some(check) = Check::from_schema(&schema) else {
                return Ok(());
            };
            for v in &values {
                prop_assert_eq!(check.eval(v), validator.is_valid(v), "schema {} value {}", schema, v);
            }
        }
    }

    #[test]
    fn what_has_no_direct_check_is_left_to_the_schema() {
        for schema in [
            json!({ "minProperties": 1 }),
            json!({ "items": [{ "type": "string" }] }),
            json!({ "enum": [] }),
            json!({ "type": "float" }),
            json!({ "pattern": "(" }),
            json!({ "minLength": 1.5 }),
            json!({ "properties": { "a": { "format": "email" } } }),
            json!("string"),
        ] {
            assert!(Check::from_schema(&schema).is_none(), "{schema}");
        }
        assert!(Check::from_schema(&json!({ "description": "x" })).is_some());
    }
}
