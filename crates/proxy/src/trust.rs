//! SEP-3140 from the host's side (`--trust`): the proxy in front of a
//! server that signs its declarations verifies them before a host sees
//! them. The signed manifest (`declarations/manifest`, asked by the proxy)
//! is verified by `kid` against the keys the trust policy gives, for the
//! audience the host knows the server by, inside its validity window; every
//! listed tool's `contentHash` is recomputed from what the server listed.
//! A tool that fails is withheld from the listing, and a call to it gets
//! `-32001` naming why; a tool whose declaration changes materially during
//! a session is withheld for the rest of it (a new session accepts it).
//!
//! The policies: `pinned:KEY.jwk` (only these keys), `allow:PUBLISHER`
//! (the manifest names this publisher, and is signed by one of its keys),
//! `tofu:STORE` (the first key that signs a manifest for this server is
//! remembered in STORE; a manifest signed by another is refused, and said
//! loudly). Everything here is a pure function of the manifest, the
//! policy's keys and the store's contents; the store is written by the
//! session's adapter ([`crate::session::Effect::Trust`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use mcp_resolve_host::declarations::{self, Manifest, ManifestError};
use mcp_resolve_host::jws::{self, PublicKey};
use serde_json::{Value, json};

/// How the keys that may sign a server's manifests are chosen.
#[derive(Debug)]
pub enum Policy {
    /// Only these keys.
    Pinned,
    /// A manifest that names this publisher (`publisher`), signed by one of
    /// its keys.
    Allow(String),
    /// The first key seen for the server, remembered in this file.
    Tofu(PathBuf),
}

/// What verifies a server's signed declarations.
#[derive(Debug)]
pub struct Verifier {
    policy: Policy,
    keys: Vec<PublicKey>,
    audience: String,
    /// TOFU: the `kid` remembered for each server (the store's contents).
    remembered: Mutex<BTreeMap<String, String>>,
}

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

impl Verifier {
    /// Verifies for the server whose canonical URI is `audience`, under
    /// `policy`, with `keys` (the pinned keys, or the publisher's). A TOFU
    /// store is read now; one that does not exist yet is empty.
    pub fn new(policy: Policy, keys: Vec<PublicKey>, audience: String) -> Result<Self, StoreError> {
        let remembered = match &policy {
            Policy::Tofu(path) => read_store(path)?,
            _ => BTreeMap::new(),
        };
        Ok(Verifier {
            policy,
            keys,
            audience,
            remembered: Mutex::new(remembered),
        })
    }

    /// The audience manifests must be issued for.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// Verifies a `declarations/manifest` result at `now` (seconds since
    /// the epoch): the manifest, or why it is refused. A TOFU policy's
    /// first key for the server comes back with it, to be remembered.
    pub(crate) fn verify(&self, document: &Value, now: u64) -> Result<Verified, String> {
        let manifest = declarations::verify(document, &self.keys, &self.audience, now).map_err(
            |e| match e {
                ManifestError::Signature(e) => format!("its manifest's signature: {e}"),
                e => format!("its manifest: {e}"),
            },
        )?;
        let kid = document
            .get("signature")
            .and_then(Value::as_str)
            .and_then(jws::kid_of)
            .unwrap_or_default();
        let mut first = None;
        match &self.policy {
            Policy::Pinned => {}
            Policy::Allow(publisher) => {
                if manifest.publisher.as_deref() != Some(publisher.as_str()) {
                    return Err(format!(
                        "its manifest names the publisher {}, not the one allowed ({publisher})",
                        manifest.publisher.as_deref().unwrap_or("(none)")
                    ));
                }
            }
            Policy::Tofu(_) => {
                let mut remembered = self.remembered.lock().unwrap_or_else(|e| e.into_inner());
                match remembered.get(&self.audience) {
                    Some(known) if *known != kid => {
                        return Err(format!(
                            "its manifest is signed by the key `{kid}`, but the key trusted on first use for {} is `{known}`: the publisher's key changed (remove the server from the trust store to accept the new key)",
                            self.audience
                        ));
                    }
                    Some(_) => {}
                    None => {
                        remembered.insert(self.audience.clone(), kid.clone());
                        first = Some(json!({"server": self.audience, "kid": kid}));
                    }
                }
            }
        }
        Ok(Verified { manifest, first })
    }

    /// Remembers a first key (`record`, from the verification that first saw it) in the
    /// TOFU store: the file is written whole (to a temporary file, then
    /// renamed over it), the servers it held kept.
    pub fn remember(&self, record: &Value) -> std::io::Result<()> {
        let Policy::Tofu(path) = &self.policy else {
            return Ok(());
        };
        let (Some(server), Some(kid)) = (
            record.get("server").and_then(Value::as_str),
            record.get("kid").and_then(Value::as_str),
        ) else {
            return Ok(());
        };
        let mut store = read_store(path).unwrap_or_default();
        store.insert(server.to_owned(), kid.to_owned());
        let text = serde_json::to_string_pretty(&store).unwrap_or_default() + "\n";
        let temporary = path.with_extension("tmp");
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, path)
    }
}

/// A manifest that verified, and the TOFU record to keep, if this was the
/// first key seen for the server.
pub(crate) struct Verified {
    pub(crate) manifest: Manifest,
    pub(crate) first: Option<Value>,
}

/// A TOFU store's contents: `{server: kid}`; empty when the file does not
/// exist.
fn read_store(path: &std::path::Path) -> Result<BTreeMap<String, String>, StoreError> {
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
