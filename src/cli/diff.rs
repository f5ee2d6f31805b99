//! `diff`: how a host that pinned the old signature sees the new one.

use std::path::Path;

use mcp_resolve::emit::signature::{check_fingerprint_with_jobs, signature, to_pretty};
use serde_json::Value;

use super::{DiffFormat, FAILURE, OK, USAGE, load_options, out, read_document, with_server};

fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
}

/// The signature of a rules file or directory (diagnostics printed).
fn signature_of_rules(path: &Path) -> Result<Value, u8> {
    let mut doc = Err(USAGE);
    let code = with_server(&[path.to_path_buf()], |_, server| {
        doc = Ok(signature(server));
        OK
    });
    if code == OK { doc } else { Err(code) }
}

/// A signature document from the text of a `.json` file: JSON, and when it
/// carries a fingerprint, one that verifies (one without is compared as it
/// is). The error is the message to print.
fn parse_signature(path: &Path, text: &str) -> Result<Value, String> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| format!("error: `{}` is not JSON: {e}", path.display()))?;
    if doc.get("fingerprint").is_some()
        && let Err(e) = check_fingerprint_with_jobs(&doc, load_options().jobs)
    {
        return Err(format!(
            "error: the fingerprint of `{}` does not verify ({e}): the document was changed after it was signed",
            path.display()
        ));
    }
    Ok(doc)
}

/// Both documents, each a `.json` signature or the signature of rules.
/// Two `.json` files are parsed and verified side by side (for large
/// signatures that is most of the work), their errors printed in order.
fn load_pair(old: &Path, new: &Path) -> (Result<Value, u8>, Result<Value, u8>) {
    if !(is_json(old) && is_json(new)) {
        let load = |path: &Path| {
            if is_json(path) {
                let text = read_document(path)?;
                parse_signature(path, &text).map_err(|message| {
                    eprintln!("{message}");
                    USAGE
                })
            } else {
                signature_of_rules(path)
            }
        };
        return (load(old), load(new));
    }
    let (old_text, new_text) = (read_document(old), read_document(new));
    let parse = |path: &Path, text: &Result<String, u8>| match text {
        Ok(text) => parse_signature(path, text).map_err(Ok),
        Err(code) => Err(Err(*code)),
    };
    let (old_doc, new_doc) = std::thread::scope(|scope| {
        let old_doc = scope.spawn(|| parse(old, &old_text));
        let new_doc = parse(new, &new_text);
        let old_doc = old_doc
            .join()
            .unwrap_or_else(|_| Err(Ok(format!("error: cannot read `{}`", old.display()))));
        (old_doc, new_doc)
    });
    let report = |loaded: Result<Value, Result<String, u8>>| {
        loaded.map_err(|e| match e {
            Ok(message) => {
                eprintln!("{message}");
                USAGE
            }
            Err(code) => code,
        })
    };
    (report(old_doc), report(new_doc))
}

pub(crate) fn run(
    old: &Path,
    new: &Path,
    format: DiffFormat,
    allow_widening: bool,
    allow_undecided: bool,
) -> u8 {
    let (old_doc, new_doc) = match load_pair(old, new) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    super::progress::stage("comparing the signatures");
    let diff = match mcp_resolve::diff::diff_with_jobs(&old_doc, &new_doc, load_options().jobs) {
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
    super::left_to_exit((old_doc, new_doc));
    if (diff.has_widening() && !allow_widening) || (diff.has_undecided() && !allow_undecided) {
        FAILURE
    } else {
        OK
    }
}
