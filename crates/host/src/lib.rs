//! The host side of mcp-resolve: what reads a server's published word.
//!
//! - [`signature`]: the signature document (docs/signature.md) as one typed
//!   model, its fingerprint (RFC 8785 + SHA-256) and pretty text;
//! - [`jcs`]: RFC 8785 canonical JSON;
//! - [`jws`] (feature `jws`, on by default): publishers' detached JWS
//!   signatures over a signature document, Ed25519 and P-256 keys as JWKs;
//! - [`declarations`] (feature `jws`): SEP-3140 signed capability
//!   declarations — `contentHash`, `trust` labels, the signed manifest;
//! - host verification: [`Signature`], [`verify_tools_list`] and
//!   [`verify_resolution`] check a server's `tools/list` and resolution
//!   results against the document it published;
//! - [`matcher`]: the load-time matcher — rules held as data and evaluated
//!   without code generation (the proxy's resolver; the compiler lowers
//!   rules to it).
//!
//! Generated code never depends on this crate; it depends on
//! `mcp-resolve-runtime`, whose models (hints, annotations, dialects,
//! errors) this crate reads.
//!
//! ```
//! use mcp_resolve_host::{Signature, ViolationKind, verify_resolution};
//! use serde_json::json;
//!
//! let signature = Signature::from_value(json!({
//!     "tools": [{
//!         "name": "manage_files",
//!         "inputSchema": {"type": "object", "properties": {"action": {"enum": ["read", "delete"]}},
//!                         "required": ["action"]},
//!         "annotations": {"readOnlyHint": false, "destructiveHint": true,
//!                         "idempotentHint": false, "openWorldHint": false},
//!         "resolvedVariants": [{
//!             "name": "read",
//!             "when": {"argumentPatterns": {"action": {"const": "read"}}},
//!             "annotations": {"readOnlyHint": true, "destructiveHint": false,
//!                             "idempotentHint": true, "openWorldHint": false}
//!         }]
//!     }]
//! }))?;
//!
//! // An honest answer for a read.
//! let read = json!({"action": "read"});
//! let answer = json!({"resultType": "complete", "name": "manage_files", "annotations":
//!     {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}});
//! let expected = verify_resolution(&signature, "manage_files", &read, &answer)?;
//! assert_eq!(expected.variant().map(|v| v.name()), Some("read"));
//!
//! // The same answer for a delete is a lie: the signature says it is destructive.
//! let delete = json!({"action": "delete"});
//! let err = verify_resolution(&signature, "manage_files", &delete, &answer).unwrap_err();
//! assert_eq!(err.0[0].kind, ViolationKind::Annotation);
//! assert!(err.any_less_conservative());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
// No library function over 100 lines (clippy.toml); each exception says why
// it reads better whole. Tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

#[cfg(feature = "jws")]
pub mod declarations;
mod host;
pub mod jcs;
#[cfg(feature = "jws")]
pub mod jws;
pub mod matcher;
pub mod signature;
pub mod time;

pub use host::*;
pub use signature::SignatureDocument;
