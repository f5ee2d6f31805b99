//! Traces, when telemetry is on: a server-kind span for each request the
//! host sends and the proxy forwards, a client-kind span for the request it
//! sends the server, the host's trace continued from the request's
//! `_meta.traceparent`, and the proxy's client span put in the forwarded
//! request's `_meta.traceparent` (spliced in: the rest of the message stays
//! as the host wrote it). The spans are effects; the adapter exports them.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mcp_resolve_protocol::{Envelope, MetaAt, may_name_meta, splice};
use mcp_resolve_telemetry::{ClientSpan, Key, SpanRecord, TraceParent};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{Clock, Effect, HostMessage, Session};

/// Where span and trace ids come from (random in the proxy, counted in
/// tests).
pub type Ids = Box<dyn FnMut() -> u128 + Send>;

/// A host request's spans, from the moment the proxy read it.
pub(super) struct Traced {
    trace_id: u128,
    server: u64,
    client: u64,
    /// The host's span, when it sent a `traceparent`.
    parent: Option<u64>,
    sampled: bool,
    start: SystemTime,
    /// When the request went to the server (after a question, later than
    /// `start`); `None` while the proxy has not forwarded it.
    sent: Option<SystemTime>,
    method: Key,
    tool: Option<String>,
    request_id: Value,
    /// The session's attributes when the request was read.
    session: Arc<[(Key, Value)]>,
    /// The request's own attributes, beyond what it is (a question's).
    extra: Vec<(Key, Value)>,
    /// Where the `traceparent` goes in the request as the host wrote it,
    /// without reading it again (`None`: read it again).
    slot: Option<Slot>,
}

/// The methods a span names without a string of its own.
const METHODS: &[&str] = &[
    "tools/call",
    "tools/list",
    "tools/resolve",
    "initialize",
    "ping",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    mcp_resolve_protocol::SIGNATURE_METHOD,
    crate::declare::MANIFEST_METHOD,
];

