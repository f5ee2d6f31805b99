//! SEP-3140 from the host's side (`--trust`): the core's verifier
//! (`mcp_resolve_proxy_core::trust`) with its TOFU store read from and
//! written to its file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_resolve_host::jws::PublicKey;
use serde_json::Value;

pub use mcp_resolve_proxy_core::trust::*;

/// Why a TOFU store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// It cannot be read.
    #[error("cannot read the trust store `{path}`: {source}")]
    Read {
        /// The store.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a store.
    #[error("the trust store `{path}` is not a JSON object of servers and key ids: {why}")]
    Malformed {
        /// The store.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// A verifier for the server whose canonical URI is `audience`, under
/// `policy`, with `keys`; a TOFU store is read now (one that does not
/// exist yet is empty).
pub fn open(
    policy: Policy,
    keys: Vec<PublicKey>,
    audience: String,
) -> Result<Verifier, StoreError> {
    let remembered = match &policy {
        Policy::Tofu(path) => read_store(path)?,
        _ => BTreeMap::new(),
    };
    Ok(Verifier::new(policy, keys, audience, remembered))
}

/// Remembers a first key (`record`, from the verification that first saw
/// it) in `verifier`'s TOFU store: the file is written whole (to a
/// temporary file, then renamed over it), the servers it held kept.
pub fn remember(verifier: &Verifier, record: &Value) -> std::io::Result<()> {
    let Policy::Tofu(path) = verifier.policy() else {
        return Ok(());
    };
    let Some(store) = verifier.store_with(read_store(path).unwrap_or_default(), record) else {
        return Ok(());
    };
    let text = serde_json::to_string_pretty(&store).unwrap_or_default() + "\n";
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}

/// A TOFU store's contents: `{server: kid}`; empty when the file does not
/// exist.
fn read_store(path: &Path) -> Result<BTreeMap<String, String>, StoreError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => {
            return Err(StoreError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    serde_json::from_str(&text).map_err(|e| StoreError::Malformed {
        path: path.to_owned(),
        why: e.to_string(),
    })
}
