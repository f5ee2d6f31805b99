//! SEP-3140 signed capability declarations (draft): a declaration's
//! `contentHash`, the `trust` labels, and the signed capability manifest
//! (`{manifest, signature}`: a detached JWS over the manifest's RFC 8785
//! text) with its checks.
//!
//! - [`content_hash`]: `sha256-<base64url>` of the RFC 8785 text of a
//!   declaration without its `contentHash`;
//! - [`Trust`]: the closed label vocabularies; a value a reader does not
//!   know reads as the most restrictive one;
//! - [`Manifest`]: built, signed ([`Manifest::sign`]) and verified
//!   ([`verify`]: the JWS by `kid` — Ed25519 named `Ed25519` or `EdDSA` —,
//!   `server`, `issuedAt`/`expiresAt`,
//!   duplicate names, the size limit); [`Manifest::check_tools`] recomputes
//!   every listed tool's hash against the manifest.
//!
//! ```
//! use mcp_resolve_host::declarations::{Manifest, content_hash, verify};
//! use mcp_resolve_host::jws::{Algorithm, PrivateKey};
//! use serde_json::json;
//!
//! let tool = json!({"name": "read", "inputSchema": {"type": "object"}, "version": "1"});
//! let hash = content_hash(tool.as_object().unwrap());
//! assert!(hash.starts_with("sha256-"));
//!
//! let mut manifest = Manifest::new("https://mcp.example.com/mcp", 1_800_000_000, 86_400);
//! manifest.add_tool(tool.as_object().unwrap())?;
//! let key = PrivateKey::generate(Algorithm::Ed25519)?;
//! let signed = manifest.sign(&key);
//! let keys = [key.public().clone()];
//! let read = verify(&signed, &keys, "https://mcp.example.com/mcp", 1_800_000_100)?;
//! assert!(read.check_tools(&[tool]).is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeSet;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use mcp_resolve_runtime::{Dialect, EXTENSION_ID};

use crate::jcs;
use crate::jws::{JwsError, PrivateKey, PublicKey, verify_detached};
use crate::signature::{SignatureDocument, SignatureTool};

/// The member of a declaration that carries its hash.
pub const CONTENT_HASH: &str = "contentHash";

/// The largest manifest document [`verify`] reads (its JSON text).
pub const MAX_MANIFEST_BYTES: usize = 16 << 20;

/// The spec version a manifest written here names.
pub const SPEC_VERSION: &str = "2025-11-25";

/// `sha256-<base64url>` of the RFC 8785 text of `declaration` without its
/// `contentHash` member.
pub fn content_hash(declaration: &Map<String, Value>) -> String {
    let text = jcs::canonical_members(declaration.iter().filter(|(k, _)| *k != CONTENT_HASH));
    format!("sha256-{}", B64.encode(Sha256::digest(text.as_bytes())))
}

/// What a tool does to data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    /// It changes nothing.
    ReadOnly,
    /// It writes, and destroys nothing.
    WritesData,
    /// It may destroy (delete, overwrite).
    Destructive,
}

/// Where a tool's data may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Egress {
    /// Nowhere outside the server.
    None,
    /// Within the operator's own systems.
    Internal,
    /// To the open world.
    External,
}

/// How sensitive the data a tool touches is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DataSensitivity {
    /// Public.
    Public,
    /// Internal.
    Internal,
    /// Confidential.
    Confidential,
    /// Secret.
    Secret,
}

/// A tool's `trust` labels: closed vocabularies, each value a reader does
/// not know read as the most restrictive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trust {
    /// What it does to data.
    pub effect: Effect,
    /// Where data may go.
    pub egress: Egress,
    /// How sensitive the data is.
    pub data_sensitivity: DataSensitivity,
    /// Whether its effect can be undone.
    pub reversible: bool,
    /// Whether calling it twice is calling it once.
    pub idempotent: bool,
}

impl Trust {
    /// The most restrictive labels: what an unlabelled tool is taken for.
    pub const MOST_RESTRICTIVE: Trust = Trust {
        effect: Effect::Destructive,
        egress: Egress::External,
        data_sensitivity: DataSensitivity::Secret,
        reversible: false,
        idempotent: false,
    };

