//! The signature document (SPEC §8): the IR written as the runtime's typed
//! [`SignatureDocument`], fingerprinted.

use mcp_resolve_host::jcs;
use mcp_resolve_host::signature::{
    ServerInfo, SignatureDocument, SignatureTool, VariantCondition, VariantEntry,
    check_fingerprint_is, fingerprint_of_parts, fingerprinted_text,
};
use serde_json::Value;

use crate::hints::HintTableExt;
use crate::ir::{Server, Tool};
use crate::schema::patterns::argument_patterns;

/// Builds the signature document, fingerprint included. The server must have
/// passed `check`: a condition too large to write as patterns (reported there
/// as `pattern-too-complex`) contributes no entries.
pub fn signature_document(server: &Server) -> SignatureDocument {
    skeleton(
        server,
        server.tools.iter().map(|t| tool_model(server, t)).collect(),
    )
    .finish()
}

/// One tool of the document.
fn tool_model(server: &Server, tool: &Tool) -> SignatureTool {
    let hints = &server.hints;
    let mut t = tool.to_model(hints);
    if tool.resolvable {
        let entries = tool
            .variants
            .iter()
            .flat_map(|v| {
                let annotations = hints.to_annotations(&v.annotations);
                let scopes = v.scopes();
                argument_patterns(&v.when)
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |argument_patterns| VariantEntry {
                        name: v.name.clone(),
                        when: VariantCondition { argument_patterns },
                        annotations: annotations.clone(),
                        required_scopes: scopes.clone(),
                    })
            })
            .collect();
        t.resolved_variants = Some(entries);
    }
    t
}

/// The document around `tools`, without a fingerprint.
fn skeleton(server: &Server, tools: Vec<SignatureTool>) -> SignatureDocument {
    SignatureDocument {
        server_info: Some(ServerInfo {
            name: server.name.clone(),
            version: server.version.clone(),
        }),
        tools,
        prompts: Vec::new(),
        resources: Vec::new(),
        resource_templates: Vec::new(),
        fingerprint: None,
    }
}

/// How a signature document's text is laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// [`to_pretty`]: what `mcp-resolve signature` writes, for people and diffs.
    #[default]
    Pretty,
    /// RFC 8785 (JCS) on one line, fingerprint included, no final newline:
    /// what generated code holds (`signature --canonical` writes it), a
    /// half of the pretty text's size.
    Canonical,
}

/// The signature document as text, and its fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureText {
    /// The document in its [`Layout`], byte for byte, in parts to be written
    /// one after the other: at 10,000 tools the document is 90 MB, and
    /// joining it would hold it twice.
    pub parts: Vec<String>,
    /// Its `fingerprint`.
    pub fingerprint: String,
}

impl SignatureText {
    /// The document as one string.
    pub fn text(&self) -> String {
        self.parts.concat()
    }
}

