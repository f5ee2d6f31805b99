#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use mcp_resolve_runtime::EXTENSION_ID;

fn doc() -> Value {
    json!({
        "serverInfo": {"name": "s", "version": "1"},
        "tools": [{
            "name": "run",
            "description": "runs",
            "inputSchema": {
                "type": "object",
                "properties": {"mode": {"enum": ["plan", "apply"]}},
                "required": ["mode"]
            },
            "annotations": {"readOnlyHint": false, "destructiveHint": true,
                "idempotentHint": false, "openWorldHint": true, "agencyHint": true,
                "privateHint": true},
            "requiredScopes": ["a", "b"],
            "resolvedVariants": [{
                "name": "plan",
                "when": {"argumentPatterns": {"mode": {"const": "plan"}}},
                "annotations": {"readOnlyHint": true, "destructiveHint": false,
                    "idempotentHint": true, "openWorldHint": false, "agencyHint": false,
                    "privateHint": false},
                "requiredScopes": ["a"]
            }]
        }, {
            "name": "look",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "destructiveHint": false,
                "idempotentHint": true, "openWorldHint": false, "agencyHint": false}
        }]
    })
}

fn sig() -> Signature {
    Signature::from_value(doc()).unwrap()
}

fn kinds(r: Result<(), Violations>) -> Vec<ViolationKind> {
    r.err()
        .map(|v| v.0.into_iter().map(|v| v.kind).collect())
        .unwrap_or_default()
}

fn verify(result: Value) -> Vec<ViolationKind> {
    kinds(verify_resolution(&sig(), "run", &json!({"mode": "plan"}), &result).map(|_| ()))
}

#[test]
fn the_recipe_picks_the_first_matching_entry_or_the_static_set() {
    let s = sig();
    let plan = s.expect("run", &json!({"mode": "plan"})).unwrap();
    assert_eq!(plan.variant().unwrap().name(), "plan");
    assert_eq!(plan.required_scopes(), ["a"]);
    let apply = s.expect("run", &json!({"mode": "apply"})).unwrap();
    assert!(apply.variant().is_none());
    assert_eq!(apply.annotations().get("destructiveHint"), Some(true));
    let refused = s.expect("run", &json!({"mode": "other"})).unwrap_err();
    assert_eq!(refused.kind, ViolationKind::InvalidArguments);
    let not_object = s.expect("run", &json!(["plan"])).unwrap_err();
    assert_eq!(not_object.kind, ViolationKind::InvalidArguments);
    assert_eq!(
        s.expect("nope", &json!({})).unwrap_err().kind,
        ViolationKind::UnknownTool
    );
}

#[test]
fn each_dialect_shape_is_read() {
    let core = json!({"readOnlyHint": true, "destructiveHint": false,
            "idempotentHint": true, "openWorldHint": false});
    assert!(
        verify(json!({"resultType": "complete", "name": "run", "annotations": core})).is_empty()
    );
    let mut complete = core.clone();
    complete["agencyHint"] = json!(false);
    complete["privateHint"] = json!(false);
    complete["title"] = json!("Run");
    assert!(verify(json!({"annotations": complete})).is_empty());
    let tool = json!({"name": "run", "description": "runs",
            "inputSchema": doc()["tools"][0]["inputSchema"],
            "annotations": complete, "resolve": true,
            "securitySchemes": [{"type": "oauth2", "scopes": ["a"]}]});
    assert!(verify(json!({ "tool": tool })).is_empty());
}

#[test]
fn missing_core_hints_are_their_defaults_and_missing_extra_hints_claim_nothing() {
    // Only readOnlyHint given: the other core hints default to their
    // worst values, which the plan variant does not have.
    let got = verify(json!({"annotations": {"readOnlyHint": true}}));
    assert_eq!(got, [ViolationKind::Annotation; 3]);
    // All core hints, no agencyHint/privateHint: fine.
    let got = verify(
        json!({"annotations": {"readOnlyHint": true, "destructiveHint": false,
            "idempotentHint": true, "openWorldHint": false}}),
    );
    assert!(got.is_empty());
}

#[test]
fn wrong_values_undeclared_hints_and_bad_shapes_are_violations() {
    let base = json!({"readOnlyHint": true, "destructiveHint": false,
            "idempotentHint": true, "openWorldHint": false});
    let with = |k: &str, v: Value| {
        let mut a = base.clone();
        a[k] = v;
        json!({ "annotations": a })
    };
    assert_eq!(
        verify(with("privateHint", json!(true))),
        [ViolationKind::Annotation]
    );
    assert_eq!(
        verify(with("sneakyHint", json!(false))),
        [ViolationKind::UndeclaredHint]
    );
    assert_eq!(
        verify(with("readOnlyHint", json!("yes"))),
        [ViolationKind::Malformed]
    );
    for bad in [
        json!("complete"),
        json!({}),
        json!({"annotations": 1}),
        json!({"resultType": "incomplete", "name": "run"}),
        json!({"resultType": "complete", "name": "other", "annotations": base}),
        json!({"resultType": "complete", "name": "run"}),
        json!({"tool": {"name": "other", "annotations": base}}),
        json!({"tool": 1}),
    ] {
        assert_eq!(verify(bad.clone()), [ViolationKind::Malformed], "{bad}");
    }
}