    /// The labels MCP annotations imply (`annotations`: a tool's, MCP's
    /// defaults for missing hints): `effect` from `readOnlyHint` and
    /// `destructiveHint`, `egress` from `openWorldHint` (`internal` where
    /// `internal` says so, for a tool that reaches the world), `idempotent`
    /// from `idempotentHint` (a read is idempotent). `sensitivity` and
    /// `reversible`, which no hint carries, are the most restrictive when
    /// not given.
    pub fn from_annotations(
        annotations: &Map<String, Value>,
        internal: bool,
        sensitivity: Option<DataSensitivity>,
        reversible: Option<bool>,
    ) -> Trust {
        let hint = |name: &str, default: bool| {
            annotations
                .get(name)
                .and_then(Value::as_bool)
                .unwrap_or(default)
        };
        let read_only = hint("readOnlyHint", false);
        let effect = if read_only {
            Effect::ReadOnly
        } else if hint("destructiveHint", true) {
            Effect::Destructive
        } else {
            Effect::WritesData
        };
        let egress = match (hint("openWorldHint", true), internal) {
            (false, _) => Egress::None,
            (true, true) => Egress::Internal,
            (true, false) => Egress::External,
        };
        Trust {
            effect,
            egress,
            data_sensitivity: sensitivity.unwrap_or(DataSensitivity::Secret),
            reversible: reversible.unwrap_or(read_only),
            idempotent: read_only || hint("idempotentHint", false),
        }
    }

    /// Reads a `trust` block as a verifier must: each member it does not
    /// know, or that is missing, is the most restrictive value.
    pub fn read(value: &Value) -> Trust {
        fn member<T: serde::de::DeserializeOwned>(value: &Value, key: &str, most: T) -> T {
            value
                .get(key)
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .unwrap_or(most)
        }
        let most = Trust::MOST_RESTRICTIVE;
        Trust {
            effect: member(value, "effect", most.effect),
            egress: member(value, "egress", most.egress),
            data_sensitivity: member(value, "dataSensitivity", most.data_sensitivity),
            reversible: member(value, "reversible", most.reversible),
            idempotent: member(value, "idempotent", most.idempotent),
        }
    }

    /// The `trust` block.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// One declaration in a manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Entry {
    /// The declaration's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its [`content_hash`].
    pub content_hash: String,
}

/// A capability manifest: every declaration of a server at one time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The server's canonical URI (RFC 8707): the audience.
    pub server: String,
    /// The publisher document's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// The MCP version the declarations follow.
    pub spec_version: String,
    /// When it was issued (RFC 3339).
    pub issued_at: String,
    /// When it expires (RFC 3339).
    pub expires_at: String,
    /// A random value, against replay.
    pub nonce: String,
    /// The tools.
    #[serde(default)]
    pub tools: Vec<Entry>,
    /// The prompts.
    #[serde(default)]
    pub prompts: Vec<Entry>,
    /// The resources.
    #[serde(default)]
    pub resources: Vec<Entry>,
}

/// Why a manifest, or a declaration in it, was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// Not a manifest document.
    #[error("not a signed capability manifest: {0}")]
    Malformed(String),
    /// Over [`MAX_MANIFEST_BYTES`].
    #[error("the manifest is {0} bytes, over the limit of {MAX_MANIFEST_BYTES}")]
    TooLarge(usize),
    /// The signature does not verify.
    #[error(transparent)]
    Signature(#[from] JwsError),
    /// Issued for another server.
    #[error("the manifest is for the server `{found}`, not `{expected}`")]
    WrongServer {
        /// The server this client speaks to.
        expected: String,
        /// The manifest's.
        found: String,
    },
    /// Not yet valid.
    #[error("the manifest is not valid before {0}")]
    NotYetValid(String),
    /// Expired.
    #[error("the manifest expired at {0}")]
    Expired(String),
    /// A name listed twice.
    #[error("the manifest lists the {kind} `{name}` twice")]
    Duplicate {
        /// `tool`, `prompt` or `resource`.
        kind: &'static str,
        /// The name.
        name: String,
    },
}

/// A declaration that does not match its manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The declaration's name (empty when it has none).
    pub name: String,
    /// Why.
    pub why: String,
}

