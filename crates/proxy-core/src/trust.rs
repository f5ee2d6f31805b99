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
//! policy's keys and the store's contents, which the proxy crate reads and
//! hands in ([`Verifier::new`]) and writes on the session's
//! `Effect::Trust`, with what [`Verifier::store_with`] says.

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

impl Verifier {
    /// Verifies for the server whose canonical URI is `audience`, under
    /// `policy`, with `keys` (the pinned keys, or the publisher's);
    /// `remembered` is a TOFU store's contents (`{server: kid}`), read by
    /// the caller (empty for the other policies).
    pub fn new(
        policy: Policy,
        keys: Vec<PublicKey>,
        audience: String,
        remembered: BTreeMap<String, String>,
    ) -> Self {
        Verifier {
            policy,
            keys,
            audience,
            remembered: Mutex::new(remembered),
        }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The audience manifests must be issued for.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// Verifies a `declarations/manifest` result at `now` (seconds since
    /// the epoch): the manifest, or why it is refused. A TOFU policy's
    /// first key for the server comes back with it, to be remembered.
    pub fn verify(&self, document: &Value, now: u64) -> Result<Verified, Refused> {
        let manifest = declarations::verify(document, &self.keys, &self.audience, now)
            .map_err(Refused::Manifest)?;
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
                    return Err(Refused::Publisher {
                        named: manifest.publisher.clone(),
                        allowed: publisher.clone(),
                    });
                }
            }
            Policy::Tofu(_) => {
                let mut remembered = self.remembered.lock().unwrap_or_else(|e| e.into_inner());
                match remembered.get(&self.audience) {
                    Some(known) if *known != kid => {
                        return Err(Refused::KeyChanged {
                            kid,
                            server: self.audience.clone(),
                            known: known.clone(),
                        });
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

    /// A TOFU store's new contents once the first key `record` (from the
    /// verification that first saw it) is added to `store` (its current
    /// contents, the servers it held kept); `None` when the policy keeps no
    /// store or the record is not one.
    pub fn store_with(
        &self,
        mut store: BTreeMap<String, String>,
        record: &Value,
    ) -> Option<BTreeMap<String, String>> {
        let Policy::Tofu(_) = &self.policy else {
            return None;
        };
        let server = record.get("server").and_then(Value::as_str)?;
        let kid = record.get("kid").and_then(Value::as_str)?;
        store.insert(server.to_owned(), kid.to_owned());
        Some(store)
    }
}

/// Why a server's signed manifest is refused; the text completes "the
/// server's declarations are withheld: …".
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The manifest does not verify (its signature, audience, validity or
    /// shape).
    #[error("{}", manifest_refusal(.0))]
    Manifest(ManifestError),
    /// `allow:PUBLISHER`: the manifest names another publisher, or none.
    #[error("its manifest names the publisher {}, not the one allowed ({allowed})", named.as_deref().unwrap_or("(none)"))]
    Publisher {
        /// The publisher the manifest names.
        named: Option<String>,
        /// The publisher the policy allows.
        allowed: String,
    },
    /// `tofu:STORE`: the manifest is signed by another key than the one
    /// trusted on first use.
    #[error(
        "its manifest is signed by the key `{kid}`, but the key trusted on first use for {server} is `{known}`: the publisher's key changed (remove the server from the trust store to accept the new key)"
    )]
    KeyChanged {
        /// The key that signed this manifest.
        kid: String,
        /// The server (the audience).
        server: String,
        /// The key remembered for it.
        known: String,
    },
}

fn manifest_refusal(e: &ManifestError) -> String {
    match e {
        ManifestError::Signature(e) => format!("its manifest's signature: {e}"),
        e => format!("its manifest: {e}"),
    }
}

/// A manifest that verified, and the TOFU record to keep, if this was the
/// first key seen for the server.
pub struct Verified {
    /// The manifest.
    pub manifest: Manifest,
    /// The TOFU record (`{"server", "kid"}`) of a key seen first.
    pub first: Option<Value>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_first_key_joins_the_store_and_keeps_the_other_servers() {
        let tofu = Verifier::new(
            Policy::Tofu(PathBuf::from("store.json")),
            vec![],
            "https://a.example/mcp".into(),
            BTreeMap::new(),
        );
        let before = BTreeMap::from([("https://b.example/mcp".to_string(), "k1".to_string())]);
        let record = json!({"server": "https://a.example/mcp", "kid": "k2"});
        let after = tofu.store_with(before.clone(), &record).unwrap();
        assert_eq!(after.len(), 2);
        assert_eq!(after["https://a.example/mcp"], "k2");
        assert_eq!(after["https://b.example/mcp"], "k1");
        // Not a record: nothing to write.
        assert!(
            tofu.store_with(before.clone(), &json!({"kid": "k2"}))
                .is_none()
        );
        // Another policy keeps no store.
        let pinned = Verifier::new(
            Policy::Pinned,
            vec![],
            "https://a.example/mcp".into(),
            BTreeMap::new(),
        );
        assert!(pinned.store_with(before, &record).is_none());
    }
}
