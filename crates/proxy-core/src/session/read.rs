//! A host's message, read once. On a stream the session's screen reads each
//! line ([`super::Session::from_host`] with [`Input::Line`]); a
//! transport that must read a message before it knows the session it
//! belongs to (`--listen`: one message per HTTP request, routed by what it
//! says) reads it with [`read_host`], the same screen and the same params,
//! and hands the session what it read ([`Input::Read`]), which the
//! session does not read again.

use std::ops::Range;

use mcp_resolve_protocol::{Envelope, MetaAt, ParamsRead, Screen, Screened};
use serde_json::Value;

use crate::rules::{ProxyRules, SIGNATURE_METHOD};

/// One thing read from a side.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// A line (a message), without its line ending.
    Line(String),
    /// A host's message its transport read already ([`read_host`]), and
    /// who its verified bearer token speaks for (`--auth-issuer`): the
    /// session does not read it again.
    Read(Box<HostMessage>, Option<mcp_resolve_policy::Principal>),
    /// A server's message that came on the HTTP answer to one request
    /// (the proxy's id of it): the transport routes what the session makes
    /// of it to that request's host, and the session reads it as a line.
    Related(String, Value),
    /// A message over the size limit, skipped.
    TooLong,
    /// A line that is not UTF-8, skipped.
    NotUtf8,
    /// The side ended, and why (an HTTP server that ended the session).
    Ended(String),
}

/// A host's message as the screen read it: what the session decides on.
#[derive(Clone, Debug, PartialEq)]
pub struct HostMessage {
    /// The message as it goes on to the server.
    pub text: String,
    /// Its id, when it has one.
    pub id: Option<Value>,
    /// Its method, when it is a request or a notification.
    pub method: Option<String>,
    /// Where its params are written in `text`.
    pub params_at: Option<Range<usize>>,
    /// Its params, parsed, for the methods the session reads
    /// ([`reads_params`]); `None` for the others.
    pub params: Option<Value>,
    /// Where its params' `_meta` is written in `text`, when the read that
    /// parsed them placed it ([`ParamsRead::of`]; else
    /// [`MetaAt::Unknown`]): the proxy's `traceparent` goes there without
    /// another read.
    pub meta_at: MetaAt,
    /// It is a response (to a request of the server's or the proxy's).
    pub response: bool,
}

impl HostMessage {
    /// What a screen read of `text`: `message`, its envelope, and `params`,
    /// its parsed params.
    pub fn of(text: &str, message: &Envelope<'_>, params: Option<Value>) -> HostMessage {
        HostMessage {
            text: text.to_string(),
            id: message.id.clone(),
            method: message.method.as_deref().map(str::to_string),
            params_at: message.params.and_then(|raw| range_in(text, raw.get())),
            params,
            meta_at: MetaAt::Unknown,
            response: message.is_response(),
        }
    }

    /// What a read of `text` gave: `message`, its envelope, and `read`, its
    /// params parsed with where their `_meta` is ([`read_host`]).
    pub fn read(text: &str, message: &Envelope<'_>, read: Option<ParamsRead<'_>>) -> HostMessage {
        let (params, meta_at) = match read {
            Some(read) => (Some(read.tree), read.meta_at),
            None => (None, MetaAt::Unknown),
        };
        let mut message = HostMessage::of(text, message, params);
        message.meta_at = match &message.params_at {
            Some(at) => meta_at.mapped(|offset| at.start + offset),
            None => MetaAt::Unknown,
        };
        message
    }

    /// Its params as written.
    pub fn raw_params(&self) -> Option<&str> {
        self.params_at.clone().and_then(|at| self.text.get(at))
    }

    /// It is a request.
    pub fn is_request(&self) -> bool {
        !self.response && self.id.is_some()
    }
}

/// Where `part`, a slice of `text`, lies in it; `None` when it is not one.
pub fn range_in(text: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= text.len()).then_some(start..end)
}

/// Whether the session reads the params of a host's message with `method`
/// (`resolve_method`: the dialect's resolve method).
pub fn reads_params(method: &str, resolve_method: &str) -> bool {
    matches!(
        method,
        "tools/call"
            | "initialize"
            | "server/discover"
            | "tools/list"
            | "notifications/cancelled"
            | SIGNATURE_METHOD
    ) || method == resolve_method
}

/// Reads a host's message as the session reads it: the envelope, judged by
/// `screen` (which answers what cannot go on), and the params of the
/// methods the session reads, parsed in the same screening, with where
/// their progress token is written (for a transport that puts its own in
/// its place).
pub fn read_host<'a>(
    screen: &mut Screen,
    rules: &ProxyRules,
    text: &'a str,
) -> Result<(Envelope<'a>, Option<ParamsRead<'a>>), Screened> {
    let resolve_method = rules.method();
    screen.read_parsing_with(
        text,
        |method| reads_params(method, resolve_method),
        |_, raw| ParamsRead::of(raw),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_is_found_and_anything_else_is_not() {
        let text = String::from(r#"{"params":{"a":1}}"#);
        assert_eq!(range_in(&text, &text[10..17]), Some(10..17));
        assert_eq!(range_in(&text, &text[18..]), Some(18..18));
        let other = String::from("{}");
        assert_eq!(range_in(&text, &other), None);
    }
}
