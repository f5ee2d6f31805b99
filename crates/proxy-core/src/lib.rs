//! The core of `mcp-resolve proxy`: what the proxy decides about MCP
//! messages, as pure functions of the rules and the messages' text, with
//! no I/O. Its dependencies are the compiler, host and runtime crates and
//! pure libraries: no async runtime, HTTP stack, Redis, files, sockets,
//! processes or OS entropy (the layering test holds the list). The proxy
//! crate (`mcp-resolve-proxy`) moves the bytes and carries out the effects.
//!
//! - [`session`]: one proxy session as a state machine: the host's and
//!   the server's messages and the clock in, messages, audit records,
//!   spans and log lines out;
//! - [`consent`]: the user asked about a call (elicitation, or a 2026-07-28
//!   question with a sealed state), and a retry's state checked;
//! - [`declare`]: SEP-3140 for any server: the declarations and the signed
//!   manifest of what a session listed, as pure functions of the listing;
//! - [`guard`]: the guard's settings (policy, pin, declarations, trust,
//!   the sealed states' keys), which every decision reads;
//! - [`judge`]: a `tools/call` judged by the rules and the policy, and
//!   what a refusal says;
//! - [`pinned`]: a pinned signature held to a session's listings and
//!   calls (a tool the signature does not allow, or that changed since it
//!   was first listed, is withheld);
//! - [`record`]: the audit records of calls and resolutions, one shape for
//!   the audit log and telemetry;
//! - [`rules`]: what the proxy adds to a server's messages (capabilities,
//!   annotations and markers in `tools/list`, the requests it answers
//!   itself);
//! - [`raw`]: JSON read as members of raw text, so that one member changes
//!   and every other byte stays as written;
//! - [`quick`]: a `tools/call`'s arguments checked on their text against a
//!   flat `inputSchema`, held to the JSON Schema validator;
//! - [`trust`]: a server's signed declarations verified (`--trust`), with
//!   the TOFU store's contents handed in;
//! - [`state`]: 2026-07-28 request states, sealed and opened with keys and
//!   entropy the proxy hands in, and spent once.
#![deny(missing_docs)]
// No library function over 100 lines (clippy.toml); each exception says why
// it reads better whole. Tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod consent;
pub mod declare;
pub mod guard;
pub mod judge;
pub mod pinned;
pub mod quick;
pub mod raw;
pub mod record;
pub mod rules;
pub mod session;
pub mod state;
pub mod trust;

/// A message's text as the log quotes it: its first 200 characters on one
/// line (line breaks as spaces), `…` where it was cut.
pub fn excerpt(text: &str) -> String {
    let line: String = text.chars().take(200).collect();
    let line = line.replace(['\n', '\r'], " ");
    if text.chars().count() > 200 {
        format!("{line}…")
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_excerpt_is_one_line_of_at_most_200_characters() {
        assert_eq!(super::excerpt("a\r\nb"), "a  b");
        let long = "é".repeat(201);
        let cut = super::excerpt(&long);
        assert_eq!(cut.chars().count(), 201);
        assert!(cut.ends_with("é…"), "{cut}");
        assert_eq!(super::excerpt(&"x".repeat(200)), "x".repeat(200));
    }
}
