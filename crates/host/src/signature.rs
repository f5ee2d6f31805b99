//! The signature document (docs/signature.md) as one typed model.
//!
//! The compiler writes it ([`SignatureDocument::finish`] adds the
//! fingerprint), and everything that reads a signature — host verification
//! ([`crate`]), `mcp-resolve diff`, the CLI — parses it with
//! [`SignatureDocument::from_value`]. Verdicts about a document (violations,
//! diffs) are built on this model; the model knows nothing of them.
//!
//! Parsing is forward compatible: members this version does not know are
//! ignored at the top level and kept verbatim on tools
//! ([`SignatureTool::other`]). A fingerprint is always computed over the
//! document as given, never over a re-serialization of the model.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use mcp_resolve_runtime::{Annotations, Dialect, ToolAnnotations};

/// A signature document: seed 003's `signature` result, with
/// `resolvedVariants` on each tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureDocument {
    /// `serverInfo`: the server's name and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<ServerInfo>,
    /// Every tool, in declaration order; names are unique.
    pub tools: Vec<SignatureTool>,
    /// Prompts (none are declared by rules files).
    #[serde(default)]
    pub prompts: Vec<Value>,
    /// Resources (none are declared by rules files).
    #[serde(default)]
    pub resources: Vec<Value>,
    /// Resource templates (none are declared by rules files).
    #[serde(default)]
    pub resource_templates: Vec<Value>,
    /// `sha256:<hex>` of the document's RFC 8785 form without this member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// `serverInfo`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// The server's name.
    pub name: String,
    /// The server's version.
    pub version: String,
}

/// One tool of a signature document: an MCP `Tool` with its complete static
/// annotations, static `requiredScopes`, and `resolvedVariants` when the tool
/// is resolvable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureTool {
    /// The tool's name.
    pub name: String,
    /// The display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The full `inputSchema`.
    pub input_schema: Value,
    /// The `outputSchema`, when the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The static (worst-case) annotations, every hint explicit, with
    /// `ToolAnnotations`' display `title` when the tool has one.
    pub annotations: ToolAnnotations,
    /// The scopes the tool may need; every variant's are among them.
    #[serde(default)]
    pub required_scopes: Vec<String>,
    /// The variants' entries, in order (one per disjunct of a variant's
    /// condition); `None` for a tool that is not resolvable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_variants: Option<Vec<VariantEntry>>,
    /// The SEP-3140 labels the rules give beyond what the hints say
    /// (`dataSensitivity`, `reversible`, `egress`), when they give any:
    /// not part of the tool as listed, read when its declaration is made
    /// ([`crate::declarations`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<Map<String, Value>>,
    /// Every other member of the tool object, verbatim.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One entry of `resolvedVariants`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VariantEntry {
    /// The variant's name (shared by the entries of one variant's disjuncts).
    pub name: String,
    /// When a call lands here.
    pub when: VariantCondition,
    /// The resolved annotations, every hint explicit.
    pub annotations: Annotations,
    /// The scopes a call landing here needs.
    #[serde(default)]
    pub required_scopes: Vec<String>,
}

/// `when` of a variant entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VariantCondition {
    /// Argument name → JSON Schema subschema; every listed argument must be
    /// present and valid, except that `false` means "absent".
    pub argument_patterns: Map<String, Value>,
}

/// A document that is not a signature document.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// Not JSON text.
    #[error("a signature document must be JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// Not an object.
    #[error("a signature document must be a JSON object")]
    NotAnObject,
    /// No `tools` array.
    #[error("a signature document needs a `tools` array")]
    NoTools,
    /// A member of the wrong shape, at `path` (in the tool named `tool`).
    #[error("{path}{}: {source}", tool.as_ref().map(|n| format!(" (tool `{n}`)")).unwrap_or_default())]
    Shape {
        /// Where (`tools[0].requiredScopes[1]`).
        path: String,
        /// The name of the tool it is in, when it is in one that has one.
        tool: Option<String>,
        /// What is wrong there.
        #[source]
        source: serde_json::Error,
    },
    /// Two tools of one name.
    #[error("tool `{0}` is listed twice")]
    DuplicateTool(String),
    /// No `fingerprint` member.
    #[error("the signature document has no `fingerprint`")]
    NoFingerprint,
    /// The fingerprint does not match the content.
    #[error("claims {declared}, content hashes to {actual}")]
    FingerprintMismatch {
        /// The document's `fingerprint`.
        declared: String,
        /// The content's.
        actual: String,
    },
}

