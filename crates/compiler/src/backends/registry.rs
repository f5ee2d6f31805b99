//! The registry's `server.json`: where a publisher puts the signature's
//! fingerprint so hosts can find and pin it.
//!
//! The MCP registry keeps only `_meta["io.modelcontextprotocol.registry/publisher-provided"]`
//! of a server's `_meta` and rejects documents over 4096 bytes. mcp-resolve
//! writes one entry there, `"io.github.mcp-resolve/signature": {"fingerprint",
//! "url"?, "signatures"?}` — `signatures` being the publishers' detached JWS
//! with their keys' `kid` (`[{"kid", "jws"}]`) — and leaves every other key,
//! and the order of keys, as it was (the order needs the `preserve-order`
//! feature, on by default; without it serde_json writes keys sorted).

use serde_json::{Map, Value};

/// The `_meta` key the registry keeps.
pub const PUBLISHER_PROVIDED: &str = "io.modelcontextprotocol.registry/publisher-provided";

/// The entry mcp-resolve owns inside it.
pub const SIGNATURE_KEY: &str = "io.github.mcp-resolve/signature";

/// The largest `server.json` the registry accepts, in bytes.
pub const MAX_SERVER_JSON_BYTES: usize = 4096;

/// Why a `server.json` cannot be updated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The text is not JSON.
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// The document is not an object.
    #[error("not a JSON object")]
    NotAnObject,
    /// Its `_meta` is not an object.
    #[error("`_meta` is not an object")]
    MetaNotAnObject,
    /// Its publisher-provided metadata is not an object.
    #[error("`_meta[\"{PUBLISHER_PROVIDED}\"]` is not an object")]
    PublisherProvidedNotAnObject,
    /// The updated document, this many bytes, is over the registry's limit.
    #[error(
        "the updated document would be {0} bytes; the registry rejects server.json over {MAX_SERVER_JSON_BYTES} bytes"
    )]
    TooLarge(usize),
}

/// Returns the text of `server_json` with the fingerprint (and `url`) written
/// in; an error says why the document cannot be updated.
/// `signatures` (`(kid, detached compact JWS)`, one per signer) replaces the
/// entry's; `None` keeps those already there while the fingerprint is the
/// same (they sign the same document), and drops them otherwise.
pub fn with_fingerprint(
    server_json: &str,
    fingerprint: &str,
    url: Option<&str>,
    signatures: Option<&[(String, String)]>,
) -> Result<String, RegistryError> {
    let mut doc: Value = serde_json::from_str(server_json).map_err(RegistryError::NotJson)?;
    let Value::Object(root) = &mut doc else {
        return Err(RegistryError::NotAnObject);
    };
    let meta = root
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(meta) = meta else {
        return Err(RegistryError::MetaNotAnObject);
    };
    let provided = meta
        .entry(PUBLISHER_PROVIDED)
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(provided) = provided else {
        return Err(RegistryError::PublisherProvidedNotAnObject);
    };
    let mut entry = Map::new();
    entry.insert("fingerprint".into(), Value::String(fingerprint.to_string()));
    // A URL given before is kept unless a new one is given.
    let old_url = provided
        .get(SIGNATURE_KEY)
        .and_then(|e| e.get("url"))
        .cloned();
    if let Some(url) = url.map(|u| Value::String(u.to_string())).or(old_url) {
        entry.insert("url".into(), url);
    }
    let old = provided.get(SIGNATURE_KEY);
    let signed = match signatures {
        Some(signatures) => Some(Value::Array(
            signatures
                .iter()
                .map(|(kid, jws)| {
                    let mut signature = Map::new();
                    signature.insert("kid".into(), Value::String(kid.clone()));
                    signature.insert("jws".into(), Value::String(jws.clone()));
                    Value::Object(signature)
                })
                .collect(),
        )),
        None => old
            .filter(|e| e.get("fingerprint").and_then(Value::as_str) == Some(fingerprint))
            .and_then(|e| e.get("signatures"))
            .cloned(),
    };
    if let Some(signed) = signed {
        entry.insert("signatures".into(), signed);
    }
    provided.insert(SIGNATURE_KEY.into(), Value::Object(entry));
    // Only `_meta` changes: the rest of the user's file stays byte for byte
    // (indentation, key order, line endings). Written whole, pretty, only
    // when the splice would not read back as the updated document.
    let text = match splice_meta(server_json, &doc) {
        Some(text) => text,
        None => {
            let mut text = serde_json::to_string_pretty(&doc).map_err(RegistryError::NotJson)?;
            text.push('\n');
            text
        }
    };
    if text.len() > MAX_SERVER_JSON_BYTES {
        return Err(RegistryError::TooLarge(text.len()));
    }
    Ok(text)
}