#[test]
fn direction_of_a_lie() {
    // The signature says destructive for `apply`; the server says not.
    let s = sig();
    let r = json!({"annotations": {"readOnlyHint": false, "destructiveHint": false,
            "idempotentHint": false, "openWorldHint": true}});
    let err = verify_resolution(&s, "run", &json!({"mode": "apply"}), &r).unwrap_err();
    assert!(err.0[0].less_conservative, "{err}");
    // The signature says read-only for `plan`; the server says it writes:
    // wrong, but not dangerous.
    let r = json!({"annotations": {"readOnlyHint": false, "destructiveHint": false,
            "idempotentHint": true, "openWorldHint": false}});
    let err = verify_resolution(&s, "run", &json!({"mode": "plan"}), &r).unwrap_err();
    assert!(!err.0[0].less_conservative, "{err}");
    assert!(!err.any_less_conservative());
    assert!(err.to_string().contains("tool `run`"), "{err}");
}

#[test]
fn tools_list_is_a_subset_with_the_same_fields() {
    let s = sig();
    let look = json!({"name": "look", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "destructiveHint": false,
                "idempotentHint": true, "openWorldHint": false}});
    assert!(kinds(s.verify_tools_list(&json!({ "tools": [look] }))).is_empty());
    assert!(kinds(s.verify_tools_list(&json!([]))).is_empty());
    // No annotations at all: core defaults, which `look` does not have.
    let bare = json!({"name": "look", "inputSchema": {"type": "object"}});
    assert_eq!(
        kinds(s.verify_tools_list(&json!([bare]))),
        [ViolationKind::Annotation; 4]
    );
    let mut marked = look.clone();
    marked["_meta"] = json!({ EXTENSION_ID: {"resolvable": true} });
    assert_eq!(
        kinds(s.verify_tools_list(&json!([marked]))),
        [ViolationKind::NotResolvable]
    );
    let mut titled = look.clone();
    titled["title"] = json!("Look");
    assert_eq!(
        kinds(s.verify_tools_list(&json!([titled]))),
        [ViolationKind::ToolChanged]
    );
    assert_eq!(
        kinds(s.verify_tools_list(&json!([look, look]))),
        [ViolationKind::DuplicateTool]
    );
    assert_eq!(
        kinds(s.verify_tools_list(&json!([{"name": "x"}, 3, {}]))),
        [
            ViolationKind::UnknownTool,
            ViolationKind::Malformed,
            ViolationKind::Malformed
        ]
    );
    assert_eq!(
        kinds(s.verify_tools_list(&json!({"items": []}))),
        [ViolationKind::Malformed]
    );
}

#[test]
fn unusable_documents_are_refused_with_the_place() {
    type Edit = fn(&mut Value);
    let cases: [(Edit, &str); 7] = [
        (|d| *d = json!([]), "JSON object"),
        (|d| d["tools"] = json!({}), "`tools` array"),
        (|d| d["tools"][1]["name"] = json!("run"), "listed twice"),
        (
            |d| d["tools"][0]["inputSchema"] = json!({"type": 3}),
            "tools[0]: tool `run`: `inputSchema` does not compile",
        ),
        (
            |d| d["tools"][0]["annotations"]["readOnlyHint"] = json!(1),
            "must be a boolean",
        ),
        (
            |d| {
                d["tools"][0]["resolvedVariants"][0]["when"]["argumentPatterns"]["mode"] =
                    json!({"pattern": "("})
            },
            "resolvedVariants[0]: variant `plan`: `argumentPatterns` do not compile",
        ),
        (
            |d| d["tools"][0]["requiredScopes"] = json!([1]),
            "tools[0].requiredScopes[0] (tool `run`): invalid type: integer `1`, expected a string",
        ),
    ];
    for (edit, message) in cases {
        let mut d = doc();
        edit(&mut d);
        let err = Signature::from_value(d).unwrap_err();
        assert!(err.to_string().contains(message), "{err} / {message}");
    }
    assert!(Signature::from_json("{").is_err());
}

#[test]
fn fingerprints_cover_everything_but_the_fingerprint_field() {
    let mut d = doc();
    let fp = fingerprint(&d);
    assert!(fp.starts_with("sha256:") && fp.len() == 71);
    d["fingerprint"] = json!(fp);
    assert_eq!(fingerprint(&d), fp);
    assert!(Signature::verified(d.clone()).is_ok());
    assert!(Signature::pinned(d.clone(), &fp).is_ok());
    assert!(Signature::pinned(d.clone(), "sha256:00").is_err());
    d["tools"][0]["description"] = json!("runs fast");
    assert!(Signature::verified(d).is_err());
    assert!(Signature::verified(doc()).is_err());
}