impl Manifest {
    /// An empty manifest for `server`, issued at `now` (seconds since the
    /// epoch) and valid for `valid_for` seconds. Its nonce is set when it
    /// is signed ([`Manifest::sign`]).
    pub fn new(server: &str, now: u64, valid_for: u64) -> Manifest {
        Manifest {
            server: server.to_owned(),
            publisher: None,
            spec_version: SPEC_VERSION.to_owned(),
            issued_at: seconds_rfc3339(now),
            expires_at: seconds_rfc3339(now.saturating_add(valid_for)),
            nonce: String::new(),
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
        }
    }

    /// Lists `tool` (a declaration with `name` and `version`) by its hash.
    pub fn add_tool(&mut self, tool: &Map<String, Value>) -> Result<(), ManifestError> {
        let text = |key: &str| {
            tool.get(key).and_then(Value::as_str).ok_or_else(|| {
                ManifestError::Malformed(format!("a declaration has no string `{key}`"))
            })
        };
        let (name, version) = (text("name")?, text("version")?);
        if self.tools.iter().any(|e| e.name == name) {
            return Err(ManifestError::Duplicate {
                kind: "tool",
                name: name.to_owned(),
            });
        }
        self.tools.push(Entry {
            name: name.to_owned(),
            version: version.to_owned(),
            content_hash: content_hash(tool),
        });
        Ok(())
    }

    /// The manifest's RFC 8785 text: what its signature covers.
    pub fn canonical(&self) -> String {
        jcs::canonical(&serde_json::to_value(self).unwrap_or(Value::Null))
    }

    /// `{manifest, signature}`: signed with `key`, a detached JWS over
    /// [`Manifest::canonical`] whose header is `alg` and `kid`, `alg` as
    /// the SEP's examples write it (`EdDSA` for Ed25519,
    /// [`crate::jws::Algorithm::sep_name`]). A manifest without a nonce
    /// gets one derived from everything else in it (SHA-256, 16 bytes,
    /// base64url): distinct for every content and issuing time, and the
    /// same document, byte for byte, when both are the same (with
    /// `SOURCE_DATE_EPOCH`, a reproducible release).
    pub fn sign(&self, key: &PrivateKey) -> Value {
        let manifest = self.with_nonce();
        let signature = key.sign_detached_sep(manifest.canonical().as_bytes());
        json!({"manifest": manifest, "signature": signature})
    }

    /// [`Manifest::sign`] with `alg` written as `alg` names it (`Ed25519`,
    /// RFC 9864's name, instead of `EdDSA`); refused when `alg` does not
    /// name the key's algorithm.
    pub fn sign_as(&self, key: &PrivateKey, alg: &str) -> Result<Value, JwsError> {
        let manifest = self.with_nonce();
        let signature = key.sign_detached_as(manifest.canonical().as_bytes(), alg)?;
        Ok(json!({"manifest": manifest, "signature": signature}))
    }

    /// This manifest, with a nonce derived from the rest when it has none.
    fn with_nonce(&self) -> Manifest {
        let mut manifest = self.clone();
        if manifest.nonce.is_empty() {
            let digest = Sha256::digest(manifest.canonical().as_bytes());
            manifest.nonce = B64.encode(&digest[..16]);
        }
        manifest
    }

    /// Every tool of `tools` (a `tools/list` result's, as served) that
    /// does not match this manifest: not listed in it, another version, or
    /// a hash that is not the one recomputed from what was served.
    pub fn check_tools(&self, tools: &[Value]) -> Vec<Mismatch> {
        let mut out = Vec::new();
        for tool in tools {
            let Some(tool) = tool.as_object() else {
                out.push(Mismatch {
                    name: String::new(),
                    why: "a listed tool is not an object".into(),
                });
                continue;
            };
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            let mismatch = |why: String| Mismatch {
                name: name.to_owned(),
                why,
            };
            let Some(entry) = self.tools.iter().find(|e| e.name == name) else {
                out.push(mismatch("the manifest does not list it".into()));
                continue;
            };
            let hash = content_hash(tool);
            let declared = tool.get(CONTENT_HASH).and_then(Value::as_str);
            if hash != entry.content_hash {
                out.push(mismatch(format!(
                    "its content hashes to {hash}, the manifest says {}",
                    entry.content_hash
                )));
            } else if declared.is_some_and(|d| d != hash) {
                out.push(mismatch(format!(
                    "its `contentHash` says {}, its content hashes to {hash}",
                    declared.unwrap_or_default()
                )));
            } else if tool.get("version").and_then(Value::as_str) != Some(&entry.version) {
                out.push(mismatch(format!(
                    "its version is not the manifest's {}",
                    entry.version
                )));
            }
        }
        out
    }
}

