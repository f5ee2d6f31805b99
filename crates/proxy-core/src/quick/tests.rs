use super::*;
use mcp_resolve_runtime::ArgumentValidator;
use proptest::prelude::*;
use serde_json::json;

/// What the whole way says: the params parsed, the validator on the
/// arguments (`{}` when there are none).
fn validator_accepts(schema: &Value, params: &str) -> bool {
    let params: Value = mcp_resolve_protocol::json::from_str(params).unwrap();
    let arguments = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    ArgumentValidator::new(schema).unwrap().is_valid(&arguments)
}

fn quick_accepts(schema: &Value, params: &str) -> Option<bool> {
    let quick = QuickSchema::of(schema)?;
    let call = QuickCall::of(params)?;
    Some(call.accepted_by(&quick))
}

fn file_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "where"},
            "action": {"enum": ["read", "append", "delete"]},
            "count": {"type": "integer"},
            "force": {"type": "boolean"}
        },
        "required": ["path", "action"],
        "additionalProperties": false
    })
}

#[test]
fn a_plain_call_is_accepted_on_its_text() {
    let schema = file_schema();
    for params in [
        r#"{"name":"manage_files","arguments":{"path":"notes.txt","action":"read"}}"#,
        // Written with spaces, as Python's `json.dumps` writes it.
        r#"{"name": "manage_files", "arguments": {"path": "notes.txt", "action": "read"}}"#,
        r#"{"arguments":{"action":"append","path":"a","count":-3,"force":true},"name":"x"}"#,
        // Escapes are decoded before they are compared and counted.
        r#"{"name":"m","arguments":{"path":"\u00e9","action":"r\u0065ad"}}"#,
        // A key written twice keeps its last value, as a tree has it.
        r#"{"name":"m","arguments":{"path":"","action":"read","path":"b"}}"#,
        r#"{"arguments":{"path":"","action":"read"},"name":"m","arguments":{"path":"b","action":"read"}}"#,
    ] {
        assert_eq!(quick_accepts(&schema, params), Some(true), "{params}");
        assert!(validator_accepts(&schema, params), "{params}");
    }
}

#[test]
fn a_schema_as_the_typescript_sdk_writes_it_is_read() {
    // server-filesystem's `read_text_file`, as it lists it.
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "tail": {"description": "If provided, returns only the last N lines of the file", "type": "number"}
        },
        "required": ["path"]
    });
    let params = r#"{"name":"read_text_file","arguments":{"path":"/tmp/notes.txt","tail":3}}"#;
    assert_eq!(quick_accepts(&schema, params), Some(true));
    assert!(validator_accepts(&schema, params));
}

#[test]
fn the_name_is_the_last_written_and_borrowed_when_it_can_be() {
    let call = QuickCall::of(r#"{"name":"a","arguments":{},"name":"b"}"#).unwrap();
    assert!(matches!(call.name, Cow::Borrowed("b")));
    let call = QuickCall::of(r#"{"name":"a\u0062"}"#).unwrap();
    assert_eq!(call.name, "ab");
    assert!(call.arguments.is_none());
}

#[test]
fn what_the_schema_refuses_is_never_accepted() {
    let schema = file_schema();
    for params in [
        r#"{"name":"m","arguments":{"path":"","action":"read"}}"#,
        r#"{"name":"m","arguments":{"path":"a","action":"write"}}"#,
        r#"{"name":"m","arguments":{"path":"a"}}"#,
        r#"{"name":"m","arguments":{"path":"a","action":"read","other":1}}"#,
        r#"{"name":"m","arguments":{"path":1,"action":"read"}}"#,
        r#"{"name":"m","arguments":{"path":"a","action":"read","count":"1"}}"#,
        r#"{"name":"m","arguments":{"path":"a","action":"read","force":null}}"#,
        r#"{"name":"m"}"#,
    ] {
        assert_eq!(quick_accepts(&schema, params), Some(false), "{params}");
        assert!(!validator_accepts(&schema, params), "{params}");
    }
}

#[test]
fn params_it_cannot_read_go_the_whole_way() {
    for params in [
        r#"{"name":"m","arguments":{"path":"a","action":"read"},"_meta":{}}"#,
        r#"{"name":"m","arguments":{"path":{"nested":1}}}"#,
        r#"{"name":"m","arguments":{"count":1.5}}"#,
        r#"{"name":"m","arguments":{"count":1e3}}"#,
        r#"{"name":"m","arguments":{"count":1234567890123456789}}"#,
        // Read as −0.0, not an integer under draft 4.
        r#"{"name":"m","arguments":{"count":-0}}"#,
        r#"{"name":"m","arguments":[]}"#,
        r#"{"name":"m","arguments":null}"#,
        r#"{"name":7}"#,
        r#"{"arguments":{}}"#,
        r#"[]"#,
    ] {
        assert!(QuickCall::of(params).is_none(), "{params}");
    }
}

#[test]
fn schemas_it_cannot_decide_are_not_compiled() {
    for schema in [
        json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}}),
        json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
        json!({"type": "object", "properties": {"a": {"type": "object"}}}),
        json!({"type": "object", "properties": {"a": {"enum": ["x", 1]}}}),
        json!({"type": "object", "properties": {"a": {"minLength": 1.0}}}),
        json!({"type": "object", "properties": {"a": true}}),
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
        json!({"$schema": "https://example.com/my-own-meta-schema", "type": "object"}),
        json!({"$schema": 7, "type": "object"}),
        json!({"type": "object", "$ref": "#/$defs/a", "$defs": {"a": {}}}),
        json!({"type": "array"}),
        json!(true),
    ] {
        assert!(QuickSchema::of(&schema).is_none(), "{schema}");
    }
}

