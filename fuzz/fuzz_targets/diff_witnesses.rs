//! `diff` on pairs of signature documents (JSON, separated by a NUL byte),
//! with the oracle that every widening's witness really is treated
//! differently: the two documents' host-side recipes give it different
//! outcomes (one refuses it, or they resolve it to different annotations or
//! scopes). That holds for a change to a tool's static annotations or scopes
//! too: its witness, when it has one, is a call that falls through to the
//! static set and resolves otherwise under the old document.
//!
//! And a differential oracle for the CLI's path: where `diff_texts` reads
//! both texts tool by tool (no tree of either document), its result is
//! `diff`'s on the documents `serde_json` reads from the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_resolve::diff::{Direction, diff, diff_texts};
use mcp_resolve_host::Signature;
use serde_json::Value;

/// What a document's recipe says of a call: refused, or its annotations
/// and scopes.
fn outcome(signature: &Signature, tool: &str, arguments: &Value) -> Option<(Value, Vec<String>)> {
    let expected = signature.expect(tool, arguments).ok()?;
    Some((
        serde_json::to_value(expected.annotations()).unwrap_or(Value::Null),
        expected.required_scopes().to_vec(),
    ))
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(2, |&b| b == 0);
    let (Some(old_bytes), Some(new_bytes)) = (parts.next(), parts.next()) else {
        return;
    };
    let (Ok(old), Ok(new)) = (
        serde_json::from_slice::<Value>(old_bytes),
        serde_json::from_slice::<Value>(new_bytes),
    ) else {
        return;
    };
    let compared = diff(&old, &new);
    if let (Ok(old_text), Ok(new_text)) = (
        std::str::from_utf8(old_bytes),
        std::str::from_utf8(new_bytes),
    ) && let Some(from_texts) = diff_texts(old_text, new_text, 1)
    {
        assert_eq!(
            from_texts.map_err(|e| e.to_string()),
            compared
                .as_ref()
                .map(Clone::clone)
                .map_err(|e| e.to_string()),
            "diff_texts and diff disagree:\n{old_text}\n---\n{new_text}"
        );
    }
    let Ok(changes) = compared else {
        return;
    };
    let (Ok(old), Ok(new)) = (Signature::from_value(old), Signature::from_value(new)) else {
        return;
    };
    for change in &changes.changes {
        if change.direction != Direction::Widening {
            continue;
        }
        let Some(witness) = &change.witness else {
            continue;
        };
        let (before, after) = (
            outcome(&old, &change.tool, witness),
            outcome(&new, &change.tool, witness),
        );
        assert_ne!(
            before, after,
            "the witness of `{}` ({}) is treated alike by both: {witness}",
            change.kind, change.message
        );
    }
});