/// What a tool's labels take from beyond MCP's hints (the default: nothing,
/// the most restrictive values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Labelling {
    /// Its open world is the operator's own: `egress: internal`.
    pub internal: bool,
    /// Its `dataSensitivity`.
    pub sensitivity: Option<DataSensitivity>,
    /// Whether its effect can be undone.
    pub reversible: Option<bool>,
}

impl Labelling {
    /// What a tool's rules say (its signature's `trust`: `dataSensitivity`,
    /// `reversible`, `egress`); a value outside the vocabularies is left
    /// out, so it reads as the most restrictive.
    pub fn of(tool: &SignatureTool) -> Labelling {
        let Some(trust) = &tool.trust else {
            return Labelling::default();
        };
        Labelling {
            internal: trust.get("egress").and_then(Value::as_str) == Some("internal"),
            sensitivity: trust
                .get("dataSensitivity")
                .and_then(|v| serde_json::from_value(v.clone()).ok()),
            reversible: trust.get("reversible").and_then(Value::as_bool),
        }
    }

    /// The labels of a tool (or variant) with `annotations` (a map of
    /// hints; MCP's defaults for missing ones).
    pub fn trust(&self, annotations: &Value) -> Trust {
        let empty = Map::new();
        let hints = annotations.as_object().unwrap_or(&empty);
        Trust::from_annotations(hints, self.internal, self.sensitivity, self.reversible)
    }
}

/// How declarations are listed: the tool-resolution dialect's `tools/list`
/// form, with the resolvable marker (for a host that declares the
/// extension: each variant's labels ride with it) or without.
#[derive(Clone, Copy, Debug)]
pub struct Form {
    /// The dialect.
    pub dialect: Dialect,
    /// Whether resolvable tools carry the dialect's marker.
    pub marked: bool,
}

/// The SEP-3140 declarations of `doc`'s tools in `form`, each listed in
/// `manifest`: a tool's `tools/list` entry with `trust` (from its static,
/// worst-case annotations, [`Trust::from_annotations`], with what its rules
/// say beyond them, [`Labelling::of`]),
/// then `version`, then `contentHash`. Marked, a resolvable tool also
/// carries each variant's labels under the extension's `_meta`
/// (`variants: [{name, trust}]`), covered by the hash as the rest is.
///
/// `version`: `1` for a tool `previous` does not list; for one it does,
/// its version there when the tool is unchanged (its hash with that
/// version is the one `previous` lists), the next number when it changed.
pub fn declare_tools(
    doc: &SignatureDocument,
    form: Form,
    previous: Option<&Manifest>,
    manifest: &mut Manifest,
) -> Result<Vec<Value>, ManifestError> {
    let mut declarations = Vec::with_capacity(doc.tools.len());
    for tool in &doc.tools {
        let Value::Object(mut entry) = tool.list_entry(form.dialect) else {
            continue;
        };
        if !form.marked {
            entry = Dialect::unmark(&entry);
        }
        label(&mut entry, Some(tool), form.marked);
        declarations.push(Value::Object(entry));
    }
    seal(declarations, previous, manifest)
}

/// Adds a listed tool's `trust` labels to `entry` (its `tools/list`
/// entry): from the static annotations `entry` lists and what `tool`'s
/// rules say beyond them (`None`: a tool no rules describe, nothing
/// beyond the hints). Marked (`marked`, and the tool resolvable by its
/// rules), each variant's labels also go under the extension's `_meta`
/// (`variants: [{name, trust}]`).
pub fn label(entry: &mut Map<String, Value>, tool: Option<&SignatureTool>, marked: bool) {
    let labelling = tool.map(Labelling::of).unwrap_or_default();
    let listed = entry.get("annotations").cloned().unwrap_or(Value::Null);
    entry.insert("trust".into(), labelling.trust(&listed).to_value());
    if let Some(tool) = tool.filter(|t| marked && t.is_resolvable()) {
        let mut seen = BTreeSet::new();
        let variants: Vec<Value> = tool
            .variants()
            .iter()
            .filter(|v| seen.insert(v.name.as_str()))
            .map(|v| {
                let trust = labelling.trust(&v.annotations.core_json()).to_value();
                json!({"name": v.name, "trust": trust})
            })
            .collect();
        if let Some(Value::Object(meta)) = entry.get_mut("_meta")
            && let Some(Value::Object(ours)) = meta.get_mut(EXTENSION_ID)
        {
            ours.insert("variants".into(), Value::Array(variants));
        }
    }
}