/// What every span of a session carries: the transport's attributes, and
/// `mcp.protocol.version` once the host named it.
pub(super) fn shared_attributes(
    transport: &[(&'static str, Value)],
    protocol_version: Option<&str>,
) -> Arc<[(Key, Value)]> {
    transport
        .iter()
        .map(|(k, v)| (Key::Borrowed(*k), v.clone()))
        .chain(protocol_version.map(|v| (Key::Borrowed("mcp.protocol.version"), Value::from(v))))
        .collect()
}

/// `method` as an attribute's value: borrowed when it is a known one.
fn method_key(method: &str) -> Key {
    METHODS.iter().find(|known| **known == method).map_or_else(
        || Key::Owned(method.to_string()),
        |known| Key::Borrowed(known),
    )
}

/// Where the proxy's `traceparent` goes in a request's text of `len`
/// bytes, found when the request was screened, so that the text is not
/// read again to place it.
#[derive(Clone, Copy, Debug)]
struct Slot {
    at: usize,
    len: usize,
    place: Place,
}

/// What is at a [`Slot`]'s `at`.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// The `{` of params that name no `_meta` ([`may_name_meta`]): the
    /// proxy's `_meta` is their first member.
    Params,
    /// The request's closing `}` (it has no params), before which they go.
    Bare,
    /// The `{` of params that may name `_meta`, which end at `end`: only
    /// they are read again, to find it.
    Meta { end: usize },
    /// The `{` of the params' `_meta` object, found when they were read,
    /// and its `traceparent`'s value as written (`start..end`), which the
    /// proxy's replaces: nothing is read again.
    MetaAt {
        open: usize,
        traceparent: Option<(usize, usize)>,
    },
}

impl Slot {
    /// The slot of `params`, a slice of `text` whose `_meta` is where
    /// `meta_at` says.
    fn of(text: &str, params: &str, meta_at: &MetaAt) -> Option<Slot> {
        let at = (params.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
        let end = at + params.len();
        let place = match meta_at {
            MetaAt::At { open, traceparent } if (at..end).contains(open) => Place::MetaAt {
                open: *open,
                traceparent: traceparent.as_ref().map(|t| (t.start, t.end)),
            },
            MetaAt::Absent => Place::Params,
            _ if may_name_meta(params) => Place::Meta { end },
            _ => Place::Params,
        };
        (text.get(at..end) == Some(params) && params.starts_with('{')).then_some(Slot {
            at,
            len: text.len(),
            place,
        })
    }

    /// The slot of a request `text` without params: its closing `}`.
    fn bare(text: &str) -> Option<Slot> {
        let at = text.trim_end().len().checked_sub(1)?;
        (text.as_bytes().get(at) == Some(&b'}')).then_some(Slot {
            at,
            len: text.len(),
            place: Place::Bare,
        })
    }

    /// `text` with `_meta.traceparent` as its params' first member, when
    /// `text` is still the request the slot was found in.
    fn fill(self, text: &str, traceparent: &str) -> Option<String> {
        let at = text.as_bytes().get(self.at);
        match self.place {
            _ if text.len() != self.len => return None,
            Place::Bare if at == Some(&b'}') => {
                // As [`inject`] writes it: what followed the `}` goes.
                let body = text.get(..self.at)?;
                return Some(format!(
                    "{body},\"params\":{{\"_meta\":{{\"traceparent\":\"{traceparent}\"}}}}}}"
                ));
            }
            Place::Meta { end } if at == Some(&b'{') => {
                let value = serde_json::to_string(traceparent).ok()?;
                return inject_into(text, text.get(self.at..end)?, &value);
            }
            Place::MetaAt {
                open,
                traceparent: written,
            } if at == Some(&b'{') => {
                // As [`inject_into`] writes it, without its read: the
                // host's `traceparent` replaced, or the proxy's first in
                // `_meta`.
                let value = format!("\"{traceparent}\"");
                return match written {
                    Some((start, end)) => {
                        Some([text.get(..start)?, &value, text.get(end..)?].concat())
                    }
                    None => first_member(text, open, &format!("\"traceparent\":{value}")),
                };
            }
            Place::Params if at == Some(&b'{') => {}
            _ => return None,
        }
        let (head, rest) = text.split_at(self.at + 1);
        let separator = if rest.trim_start().starts_with('}') {
            ""
        } else {
            ","
        };
        let mut filled = String::with_capacity(text.len() + traceparent.len() + 32);
        filled.push_str(head);
        filled.push_str("\"_meta\":{\"traceparent\":\"");
        filled.push_str(traceparent);
        filled.push_str("\"}");
        filled.push_str(separator);
        filled.push_str(rest);
        Some(filled)
    }
}

impl Traced {
    /// Adds an attribute to both spans.
    pub(super) fn add(&mut self, key: &'static str, value: impl Into<Value>) {
        self.extra.push((Key::Borrowed(key), value.into()));
    }

    /// Whether the request is a `tools/call` (whose result may say
    /// `isError`).
    pub(super) fn is_call(&self) -> bool {
        self.method == "tools/call"
    }

    /// The request is forwarded changed from what the host wrote: its
    /// `traceparent` is placed by reading it again.
    pub(super) fn rewritten(&mut self) {
        self.slot = None;
    }
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
    if !may_name_meta(params) {
        return None;
    }
    let params: Params<'_> = mcp_resolve_protocol::json::from_str(params).ok()?;
    let meta: Meta<'_> = mcp_resolve_protocol::json::from_str(params.meta?.get()).ok()?;
    let text: String = mcp_resolve_protocol::json::from_str(meta.traceparent?.get()).ok()?;
    TraceParent::parse(&text)
}

/// `text` with `member` as the first member of the object whose `{` is at
/// `open`.
fn first_member(text: &str, open: usize, member: &str) -> Option<String> {
    if text.as_bytes().get(open) != Some(&b'{') {
        return None;
    }
    let (head, rest) = text.split_at(open + 1);
    let separator = if rest.trim_start().starts_with('}') {
        ""
    } else {
        ","
    };
    Some([head, member, separator, rest].concat())
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
    inject_into(text, params.get(), &value)
}

/// [`inject`] into `params`, a slice of `text`, with `value` the
/// `traceparent` written as JSON.
fn inject_into(text: &str, params: &str, value: &str) -> Option<String> {
    let parsed: Params<'_> = mcp_resolve_protocol::json::from_str(params).ok()?;
    match parsed.meta {
        None => insert_first(
            text,
            params,
            &format!("\"_meta\":{{\"traceparent\":{value}}}"),
        ),
        Some(meta) => {
            let members: Meta<'_> = mcp_resolve_protocol::json::from_str(meta.get()).ok()?;
            match members.traceparent {
                Some(old) => splice(text, old.get(), value),
                None => insert_first(text, meta.get(), &format!("\"traceparent\":{value}")),
            }
        }
    }
}

/// The request `text` with an HTTP request's `traceparent` header as its
/// `_meta.traceparent`, when the header is valid and the request names no
/// trace context of its own (`None`: keep it as it is). The message's
/// `_meta` wins over the header: it is the one MCP defines.
pub fn with_http_traceparent(text: &str, header: &str) -> Option<String> {
    let parent = TraceParent::parse(header)?;
    let envelope = Envelope::of(text)?;
    if envelope.method.is_none() || envelope.id.is_none() {
        return None;
    }
    if envelope.params.and_then(|p| host_parent(p.get())).is_some() {
        return None;
    }
    inject(text, &parent.header())
}

/// [`with_http_traceparent`] on a request already read (`read`, handed to
/// its session over HTTP), the read following the text: the header's trace
/// context goes in without reading the request again, unless its params
/// name a `_meta` (whose members are read to place it) or were not parsed.
/// `parses`: the session parses the params of the request's method
/// ([`super::reads_params`]; they are made here when it had none).
pub fn adopt_http_traceparent(read: &mut HostMessage, header: &str, parses: bool) {
    let Some(parent) = TraceParent::parse(header) else {
        return;
    };
    if read.method.is_none() || read.id.is_none() {
        return;
    }
    let own = match &read.params {
        Some(tree) => tree
            .pointer("/_meta/traceparent")
            .and_then(Value::as_str)
            .and_then(TraceParent::parse),
        None => read.raw_params().and_then(host_parent),
    };
    if own.is_some() {
        return;
    }
    let traceparent = parent.header();
    let value = Value::String(traceparent.clone());
    let written = value.to_string();
    let meta = read.params.as_ref().map(|tree| tree.get("_meta").is_some());
    let text = &read.text;
    // Where a `traceparent` written at `start` is, in a `_meta` at `open`.
    let placed = |open: usize, start: usize| MetaAt::At {
        open,
        traceparent: Some(start..start + written.len()),
    };
    const META: &str = "\"_meta\":";
    const MEMBER: &str = "\"traceparent\":";
    let (line, params_at, meta_at) = match read.params_at.clone() {
        // No params: they go before the closing `}`, as [`inject`] writes.
        None => {
            let Some(body) = text.trim_end().strip_suffix('}') else {
                return;
            };
            let params = format!("{{{META}{{{MEMBER}{written}}}}}");
            let start = body.len() + ",\"params\":".len();
            let at = start..start + params.len();
            let open = start + 1 + META.len();
            let meta_at = placed(open, open + 1 + MEMBER.len());
            (format!("{body},\"params\":{params}}}"), at, meta_at)
        }
        Some(at) => {
            let Some(params) = text.get(at.clone()) else {
                return;
            };
            let (line, meta_at) = match (meta, &read.meta_at) {
                // Parsed, without `_meta`: the proxy's is their first member.
                (Some(false), _) | (_, MetaAt::Absent) => {
                    let open = at.start + 1 + META.len();
                    let member = format!("{META}{{{MEMBER}{written}}}");
                    let meta_at = placed(open, open + 1 + MEMBER.len());
                    (insert_first(text, params, &member), meta_at)
                }
                // Its `_meta` found where the read placed it: the host's
                // `traceparent` (not a trace context) replaced, or the
                // proxy's first in it, without reading them again.
                (_, MetaAt::At { open, traceparent }) => match traceparent {
                    Some(host) => {
                        let line = text
                            .get(..host.start)
                            .zip(text.get(host.end..))
                            .map(|(head, tail)| [head, &written, tail].concat());
                        (line, placed(*open, host.start))
                    }
                    None => {
                        let member = format!("{MEMBER}{written}");
                        let line = first_member(text, *open, &member);
                        (line, placed(*open, open + 1 + MEMBER.len()))
                    }
                },
                _ => (inject_into(text, params, &written), MetaAt::Unknown),
            };
            let Some(line) = line else {
                return;
            };
            let end = at.end + line.len() - text.len();
            (line, at.start..end, meta_at)
        }
    };
    let had_params = read.params_at.is_some();
    read.text = line;
    read.params_at = Some(params_at);
    read.meta_at = meta_at;
    read.params = match read.params.take() {
        Some(tree) => Some(with_trace_member(tree, value)),
        None if parses && !had_params => {
            Some(with_trace_member(Value::Object(Default::default()), value))
        }
        None => None,
    };
    // Where `_meta` is, as a read gives it: of params the session parses.
    if read.params.is_none() {
        read.meta_at = MetaAt::Unknown;
    }
}

/// Params `tree` (read before [`adopt_http_traceparent`] placed the
/// `traceparent` in their text) as a read of the new text gives them: its
/// `_meta` first when it is new, the `traceparent` first in a `_meta` that
/// had none, in its place in one that had one.
fn with_trace_member(tree: Value, traceparent: Value) -> Value {
    let Value::Object(members) = tree else {
        return tree;
    };
    let mut out = serde_json::Map::new();
    if !members.contains_key("_meta") {
        let mut meta = serde_json::Map::new();
        meta.insert("traceparent".into(), traceparent);
        out.insert("_meta".into(), Value::Object(meta));
        out.extend(members);
        return Value::Object(out);
    }
    for (key, member) in members {
        let member = match member {
            Value::Object(meta) if key == "_meta" => {
                let mut placed = serde_json::Map::new();
                if !meta.contains_key("traceparent") {
                    placed.insert("traceparent".into(), traceparent.clone());
                }
                for (name, value) in meta {
                    let value = if name == "traceparent" {
                        traceparent.clone()
                    } else {
                        value
                    };
                    placed.insert(name, value);
                }
                Value::Object(placed)
            }
            other => other,
        };
        out.insert(key, member);
    }
    Value::Object(out)
}

impl Session<'_> {
    /// Whether spans are wanted.
    pub(super) fn tracing(&self) -> bool {
        self.traces
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

    /// The spans of a host's request (its `params` as written, when it has
    /// them), begun now (`None`: telemetry off): the host's trace continued
    /// when its `_meta` names one, else a trace of its own.
    ///
    /// `parsed`: the params as the screen parsed them, when it did; the
    /// host's trace context is read from them, not from the text again.
    #[expect(
        clippy::too_many_arguments,
        reason = "a request's facts as the screen read them, each its own"
    )]
    pub(super) fn open_trace(
        &mut self,
        text: &str,
        (params, meta_at): (Option<&str>, &MetaAt),
        parsed: Option<&Value>,
        method: &str,
        id: &Value,
        tool: Option<&str>,
        clock: Clock,
    ) -> Option<Traced> {
        if !self.tracing() {
            return None;
        }
        let host = match parsed {
            Some(parsed) => parsed
                .get("_meta")
                .and_then(|meta| meta.get("traceparent"))
                .and_then(Value::as_str)
                .and_then(TraceParent::parse),
            None => params.and_then(host_parent),
        };
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
        Some(Traced {
            trace_id,
            server,
            client,
            parent: host.map(|p| p.span_id),
            sampled: host.is_none_or(|p| p.sampled),
            start: clock.wall,
            sent: None,
            method: method_key(method),
            tool: tool.map(str::to_string),
            request_id: id.clone(),
            session: Arc::clone(&self.span_shared),
            extra: Vec::new(),
            slot: match params {
                Some(params) => Slot::of(text, params, meta_at),
                None => Slot::bare(text),
            },
        })
    }

    /// The request `text` on its way to the server now, with the proxy's
    /// client span as its `_meta.traceparent`.
    pub(super) fn traced_text(traced: &mut Traced, text: String, clock: Clock) -> String {
        traced.sent = Some(clock.wall);
        let header = TraceParent {
            trace_id: traced.trace_id,
            span_id: traced.client,
            sampled: traced.sampled,
        }
        .header();
        traced
            .slot
            .take()
            .and_then(|slot| slot.fill(&text, &header))
            .or_else(|| inject(&text, &header))
            .unwrap_or(text)
    }

    /// Ends a request's spans now: the server span, and the client span if
    /// it was forwarded. `error` is its `error.type`. The audit records
    /// among `out[from..]` (what this request's ending wrote) name the
    /// server span (`traceId`, `spanId`): the log record is linked to it,
    /// and the telemetry worker puts the decision on the span.
    pub(super) fn end_spans(
        &self,
        traced: Traced,
        clock: Clock,
        error: Option<String>,
        from: usize,
        out: &mut Vec<Effect>,
    ) {
        for effect in out.get_mut(from..).into_iter().flatten() {
            if let Effect::Audit(record) = effect {
                record.link(traced.trace_id, traced.server);
            }
        }
        out.push(Effect::Span(Box::new(SpanRecord {
            method: traced.method,
            tool: traced.tool,
            request_id: traced.request_id,
            session: traced.session,
            extra: traced.extra,
            trace_id: traced.trace_id,
            span_id: traced.server,
            parent: traced.parent,
            sampled: traced.sampled,
            start: traced.start,
            end: clock.wall,
            client: traced.sent.map(|start| ClientSpan {
                span_id: traced.client,
                start,
            }),
            error,
        })));
    }

    /// Ends the spans of a request the proxy answered itself: its answer
    /// is the one to `id` among `out[from..]` (none yet: the request waits
    /// for something else, and its spans are given up).
    pub(super) fn end_answered(
        &self,
        traced: Traced,
        id: &Value,
        clock: Clock,
        from: usize,
        out: &mut Vec<Effect>,
    ) {
        let answer = out.get(from..).into_iter().flatten().find_map(|e| match e {
            Effect::Host(line) => {
                let answer = Envelope::of(line)?;
                // Its result as read already: the line is not read again.
                let result = answer.result_raw.filter(|_| !answer.error);
                (answer.is_response() && answer.id.as_ref() == Some(id))
                    .then(|| error_type_of(line, result.map(|r| r.get())))
            }
            _ => None,
        });
        if let Some(error) = answer {
            self.end_spans(traced, clock, error, from, out);
        }
    }
}