/// A property schema within what the check reads.
fn property() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop::sample::select(vec![
            "string", "integer", "number", "boolean",
        ])),
        prop::option::of(prop::collection::btree_set("[ab\u{e9}]{0,2}", 1..3)),
        prop::option::of(0u64..3),
        prop::option::of(0u64..3),
        any::<bool>(),
    )
        .prop_map(|(kind, choices, min, max, described)| {
            let mut p = serde_json::Map::new();
            if let Some(kind) = kind {
                p.insert("type".into(), json!(kind));
            }
            if let Some(choices) = choices {
                p.insert("enum".into(), json!(choices));
            }
            if let Some(min) = min {
                p.insert("minLength".into(), json!(min));
            }
            if let Some(max) = max {
                p.insert("maxLength".into(), json!(max));
            }
            if described {
                p.insert("description".into(), json!("d"));
            }
            Value::Object(p)
        })
}

fn schema() -> impl Strategy<Value = Value> {
    (
        prop::collection::btree_map("[abc]", property(), 0..4),
        prop::collection::btree_set("[abcd]", 0..3),
        prop::option::of(any::<bool>()),
        prop::option::of(prop::sample::select(DRAFTS.to_vec())),
    )
        .prop_map(|(properties, required, additional, draft)| {
            let mut s = json!({"type": "object", "properties": properties, "required": required});
            if let Some(additional) = additional {
                s["additionalProperties"] = json!(additional);
            }
            if let Some(draft) = draft {
                // Draft 4 requires at least one required name.
                if draft.contains("draft-04") && s["required"] == json!([]) {
                    s["required"] = json!(["a"]);
                }
                s["$schema"] = json!(format!("{draft}#"));
            }
            s
        })
}

/// An argument's value as written: scalars of every kind, written the
/// ways JSON allows (escapes, signs, exponents), and now and then a
/// nested value.
fn argument() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ab\u{e9}]{0,3}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        Just(r#""\u0061""#.to_string()),
        Just(r#""\u00e9\u00e9""#.to_string()),
        (-5i64..5).prop_map(|n| n.to_string()),
        Just("-0".to_string()),
        Just("1.0".to_string()),
        Just("2e0".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        Just("null".to_string()),
        Just(r#"{"a":1}"#.to_string()),
        Just(r#"["a"]"#.to_string()),
    ]
}

fn params() -> impl Strategy<Value = String> {
    prop::option::of(prop::collection::vec(("[abcd]", argument()), 0..5)).prop_map(|arguments| {
        match arguments {
            None => r#"{"name":"t"}"#.to_string(),
            Some(members) => {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(k, v)| format!("{}:{v}", serde_json::to_string(&k).unwrap()))
                    .collect();
                format!(r#"{{"name":"t","arguments":{{{}}}}}"#, members.join(","))
            }
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// The check's "accepted" is the validator's; its "refused" only
    /// sends the call the whole way, where the validator decides.
    #[test]
    fn accepted_only_where_the_validator_accepts(schema in schema(), params in params()) {
        let quick = QuickSchema::of(&schema);
        prop_assert!(quick.is_some(), "every generated schema is within the subset: {}", schema);
        if let Some(accepted) = quick_accepts(&schema, &params) {
            prop_assert_eq!(accepted, validator_accepts(&schema, &params), "{} {}", schema, params);
        }
    }
}
