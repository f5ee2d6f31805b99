//! What a session asks its transport to do.

use serde_json::Value;

use crate::record::Record;

/// What a session asks its transport to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Deliver this message to the host.
    Host(String),
    /// Deliver this answer to the host whose request it answers
    /// ([`super::Config::routes_answers`]).
    Answer(Box<Answer>),
    /// Deliver this progress notification to the host whose request asked
    /// for it ([`super::Config::routes_answers`]): `to` is the proxy's id of
    /// that request (the token the server was given), `id_at` where the
    /// token is written, for the host's own token to go in its place.
    Progress(Box<Answer>),
    /// Send this message to the server.
    Server(String),
    /// Write this record to the audit log.
    Audit(Record),
    /// Write this line to the proxy's log.
    Log(String),
    /// Remember this key in the TOFU store (`--trust tofu:STORE`; the
    /// proxy crate writes it, [`crate::trust::Verifier::store_with`]).
    Trust(Value),
    /// Export this finished span (telemetry on).
    Span(Box<mcp_resolve_telemetry::SpanRecord>),
    /// Count this in the metrics (telemetry on).
    Measure(mcp_resolve_telemetry::Measure),
}

/// The server's answer to a host's request, for a transport that routes
/// answers by the proxy's id.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The answer, as the host gets it but for its id.
    pub text: String,
    /// The request it answers: the proxy's id ([`mcp_resolve_protocol::id_key`]).
    pub to: String,
    /// Where the proxy's id is written in `text`, for the host's to go in
    /// its place.
    pub id_at: std::ops::Range<usize>,
}
