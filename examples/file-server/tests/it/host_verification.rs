//! A host checking this server against a pinned signature with
//! `mcp_resolve_host`: the server's real `tools/list` and resolve
//! answers (rmcp wiring, every dialect) pass against the signature it
//! publishes, and fail — with the violation a host would log — against
//! pinned signatures the server does not live up to: a variant the server
//! resolves less conservatively, a tool it was not approved for, a changed
//! description, a static tool claimed read-only, a tool served as resolvable
//! that was pinned static.

use file_server::server::resolve;
use mcp_resolve_host::{Signature, ViolationKind, fingerprint, verify_resolution};
use mcp_resolve_runtime::Dialect;
use mcp_resolve_runtime::rmcp::ToolResolution;
use serde_json::{Value, json};

/// The signature document the server answers `signature` with.
fn published() -> Value {
    serde_json::from_str(resolve::SIGNATURE_JSON).unwrap()
}

fn tools_list(dialect: Dialect) -> Value {
    serde_json::to_value(ToolResolution::with_dialect(&resolve::RULES, dialect).list_tools())
        .unwrap()
}

fn answer(dialect: Dialect, name: &str, arguments: &Value) -> Value {
    let params = json!({"name": name, "arguments": arguments});
    ToolResolution::with_dialect(&resolve::RULES, dialect)
        .resolve_params(Some(&params))
        .unwrap()
        .0
}

/// Every call shape the server's tools distinguish.
fn calls() -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    for action in ["read", "append", "replace", "delete"] {
        out.push((
            "manage_files",
            json!({"path": "notes.txt", "action": action, "content": "x"}),
        ));
        out.push((
            "manage_files",
            json!({"path": "notes.txt", "action": action}),
        ));
    }
    for overwrite in [json!(true), json!(false), Value::Null] {
        let mut args = json!({"source": "a.txt", "destination": "b.txt"});
        if !overwrite.is_null() {
            args["overwrite"] = overwrite;
        }
        out.push(("copy_file", args));
    }
    out
}

/// The published signature edited by `edit` and re-fingerprinted: what a
/// host pinned when the server declared something else.
fn pinned_variant_of(edit: impl FnOnce(&mut Value)) -> Signature {
    let mut doc = published();
    edit(&mut doc);
    let fp = fingerprint(&doc);
    doc["fingerprint"] = json!(fp);
    Signature::pinned(doc, &fp).unwrap()
}

fn tool_mut<'a>(doc: &'a mut Value, name: &str) -> &'a mut Value {
    doc["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == name)
        .unwrap()
}

#[test]
fn the_server_matches_the_signature_it_publishes() {
    let doc = published();
    let pin = doc["fingerprint"].as_str().unwrap().to_string();
    assert_eq!(pin, resolve::FINGERPRINT);
    let signature = Signature::pinned(doc, &pin).unwrap();
    let mut variants = std::collections::BTreeSet::new();
    for dialect in Dialect::ALL {
        signature.verify_tools_list(&tools_list(dialect)).unwrap();
        for (name, args) in calls() {
            let result = answer(dialect, name, &args);
            let expected = verify_resolution(&signature, name, &args, &result)
                .unwrap_or_else(|e| panic!("{dialect} {name} {args}: {e}"));
            variants.insert(format!("{name}/{}", expected.variant().unwrap().name()));
        }
    }
    // Every variant of the server was exercised.
    assert_eq!(variants.len(), 6, "{variants:?}");
}

#[test]
fn a_tampered_or_unpinned_document_is_refused() {
    let mut doc = published();
    let pin = doc["fingerprint"].as_str().unwrap().to_string();
    tool_mut(&mut doc, "manage_files")["resolvedVariants"][3]["annotations"]["destructiveHint"] =
        json!(false);
    let err = Signature::verified(doc.clone()).unwrap_err();
    assert!(err.to_string().contains("hashes to"), "{err}");
    doc["fingerprint"] = json!(fingerprint(&doc));
    // Self-consistent again, but not what the host approved.
    let err = Signature::pinned(doc, &pin).unwrap_err();
    assert!(err.to_string().contains("is pinned"), "{err}");
}

