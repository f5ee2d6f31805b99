//! What a host pins (`mcp-resolve proxy --pin`), loaded and checked before
//! the server starts: a signature document whose fingerprint holds; signed
//! by one of the publisher's keys when keys are given (its detached JWS
//! beside it, `DOCUMENT.jws`); only narrowing a document reviewed before
//! when a baseline is given (`mcp_resolve::diff`); and the signature of the
//! very rules the proxy serves, so every resolution it answers is one the
//! pin allows. The guard ([`crate::guard`]) then holds every listing and
//! call to it.

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use mcp_resolve::diff::{DiffError, Direction};
use mcp_resolve::emit::signature::signature;
use mcp_resolve::ir::Server;
use mcp_resolve::project::{ReadError, read_within};
pub use mcp_resolve_host::jws::with_extension;
use mcp_resolve_host::jws::{JwsError, PublicKey};
use mcp_resolve_host::{Signature, SignatureError};

/// Where a pin comes from.
#[derive(Clone, Copy, Debug)]
pub struct PinSource<'a> {
    /// The signature document.
    pub document: &'a Path,
    /// The publisher's keys, one of which must have signed the document.
    pub keys: Option<&'a [PublicKey]>,
    /// A document reviewed before, which this one may only narrow.
    pub baseline: Option<&'a Path>,
    /// The largest document read, in bytes.
    pub max_bytes: usize,
}

/// A pin that holds: the signature, and what was found on the way (who
/// signed it, what it narrows), for the log.
#[derive(Debug)]
pub struct Pin {
    /// The pinned signature.
    pub signature: Signature,
    /// Lines for the log.
    pub notes: Vec<String>,
}

/// Why a pin cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinError {
    /// A file that cannot be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: ReadError,
    },
    /// The detached signature file that cannot be read.
    #[error("cannot read the signature file `{}`: {source}", path.display())]
    ReadJws {
        /// The `.jws` file.
        path: PathBuf,
        /// Why.
        #[source]
        source: ReadError,
    },
    /// A document that is not JSON.
    #[error("{}: not JSON: {source}", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A document that is not a usable signature (its fingerprint included).
    #[error("{}: {source}", path.display())]
    Unusable {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<SignatureError>,
    },
    /// No key given signed the document.
    #[error("{}: {source}", path.display())]
    Unsigned {
        /// The `.jws` file.
        path: PathBuf,
        /// Why.
        #[source]
        source: JwsError,
    },
    /// The pin and its baseline cannot be compared.
    #[error("cannot compare {} with {}: {source}", path.display(), baseline.display())]
    Incomparable {
        /// The pinned document.
        path: PathBuf,
        /// The baseline.
        baseline: PathBuf,
        /// Why.
        #[source]
        source: Box<DiffError>,
    },
    /// The pin widens its baseline, or cannot be shown not to; `report` is
    /// `diff`'s human report of the changes.
    #[error(
        "{} widens what {} allowed (or cannot be shown not to); review it with `mcp-resolve diff` and pin it as the new baseline if it is right",
        path.display(),
        baseline.display()
    )]
    Widens {
        /// The pinned document.
        path: PathBuf,
        /// The baseline.
        baseline: PathBuf,
        /// The changes, as `diff` reports them.
        report: String,
    },
    /// The pin is not the signature of the rules served.
    #[error(
        "{} pins {}, but the rules' signature is {} (review the change with `mcp-resolve diff`, then pin the new signature)",
        path.display(),
        pinned.as_deref().unwrap_or("nothing"),
        rules.as_deref().unwrap_or("missing")
    )]
    NotTheRules {
        /// The pinned document.
        path: PathBuf,
        /// Its fingerprint.
        pinned: Option<String>,
        /// The rules' signature's fingerprint.
        rules: Option<String>,
    },
}

impl PinError {
    /// Whether the error is in what the user gave (a file that cannot be
    /// read or is not JSON) rather than in what the files say.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            PinError::Read { .. } | PinError::ReadJws { .. } | PinError::NotJson { .. }
        )
    }
}

