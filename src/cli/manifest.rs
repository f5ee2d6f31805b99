//! `manifest`: a SEP-3140 signed capability manifest of one server's tools,
//! and the declarations it lists.

use std::path::PathBuf;

use mcp_resolve::emit::signature::signature_document;
use mcp_resolve_host::declarations::{Form, Labelling, Manifest, declare_tools};
use mcp_resolve_runtime::Dialect;
use serde_json::{Value, json};

use super::keys::private_keys;
use super::{FAILURE, OK, USAGE, read_json, with_server, write_output};

/// The command line's choices.
pub(crate) struct Args {
    pub(crate) paths: Vec<PathBuf>,
    pub(crate) server: String,
    pub(crate) publisher: Option<String>,
    pub(crate) previous: Option<PathBuf>,
    pub(crate) expires: u64,
    pub(crate) sign: PathBuf,
    pub(crate) output: Option<PathBuf>,
    pub(crate) declarations: Option<PathBuf>,
    pub(crate) dialect: Dialect,
    pub(crate) marked: bool,
}

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
        // The rules do not label beyond MCP's hints yet: the most
        // restrictive sensitivity and reversibility.
        let labels = |_: &str| Labelling::default();
        let tools = match declare_tools(&doc, form, &labels, previous.as_ref(), &mut manifest) {
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
        write_output(args.output.as_deref(), &pretty(&manifest.sign(&key)))
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
