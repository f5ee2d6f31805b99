//! Policy for mcp-resolve: what happens to a `tools/call` once the rules
//! resolved it.
//!
//! One decision engine, Cedar ([`cedar::Engine`]): policies about a call's
//! tool (one Cedar action per tool, as cedar-for-agents generates them), its
//! arguments (`context.input`, typed as cedar-for-agents types them) and what
//! it *resolves to* (`context.resolution`: variant, every hint's resolved
//! value, required scopes), for a principal (the OAuth token's subject) on
//! the server. The simple YAML form ([`yaml::Policy`]) is translated to Cedar
//! ([`cedar::translate`]) and decided by the same engine; its own first-match
//! evaluation is kept as the reference the translation is tested against.
//!
//! Architecture invariant: this crate knows nothing of transports, sessions
//! or the proxy; it is given a call's facts and answers a decision naming
//! the policies that made it.
#![deny(missing_docs)]
// No library function over 100 lines (clippy.toml); each exception says why
// it reads better whole. Tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use std::collections::BTreeSet;
use std::fmt;

use mcp_resolve_runtime::Annotations;
use serde_json::Value;

pub mod cedar;
pub mod yaml;

pub use yaml::{Policy, Verdict, policy_schema};

/// What happens to a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// Forwarded to the server.
    Allow,
    /// Refused with a JSON-RPC error.
    Deny,
    /// The user is asked (elicitation); forwarded only on an explicit accept.
    Ask,
}

impl Decision {
    pub(crate) fn parse(text: &str) -> Option<Decision> {
        match text {
            "allow" => Some(Decision::Allow),
            "deny" => Some(Decision::Deny),
            "ask" => Some(Decision::Ask),
            _ => None,
        }
    }

    /// The decision as policies write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Ask => "ask",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who a call's bearer token speaks for (a verified token, `--auth-issuer`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Principal {
    /// The token's `sub`.
    pub sub: Option<String>,
    /// The token's `client_id` (or `azp`).
    pub client_id: Option<String>,
    /// The scopes it grants (`scope`, space-separated, or `scp`).
    pub scopes: BTreeSet<String>,
}

/// What the session knows of the host (from its `initialize`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionFacts {
    /// The protocol version the host asked for.
    pub protocol_version: Option<String>,
    /// `clientInfo.name`.
    pub client_name: Option<String>,
}

/// What a policy is asked about: a resolved `tools/call`.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// The tool.
    pub tool: &'a str,
    /// The call's arguments (`None`: none were sent).
    pub arguments: Option<&'a Value>,
    /// The variant that matched, if any.
    pub variant: Option<&'a str>,
    /// The call's resolved annotations (defaults applied).
    pub annotations: &'a Annotations,
    /// The scopes the call requires.
    pub scopes: &'a [String],
    /// Whether the rules describe the tool (otherwise `annotations` are the
    /// ones the server listed for it).
    pub described: bool,
    /// Who the call's bearer token speaks for (`--auth-issuer`), if any.
    pub principal: Option<&'a Principal>,
    /// What the session knows of the host.
    pub session: Option<&'a SessionFacts>,
}