/// The messages and their order: problems with what was reported, in the
/// order reported, then wrong values, core hints in wire order (one left
/// out named as the MCP default), then extra hints by name.
#[test]
fn violations_come_in_a_fixed_order_with_their_context() {
    let s = sig();
    // Written in name order: the object's order is the same whether
    // serde_json keeps insertion order (a feature another crate may turn on)
    // or sorts.
    let answer = json!({"annotations": {"agencyHint": true, "destructiveHint": 1,
        "idempotentHint": false, "privateHint": true, "readOnlyHint": true,
        "zetaHint": true}});
    let got = verify_resolution(&s, "run", &json!({"mode": "plan"}), &answer).unwrap_err();
    let messages: Vec<(ViolationKind, &str)> =
        got.0.iter().map(|v| (v.kind, v.message.as_str())).collect();
    assert_eq!(
        messages,
        [
            (
                ViolationKind::Malformed,
                "the resolution (variant `plan`) reports `destructiveHint` as 1, not a boolean"
            ),
            (
                ViolationKind::UndeclaredHint,
                "the resolution (variant `plan`) reports `zetaHint`, which the signature does not declare"
            ),
            (
                ViolationKind::Annotation,
                "the resolution (variant `plan`) has `idempotentHint: false` where the signature declares `true`"
            ),
            (
                ViolationKind::Annotation,
                "the resolution (variant `plan`) has `openWorldHint: true` (left out, so the MCP default) where the signature declares `false`"
            ),
            (
                ViolationKind::Annotation,
                "the resolution (variant `plan`) has `agencyHint: true` where the signature declares `false`"
            ),
            (
                ViolationKind::Annotation,
                "the resolution (variant `plan`) has `privateHint: true` where the signature declares `false`"
            ),
        ]
    );
    let statics = verify_resolution(&s, "run", &json!({"mode": "apply"}), &answer).unwrap_err();
    assert!(
        statics.0[0]
            .message
            .starts_with("the resolution (static annotations) reports"),
        "{statics:?}"
    );
}

#[test]
fn tools_are_found_by_name_in_small_and_large_signatures() {
    for count in [1usize, LINEAR_LOOKUP_MAX, LINEAR_LOOKUP_MAX + 1, 40] {
        let tool = |name: String, read_only: bool| {
            json!({
                "name": name,
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": read_only, "destructiveHint": false,
                    "idempotentHint": true, "openWorldHint": false, "agencyHint": false}
            })
        };
        let tools: Vec<Value> = (0..count)
            .map(|i| tool(format!("t{i}"), i % 2 == 0))
            .collect();
        let sig = Signature::from_value(json!({"tools": tools})).unwrap();
        for i in 0..count {
            let name = format!("t{i}");
            let found = sig.tool(&name).unwrap();
            assert_eq!(found.name(), name);
            assert_eq!(
                found.annotations().read_only,
                i % 2 == 0,
                "{count} tools: {name}"
            );
        }
        assert!(sig.tool("t").is_none());
        assert!(sig.tool(&format!("t{count}")).is_none());
    }
}

#[test]
fn variant_patterns_run_as_direct_tests_with_the_schema_answers() {
    let entry = |patterns: Value| -> SignedVariant {
        let def: VariantEntry = serde_json::from_value(json!({
            "name": "v",
            "when": {"argumentPatterns": patterns},
            "annotations": {"readOnlyHint": true, "destructiveHint": false,
                "idempotentHint": true, "openWorldHint": false}
        }))
        .unwrap();
        SignedVariant::compile(def).unwrap()
    };
    let variants = [
        entry(json!({"mode": {"const": "plan"}, "force": false})),
        entry(
            json!({"opts": {"type": "object", "properties": {"deep": {"minimum": 2}},
            "required": ["deep"]}}),
        ),
        entry(json!({})),
        // No direct check for `minProperties`: the schema decides.
        entry(json!({"opts": {"minProperties": 1}})),
    ];
    assert!(variants[..3].iter().all(SignedVariant::has_direct_checks));
    assert!(!variants[3].has_direct_checks());
    let calls = [
        json!({"mode": "plan"}),
        json!({"mode": "plan", "force": true}),
        json!({"mode": "apply"}),
        json!({"opts": {"deep": 3}}),
        json!({"opts": {"deep": 1}}),
        json!({"opts": {}}),
        json!({"opts": 7}),
        json!({}),
        json!("not an object"),
        json!(null),
    ];
    for (i, variant) in variants.iter().enumerate() {
        for call in &calls {
            assert_eq!(
                variant.matches(call),
                variant.matches_by_schema(call),
                "variant {i}, call {call}"
            );
        }
    }
    assert!(variants[0].matches(&calls[0]) && !variants[0].matches(&calls[1]));
    assert!(variants[1].matches(&calls[3]) && !variants[1].matches(&calls[4]));
    assert!(variants[2].matches(&calls[7]) && !variants[2].matches(&calls[8]));
}
