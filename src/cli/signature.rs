//! `signature`: the signature document, its fingerprint, or the fingerprint
//! written into a registry `server.json`.

use std::path::{Path, PathBuf};

use mcp_resolve::emit::signature::{Layout, signature_document, signature_text, to_pretty};
use mcp_resolve_host::SignatureDocument;

use super::keys::{private_keys, with_extension};
use super::{FAILURE, OK, read_input, with_server, write_output, write_output_parts};

pub(crate) fn run(
    paths: &[PathBuf],
    output: Option<&Path>,
    fingerprint_only: bool,
    canonical: bool,
) -> u8 {
    with_server(paths, |_, server| {
        super::progress::stage(format!(
            "building the signature of {} tools",
            server.tools.len()
        ));
        let layout = if canonical {
            Layout::Canonical
        } else {
            Layout::Pretty
        };
        let mut signed = signature_text(server, super::load_options().jobs, layout);
        if fingerprint_only {
            write_output(output, &format!("{}\n", signed.fingerprint))
        } else {
            if canonical {
                // A text file ends with a newline; `SIGNATURE_JSON` is the line.
                signed.parts.push("\n".into());
            }
            write_output_parts(output, &signed.parts)
        }
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
        write_server_json(&signature_document(server), output, file, url, None)
    })
}

fn write_server_json(
    doc: &SignatureDocument,
    output: Option<&Path>,
    file: &Path,
    url: Option<&str>,
    signatures: Option<&[(String, String)]>,
) -> u8 {
    let fingerprint = doc.fingerprint.clone().unwrap_or_default();
    let text = match read_input(file) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let updated =
        match mcp_resolve::registry::with_fingerprint(&text, &fingerprint, url, signatures) {
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

/// `signature --sign KEY… -o FILE`: the document to `FILE`, and a detached
/// JWS per key to `FILE.jws` over exactly the bytes its fingerprint covers.
/// Signatures already in `FILE.jws` from other keys are kept when `FILE`
/// is unchanged (co-signers sign the same document at different times), and
/// dropped, with a note, when it changed. With `server_json`, the
/// fingerprint and every signature go into the registry `server.json`.
fn sign_document(
    paths: &[PathBuf],
    output: &Path,
    keys: &[PathBuf],
    server_json: Option<(&Path, Option<&str>)>,
) -> u8 {
    let keys = match private_keys(keys) {
        Ok(keys) => keys,
        Err(code) => return code,
    };
    with_server(paths, |_, server| {
        let doc = signature_document(server);
        let value = doc.to_value();
        let text = to_pretty(&value);
        let jws_path = with_extension(output, "jws");
        let unchanged = std::fs::read_to_string(output).is_ok_and(|before| before == text);
        let before = std::fs::read_to_string(&jws_path).unwrap_or_default();
        let ours: Vec<&str> = keys.iter().map(|k| k.public().kid()).collect();
        let mut lines: Vec<String> = Vec::new();
        for line in before.lines().filter(|l| !l.trim().is_empty()) {
            let kid = mcp_resolve_host::jws::kid_of(line);
            if kid.as_deref().is_some_and(|kid| ours.contains(&kid)) {
                continue; // signed again below
            }
            if unchanged {
                lines.push(line.trim().to_string());
            } else {
                eprintln!(
                    "note: `{}` had a signature by key `{}` over another document; it is dropped",
                    jws_path.display(),
                    kid.as_deref().unwrap_or("?")
                );
            }
        }
        let payload = mcp_resolve_host::signature::fingerprinted_text(&value);
        let at = mcp_resolve_host::time::signing_time();
        for key in &keys {
            lines.push(key.sign_detached(payload.as_bytes(), at));
        }
        let code = write_output(Some(output), &text);
        if code != OK {
            return code;
        }
        let code = write_output(Some(&jws_path), &format!("{}\n", lines.join("\n")));
        if code != OK {
            return code;
        }
        for key in &keys {
            eprintln!(
                "{}: signed by key `{}` ({})",
                jws_path.display(),
                key.public().kid(),
                key.public().algorithm().name()
            );
        }
        let signed: Vec<(String, String)> = lines
            .iter()
            .map(|jws| {
                let kid = mcp_resolve_host::jws::kid_of(jws).unwrap_or_default();
                (kid, jws.clone())
            })
            .collect();
        match server_json {
            Some((file, url)) => write_server_json(&doc, None, file, url, Some(&signed)),
            None => OK,
        }
    })
}

/// `mcp-resolve signature`: the document, its fingerprint into a
/// `server.json`, or the document signed.
pub(crate) fn main(args: super::args::SignatureArgs) -> u8 {
    let super::args::SignatureArgs {
        paths,
        output,
        fingerprint_only,
        canonical,
        server_json,
        signature_url,
        sign,
    } = args;
    match (server_json, output) {
        (server_json, Some(output)) if !sign.is_empty() => sign_document(
            &paths,
            &output,
            &sign,
            server_json
                .as_deref()
                .map(|f| (f, signature_url.as_deref())),
        ),
        (Some(file), output) => {
            self::server_json(&paths, output.as_deref(), &file, signature_url.as_deref())
        }
        (None, output) => run(&paths, output.as_deref(), fingerprint_only, canonical),
    }
}