/// Gives each declaration (a tool with its `trust`) its `version` (against
/// `previous`) and `contentHash`, and lists it in `manifest`.
pub fn seal(
    mut declarations: Vec<Value>,
    previous: Option<&Manifest>,
    manifest: &mut Manifest,
) -> Result<Vec<Value>, ManifestError> {
    for declaration in &mut declarations {
        let Value::Object(entry) = declaration else {
            continue;
        };
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let before = previous.and_then(|m| m.tools.iter().find(|e| e.name == name));
        let sealed = seal_one(entry, before)?;
        if manifest.tools.iter().any(|e| e.name == sealed.name) {
            return Err(ManifestError::Duplicate {
                kind: "tool",
                name: sealed.name,
            });
        }
        manifest.tools.push(sealed);
    }
    Ok(declarations)
}

/// Gives one declaration (a tool with its `trust`) its `version` and
/// `contentHash`; `before` is its entry in the manifest issued before, if
/// any: `1` without one, its version when the tool is unchanged (its hash
/// with that version is the one `before` has), the next number when it
/// changed. Its entry for a manifest.
pub fn seal_one(
    declaration: &mut Map<String, Value>,
    before: Option<&Entry>,
) -> Result<Entry, ManifestError> {
    let name = declaration
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ManifestError::Malformed("a declaration has no string `name`".into()))?
        .to_owned();
    let version = match before {
        None => "1".to_owned(),
        Some(entry) => {
            declaration.insert("version".into(), Value::String(entry.version.clone()));
            if content_hash(declaration) == entry.content_hash {
                entry.version.clone()
            } else {
                let number: u64 = entry.version.parse().map_err(|_| {
                    ManifestError::Malformed(format!(
                        "the previous manifest gives `{name}` the version `{}`, not a number to count on from",
                        entry.version
                    ))
                })?;
                number.saturating_add(1).to_string()
            }
        }
    };
    declaration.insert("version".into(), Value::String(version.clone()));
    let content_hash = content_hash(declaration);
    declaration.insert(CONTENT_HASH.into(), Value::String(content_hash.clone()));
    Ok(Entry {
        name,
        version,
        content_hash,
    })
}

/// The members of a declaration whose change is not material (SEP-3140:
/// `title` and `icons`; `version` and `contentHash` follow the rest).
const NOT_MATERIAL: [&str; 4] = ["title", "icons", "version", CONTENT_HASH];

/// A hash of what is material in a declaration: everything but its
/// `title`, `icons`, `version` and `contentHash`. Two declarations with the
/// same material hash differ, if at all, only where a change is not
/// material; any other member that changes (a schema, the description, the
/// annotations, the labels, `_meta`) is.
pub fn material_hash(declaration: &Map<String, Value>) -> String {
    let text = jcs::canonical_members(
        declaration
            .iter()
            .filter(|(k, _)| !NOT_MATERIAL.contains(&k.as_str())),
    );
    format!("sha256-{}", B64.encode(Sha256::digest(text.as_bytes())))
}

/// What is known of one declaration to tell how it changed: its
/// `contentHash` and [`material_hash`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sealed {
    /// Its `contentHash`.
    pub content_hash: String,
    /// Its [`material_hash`].
    pub material_hash: String,
}

impl Sealed {
    /// What is known of `declaration` (sealed: with its `contentHash`).
    pub fn of(declaration: &Map<String, Value>) -> Sealed {
        Sealed {
            content_hash: content_hash(declaration),
            material_hash: material_hash(declaration),
        }
    }
}

