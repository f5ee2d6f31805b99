//! Input-schema changes at every depth, static changes and their witnesses, diffs tool by tool.

use super::*;

/// Schema mutations at every depth of every subschema: each with the
/// direction it must be reported in.
fn schema_mutants(doc: &Value) -> Vec<Mutant> {
    let mut out = Vec::new();
    for (ti, t) in doc["tools"].as_array().unwrap().iter().enumerate() {
        let name = t["name"].as_str().unwrap().to_string();
        walk_schema(
            doc,
            &format!("/tools/{ti}/inputSchema"),
            &t["inputSchema"],
            &name,
            &mut out,
        );
    }
    out
}

fn walk_schema(doc: &Value, ptr: &str, schema: &Value, tool: &str, out: &mut Vec<Mutant>) {
    let Some(s) = schema.as_object() else { return };
    let mut push = |what: String, widening: bool, f: Box<dyn FnOnce(&mut Value)>| {
        out.push(mutate(doc, format!("{tool} {ptr}: {what}"), widening, f))
    };
    let at = |p: &str| p.to_string();
    if let Some(values) = s.get("enum").and_then(Value::as_array)
        && !values.iter().any(Value::is_boolean)
    {
        let extra = if values.iter().all(Value::is_string) {
            json!("mutant-value")
        } else {
            json!(987_654_321)
        };
        let p = at(ptr);
        push(
            "enum gains a value".into(),
            true,
            Box::new(move |d| {
                d.pointer_mut(&p).unwrap()["enum"]
                    .as_array_mut()
                    .unwrap()
                    .push(extra)
            }),
        );
        if values.len() >= 2 {
            let p = at(ptr);
            push(
                "enum loses a value".into(),
                false,
                Box::new(move |d| {
                    d.pointer_mut(&p).unwrap()["enum"]
                        .as_array_mut()
                        .unwrap()
                        .pop();
                }),
            );
        }
    }
    if let Some(values) = s.get("enum").and_then(Value::as_array)
        && values == &[json!(true)]
    {
        let p = at(ptr);
        push(
            "enum [true] dropped".into(),
            true,
            Box::new(move |d| {
                d.pointer_mut(&p)
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .remove("enum");
            }),
        );
    }
    if let Some(c) = s.get("const").and_then(Value::as_str) {
        let c = c.to_string();
        let p = at(ptr);
        push(
            "const becomes an enum of two".into(),
            true,
            Box::new(move |d| {
                let m = d.pointer_mut(&p).unwrap().as_object_mut().unwrap();
                m.remove("const");
                m.insert("enum".into(), json!([c, "mutant-value"]));
            }),
        );
    }
    if s.get("type") == Some(&json!("string")) && !s.contains_key("enum") {
        let p = at(ptr);
        push(
            "type string becomes integer".into(),
            true,
            Box::new(move |d| d.pointer_mut(&p).unwrap()["type"] = json!("integer")),
        );
    }
    if let Some(re) = s.get("pattern").and_then(Value::as_str) {
        let (wide, narrow) = (format!("(?:{re})|^mutant"), format!("(?:{re}).*mutant"));
        let p = at(ptr);
        push(
            "pattern widened".into(),
            true,
            Box::new(move |d| d.pointer_mut(&p).unwrap()["pattern"] = json!(wide)),
        );
        let p = at(ptr);
        push(
            "pattern narrowed".into(),
            false,
            Box::new(move |d| d.pointer_mut(&p).unwrap()["pattern"] = json!(narrow)),
        );
    }
    // Lower bounds widen when lowered, upper bounds when raised.
    for (key, lower) in [
        ("minimum", true),
        ("exclusiveMinimum", true),
        ("maximum", false),
        ("exclusiveMaximum", false),
        ("minLength", true),
        ("maxLength", false),
        ("minItems", true),
        ("maxItems", false),
    ] {
        let Some(n) = s.get(key).and_then(Value::as_i64) else {
            continue;
        };
        let counts = key.ends_with("Length") || key.ends_with("Items");
        for (delta, widening) in [(-1i64, lower), (1, !lower)] {
            if counts && n + delta < 0 {
                continue;
            }
            let p = at(ptr);
            push(
                format!("{key} {n} -> {}", n + delta),
                widening,
                Box::new(move |d| d.pointer_mut(&p).unwrap()[key] = json!(n + delta)),
            );
        }
    }
    if let Some(required) = s.get("required").and_then(Value::as_array)
        && !required.is_empty()
    {
        let p = at(ptr);
        push(
            "required loses its last name".into(),
            true,
            Box::new(move |d| {
                d.pointer_mut(&p).unwrap()["required"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
        );
        let optional = s
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|props| {
                props
                    .keys()
                    .find(|k| !required.contains(&json!(k)))
                    .cloned()
            });
        if let Some(optional) = optional {
            let p = at(ptr);
            push(
                format!("`{optional}` becomes required"),
                false,
                Box::new(move |d| {
                    d.pointer_mut(&p).unwrap()["required"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!(optional));
                }),
            );
        }
    }
    if s.get("additionalProperties") == Some(&json!(false)) {
        let p = at(ptr);
        push(
            "additionalProperties: false dropped".into(),
            true,
            Box::new(move |d| {
                d.pointer_mut(&p)
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .remove("additionalProperties");
            }),
        );
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = s.get(key).and_then(Value::as_array)
            && branches.len() >= 2
        {
            let p = at(ptr);
            push(
                format!("{key} loses its last branch"),
                false,
                Box::new(move |d| {
                    d.pointer_mut(&p).unwrap()[key]
                        .as_array_mut()
                        .unwrap()
                        .pop();
                }),
            );
        }
    }
    // Deeper.
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (k, sub) in props {
            let token = k.replace('~', "~0").replace('/', "~1");
            walk_schema(doc, &format!("{ptr}/properties/{token}"), sub, tool, out);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = s.get(key).filter(|v| v.is_object()) {
            walk_schema(doc, &format!("{ptr}/{key}"), sub, tool, out);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for (i, sub) in s
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            walk_schema(doc, &format!("{ptr}/{key}/{i}"), sub, tool, out);
        }
    }
}

/// The documents the schema mutation test runs on: every bundled signature
/// and the schema zoo.
fn schema_documents() -> Vec<(String, Value)> {
    let mut docs = bundled();
    let path = std::path::PathBuf::from("tests/fixtures/diff/zoo.yaml");
    let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
    assert!(!project.has_errors());
    let server = project.single_server().unwrap();
    docs.push((
        "zoo".into(),
        mcp_resolve::emit::signature::signature(server),
    ));
    docs
}

#[test]
fn every_schema_mutation_at_every_depth_is_reported_and_never_as_no_effect() {
    let (mut total, mut caught) = (0, 0);
    let mut missed = Vec::new();
    for (file, doc) in schema_documents() {
        for m in schema_mutants(&doc) {
            total += 1;
            let d = diff(&doc, &m.doc).unwrap();
            let label = format!("{file}: {}", m.label);
            if d.changes.iter().any(|c| c.direction == Direction::Neutral) {
                missed.push(format!("{label}: reported as no effect: {:?}", d.changes));
                continue;
            }
            let ok = if m.widening {
                d.has_widening()
            } else {
                !d.has_widening()
                    && d.changes
                        .iter()
                        .any(|c| c.direction == Direction::Narrowing)
            };
            if ok {
                caught += 1;
            } else {
                missed.push(format!("{label}: {:?}", d.changes));
            }
            if m.widening {
                check_witnesses(&doc, &m.doc, &label);
            }
        }
    }
    println!("schema mutation score: {caught}/{total}");
    assert!(total >= 60, "too few schema mutants: {total}");
    assert!(
        missed.is_empty(),
        "{} of {total} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

#[test]
fn a_static_scope_change_has_a_witness_that_falls_through_to_the_static_set() {
    // Found by the diff_witnesses fuzz target: the witness was the first
    // call admitted, which a variant caught (it resolves alike under both).
    let rules = |scopes: &str| {
        format!(
            "version: 1\nserver: {{ name: s, version: \"1\" }}\ntools:\n  - name: t\n    inputSchema:\n      type: object\n      properties: {{ action: {{ type: string, enum: [read, write] }} }}\n      required: [action]\n    annotations: {{ readOnlyHint: false }}\n    requiredScopes: [{scopes}]\n    variants:\n      - name: reading\n        when: {{ action: read }}\n        annotations: {{ readOnlyHint: true }}\n        requiredScopes: [files.read]\n"
        )
    };
    let doc = |scopes: &str| {
        let project = mcp_resolve::load_str("t.yaml", &rules(scopes));
        assert!(!project.has_errors(), "{:?}", project.diagnostics);
        mcp_resolve::emit::signature::signature(&project.servers[0])
    };
    let (old, new) = (
        doc("files.read, files.write"),
        doc("files.read, files.write, admin"),
    );
    let d = diff(&old, &new).unwrap();
    let change = d
        .changes
        .iter()
        .find(|c| c.kind == "static-scope")
        .expect("the added scope is reported");
    assert_eq!(change.direction, Direction::Widening);
    assert_eq!(
        change.witness,
        Some(json!({"action": "write"})),
        "{change:?}"
    );
    check_witnesses(&old, &new, "static scope");
}

#[test]
fn a_static_change_no_call_feels_differently_has_no_witness_that_claims_one() {
    // Found by the diff_witnesses fuzz target: the new document drops the
    // variant `admin` and adds its scope to the static set, so the one
    // call that now falls through (`{"action": "purge"}`) resolves as
    // before. A witness must be a call the two documents treat differently;
    // where none falls through to the static set, the change is the
    // listing's alone and has none.
    let tool = |scopes: serde_json::Value, variants: serde_json::Value| {
        json!({"tools": [{"name": "t",
            "inputSchema": {"type": "object",
                "properties": {"action": {"enum": ["read", "purge", "list"]}},
                "required": ["action"]},
            "annotations": {"readOnlyHint": false, "destructiveHint": true},
            "requiredScopes": scopes,
            "resolvedVariants": variants}]})
    };
    let reading = json!({"name": "reading", "annotations": {"readOnlyHint": true},
        "requiredScopes": ["files.read"],
        "when": {"argumentPatterns": {"action": {"enum": ["read", "list"]}}}});
    let admin = json!({"name": "admin",
        "annotations": {"readOnlyHint": false, "destructiveHint": true},
        "requiredScopes": ["files.read", "admin"],
        "when": {"argumentPatterns": {"action": {"const": "purge"}}}});
    let static_scope_change = |old: &Value, new: &Value| {
        diff(old, new)
            .unwrap()
            .changes
            .into_iter()
            .find(|c| c.kind == "static-scope")
            .expect("the added scope is reported")
    };
    let old = tool(json!(["files.read"]), json!([reading, admin]));
    let new = tool(json!(["admin", "files.read"]), json!([reading]));
    let change = static_scope_change(&old, &new);
    assert_eq!(change.direction, Direction::Widening);
    assert_eq!(change.witness, None, "{change:?}");

    // With a call that falls through and resolves differently, that call
    // is the witness: here `list` leaves the variant and needs `admin`.
    let reading_only = json!({"name": "reading", "annotations": {"readOnlyHint": true},
        "requiredScopes": ["files.read"],
        "when": {"argumentPatterns": {"action": {"const": "read"}}}});
    let new = tool(json!(["admin", "files.read"]), json!([reading_only]));
    let change = static_scope_change(&old, &new);
    assert_eq!(
        change.witness,
        Some(json!({"action": "list"})),
        "{change:?}"
    );
    check_witnesses(&old, &new, "static scope, list");
}

/// Tools are compared on several threads and only where they differ: the
/// report is the same for any number of threads, a tool both documents
/// declare alike is not compiled (its schema is not looked at), and a tool
/// that changed and does not compile is an error that says where.
#[test]
fn tools_compare_in_parallel_and_only_where_they_differ() {
    use mcp_resolve::diff::diff_with_jobs;
    for (name, doc) in bundled() {
        for m in mutants(&doc).into_iter().take(12) {
            let one = diff_with_jobs(&doc, &m.doc, 1).unwrap().to_json();
            for jobs in [2, 5] {
                assert_eq!(
                    diff_with_jobs(&doc, &m.doc, jobs).unwrap().to_json(),
                    one,
                    "{name} {}: {jobs} threads",
                    m.label
                );
            }
        }
    }
    let worst = json!({"readOnlyHint": false, "destructiveHint": true,
                       "idempotentHint": false, "openWorldHint": true});
    let broken = json!({"name": "b", "inputSchema": {"type": 7}, "annotations": worst});
    let good = json!({"name": "a", "inputSchema": {"type": "object"}, "annotations": worst});
    let old = json!({"tools": [good, broken]});
    let mut new = old.clone();
    new["tools"][0]["annotations"]["readOnlyHint"] = json!(true);
    let d = diff(&old, &new).unwrap();
    assert!(d.changes.iter().all(|c| c.tool == "a"), "{:?}", d.changes);
    assert!(d.has_widening());
    new["tools"][1]["description"] = json!("changed, but not for calls");
    assert_eq!(diff(&old, &new).unwrap().to_json(), d.to_json());
    new["tools"][1]["inputSchema"]["minProperties"] = json!(1);
    let e = diff(&old, &new).unwrap_err().to_string();
    assert!(e.starts_with("the old document: tools[1]: tool `b`"), "{e}");
    assert!(e.contains("inputSchema"), "{e}");
}

/// `diff_texts` (the CLI's path for two `.json` signatures: each read tool by
/// tool from its text) gives exactly `diff`'s result on every bundled
/// signature against each of its mutants, and leaves every document that is
/// not a valid signature, or whose fingerprint does not verify, to `diff`
/// (which says what is wrong).
#[test]
fn diffs_of_texts_read_tool_by_tool_are_the_documents_diffs() {
    use mcp_resolve::diff::diff_texts;
    let text = |doc: &Value| serde_json::to_string_pretty(doc).unwrap();
    let mut compared = 0;
    for (file, doc) in bundled() {
        for m in mutants(&doc).into_iter().take(12) {
            // Mutants carry the original's fingerprint, which no longer
            // verifies: without it both readings compare them.
            let mut mutant = m.doc.clone();
            mutant.as_object_mut().unwrap().remove("fingerprint");
            let want = diff(&doc, &mutant).unwrap();
            let got = diff_texts(&text(&doc), &text(&mutant), 0)
                .unwrap_or_else(|| panic!("{file}: {}: not read from text", m.label))
                .unwrap();
            assert_eq!(got.to_json(), want.to_json(), "{file}: {}", m.label);
            compared += 1;
            // With the original's fingerprint the mutant is refused.
            assert!(diff_texts(&text(&doc), &text(&m.doc), 0).is_none() || m.doc == doc);
        }
    }
    assert!(compared > 50, "{compared}");

    let ok = text(&json!({"tools": []}));
    for bad in [
        "not json".to_string(),
        "[]".into(),
        text(&json!({})),
        text(&json!({"tools": {}})),
        text(&json!({"tools": [{}]})),
        text(&json!({"tools": [{"name": "a"}, {"name": "a"}]})),
        text(&json!({"tools": [{"name": "a", "inputSchema": {"type": 7}}]})),
        text(&json!({"tools": [], "fingerprint": 7})),
        text(&json!({"tools": [], "fingerprint": "sha256:00"})),
        text(&json!({"tools": [], "serverInfo": 7})),
        format!("{ok} trailing"),
    ] {
        assert!(diff_texts(&ok, &bad, 0).is_none(), "{bad}");
        assert!(diff_texts(&bad, &ok, 0).is_none(), "{bad}");
    }
    // A tool nested past what is read tool by tool is left to the whole reading.
    let mut deep = json!("x");
    for _ in 0..110 {
        deep = json!([deep]);
    }
    let deep = text(
        &json!({"tools": [{"name": "a", "description": "d", "inputSchema": {"type": "object", "default": deep}}]}),
    );
    assert!(diff_texts(&ok, &deep, 0).is_none());
}
