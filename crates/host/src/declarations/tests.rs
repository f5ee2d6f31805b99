//! The declarations' unit tests: hashes, labels, manifests, versions.

use super::*;
use crate::jws::Algorithm;

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}, "version": "1",
           "annotations": {"readOnlyHint": true}})
}

#[test]
fn times_read_back_what_is_written() {
    for seconds in [0, 951_782_400, 1_800_000_000, 4_102_444_800] {
        assert_eq!(parse_rfc3339(&seconds_rfc3339(seconds)), Some(seconds));
    }
    assert_eq!(parse_rfc3339("2026-07-27T12:00:00Z"), Some(1_785_153_600));
    assert_eq!(
        parse_rfc3339("2026-07-27T14:00:00.5+02:00"),
        Some(1_785_153_600)
    );
    for bad in [
        "2026-07-27 12:00:00Z",
        "2026-02-30T00:00:00Z",
        "2026-07-27T12:00:00",
        "2026-07-27T24:00:00Z",
        "2026-07-27T12:00:00.Z",
        "2026-07-27T12:00:00+2:00",
        "",
    ] {
        assert_eq!(parse_rfc3339(bad), None, "{bad}");
    }
}

#[test]
fn the_hash_leaves_out_only_itself() {
    let mut t = tool("a").as_object().unwrap().clone();
    let hash = content_hash(&t);
    t.insert(CONTENT_HASH.into(), json!(hash.clone()));
    assert_eq!(content_hash(&t), hash);
    t.insert("description".into(), json!("x"));
    assert_ne!(content_hash(&t), hash);
    // Key order and number spelling do not matter (RFC 8785).
    let a: Value = serde_json::from_str(r#"{"b": 1.0, "a": [1e2]}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"a": [100], "b": 1}"#).unwrap();
    assert_eq!(
        content_hash(a.as_object().unwrap()),
        content_hash(b.as_object().unwrap())
    );
}

#[test]
fn labels_follow_the_annotations_and_unknown_values_restrict() {
    let labels = |a: Value| Trust::from_annotations(a.as_object().unwrap(), false, None, None);
    let read = labels(json!({"readOnlyHint": true, "openWorldHint": false}));
    assert_eq!((read.effect, read.egress), (Effect::ReadOnly, Egress::None));
    assert!(read.idempotent && read.reversible);
    assert_eq!(read.data_sensitivity, DataSensitivity::Secret);
    // MCP's defaults: destructive, open world.
    assert_eq!(labels(json!({})), Trust::MOST_RESTRICTIVE);
    let write = labels(json!({"destructiveHint": false, "idempotentHint": true}));
    assert_eq!((write.effect, write.idempotent), (Effect::WritesData, true));
    let internal =
        Trust::from_annotations(&Map::new(), true, Some(DataSensitivity::Public), Some(true));
    assert_eq!(internal.egress, Egress::Internal);
    assert_eq!(Trust::read(&read.to_value()), read);
    let odd = json!({"effect": "read-mostly", "egress": "none", "reversible": "yes"});
    let read_back = Trust::read(&odd);
    assert_eq!(read_back.effect, Effect::Destructive);
    assert_eq!(read_back.egress, Egress::None);
    assert!(!read_back.reversible);
    assert_eq!(
        serde_json::to_value(read).unwrap(),
        json!({"effect": "read-only", "egress": "none", "dataSensitivity": "secret",
               "reversible": true, "idempotent": true})
    );
}

#[test]
fn a_signed_manifest_verifies_and_every_tampering_is_refused() {
    let server = "https://mcp.example.com/mcp";
    let now = 1_800_000_000;
    let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    let keys = [key.public().clone()];
    let mut manifest = Manifest::new(server, now, 3_600);
    manifest.publisher = Some("https://publisher.example/mcp-publisher.json".into());
    let tools = [tool("a"), tool("b")];
    for t in &tools {
        manifest.add_tool(t.as_object().unwrap()).unwrap();
    }
    assert!(matches!(
        manifest.add_tool(tools[0].as_object().unwrap()),
        Err(ManifestError::Duplicate { .. })
    ));
    let signed = manifest.sign(&key);
    // The header is `alg` (as the SEP's examples name it) and `kid`;
    // RFC 9864's name when asked for, and nothing that is not the key's.
    let header = |signed: &Value| -> Value {
        let header = signed["signature"]
            .as_str()
            .unwrap()
            .split('.')
            .next()
            .unwrap();
        serde_json::from_slice(&B64.decode(header).unwrap()).unwrap()
    };
    assert_eq!(
        header(&signed),
        json!({"alg": "EdDSA", "kid": key.public().kid()})
    );
    let rfc9864 = manifest.sign_as(&key, "Ed25519").unwrap();
    assert_eq!(header(&rfc9864)["alg"], "Ed25519");
    assert_eq!(
        verify(&rfc9864, &keys, server, now + 10).unwrap(),
        verify(&signed, &keys, server, now + 10).unwrap()
    );
    assert!(manifest.sign_as(&key, "ES256").is_err());
    assert!(manifest.sign_as(&key, "none").is_err());
    let read = verify(&signed, &keys, server, now + 10).unwrap();
    assert_eq!(read.nonce.len(), 22);
    assert_eq!(
        Manifest {
            nonce: String::new(),
            ..read.clone()
        },
        manifest
    );
    // The same manifest, signed again: the same document, byte for byte.
    assert_eq!(manifest.sign(&key), signed);
    assert!(read.check_tools(&tools).is_empty());

    let refused = |doc: &Value, server: &str, at: u64| verify(doc, &keys, server, at).unwrap_err();
    assert!(matches!(
        refused(&signed, "https://other/mcp", now),
        ManifestError::WrongServer { .. }
    ));
    assert!(matches!(
        refused(&signed, server, now + 3_600),
        ManifestError::Expired(_)
    ));
    assert!(matches!(
        refused(&signed, server, now - 301),
        ManifestError::NotYetValid(_)
    ));
    let mut tampered = signed.clone();
    tampered["manifest"]["tools"][0]["version"] = json!("2");
    assert!(matches!(
        refused(&tampered, server, now),
        ManifestError::Signature(JwsError::BadSignature(_))
    ));
    let other = PrivateKey::generate(Algorithm::Ed25519).unwrap();
    assert!(matches!(
        verify(&signed, &[other.public().clone()], server, now),
        Err(ManifestError::Signature(JwsError::UnknownKey(_)))
    ));
    let mut unsigned = signed.clone();
    unsigned["signature"] = json!("eyJhbGciOiJub25lIn0..");
    assert!(matches!(
        refused(&unsigned, server, now),
        ManifestError::Signature(JwsError::AlgNone)
    ));
    assert!(matches!(
        refused(&json!({"manifest": {}}), server, now),
        ManifestError::Malformed(_)
    ));

    // Names listed twice, signed: refused after the signature.
    let mut twice = manifest.clone();
    twice.tools.push(twice.tools[0].clone());
    assert!(matches!(
        refused(&twice.sign(&key), server, now),
        ManifestError::Duplicate { kind: "tool", .. }
    ));

    // A served tool that changed, or is not listed, or claims another hash.
    let mut changed = tools.to_vec();
    changed[0]["description"] = json!("now it deletes");
    changed[1]["contentHash"] = json!("sha256-AAAA");
    let extra = tool("c");
    changed.push(extra);
    let mismatches = read.check_tools(&changed);
    let names: Vec<&str> = mismatches.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"], "{mismatches:?}");
}

fn document(description: &str) -> SignatureDocument {
    SignatureDocument::from_value(&json!({"tools": [
        {"name": "manage", "description": description,
         "inputSchema": {"type": "object", "properties": {"action": {"enum": ["read", "delete"]}}},
         "annotations": {"readOnlyHint": false, "destructiveHint": true,
                         "idempotentHint": false, "openWorldHint": false},
         "resolvedVariants": [{"name": "read",
            "when": {"argumentPatterns": {"action": {"const": "read"}}},
            "annotations": {"readOnlyHint": true, "destructiveHint": false,
                            "idempotentHint": true, "openWorldHint": false}},
           {"name": "read",
            "when": {"argumentPatterns": {"action": {"enum": ["read"]}}},
            "annotations": {"readOnlyHint": true, "destructiveHint": false,
                            "idempotentHint": true, "openWorldHint": false}}]},
        {"name": "fetch", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true, "openWorldHint": true}}
    ]}))
    .unwrap()
}