/// The `changed` entries of an extended `notifications/tools/list_changed`
/// (`{name, fromHash, toHash, material}`), in name order: each declaration
/// `before` and `after` hash differently. One only in `after` is new
/// (no `fromHash`), one only in `before` is gone (no `toHash`); both are
/// material.
pub fn changes(
    before: &std::collections::BTreeMap<String, Sealed>,
    after: &std::collections::BTreeMap<String, Sealed>,
) -> Vec<Value> {
    let names: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let mut out = Vec::new();
    for name in names {
        let (from, to) = (before.get(name), after.get(name));
        if from.map(|s| &s.content_hash) == to.map(|s| &s.content_hash) {
            continue;
        }
        let material = match (from, to) {
            (Some(from), Some(to)) => from.material_hash != to.material_hash,
            _ => true,
        };
        let mut change = Map::new();
        change.insert("name".into(), Value::String(name.clone()));
        if let Some(from) = from {
            change.insert("fromHash".into(), Value::String(from.content_hash.clone()));
        }
        if let Some(to) = to {
            change.insert("toHash".into(), Value::String(to.content_hash.clone()));
        }
        change.insert("material".into(), Value::Bool(material));
        out.push(Value::Object(change));
    }
    out
}

/// Verifies a signed manifest document (`{manifest, signature}`) for
/// `server` at `now` (seconds since the epoch) with `keys` (matched by
/// `kid`): the signature, the audience, the validity window, and that no
/// name is listed twice. The manifest it holds, when every check passes.
pub fn verify(
    document: &Value,
    keys: &[PublicKey],
    server: &str,
    now: u64,
) -> Result<Manifest, ManifestError> {
    let size = document.to_string().len();
    if size > MAX_MANIFEST_BYTES {
        return Err(ManifestError::TooLarge(size));
    }
    let malformed = |why: String| ManifestError::Malformed(why);
    let raw = document
        .get("manifest")
        .ok_or_else(|| malformed("no `manifest` member".into()))?;
    let signature = document
        .get("signature")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed("no string `signature` member".into()))?;
    // The signature covers the manifest as sent, canonicalized: members
    // this reader does not model are covered too.
    verify_detached(signature, jcs::canonical(raw).as_bytes(), keys)?;
    let manifest: Manifest =
        serde_json::from_value(raw.clone()).map_err(|e| malformed(e.to_string()))?;
    if manifest.server != server {
        return Err(ManifestError::WrongServer {
            expected: server.to_owned(),
            found: manifest.server,
        });
    }
    let time = |text: &str| {
        parse_rfc3339(text).ok_or_else(|| malformed(format!("`{text}` is not an RFC 3339 time")))
    };
    if time(&manifest.issued_at)? > now.saturating_add(CLOCK_SKEW) {
        return Err(ManifestError::NotYetValid(manifest.issued_at));
    }
    if time(&manifest.expires_at)? <= now {
        return Err(ManifestError::Expired(manifest.expires_at));
    }
    for (kind, entries) in [
        ("tool", &manifest.tools),
        ("prompt", &manifest.prompts),
        ("resource", &manifest.resources),
    ] {
        let mut seen = BTreeSet::new();
        for entry in entries {
            if !seen.insert(entry.name.as_str()) {
                return Err(ManifestError::Duplicate {
                    kind,
                    name: entry.name.clone(),
                });
            }
        }
    }
    Ok(manifest)
}

/// How far a manifest's `issuedAt` may lie ahead of the verifier's clock.
const CLOCK_SKEW: u64 = 300;

/// `seconds` since the epoch as RFC 3339 UTC, whole seconds.
fn seconds_rfc3339(seconds: u64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
    let text = crate::time::rfc3339(time);
    // `…:SS.mmmZ` → `…:SSZ`.
    match text.split_once('.') {
        Some((whole, _)) => format!("{whole}Z"),
        None => text,
    }
}

/// Seconds since the epoch of an RFC 3339 time (`Z` or a `±HH:MM` offset,
/// fractions of a second dropped); `None` when it is not one.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = text.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut at = 19;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        at += digits;
    }
    let offset = match b.get(at..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (num(at + 1, 2)?, num(at + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = h * 60 + m;
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset * 60;
    u64::try_from(seconds).ok()
}

fn days_in(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests;
