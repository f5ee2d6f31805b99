//! `signature`: the signature document, its fingerprint, or the fingerprint
//! written into a registry `server.json`.

use std::path::{Path, PathBuf};

use mcp_resolve::emit::signature::{signature_document, to_pretty};
use mcp_resolve_runtime::SignatureDocument;

use super::{FAILURE, OK, read_input, with_server, write_output};

pub(crate) fn run(paths: &[PathBuf], output: Option<&Path>, fingerprint_only: bool) -> u8 {
    with_server(paths, |_, server| {
        let doc = signature_document(server);
        let text = if fingerprint_only {
            format!("{}\n", doc.fingerprint.as_deref().unwrap_or_default())
        } else {
            to_pretty(&doc.to_value())
        };
        write_output(output, &text)
    })
}

/// `signature --server-json`: the fingerprint into a registry `server.json`
/// (and the document to `-o`, if given).
pub(crate) fn server_json(
    paths: &[PathBuf],
    output: Option<&Path>,
    file: &Path,
    url: Option<&str>,
) -> u8 {
    with_server(paths, |_, server| {
        write_server_json(&signature_document(server), output, file, url)
    })
}

fn write_server_json(
    doc: &SignatureDocument,
    output: Option<&Path>,
    file: &Path,
    url: Option<&str>,
) -> u8 {
    let fingerprint = doc.fingerprint.clone().unwrap_or_default();
    let text = match read_input(file) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let updated = match mcp_resolve::registry::with_fingerprint(&text, &fingerprint, url) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("error: `{}` left unchanged: {e}", file.display());
            return FAILURE;
        }
    };
    if let Some(out) = output {
        let code = write_output(Some(out), &to_pretty(&doc.to_value()));
        if code != OK {
            return code;
        }
    }
    let code = write_output(Some(file), &updated);
    if code == OK {
        eprintln!(
            "{}: {fingerprint} ({} bytes)",
            file.display(),
            updated.len()
        );
    }
    code
}