#[test]
fn a_server_resolving_less_conservatively_than_pinned_is_caught() {
    // The host approved a signature where appending is destructive; the
    // server answers that it is not.
    let pinned = pinned_variant_of(|doc| {
        tool_mut(doc, "manage_files")["resolvedVariants"][1]["annotations"]["destructiveHint"] =
            json!(true);
    });
    // Static annotations are unchanged, so tools/list passes.
    pinned
        .verify_tools_list(&tools_list(Dialect::Extension))
        .unwrap();
    let args = json!({"path": "notes.txt", "action": "append", "content": "x"});
    for dialect in Dialect::ALL {
        let result = answer(dialect, "manage_files", &args);
        let err = verify_resolution(&pinned, "manage_files", &args, &result).unwrap_err();
        assert_eq!(err.0.len(), 1, "{err}");
        assert_eq!(err.0[0].kind, ViolationKind::Annotation);
        assert!(err.0[0].message.contains("destructiveHint"), "{err}");
        assert!(err.0[0].less_conservative);
    }
    // Calls landing elsewhere are still fine.
    let read = json!({"path": "notes.txt", "action": "read"});
    let result = answer(Dialect::Extension, "manage_files", &read);
    verify_resolution(&pinned, "manage_files", &read, &result).unwrap();
}

#[test]
fn scopes_beyond_the_pinned_ones_are_caught_in_sep1862() {
    let pinned = pinned_variant_of(|doc| {
        tool_mut(doc, "manage_files")["resolvedVariants"][0]["requiredScopes"] = json!([]);
    });
    let args = json!({"path": "notes.txt", "action": "read"});
    let result = answer(Dialect::Sep1862, "manage_files", &args);
    let err = verify_resolution(&pinned, "manage_files", &args, &result).unwrap_err();
    assert_eq!(err.0[0].kind, ViolationKind::Scopes, "{err}");
    assert!(err.0[0].less_conservative);
}

#[test]
fn tools_list_disagreements_are_caught() {
    let list = tools_list(Dialect::Extension);
    let kinds = |pinned: &Signature| -> Vec<(ViolationKind, String, bool)> {
        pinned
            .verify_tools_list(&list)
            .unwrap_err()
            .0
            .into_iter()
            .map(|v| (v.kind, v.tool, v.less_conservative))
            .collect()
    };

    // A tool the host never approved.
    let pinned = pinned_variant_of(|doc| {
        doc["tools"]
            .as_array_mut()
            .unwrap()
            .retain(|t| t["name"] != "copy_file");
    });
    assert_eq!(
        kinds(&pinned),
        [(ViolationKind::UnknownTool, "copy_file".into(), true)]
    );

    // A description other than the approved one.
    let pinned = pinned_variant_of(|doc| {
        tool_mut(doc, "list_directory")["description"] = json!("List a directory.");
    });
    assert_eq!(
        kinds(&pinned),
        [(ViolationKind::ToolChanged, "list_directory".into(), false)]
    );

    // A static tool approved as writing, listed as read-only.
    let pinned = pinned_variant_of(|doc| {
        tool_mut(doc, "list_directory")["annotations"]["readOnlyHint"] = json!(false);
    });
    assert_eq!(
        kinds(&pinned),
        [(ViolationKind::Annotation, "list_directory".into(), true)]
    );

    // A tool approved as static, served as resolvable.
    let pinned = pinned_variant_of(|doc| {
        tool_mut(doc, "copy_file")
            .as_object_mut()
            .unwrap()
            .remove("resolvedVariants");
    });
    assert_eq!(
        kinds(&pinned),
        [(ViolationKind::NotResolvable, "copy_file".into(), true)]
    );
    // Its resolutions are checked against the static set: keeping an existing
    // file is not destructive, where the pinned static set says it may be.
    let args = json!({"source": "a.txt", "destination": "b.txt"});
    let result = answer(Dialect::Extension, "copy_file", &args);
    let err = verify_resolution(&pinned, "copy_file", &args, &result).unwrap_err();
    assert_eq!(err.0[0].kind, ViolationKind::Annotation, "{err}");
    assert!(err.0[0].less_conservative);

    // Listing fewer tools than the signature has is fine.
    let published = Signature::from_value(published()).unwrap();
    let mut fewer = list.clone();
    fewer["tools"].as_array_mut().unwrap().truncate(1);
    published.verify_tools_list(&fewer).unwrap();
}