impl SignatureDocument {
    /// Reads a document, with the place of the first problem
    /// (`tools[0].requiredScopes[1]: …`) and a check that tool names are unique.
    pub fn from_value(document: &Value) -> Result<Self, ModelError> {
        if !document.is_object() {
            return Err(ModelError::NotAnObject);
        }
        if !document.get("tools").is_some_and(Value::is_array) {
            return Err(ModelError::NoTools);
        }
        let model: SignatureDocument = serde_path_to_error::deserialize(document).map_err(|e| {
            let path = e.path().to_string();
            ModelError::Shape {
                tool: tool_name_at(document, &path).map(str::to_string),
                path,
                source: e.into_inner(),
            }
        })?;
        let mut seen = std::collections::BTreeSet::new();
        for tool in &model.tools {
            if !seen.insert(tool.name.as_str()) {
                return Err(ModelError::DuplicateTool(tool.name.clone()));
            }
        }
        Ok(model)
    }

    /// Parses JSON text with [`SignatureDocument::from_value`].
    pub fn from_json(text: &str) -> Result<Self, ModelError> {
        let value: Value = serde_json::from_str(text).map_err(ModelError::NotJson)?;
        Self::from_value(&value)
    }

    /// The document as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&SignatureTool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Sets `fingerprint` to the hash of the rest of the document.
    pub fn finish(mut self) -> Self {
        self.fingerprint = None;
        self.fingerprint = Some(fingerprint(&self.to_value()));
        self
    }
}

impl SignatureTool {
    /// Whether the tool has `resolvedVariants`.
    pub fn is_resolvable(&self) -> bool {
        self.resolved_variants.is_some()
    }

    /// The entries of `resolvedVariants` (empty when not resolvable).
    pub fn variants(&self) -> &[VariantEntry] {
        self.resolved_variants.as_deref().unwrap_or_default()
    }

    /// The tool as `tools/list` advertises it in `dialect`: its MCP fields
    /// with the static annotations (the four core hints in the extension
    /// dialect, every hint in the others) and, when the tool is resolvable,
    /// the dialect's marker. `requiredScopes` and `resolvedVariants` are
    /// signature-only and left out.
    pub fn list_entry(&self, dialect: Dialect) -> Value {
        let mut map = Map::new();
        map.insert("name".into(), Value::String(self.name.clone()));
        for (key, value) in [("title", &self.title), ("description", &self.description)] {
            if let Some(value) = value {
                map.insert(key.into(), Value::String(value.clone()));
            }
        }
        map.insert("inputSchema".into(), self.input_schema.clone());
        if let Some(output) = &self.output_schema {
            map.insert("outputSchema".into(), output.clone());
        }
        let annotations = match dialect {
            Dialect::Extension => self.annotations.core_json(),
            Dialect::Sep1862 | Dialect::Annotations => self.annotations.complete_json(),
        };
        map.insert("annotations".into(), annotations);
        for (key, value) in &self.other {
            map.insert(key.clone(), value.clone());
        }
        if self.is_resolvable() {
            dialect.mark_resolvable(&mut map);
        }
        Value::Object(map)
    }

    /// A member of the tool object by its wire name, as JSON: the typed
    /// fields and [`SignatureTool::other`] alike.
    pub fn field(&self, name: &str) -> Option<Value> {
        let text = |s: &Option<String>| s.clone().map(Value::String);
        match name {
            "name" => Some(Value::String(self.name.clone())),
            "title" => text(&self.title),
            "description" => text(&self.description),
            "inputSchema" => Some(self.input_schema.clone()),
            "outputSchema" => self.output_schema.clone(),
            _ => self.other.get(name).cloned(),
        }
    }
}

/// The name of the tool a `tools[i]…` path points into.
fn tool_name_at<'a>(document: &'a Value, path: &str) -> Option<&'a str> {
    let rest = path.strip_prefix("tools[")?;
    let index: usize = rest.split(']').next()?.parse().ok()?;
    document.get("tools")?.get(index)?.get("name")?.as_str()
}