/// A question's outcome (`accepted`, `declined`, `timed out`, …) and how
/// long the user took, on a held call's server span.
pub(super) fn asked(traced: &mut Traced, outcome: &str, wait: Duration) {
    traced.add("mcp_resolve.ask.outcome", outcome);
    traced.add(
        "mcp_resolve.ask.wait_ms",
        (wait.as_secs_f64() * 1e6).round() / 1e3,
    );
}

/// The `error.type` of an answer (JSON text): a JSON-RPC error's code,
/// `tool_error` for a tool result with `isError: true`, else none. When
/// its envelope was read already, `result` is its result as written when
/// it is not an error (`None`: read the answer). A result that cannot say
/// `isError: true` — without the literal `true`, or without the word or
/// an escape that could spell it — is not read again.
pub(super) fn error_type_of(answer: &str, result: Option<&str>) -> Option<String> {
    #[derive(Deserialize)]
    struct Outcome {
        #[serde(rename = "isError")]
        is_error: Option<bool>,
    }
    if let Some(result) = result {
        // `isError: true` needs the literal `true` (a literal has no
        // escaped form), and the word or an escape spelling it.
        if memchr::memmem::find(result.as_bytes(), b"true").is_none()
            || !(result.contains("isError") || result.contains('\\'))
        {
            return None;
        }
        let outcome: Outcome = mcp_resolve_protocol::json::from_str(result).ok()?;
        return outcome
            .is_error
            .unwrap_or(false)
            .then(|| "tool_error".into());
    }
    #[derive(Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        error: Option<&'a RawValue>,
        #[serde(borrow)]
        result: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Code {
        code: Option<Value>,
    }
    let answer: Answer<'_> = mcp_resolve_protocol::json::from_str(answer).ok()?;
    if let Some(error) = answer.error {
        let code = mcp_resolve_protocol::json::from_str::<Code>(error.get())
            .ok()
            .and_then(|c| c.code);
        return Some(code.map_or_else(|| "_OTHER".to_string(), |c| c.to_string()));
    }
    let outcome: Outcome = mcp_resolve_protocol::json::from_str(answer.result?.get()).ok()?;
    outcome
        .is_error
        .unwrap_or(false)
        .then(|| "tool_error".to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