/// The [`signature`] in `layout` and the fingerprint, built tool by tool on
/// `jobs` threads (0: every core) without a tree of the whole document:
/// RFC 8785 text is compositional (an array's canonical form is its items'
/// canonical forms in order), so each tool is canonicalised (and, for
/// [`Layout::Pretty`], pretty-printed) on its own, the fingerprint's hash is
/// fed the tools' canonical texts in order, and the tools' texts stand
/// between the frame's two halves. The output is the same bytes whatever
/// `jobs` is.
pub fn signature_text(server: &Server, jobs: usize, layout: Layout) -> SignatureText {
    let threads = crate::par::threads(jobs);
    let printed = crate::par::map(&server.tools, threads, None, |i, tool| {
        let value = serde_json::to_value(tool_model(server, tool)).unwrap_or(Value::Null);
        let canonical = jcs::canonical(&value);
        if layout == Layout::Canonical {
            return (canonical, String::new());
        }
        // Printed as it stands in the document: two levels deep, after the
        // comma that ends the tool before it.
        let mut pretty = Vec::with_capacity(8192);
        pretty.extend_from_slice(if i > 0 { b",\n    " } else { b"    " });
        jcs::write_pretty(&value, 2, &mut pretty);
        (canonical, String::from_utf8(pretty).unwrap_or_default())
    });
    let (mut canonical, printed): (Vec<String>, Vec<String>) = printed
        .into_iter()
        .map(|r| r.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        .unzip();

    // The frame: the document with no tools, whose `"tools":[]` (canonical)
    // and `"tools": []` (printed) stand once each, at the top level (a
    // quote inside a string is always escaped, and no other member of the
    // frame has a `tools` key).
    let mut frame = skeleton(server, Vec::new());
    let canonical_tools = canonical.iter().map(String::as_str);
    let Some(fingerprint) = fingerprint_spliced(&frame.to_value(), canonical_tools) else {
        return whole(server, layout);
    };
    frame.fingerprint = Some(fingerprint.clone());
    if layout == Layout::Canonical {
        let frame_text = jcs::canonical(&frame.to_value());
        // Once, as in the fingerprint's frame (the fingerprint cannot spell it).
        let Some((head, tail)) = frame_text
            .split_once("\"tools\":[]")
            .filter(|(_, tail)| !tail.contains("\"tools\":[]"))
        else {
            return whole(server, layout);
        };
        for tool in canonical.iter_mut().skip(1) {
            tool.insert(0, ',');
        }
        let mut parts = Vec::with_capacity(canonical.len() + 2);
        parts.push(format!("{head}\"tools\":["));
        parts.extend(canonical);
        parts.push(format!("]{tail}"));
        return SignatureText { parts, fingerprint };
    }
    drop(canonical);

    let frame_text = to_pretty(&frame.to_value());
    let Some((head, tail)) = frame_text.split_once("\n  \"tools\": []") else {
        return whole(server, layout);
    };
    if printed.is_empty() {
        return SignatureText {
            parts: vec![frame_text],
            fingerprint,
        };
    }
    let mut parts = Vec::with_capacity(printed.len() + 2);
    parts.push(format!("{head}\n  \"tools\": [\n"));
    parts.extend(printed);
    parts.push(format!("\n  ]{tail}"));
    SignatureText { parts, fingerprint }
}

/// The fingerprint of a document whose `tools` array is replaced by
/// `tools`, the RFC 8785 texts of its tools in order: `frame` is the rest of
/// the document with `"tools": []`. RFC 8785 text is compositional, so the
/// hash is fed the frame's text up to its `"tools":[]`, the tools, and the
/// rest. `None` when that marker does not stand exactly once in the frame's
/// text (a member that spells it inside the frame), where only the whole
/// document can be hashed.
pub(crate) fn fingerprint_spliced<'t>(
    frame: &Value,
    tools: impl Iterator<Item = &'t str>,
) -> Option<String> {
    const MARKER: &str = "\"tools\":[]";
    let frame_canonical = fingerprinted_text(frame);
    let (head, tail) = frame_canonical.split_once(MARKER)?;
    if tail.contains(MARKER) {
        return None;
    }
    let mut tools = tools.peekable();
    let opening = if tools.peek().is_some() {
        None
    } else {
        Some(&b"\"tools\":["[..])
    };
    let separators = std::iter::once(&b"\"tools\":["[..]).chain(std::iter::repeat(&b","[..]));
    let tools = separators
        .zip(tools)
        .flat_map(|(sep, canonical)| [sep, canonical.as_bytes()]);
    Some(fingerprint_of_parts(
        std::iter::once(head.as_bytes())
            .chain(opening)
            .chain(tools)
            .chain([&b"]"[..], tail.as_bytes()]),
    ))
}

/// [`fingerprint`] of `document`, its tools canonicalised on `jobs` threads
/// (0: every core): the same string, for a large document in a fraction of
/// the time.
pub fn fingerprint_with_jobs(document: &Value, jobs: usize) -> String {
    let Some((map, tools)) = document
        .as_object()
        .and_then(|map| Some((map, map.get("tools")?.as_array()?)))
    else {
        return fingerprint(document);
    };
    let canonical = crate::par::map(tools, crate::par::threads(jobs), None, |_, tool| {
        jcs::canonical(tool)
    });
    let canonical: Vec<String> = canonical
        .into_iter()
        .map(|r| r.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        .collect();
    fingerprint_spliced(&frame_of(map), canonical.iter().map(String::as_str))
        .unwrap_or_else(|| fingerprint(document))
}

/// A document object with its `tools` array emptied: what is read and
/// hashed around the tools when they are handled one by one.
pub(crate) fn frame_of(document: &serde_json::Map<String, Value>) -> Value {
    let mut frame: serde_json::Map<String, Value> = document
        .iter()
        .filter(|(key, _)| *key != "tools")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    frame.insert("tools".into(), Value::Array(Vec::new()));
    Value::Object(frame)
}

/// [`check_fingerprint`](mcp_resolve_host::signature::check_fingerprint)
/// with [`fingerprint_with_jobs`]: the document's declared fingerprint when
/// it is the hash of the rest of the document.
pub fn check_fingerprint_with_jobs(
    document: &Value,
    jobs: usize,
) -> Result<&str, mcp_resolve_host::signature::ModelError> {
    if document
        .get("fingerprint")
        .and_then(Value::as_str)
        .is_none()
    {
        // The runtime's own error, before any hashing.
        return mcp_resolve_host::signature::check_fingerprint(document);
    }
    check_fingerprint_is(document, &fingerprint_with_jobs(document, jobs))
}

/// The slow path [`signature_text`] stands for (kept for a frame it cannot
/// split, which the types rule out).
fn whole(server: &Server, layout: Layout) -> SignatureText {
    let doc = signature_document(server);
    let value = doc.to_value();
    SignatureText {
        fingerprint: doc.fingerprint.clone().unwrap_or_default(),
        parts: vec![match layout {
            Layout::Pretty => to_pretty(&value),
            Layout::Canonical => jcs::canonical(&value),
        }],
    }
}

/// The signature document as JSON, fingerprint included.
pub fn signature(server: &Server) -> Value {
    signature_document(server).to_value()
}

pub use mcp_resolve_host::signature::{fingerprint, to_pretty};