/// Top-level members a fingerprint leaves out: the fingerprint itself, and
/// the envelope an MCP result adds around the document when a server sends
/// it (`resultType` under protocol 2026-07-28, result `_meta`). A document
/// on disk has none of the latter, so its fingerprint is the same either way.
pub const NOT_FINGERPRINTED: &[&str] = &["fingerprint", "resultType", "_meta"];

/// The bytes a fingerprint (and a publisher's signature, docs/publishing.md)
/// covers: the RFC 8785 (JCS) form of `document` without the
/// [`NOT_FINGERPRINTED`] members.
pub fn fingerprinted_text(document: &Value) -> String {
    match document {
        // The members by reference: no copy of the document.
        Value::Object(map) => crate::jcs::canonical_members(
            map.iter()
                .filter(|(key, _)| !NOT_FINGERPRINTED.contains(&key.as_str())),
        ),
        other => crate::jcs::canonical(other),
    }
}

/// `sha256:<hex>` of [`fingerprinted_text`]: the fingerprint scheme of
/// docs/signature.md.
pub fn fingerprint(document: &Value) -> String {
    fingerprint_of_parts([fingerprinted_text(document).as_bytes()])
}

/// [`fingerprint`] of a document whose [`fingerprinted_text`] comes in
/// pieces, hashed in order (a writer that canonicalises tool by tool).
pub fn fingerprint_of_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    use sha2::{Digest, Sha256};

    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part);
    }
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Checks that `document` carries a `fingerprint` and that it is the hash
/// of the rest of the document; returns it.
pub fn check_fingerprint(document: &Value) -> Result<&str, ModelError> {
    declared_fingerprint(document)?;
    check_fingerprint_is(document, &fingerprint(document))
}

fn declared_fingerprint(document: &Value) -> Result<&str, ModelError> {
    document
        .get("fingerprint")
        .and_then(Value::as_str)
        .ok_or(ModelError::NoFingerprint)
}

/// [`check_fingerprint`] with the document's fingerprint computed already
/// (`actual`, by [`fingerprint`] or an equivalent that hashes in parts).
pub fn check_fingerprint_is<'a>(document: &'a Value, actual: &str) -> Result<&'a str, ModelError> {
    let declared = declared_fingerprint(document)?;
    if declared == actual {
        Ok(declared)
    } else {
        Err(ModelError::FingerprintMismatch {
            declared: declared.to_string(),
            actual: actual.to_string(),
        })
    }
}

/// A document as written to disk: pretty JSON with keys in RFC 8785 order
/// and one trailing newline, byte-identical for the same document anywhere.
pub fn to_pretty(document: &Value) -> String {
    let mut s = crate::jcs::pretty(document);
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn reads_with_the_place_of_a_problem_and_keeps_unknown_tool_members() {
        let doc = json!({"tools": [{"name": "a", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}, "icons": [{"src": "x"}],
            "requiredScopes": ["s", 1]}]});
        let err = SignatureDocument::from_value(&doc).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("tools[0].requiredScopes[1] (tool `a`): "),
            "{err}"
        );
        let mut ok = doc.clone();
        ok["tools"][0]["requiredScopes"] = json!(["s"]);
        let model = SignatureDocument::from_value(&ok).unwrap();
        assert_eq!(model.tools[0].field("icons"), Some(json!([{"src": "x"}])));
        assert!(!model.tools[0].is_resolvable());
        assert_eq!(
            model.tools[0].annotations.get("destructiveHint"),
            Some(true)
        );
        let mut twice = ok.clone();
        twice["tools"] = json!([ok["tools"][0], ok["tools"][0]]);
        assert!(
            SignatureDocument::from_value(&twice)
                .unwrap_err()
                .to_string()
                .contains("listed twice")
        );
    }

    #[test]
    fn the_result_envelope_is_not_fingerprinted() {
        let doc = json!({"tools": [], "serverInfo": {"name": "s", "version": "1"}});
        let print = fingerprint(&doc);
        let mut sent = doc.clone();
        sent["resultType"] = json!("complete");
        sent["_meta"] = json!({"x": 1});
        sent["fingerprint"] = json!(print.clone());
        assert_eq!(fingerprint(&sent), print);
        assert!(check_fingerprint(&sent).is_ok());
        // Anything else is covered.
        sent["prompts"] = json!([{"name": "p"}]);
        assert!(check_fingerprint(&sent).is_err());
    }
}
