//! `diff`: how a host that pinned the old signature sees the new one.

use std::path::Path;

use mcp_resolve::diff::{Diff, DiffError, diff_texts};
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

/// What [`load_pair`] gives: both documents, or, for two valid `.json`
/// signatures, their comparison already made tool by tool from the text.
enum Loaded {
    Documents(Result<Value, u8>, Result<Value, u8>),
    Compared(Result<Diff, DiffError>),
}

/// Both documents, each a `.json` signature or the signature of rules.
/// Two `.json` files are compared from their text, tool by tool
/// ([`mcp_resolve::diff::diff_texts`]: no tree of either document); when
/// either is not a valid signature they are parsed and verified whole, side
/// by side, their errors printed in order.
fn load_pair(old: &Path, new: &Path) -> Loaded {
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
        return Loaded::Documents(load(old), load(new));
    }
    let (old_text, new_text) = (read_document(old), read_document(new));
    if let (Ok(old_text), Ok(new_text)) = (&old_text, &new_text) {
        super::progress::stage("comparing the signatures");
        if let Some(compared) = diff_texts(old_text, new_text, load_options().jobs) {
            return Loaded::Compared(compared);
        }
    }
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
    Loaded::Documents(report(old_doc), report(new_doc))
}

pub(crate) fn run(
    old: &Path,
    new: &Path,
    format: DiffFormat,
    allow_widening: bool,
    allow_undecided: bool,
) -> u8 {
    let (compared, documents) = match load_pair(old, new) {
        Loaded::Compared(compared) => (compared, None),
        Loaded::Documents(Ok(o), Ok(n)) => {
            super::progress::stage("comparing the signatures");
            let compared = mcp_resolve::diff::diff_with_jobs(&o, &n, load_options().jobs);
            (compared, Some((o, n)))
        }
        Loaded::Documents(Err(code), _) | Loaded::Documents(_, Err(code)) => return code,
    };
    let diff = match compared {
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
    super::left_to_exit(documents);
    if (diff.has_widening() && !allow_widening) || (diff.has_undecided() && !allow_undecided) {
        FAILURE
    } else {
        OK
    }
}

/// `mcp-resolve diff`.
pub(crate) fn main(args: &super::args::DiffArgs) -> u8 {
    run(
        &args.old,
        &args.new,
        args.format,
        args.allow_widening,
        args.allow_undecided,
    )
}