/// `original` with its top-level `_meta` replaced by `updated`'s (added
/// after the last member when it had none), laid out as the file is: the
/// member's own indentation, the file's indentation unit and line endings.
/// `None` when the result would not read back as `updated`.
fn splice_meta(original: &str, updated: &Value) -> Option<String> {
    use serde_json::value::RawValue;

    let meta = updated.get("_meta")?;
    let members: std::collections::HashMap<String, &RawValue> =
        serde_json::from_str(original).ok()?;
    let newline = if original.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let base = original.as_ptr() as usize;
    let at = |raw: &RawValue| raw.get().as_ptr() as usize - base;
    // The indentation of the line a member's value starts on.
    let indent_at = |offset: usize| {
        let line = original[..offset].rfind('\n').map_or(0, |i| i + 1);
        let text = &original[line..offset];
        text[..text.len() - text.trim_start().len()].to_string()
    };
    // The file's indentation unit: the first member's, else two spaces.
    let first = members.values().map(|raw| at(raw)).min();
    let unit = first.map(indent_at).filter(|u| !u.is_empty());
    let unit = unit.unwrap_or_else(|| "  ".to_string());
    let pretty = |value: &Value, indent: &str| -> Option<String> {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        serde::Serialize::serialize(value, &mut serializer).ok()?;
        let text = String::from_utf8(out).ok()?;
        Some(text.replace('\n', &format!("{newline}{indent}")))
    };
    let spliced = match members.get("_meta") {
        Some(raw) => {
            let start = at(raw);
            let end = start + raw.get().len();
            let indent = indent_at(start);
            format!(
                "{}{}{}",
                &original[..start],
                pretty(meta, &indent)?,
                &original[end..]
            )
        }
        None => {
            let close = original.trim_end().len().checked_sub(1)?;
            let before = original[..close].trim_end();
            let member = format!("{newline}{unit}\"_meta\": {}", pretty(meta, &unit)?);
            if before.ends_with('{') {
                format!("{before}{member}{newline}{}", &original[close..])
            } else {
                format!("{before},{member}{}", &original[before.len()..])
            }
        }
    };
    (serde_json::from_str::<Value>(&spliced).ok()? == *updated).then_some(spliced)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn writes_the_entry_and_keeps_everything_else() {
        let input = r#"{"name":"io.github.x/y","version":"1.0.0","_meta":{"other":1,"io.modelcontextprotocol.registry/publisher-provided":{"tool":"z"}},"packages":[]}"#;
        let out = with_fingerprint(input, "sha256:ab", Some("https://x/sig.json"), None).unwrap();
        let doc: Value = serde_json::from_str(&out).unwrap();
        let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
        if cfg!(feature = "preserve-order") {
            assert_eq!(keys, ["name", "version", "_meta", "packages"]);
        } else {
            assert_eq!(keys, ["_meta", "name", "packages", "version"]);
        }
        assert_eq!(doc["_meta"]["other"], 1);
        let provided = &doc["_meta"][PUBLISHER_PROVIDED];
        assert_eq!(provided["tool"], "z");
        assert_eq!(
            provided[SIGNATURE_KEY],
            serde_json::json!({"fingerprint": "sha256:ab", "url": "https://x/sig.json"})
        );
        // Again without a URL: the URL stays.
        let again = with_fingerprint(&out, "sha256:cd", None, None).unwrap();
        let doc: Value = serde_json::from_str(&again).unwrap();
        assert_eq!(
            doc["_meta"][PUBLISHER_PROVIDED][SIGNATURE_KEY]["url"],
            "https://x/sig.json"
        );
    }

    #[test]
    fn only_meta_changes_and_the_rest_stays_as_written() {
        let input = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/registry/server.json"
        ))
        .unwrap();
        let out = with_fingerprint(&input, "sha256:ab", None, None).unwrap();
        // Up to `_meta` and after it, byte for byte; the compact objects
        // elsewhere stay compact.
        let meta = input.find("\"_meta\"").unwrap();
        assert_eq!(out[..meta], input[..meta]);
        assert!(out.ends_with("  }\n}\n"), "{out}");
        assert!(out.contains(r#"      "buildInfo": {"#), "{out}");
        assert!(
            out.contains(
                r#"{ "type": "streamable-http", "url": "https://files.example.com/mcp" }"#
            )
        );
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            doc["_meta"][PUBLISHER_PROVIDED][SIGNATURE_KEY]["fingerprint"],
            "sha256:ab"
        );
        assert_eq!(doc["_meta"][PUBLISHER_PROVIDED]["tool"], "release-pipeline");
        // Writing the same fingerprint again changes nothing.
        assert_eq!(
            with_fingerprint(&out, "sha256:ab", None, None).unwrap(),
            out
        );
    }

    #[test]
    fn a_meta_is_added_in_the_files_own_layout() {
        // Four-space indentation and CRLF line endings, no `_meta` yet.
        let input = "{\r\n    \"name\": \"io.github.x/y\",\r\n    \"packages\": [ 1, 2 ]\r\n}\r\n";
        let out = with_fingerprint(input, "sha256:ab", None, None).unwrap();
        assert!(out.starts_with("{\r\n    \"name\": \"io.github.x/y\",\r\n    \"packages\": [ 1, 2 ],\r\n    \"_meta\": {\r\n        \"io.modelcontextprotocol"), "{out:?}");
        assert!(out.ends_with("    }\r\n}\r\n"), "{out:?}");
        assert!(!out.replace("\r\n", "").contains('\n'), "{out:?}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            doc["_meta"][PUBLISHER_PROVIDED][SIGNATURE_KEY]["fingerprint"],
            "sha256:ab"
        );
        // An empty object gets one member.
        let out = with_fingerprint("{}", "sha256:ab", None, None).unwrap();
        let doc: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(doc.as_object().unwrap().len(), 1);
        assert!(out.starts_with("{\n  \"_meta\": {"), "{out:?}");
    }

    #[test]
    fn refuses_what_it_cannot_update() {
        for (bad, why) in [
            ("[]", "not a JSON object"),
            ("{", "not JSON"),
            (r#"{"_meta": 3}"#, "`_meta` is not an object"),
            (
                r#"{"_meta": {"io.modelcontextprotocol.registry/publisher-provided": []}}"#,
                "is not an object",
            ),
        ] {
            let err = with_fingerprint(bad, "sha256:ab", None, None)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let big = format!(r#"{{"description":"{}"}}"#, "x".repeat(4000));
        let err = with_fingerprint(&big, "sha256:ab", None, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("over 4096 bytes"), "{err}");
    }

    #[test]
    fn signatures_are_kept_for_the_same_fingerprint_only() {
        let input = r#"{"name":"io.github.x/y"}"#;
        let signed = [("kid1".to_string(), "h..s".to_string())];
        let out = with_fingerprint(input, "sha256:ab", None, Some(&signed)).unwrap();
        let entry = |text: &str| {
            let doc: Value = serde_json::from_str(text).unwrap();
            doc["_meta"][PUBLISHER_PROVIDED][SIGNATURE_KEY].clone()
        };
        assert_eq!(entry(&out)["signatures"][0]["kid"], "kid1");
        let same = with_fingerprint(&out, "sha256:ab", None, None).unwrap();
        assert_eq!(entry(&same)["signatures"], entry(&out)["signatures"]);
        let other = with_fingerprint(&out, "sha256:cd", None, None).unwrap();
        assert!(entry(&other).get("signatures").is_none(), "{other}");
    }
}
