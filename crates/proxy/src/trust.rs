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
    mcp_resolve_protocol::json::from_str(&text).map_err(|e| StoreError::Malformed {
        path: path.to_owned(),
        why: e.to_string(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use mcp_resolve_host::declarations::{self, Manifest};
    use mcp_resolve_host::jws::{Algorithm, PrivateKey};
    use serde_json::json;

    use super::*;

    const SERVER_URI: &str = "https://notes.example/mcp";
    const NOW: u64 = 1_800_000_000;

    /// What the session hands back for a first key (`Effect::Trust`) is
    /// written to the store, the servers it held kept, and read by a later
    /// proxy; a store that is not one is refused at start.
    #[test]
    fn a_first_key_is_written_to_the_store_and_read_by_the_next_proxy() {
        let dir = std::env::temp_dir().join(format!("mcp-resolve-tofu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = dir.join("trust.json");
        std::fs::write(&store, r#"{"https://other.example/mcp": "k0"}"#).unwrap();
        let key = PrivateKey::generate(Algorithm::Ed25519).unwrap();
        let keys = vec![key.public().clone()];
        let verifier = open(Policy::Tofu(store.clone()), keys.clone(), SERVER_URI.into()).unwrap();
        let record = json!({"server": SERVER_URI, "kid": key.public().kid()});
        remember(&verifier, &record).unwrap();
        let written: BTreeMap<String, String> =
            mcp_resolve_protocol::json::from_str(&std::fs::read_to_string(&store).unwrap())
                .unwrap();
        assert_eq!(
            written,
            BTreeMap::from([
                ("https://other.example/mcp".to_owned(), "k0".to_owned()),
                (SERVER_URI.to_owned(), key.public().kid().to_owned()),
            ])
        );
        assert!(!store.with_extension("tmp").exists());
        // The next proxy reads it: another key for the server is refused.
        let other = PrivateKey::generate(Algorithm::Ed25519).unwrap();
        let next = open(
            Policy::Tofu(store.clone()),
            vec![key.public().clone(), other.public().clone()],
            SERVER_URI.into(),
        )
        .unwrap();
        let mut manifest = Manifest::new(SERVER_URI, NOW, 3600);
        let tool = json!({"name": "read_note", "inputSchema": {"type": "object"}});
        declarations::seal(vec![tool], None, &mut manifest).unwrap();
        let refused = next.verify(&manifest.sign(&other), NOW + 1);
        assert!(
            matches!(refused, Err(Refused::KeyChanged { .. })),
            "{:?}",
            refused.err()
        );
        // A verifier of another policy keeps no store.
        let pinned = open(Policy::Pinned, keys, SERVER_URI.into()).unwrap();
        remember(&pinned, &json!({"server": "x", "kid": "y"})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&store).unwrap(),
            serde_json::to_string_pretty(&written).unwrap() + "\n"
        );
        // A store that is not one is refused at start.
        std::fs::write(&store, "[]").unwrap();
        let refused = open(Policy::Tofu(store.clone()), vec![], SERVER_URI.into());
        assert!(
            refused
                .unwrap_err()
                .to_string()
                .contains("not a JSON object")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
