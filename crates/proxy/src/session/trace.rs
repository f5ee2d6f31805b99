//! Traces, when telemetry is on: a server-kind span for each request the
//! host sends and the proxy forwards, a client-kind span for the request it
//! sends the server, the host's trace continued from the request's
//! `_meta.traceparent`, and the proxy's client span put in the forwarded
//! request's `_meta.traceparent` (spliced in: the rest of the message stays
//! as the host wrote it). The spans are effects; the adapter exports them.

use std::time::SystemTime;

use mcp_resolve_runtime::protocol::{Envelope, splice};
use mcp_resolve_telemetry::{Kind, SpanRecord, TraceParent};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{CallAudit, Clock, Effect, Session};

/// Where span and trace ids come from (random in the proxy, counted in
/// tests).
pub type Ids = Box<dyn FnMut() -> u128 + Send>;

/// Ids from the operating system's randomness.
pub fn random_ids() -> Ids {
    Box::new(|| uuid::Uuid::new_v4().as_u128())
}

/// What a forwarded request's spans need.
pub(super) struct Traced {
    trace_id: u128,
    server: u64,
    client: u64,
    /// The host's span, when it sent a `traceparent`.
    parent: Option<u64>,
    sampled: bool,
    start: SystemTime,
    name: String,
    attributes: Vec<(String, Value)>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, rename = "_meta")]
    meta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(borrow)]
    traceparent: Option<&'a RawValue>,
}

/// The host's trace context in a request's `params` (raw).
fn host_parent(params: &str) -> Option<TraceParent> {
    let params: Params<'_> = serde_json::from_str(params).ok()?;
    let meta: Meta<'_> = serde_json::from_str(params.meta?.get()).ok()?;
    let text: String = serde_json::from_str(meta.traceparent?.get()).ok()?;
    TraceParent::parse(&text)
}

/// `object` (a slice of `text`, a JSON object) with `member` as its first
/// member.
fn insert_first(text: &str, object: &str, member: &str) -> Option<String> {
    let inner = object.strip_prefix('{')?;
    let separator = if inner.trim_start().starts_with('}') {
        ""
    } else {
        ","
    };
    splice(text, object, &format!("{{{member}{separator}{inner}"))
}

/// The request `text` with `traceparent` as its `params._meta.traceparent`
/// (replacing one the host sent); `None` when its `params` is not an object.
pub(super) fn inject(text: &str, traceparent: &str) -> Option<String> {
    let envelope = Envelope::of(text)?;
    let value = serde_json::to_string(traceparent).ok()?;
    let Some(params) = envelope.params else {
        let body = text.trim_end().strip_suffix('}')?;
        return Some(format!(
            "{body},\"params\":{{\"_meta\":{{\"traceparent\":{value}}}}}}}"
        ));
    };
    let parsed: Params<'_> = serde_json::from_str(params.get()).ok()?;
    match parsed.meta {
        None => insert_first(
            text,
            params.get(),
            &format!("\"_meta\":{{\"traceparent\":{value}}}"),
        ),
        Some(meta) => {
            let members: Meta<'_> = serde_json::from_str(meta.get()).ok()?;
            match members.traceparent {
                Some(old) => splice(text, old.get(), &value),
                None => insert_first(text, meta.get(), &format!("\"traceparent\":{value}")),
            }
        }
    }
}

