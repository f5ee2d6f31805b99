//! SEP-3140 for any server: the proxy signs what it lists (`--sign-key`,
//! `--server-uri`). Each tool a `tools/list` answer carries gains `trust`
//! (from the annotations the host is shown, and what the rules say beyond
//! them), `version` and `contentHash`, computed over the tool exactly as
//! the host receives it; `declarations/manifest` is answered with the
//! signed manifest of what the session listed; the server's
//! `notifications/tools/list_changed` reaches the host with `changed`
//! (`fromHash`, `toHash`, `material`). Pure functions of the listing and
//! the session's `Declared` state: the session core calls them, and no
//! I/O happens here.

use std::collections::{BTreeMap, HashMap};

use mcp_resolve_host::declarations::{self, Entry, Manifest, Sealed};
use mcp_resolve_host::jws::{Algorithm, PrivateKey};
use mcp_resolve_host::signature::SignatureTool;
use serde_json::{Map, Value, json};

use crate::rules::ProxyRules;

/// The method a host asks for the signed manifest with.
pub const MANIFEST_METHOD: &str = "declarations/manifest";

/// Where a listening proxy serves its signing keys (`mcp_signing_jwks_uri`
/// in its Protected Resource Metadata points here).
pub const JWKS_PATH: &str = "/.well-known/mcp-signing-jwks.json";

/// Checks a server's canonical URI (RFC 8707): an absolute `https` (or
/// `http`) URI with a host and no fragment. The URI as given, or why not.
pub fn server_uri(uri: &str) -> Result<String, ServerUriError> {
    let url = url::Url::parse(uri).map_err(|e| ServerUriError::NotAbsolute(e.to_string()))?;
    if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() {
        return Err(ServerUriError::NotHttps);
    }
    if url.fragment().is_some() {
        return Err(ServerUriError::Fragment);
    }
    Ok(uri.to_owned())
}

/// Why a server's canonical URI is refused ([`server_uri`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ServerUriError {
    /// Not an absolute URI.
    #[error("not an absolute URI: {0}")]
    NotAbsolute(String),
    /// Not `http(s)` with a host.
    #[error("a server's canonical URI is `https://HOST[/PATH]`")]
    NotHttps,
    /// It has a fragment.
    #[error("a server's canonical URI has no fragment (RFC 8707)")]
    Fragment,
}

/// What the proxy signs with, and for whom.
pub struct Declarer {
    key: PrivateKey,
    /// How the JWS header (and the JWKS) name the algorithm.
    alg: &'static str,
    server: String,
    publisher: Option<String>,
    valid_for: u64,
    /// The rules' tools, as the signature document holds them.
    tools: HashMap<String, SignatureTool>,
}

impl std::fmt::Debug for Declarer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Declarer")
            .field("kid", &self.key.public().kid())
            .field("server", &self.server)
            .field("publisher", &self.publisher)
            .field("valid_for", &self.valid_for)
            .finish_non_exhaustive()
    }
}

impl Declarer {
    /// Signs with `key` for the server whose canonical URI (RFC 8707, the
    /// manifest's audience) is `server`, naming `publisher`'s document if
    /// given; each manifest is valid for `valid_for` seconds. The labels
    /// of the tools `rules` describe take what the rules say beyond the
    /// hints (their `trust`).
    pub fn new(
        key: PrivateKey,
        server: String,
        publisher: Option<String>,
        valid_for: u64,
        rules: &ProxyRules,
    ) -> Declarer {
        let doc = mcp_resolve::emit::signature::signature_document(rules.server());
        let tools = doc.tools.into_iter().map(|t| (t.name.clone(), t)).collect();
        Declarer {
            alg: key.public().algorithm().sep_name(),
            key,
            server,
            publisher,
            valid_for,
            tools,
        }
    }

    /// Names the algorithm `alg` in the JWS header and the JWKS instead
    /// of as SEP-3140's examples do (`Ed25519` instead of `EdDSA`);
    /// refused when `alg` does not name the key's algorithm.
    pub fn naming(mut self, alg: &str) -> Result<Declarer, mcp_resolve_host::jws::JwsError> {
        let name = [Algorithm::Ed25519, Algorithm::ES256]
            .into_iter()
            .flat_map(|a| [a.name(), a.sep_name()])
            .find(|name| *name == alg);
        match name {
            Some(name) if Algorithm::parse(name) == Some(self.key.public().algorithm()) => {
                self.alg = name;
                Ok(self)
            }
            _ => Err(mcp_resolve_host::jws::JwsError::Malformed(format!(
                "`{alg}` does not name the key's algorithm ({})",
                self.key.public().algorithm().name()
            ))),
        }
    }

    /// The canonical server URI manifests are issued for.
    pub fn server_uri(&self) -> &str {
        &self.server
    }

    /// The JWKS of the signing key.
    pub fn jwks(&self) -> Value {
        json!({"keys": [self.key.public().to_jwk_as(self.alg)]})
    }