/// Loads and checks the pin `source` for the rules `server` (see the
/// module documentation).
pub fn load(source: &PinSource<'_>, server: &Server) -> Result<Pin, PinError> {
    let mut notes = Vec::new();
    let path = source.document;
    let pin = match source.keys {
        Some(keys) => {
            let (pin, by) = verified_document(path, None, keys, source.max_bytes)?;
            notes.push(format!("{} is {by}", path.display()));
            pin
        }
        None => read_signature(path, source.max_bytes)?,
    };
    if let Some(baseline) = source.baseline {
        notes.push(narrows_only(baseline, &pin, path, source.max_bytes)?);
    }
    let rules = signature(server);
    let ours = rules.get("fingerprint").and_then(serde_json::Value::as_str);
    if pin.fingerprint() != ours {
        return Err(PinError::NotTheRules {
            path: path.to_path_buf(),
            pinned: pin.fingerprint().map(str::to_string),
            rules: ours.map(str::to_string),
        });
    }
    Ok(Pin {
        signature: pin,
        notes,
    })
}

/// A signature document whose fingerprint holds, and its publisher's
/// signature (`jws`, default `DOCUMENT.jws`) checked against `keys`: the
/// document and who signed it (`signed by key … (alg) on …`).
pub fn verified_document(
    document: &Path,
    jws: Option<&Path>,
    keys: &[PublicKey],
    max_bytes: usize,
) -> Result<(Signature, String), PinError> {
    let signature = read_signature(document, max_bytes)?;
    let jws_path = jws.map_or_else(|| with_extension(document, "jws"), Path::to_path_buf);
    let jws_text = read_within(&jws_path, max_bytes).map_err(|source| PinError::ReadJws {
        path: jws_path.clone(),
        source,
    })?;
    let verified = signature
        .verify_publisher(&jws_text, keys)
        .map_err(|source| PinError::Unsigned {
            path: jws_path.clone(),
            source,
        })?;
    let when = verified
        .signed_at()
        .map(|at| {
            format!(
                " on {}",
                mcp_resolve_host::time::rfc3339(UNIX_EPOCH + Duration::from_secs(at))
            )
        })
        .unwrap_or_default();
    let by = format!(
        "signed by key `{}` ({}){when}",
        verified.key.kid(),
        verified.key.algorithm().name()
    );
    Ok((signature, by))
}

/// A signature document read whole, its fingerprint verified.
fn read_signature(path: &Path, max_bytes: usize) -> Result<Signature, PinError> {
    let text = read_within(path, max_bytes).map_err(|source| PinError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let document: serde_json::Value =
        mcp_resolve_protocol::json::from_str(&text).map_err(|source| PinError::NotJson {
            path: path.to_path_buf(),
            source,
        })?;
    Signature::verified(document).map_err(|source| PinError::Unusable {
        path: path.to_path_buf(),
        source: Box::new(source),
    })
}

/// Refuses a pinned document that widens what `baseline` allowed (or that
/// `diff` cannot decide about); the note of what it narrows otherwise.
fn narrows_only(
    baseline: &Path,
    pin: &Signature,
    path: &Path,
    max_bytes: usize,
) -> Result<String, PinError> {
    let old = read_signature(baseline, max_bytes)?;
    let changes = mcp_resolve::diff::diff(old.document(), pin.document()).map_err(|source| {
        PinError::Incomparable {
            path: path.to_path_buf(),
            baseline: baseline.to_path_buf(),
            source: Box::new(source),
        }
    })?;
    if changes.has_widening() || changes.has_undecided() {
        return Err(PinError::Widens {
            path: path.to_path_buf(),
            baseline: baseline.to_path_buf(),
            report: changes.to_human(),
        });
    }
    Ok(format!(
        "{} only narrows {} ({} narrowing changes)",
        path.display(),
        baseline.display(),
        changes.count(Direction::Narrowing)
    ))
}
