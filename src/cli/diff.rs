//! `diff`: how a host that pinned the old signature sees the new one.

use std::path::Path;

use mcp_resolve::emit::signature::{signature, to_pretty};
use mcp_resolve_runtime::signature::check_fingerprint;
use serde_json::Value;

use super::{DiffFormat, FAILURE, OK, USAGE, out, read_json, with_server};

/// A signature document from a `.json` file (its fingerprint checked), or
/// the signature of a rules file or directory.
fn load_signature(path: &Path) -> Result<Value, u8> {
    let is_json = path.extension().is_some_and(|e| e == "json");
    if !is_json {
        let mut doc = Err(USAGE);
        let code = with_server(&[path.to_path_buf()], |_, server| {
            doc = Ok(signature(server));
            OK
        });
        return if code == OK { doc } else { Err(code) };
    }
    let doc = read_json(path)?;
    // A document that carries a fingerprint must verify; one without is
    // compared as it is.
    if doc.get("fingerprint").is_some()
        && let Err(e) = check_fingerprint(&doc)
    {
        eprintln!(
            "error: the fingerprint of `{}` does not verify ({e}): the document was changed after it was signed",
            path.display()
        );
        return Err(USAGE);
    }
    Ok(doc)
}

pub(crate) fn run(
    old: &Path,
    new: &Path,
    format: DiffFormat,
    allow_widening: bool,
    allow_undecided: bool,
) -> u8 {
    let (old_doc, new_doc) = match (load_signature(old), load_signature(new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    super::progress::stage("comparing the signatures");
    let diff = match mcp_resolve::diff::diff(&old_doc, &new_doc) {
        Ok(d) => d,
        Err(e) => {
            super::progress::finish();
            eprintln!("error: {e}");
            return USAGE;
        }
    };
    match format {
        DiffFormat::Human => out(&diff.to_human()),
        DiffFormat::Json => out(&to_pretty(&diff.to_json())),
        DiffFormat::Markdown => out(&diff.to_markdown()),
    }
    if (diff.has_widening() && !allow_widening) || (diff.has_undecided() && !allow_undecided) {
        FAILURE
    } else {
        OK
    }
}
