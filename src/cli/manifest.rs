//! `manifest`: a SEP-3140 signed capability manifest of one server's tools,
//! and the declarations it lists.

use mcp_resolve::emit::signature::signature_document;
use mcp_resolve_host::declarations::{Form, Manifest, declare_tools};
use serde_json::{Value, json};

#[cfg(feature = "proxy")]
use super::keys::discovered_or;
use super::keys::private_keys;
use super::{FAILURE, OK, USAGE, read_json, with_server, write_output};

use super::args::ManifestArgs as Args;

pub(crate) fn run(args: &Args) -> u8 {
    let key = match private_keys(std::slice::from_ref(&args.sign)) {
        Ok(mut keys) => keys.remove(0),
        Err(code) => return code,
    };
    let previous = match args.previous.as_deref().map(previous_manifest) {
        Some(Err(code)) => return code,
        Some(Ok(manifest)) => Some(manifest),
        None => None,
    };
    with_server(&args.paths, |_, server| {
        let doc = signature_document(server);
        let now = mcp_resolve_host::time::signing_time();
        let mut manifest = Manifest::new(&args.server, now, args.expires);
        manifest.publisher = args.publisher.clone();
        let form = Form {
            dialect: args.dialect,
            marked: args.marked,
        };
        let tools = match declare_tools(&doc, form, previous.as_ref(), &mut manifest) {
            Ok(tools) => tools,
            Err(e) => {
                eprintln!("error: {e}");
                return FAILURE;
            }
        };
        if let Some(path) = &args.declarations {
            let listed = pretty(&json!({"tools": tools}));
            let code = write_output(Some(path), &listed);
            if code != OK {
                return code;
            }
        }
        let signed = match args
            .jws_alg
            .as_deref()
            .map(|alg| manifest.sign_as(&key, alg))
        {
            None => manifest.sign(&key),
            Some(Ok(signed)) => signed,
            Some(Err(e)) => {
                eprintln!("error: --jws-alg: {e}");
                return USAGE;
            }
        };
        write_output(args.output.as_deref(), &pretty(&signed))
    })
}

/// The manifest of a document written before (its signature is not
/// checked: it only carries versions forward).
fn previous_manifest(path: &std::path::Path) -> Result<Manifest, u8> {
    let document = read_json(path)?;
    let manifest = document.get("manifest").cloned().unwrap_or(Value::Null);
    serde_json::from_value(manifest).map_err(|e| {
        eprintln!(
            "error: `{}` is not a signed capability manifest: {e}",
            path.display()
        );
        USAGE
    })
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// `verify-manifest`: exit 0 when the manifest verifies (and every listed
/// tool matches it), 1 when it does not, 2 for files that cannot be read.
#[cfg(feature = "proxy")]
pub(crate) fn verify(
    path: &std::path::Path,
    jwks: &[std::path::PathBuf],
    loopback: bool,
    server: &str,
    declarations: Option<&std::path::Path>,
) -> u8 {
    let keys = match discovered_or(jwks, server, loopback) {
        Ok(keys) => keys,
        Err(code) => return code,
    };
    let document = match read_json(path) {
        Ok(document) => document,
        Err(code) => return code,
    };
    let tools = match declarations.map(read_json) {
        Some(Err(code)) => return code,
        Some(Ok(listed)) => match mcp_resolve::import::tools_of(&listed) {
            Ok(tools) => Some(tools.to_vec()),
            Err(e) => {
                eprintln!("error: {}: {e}", declarations.unwrap_or(path).display());
                return USAGE;
            }
        },
        None => None,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let manifest = match mcp_resolve_host::declarations::verify(&document, &keys, server, now) {
        Ok(manifest) => manifest,
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return FAILURE;
        }
    };
    if let Some(tools) = tools {
        let mismatches = manifest.check_tools(&tools);
        for mismatch in &mismatches {
            eprintln!("error: tool `{}`: {}", mismatch.name, mismatch.why);
        }
        if !mismatches.is_empty() {
            return FAILURE;
        }
    }
    println!(
        "{}: {} tools, for {}, valid until {}",
        path.display(),
        manifest.tools.len(),
        manifest.server,
        manifest.expires_at
    );
    OK
}

/// `mcp-resolve verify-manifest`.
#[cfg(feature = "proxy")]
pub(crate) fn verify_main(args: &super::args::VerifyManifestArgs) -> u8 {
    verify(
        &args.manifest,
        &args.jwks,
        args.allow_loopback_jwks,
        &args.server,
        args.declarations.as_deref(),
    )
}