impl Session<'_> {
    /// Whether spans are wanted.
    pub(super) fn tracing(&self) -> bool {
        self.guard.telemetry.is_some()
    }

    fn span_id(&mut self) -> u64 {
        loop {
            // The low half of a random 128-bit value; never zero.
            let id = (self.ids)() as u64;
            if id != 0 {
                return id;
            }
        }
    }

    /// The request `text` on its way to the server, with the proxy's
    /// client span as its `traceparent`, and what its spans need (`None`:
    /// telemetry off; the text unchanged).
    pub(super) fn trace_request(
        &mut self,
        text: String,
        method: &str,
        id: &Value,
        tool: Option<&str>,
        clock: Clock,
    ) -> (String, Option<Traced>) {
        if !self.tracing() {
            return (text, None);
        }
        let host = Envelope::of(&text)
            .and_then(|e| e.params)
            .and_then(|raw| host_parent(raw.get()));
        let trace_id = match host {
            Some(parent) => parent.trace_id,
            None => loop {
                let id = (self.ids)();
                if id != 0 {
                    break id;
                }
            },
        };
        let (server, client) = (self.span_id(), self.span_id());
        let sampled = host.is_none_or(|p| p.sampled);
        let header = TraceParent {
            trace_id,
            span_id: client,
            sampled,
        }
        .header();
        let text = inject(&text, &header).unwrap_or(text);
        let mut attributes = vec![
            ("mcp.method.name".to_string(), Value::from(method)),
            (
                "jsonrpc.request.id".to_string(),
                Value::from(id.to_string()),
            ),
        ];
        if let Some(version) = &self.facts.protocol_version {
            attributes.push(("mcp.protocol.version".into(), Value::from(version.clone())));
        }
        if let Some(tool) = tool {
            attributes.push(("gen_ai.tool.name".into(), Value::from(tool)));
            attributes.push(("gen_ai.operation.name".into(), Value::from("execute_tool")));
        }
        let name = match tool {
            Some(tool) => format!("{method} {tool}"),
            None => method.to_string(),
        };
        let traced = Traced {
            trace_id,
            server,
            client,
            parent: host.map(|p| p.span_id),
            sampled,
            start: clock.wall,
            name,
            attributes,
        };
        (text, Some(traced))
    }

    /// The spans of a forwarded request, ended now: `error` is its
    /// `error.type`; `call` adds the decision to the server span.
    pub(super) fn end_spans(
        &self,
        traced: &Traced,
        clock: Clock,
        error: Option<String>,
        call: Option<&CallAudit>,
        out: &mut Vec<Effect>,
    ) {
        let client = SpanRecord {
            name: traced.name.clone(),
            kind: Kind::Client,
            trace_id: traced.trace_id,
            span_id: traced.client,
            parent: Some((traced.server, false)),
            sampled: traced.sampled,
            start: traced.start,
            end: clock.wall,
            attributes: traced.attributes.clone(),
            error: error.clone(),
        };
        let mut attributes = traced.attributes.clone();
        if let Some(call) = call {
            let judged = &call.judged;
            let ns = mcp_resolve_telemetry::NAMESPACE;
            attributes.push((format!("{ns}.variant"), judged.variant.clone().into()));
            attributes.push((format!("{ns}.decision"), judged.decision.as_str().into()));
            attributes.push((format!("{ns}.policies"), judged.policies.join(", ").into()));
            attributes.push((
                format!("{ns}.required_scopes"),
                judged.scopes.join(" ").into(),
            ));
            attributes.push((format!("{ns}.described"), judged.described.into()));
            attributes.push((format!("{ns}.outcome"), call.outcome.into()));
            if let Value::Object(hints) = judged.annotations.complete_json() {
                for (hint, value) in hints {
                    attributes.push((format!("{ns}.hint.{hint}"), value));
                }
            }
        }
        let server = SpanRecord {
            name: traced.name.clone(),
            kind: Kind::Server,
            trace_id: traced.trace_id,
            span_id: traced.server,
            parent: traced.parent.map(|p| (p, true)),
            sampled: traced.sampled,
            start: traced.start,
            end: clock.wall,
            attributes,
            error,
        };
        out.push(Effect::Span(client));
        out.push(Effect::Span(server));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const TP: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn the_traceparent_is_spliced_in_and_the_rest_kept_as_written() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{"traceparent":"{TP}"}},"name":"t"}}}}"#
                ),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{}}"#,
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{{"traceparent":"{TP}"}}}}}}"#
                ),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":7}, "a" : 1}}"#,
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{{"traceparent":"{TP}","progressToken":7}}, "a" : 1}}}}"#
                ),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"traceparent":"00-1-2-01"}}}"#,
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{{"traceparent":"{TP}"}}}}}}"#
                ),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"_meta":{{"traceparent":"{TP}"}}}}}}"#
                ),
            ),
        ];
        for (text, expected) in cases {
            let out = inject(text, TP).unwrap();
            assert_eq!(out, expected);
            serde_json::from_str::<Value>(&out).unwrap();
        }
        // Params that are not an object: left alone.
        assert!(inject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#, TP).is_none());
        // The host's context is read from params.
        let parent = host_parent(&format!(r#"{{"_meta":{{"traceparent":"{TP}"}}}}"#)).unwrap();
        assert_eq!(parent.span_id, 0xb7ad6b7169203331);
        assert!(host_parent(r#"{"_meta":{"traceparent":"garbage"}}"#).is_none());
        assert!(host_parent(r#"{"_meta":{"traceparent":7}}"#).is_none());
    }
}