    /// The Protected Resource Metadata (RFC 9728) of the server, with
    /// SEP-3140's `mcp_signing_jwks_uri` (`jwks_uri`: where this proxy
    /// serves [`Declarer::jwks`]) and `mcp_publisher`.
    pub fn resource_metadata(&self, jwks_uri: &str) -> Value {
        let mut metadata = json!({
            "resource": self.server,
            "mcp_signing_jwks_uri": jwks_uri,
        });
        if let Some(publisher) = &self.publisher {
            metadata["mcp_publisher"] = Value::String(publisher.clone());
        }
        metadata
    }

    /// Adds `declarations: {signed: true, labels: true}` to an
    /// `initialize` (or `server/discover`) result's capabilities.
    pub fn advertise(&self, result: &mut Value) {
        if let Some(Value::Object(capabilities)) = result.get_mut("capabilities") {
            capabilities.insert(
                "declarations".into(),
                json!({"signed": true, "labels": true}),
            );
        }
    }

    /// Declares each tool of a `tools/list` result (`result`, as the host
    /// is to receive it; `marked`: with the extension's markers): `trust`,
    /// then `version` (against what the session declared before) and
    /// `contentHash`. `fresh`: this page starts a new reading of the whole
    /// list (tools no page of it lists are gone). Log lines for tools that
    /// could not be declared go to `notes`.
    pub fn declare(
        &self,
        state: &mut Declared,
        result: &mut Value,
        marked: bool,
        fresh: bool,
        notes: &mut Vec<String>,
    ) {
        if fresh {
            state.reading = Some(BTreeMap::new());
        }
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return;
        };
        for tool in tools.iter_mut() {
            let Value::Object(entry) = tool else {
                continue;
            };
            // What a server sent under these names is replaced by the
            // proxy's own, computed over what the host receives.
            for member in ["trust", "version", declarations::CONTENT_HASH] {
                entry.remove(member);
            }
            let name = entry.get("name").and_then(Value::as_str).map(str::to_owned);
            let Some(name) = name else {
                continue;
            };
            declarations::label(entry, self.tools.get(&name), marked);
            match declarations::seal_one(entry, state.entries.get(&name)) {
                Ok(sealed) => {
                    if let Some(reading) = &mut state.reading {
                        reading.insert(name, Sealed::of(entry));
                    }
                    state.entries.insert(sealed.name.clone(), sealed);
                    state.signed = None;
                }
                Err(e) => notes.push(format!("`{name}` was not declared: {e}")),
            }
        }
    }

    /// A reading of the whole list ended: tools it did not list are gone
    /// from the manifest. The `changed` entries against the reading before
    /// (every tool is new when there was none); none when no reading was
    /// under way.
    pub fn read(&self, state: &mut Declared) -> Vec<Value> {
        let Some(reading) = state.reading.take() else {
            return Vec::new();
        };
        state.entries.retain(|name, _| reading.contains_key(name));
        state.signed = None;
        let before = state.last.replace(reading.clone()).unwrap_or_default();
        declarations::changes(&before, &reading)
    }

    /// The signed manifest of what the session declared, issued at `now`
    /// (seconds since the epoch): the one signed before while it is valid
    /// for at least half its time and nothing changed, else a new one.
    pub fn manifest(&self, state: &mut Declared, now: u64) -> Value {
        if let Some((signed, renew)) = &state.signed
            && now < *renew
        {
            return signed.clone();
        }
        let mut manifest = Manifest::new(&self.server, now, self.valid_for);
        manifest.publisher = self.publisher.clone();
        manifest.tools = state.entries.values().cloned().collect();
        let signed = manifest
            .sign_as(&self.key, self.alg)
            .unwrap_or_else(|_| manifest.sign(&self.key));
        state.signed = Some((signed.clone(), now.saturating_add(self.valid_for / 2)));
        signed
    }

    /// The extended `notifications/tools/list_changed` (`changed`, and
    /// where the new manifest is) in place of the server's `notification`;
    /// the server's own `params` members are kept.
    pub fn notification(notification: &str, changed: Vec<Value>) -> String {
        let Ok(Value::Object(mut message)) =
            mcp_resolve_protocol::json::from_str::<Value>(notification)
        else {
            return notification.to_owned();
        };
        let params = message
            .entry("params")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(params) = params {
            params.insert("changed".into(), Value::Array(changed));
            params.insert("manifest".into(), Value::String(MANIFEST_METHOD.into()));
        }
        Value::Object(message).to_string()
    }
}

/// What one session declared.
#[derive(Default)]
pub struct Declared {
    /// Each tool's manifest entry, by name.
    entries: BTreeMap<String, Entry>,
    /// The reading of the whole list under way, if one is.
    reading: Option<BTreeMap<String, Sealed>>,
    /// What the last whole reading listed.
    last: Option<BTreeMap<String, Sealed>>,
    /// The manifest signed last, and when it is renewed.
    signed: Option<(Value, u64)>,
    /// Whether the host listed the tools with the extension's markers.
    pub marked: bool,
}

impl Declared {
    /// Whether any tool has been declared yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.last.is_none()
    }
}