#[test]
fn declarations_carry_labels_versions_and_hashes() {
    let server = "https://mcp.example.com/mcp";
    let plain = Form {
        dialect: Dialect::Extension,
        marked: false,
    };
    let marked = Form {
        dialect: Dialect::Extension,
        marked: true,
    };
    let declare = |doc: &SignatureDocument, form: Form, previous: Option<&Manifest>| {
        let mut manifest = Manifest::new(server, 1_800_000_000, 60);
        let tools = declare_tools(doc, form, previous, &mut manifest).unwrap();
        (tools, manifest)
    };
    let (tools, first) = declare(&document("Reads or deletes."), plain, None);
    assert!(first.check_tools(&tools).is_empty());
    assert_eq!(tools[0]["trust"]["effect"], "destructive");
    assert_eq!(tools[0]["trust"]["egress"], "none");
    assert_eq!(tools[1]["trust"]["effect"], "read-only");
    assert_eq!(tools[1]["trust"]["egress"], "external");
    assert!(tools[0].get("_meta").is_none(), "unmarked: {}", tools[0]);
    assert_eq!(
        tools
            .iter()
            .map(|t| t["version"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["1", "1"]
    );
    // Unchanged: the same versions and hashes. Changed: the next version.
    let (again, same) = declare(&document("Reads or deletes."), plain, Some(&first));
    assert_eq!(again, tools);
    assert_eq!(same.tools, first.tools);
    let (changed, _) = declare(&document("Now it also wipes."), plain, Some(&first));
    assert_eq!(changed[0]["version"], "2");
    assert_eq!(changed[1]["version"], "1");
    let mut odd = first.clone();
    odd.tools[0].version = "v1".into();
    let mut manifest = Manifest::new(server, 1_800_000_000, 60);
    let refused = declare_tools(&document("x"), plain, Some(&odd), &mut manifest);
    assert!(matches!(refused, Err(ManifestError::Malformed(_))));
    // Marked: each variant's labels under the extension's `_meta`.
    let (tools, manifest) = declare(&document("Reads or deletes."), marked, None);
    let ours = &tools[0]["_meta"][EXTENSION_ID];
    assert_eq!(ours["resolvable"], true);
    assert_eq!(ours["variants"][0]["name"], "read");
    assert_eq!(ours["variants"][0]["trust"]["effect"], "read-only");
    assert!(manifest.check_tools(&tools).is_empty());
    assert_ne!(manifest.tools[0].content_hash, first.tools[0].content_hash);
}

#[test]
fn the_rules_trust_labels_narrow_what_the_hints_leave_most_restrictive() {
    let mut doc = document("Reads or deletes.");
    doc.tools[1].trust = Some(
        json!({"dataSensitivity": "internal", "egress": "internal"})
            .as_object()
            .unwrap()
            .clone(),
    );
    assert_eq!(Labelling::of(&doc.tools[0]), Labelling::default());
    let labelling = Labelling::of(&doc.tools[1]);
    assert!(labelling.internal);
    assert_eq!(labelling.sensitivity, Some(DataSensitivity::Internal));
    assert_eq!(labelling.reversible, None);
    let mut manifest = Manifest::new("https://mcp.example.com/mcp", 1_800_000_000, 60);
    let form = Form {
        dialect: Dialect::Extension,
        marked: true,
    };
    let tools = declare_tools(&doc, form, None, &mut manifest).unwrap();
    let trust = &tools[1]["trust"];
    assert_eq!(trust["dataSensitivity"], "internal");
    assert_eq!(trust["egress"], "internal");
    // A read is reversible unless the rules say otherwise.
    assert_eq!(trust["reversible"], true);
    // A closed world has no egress, whatever the rules say of it.
    assert_eq!(tools[0]["trust"]["egress"], "none");
    assert_eq!(tools[0]["trust"]["dataSensitivity"], "secret");
    // A variant's labels: its own hints, the tool's other labels.
    let variants = &tools[0]["_meta"][EXTENSION_ID]["variants"];
    let names: Vec<&str> = variants
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    let mut unique = names.clone();
    unique.dedup();
    assert_eq!(names, unique, "one entry per variant: {variants}");
    // A value outside the vocabularies is left out: most restrictive.
    doc.tools[1].trust = Some(
        json!({"dataSensitivity": "top"})
            .as_object()
            .unwrap()
            .clone(),
    );
    assert_eq!(Labelling::of(&doc.tools[1]).sensitivity, None);
}
