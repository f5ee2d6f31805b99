//! The signature document (SPEC §8) and its fingerprint.

use serde_json::{Map, Value, json};

use crate::diagnostic::{Code, Diagnostic};
use crate::emit::patterns::{MAX_DISJUNCTS, argument_patterns};
use crate::ir::Server;

/// Builds the signature document, fingerprint included. Conditions too large
/// to write as patterns are reported in `diags` (and the document is still built).
pub fn signature(server: &Server, diags: &mut Vec<Diagnostic>) -> Value {
    let hints = &server.hints;
    let tools: Vec<Value> = server
        .tools
        .iter()
        .map(|tool| {
            let mut t = Map::new();
            t.insert("name".into(), json!(tool.name));
            if let Some(title) = &tool.title {
                t.insert("title".into(), json!(title));
            }
            if let Some(description) = &tool.description {
                t.insert("description".into(), json!(description));
            }
            t.insert("inputSchema".into(), tool.input_schema.clone());
            t.insert("annotations".into(), hints.to_json(&tool.annotations));
            t.insert("requiredScopes".into(), json!(tool.required_scopes));
            if tool.resolvable {
                let mut entries = Vec::new();
                for v in &tool.variants {
                    let patterns = match argument_patterns(&v.when) {
                        Ok(p) => p,
                        Err(n) => {
                            diags.push(
                                Diagnostic::new(
                                    Code::PatternTooComplex,
                                    format!(
                                        "the condition of variant `{}` expands to more than {MAX_DISJUNCTS} argument patterns ({n} so far)",
                                        v.name
                                    ),
                                )
                                .at(v.loc.0)
                                .for_tool(&tool.name)
                                .for_variant(&v.name)
                                .with_help("split the variant, or use `enum`/`anyOf` inside one argument's matcher"),
                            );
                            Vec::new()
                        }
                    };
                    for p in patterns {
                        entries.push(json!({
                            "name": v.name,
                            "when": { "argumentPatterns": p },
                            "annotations": hints.to_json(&v.annotations),
                            "requiredScopes": v.scopes(),
                        }));
                    }
                }
                t.insert("resolvedVariants".into(), Value::Array(entries));
            }
            Value::Object(t)
        })
        .collect();
    let mut doc = json!({
        "serverInfo": { "name": server.name, "version": server.version },
        "tools": tools,
        "prompts": [],
        "resources": [],
        "resourceTemplates": [],
    });
    let fp = fingerprint(&doc);
    if let Value::Object(m) = &mut doc {
        m.insert("fingerprint".into(), Value::String(fp));
    }
    doc
}

/// `sha256:<hex>` of the RFC 8785 (JCS) form of `doc` without its `fingerprint`
/// field; the runtime's implementation, so hosts and the compiler agree.
pub use mcp_resolve_runtime::host::fingerprint;

/// The document as written to disk: pretty JSON with keys in JCS order, one
/// trailing newline; byte-identical for the same document on any machine.
pub fn to_pretty(doc: &Value) -> String {
    let canonical = serde_json_canonicalizer::to_string(doc).unwrap_or_default();
    let ordered: Value = serde_json::from_str(&canonical).unwrap_or_else(|_| doc.clone());
    let mut s = serde_json::to_string_pretty(&ordered).unwrap_or_default();
    s.push('\n');
    s
}
