//! `mcp-resolve proxy` as a library: `tools/resolve` for any MCP server,
//! with no change to it.
//!
//! The proxy starts the server as a child over stdio (or connects to it over
//! streamable HTTP) and speaks MCP to the host on its own stdio (or serves
//! it over HTTP, [`listen`]). Every message passes through unchanged, except
//! what the proxy owns ([`rules`]): the capabilities it adds to
//! `initialize` / `server/discover` answers, the annotations and markers it
//! sets in `tools/list` answers, and the requests it answers itself (the
//! dialect's resolve method and `signature`). The [`guard`] holds a reviewed
//! signature ([`pin`]), decides calls by [`policy`] and writes the audit log.
//! With a signing key, the proxy also signs the declarations it lists
//! (SEP-3140, [`declare`]), or verifies the ones a server signs
//! ([`trust`]).
//!
//! Faults: host input goes through the runtime's JSON-RPC screen (malformed
//! messages are answered, never forwarded); a line from the server that is
//! not JSON-RPC, or is over the size limit, is logged and skipped; a request
//! the server leaves unanswered past the timeout gets an error; when the
//! server exits, every pending request gets an error and the proxy exits
//! non-zero naming why; when the host goes away, the server's process group
//! is stopped (stdin closed, then `SIGTERM`, then `SIGKILL`).
//!
//! The CLI (`mcp-resolve proxy`) is the documented way in; this crate's face
//! is what that command and the project's tests use.
#![deny(missing_docs)]
// No library function over 100 lines (clippy.toml); each exception says why
// it reads better whole. Tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod auth;
pub mod guard;
pub mod jwks;
mod link;
pub mod listen;
pub mod machine;
pub mod pin;
mod relay;
pub mod shared;
pub mod state;
#[cfg(unix)]
mod threads;
pub mod trust;
pub mod upstream;

/// SEP-3140 declarations the proxy signs (`mcp-resolve-proxy-core`).
pub use mcp_resolve_proxy_core::declare;
/// The audit records the proxy writes (`mcp-resolve-proxy-core`).
pub use mcp_resolve_proxy_core::record;
/// What the proxy adds to a server's messages (`mcp-resolve-proxy-core`).
pub use mcp_resolve_proxy_core::rules;
pub use mcp_resolve_proxy_core::session;
// The core's consent questions, which the HTTP route reads a request's
// stateless form by.
use mcp_resolve_proxy_core::consent;

/// Policy: Cedar over resolved calls, and the simple YAML form
/// (`mcp-resolve-policy`).
pub use mcp_resolve_policy as policy;

#[cfg(unix)]
pub use threads::run_stdio;

pub use relay::{
    Ended, HostIo, Options, ProxyRules, Rewrite, Upstream, check_pin, compare, host_stdio, probe,
    run,
};

/// Logs one line on stderr, as the proxy's own (the server's stderr passes
/// through as it is).
pub(crate) fn log(message: &str) {
    eprintln!("mcp-resolve proxy: {message}");
}
