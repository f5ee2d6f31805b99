//! A signature document read from its text one tool at a time, for `diff`
//! of large documents: the text stays as it is, each tool is parsed on its
//! own (on the machine's cores) into the signature model and its parse
//! tree dropped, and the fingerprint is hashed from the tools' canonical
//! texts in order. No tree of the whole document is ever built: at 10,000
//! tools such a tree and the model beside it took 1.7 GB.

use std::collections::{BTreeMap, HashSet};

use mcp_resolve_host::jcs;
use mcp_resolve_host::signature::{SignatureDocument, SignatureTool};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Containers a tool may nest and still be read here. A whole document
/// read as one tree allows 128 from its root, and a tool starts two below
/// it; deeper tools are left to that reading, which says whether they fit.
pub const MAX_TOOL_NESTING: usize = 100;

/// The tools of the signature document `text`, read on `threads` threads,
/// its fingerprint (when it has one) verified. `None` for a document that
/// is not a valid signature, whose fingerprint does not verify, or with a
/// tool nested past [`MAX_TOOL_NESTING`]: read it whole then, which says
/// exactly what is wrong.
pub fn read_tools(text: &str, threads: usize) -> Option<Vec<SignatureTool>> {
    let members: BTreeMap<String, &RawValue> = serde_json::from_str(text).ok()?;
    let tools: Vec<&RawValue> = serde_json::from_str(members.get("tools")?.get()).ok()?;
    // The document around its tools.
    let mut others = Map::new();
    for (key, raw) in &members {
        if key != "tools" {
            others.insert(key.clone(), serde_json::from_str(raw.get()).ok()?);
        }
    }
    let frame = crate::emit::signature::frame_of(&others);
    SignatureDocument::from_value(&frame).ok()?;
    let declared = match frame.get("fingerprint") {
        None => None,
        Some(Value::String(fingerprint)) => Some(fingerprint.as_str()),
        Some(_) => return None,
    };

    let read = crate::par::map(&tools, threads, None, |_, raw| {
        let value: Value = serde_json::from_str(raw.get()).ok()?;
        if nesting(&value) > MAX_TOOL_NESTING {
            return None;
        }
        let canonical = declared.is_some().then(|| jcs::canonical(&value));
        Some((
            serde_json::from_value::<SignatureTool>(value).ok()?,
            canonical,
        ))
    });
    let mut out = Vec::with_capacity(tools.len());
    let mut canonical = Vec::with_capacity(if declared.is_some() { tools.len() } else { 0 });
    let mut names = HashSet::with_capacity(tools.len());
    for tool in read {
        let (tool, text) = tool.ok()??;
        if !names.insert(tool.name.clone()) {
            return None;
        }
        out.push(tool);
        canonical.extend(text);
    }
    if let Some(declared) = declared {
        let computed = crate::emit::signature::fingerprint_spliced(
            &frame,
            canonical.iter().map(String::as_str),
        )?;
        if computed != declared {
            return None;
        }
    }
    Some(out)
}

/// How many arrays and objects nest in `value`, itself included.
fn nesting(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}
