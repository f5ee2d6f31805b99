//! What the proxy tells telemetry, as plain data: audit records as
//! [`Fields`], a request's spans as a [`SpanRecord`], the [`Measure`]s no
//! record says. Free of OpenTelemetry: the proxy's core builds these, and
//! the exporter (feature `export`) turns them into the SDK's objects.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;

/// The project's attribute namespace.
pub const NAMESPACE: &str = "mcp_resolve";

/// An attribute's name: most are the conventions' own, known at compile
/// time, so a span costs no allocation for them.
pub type Key = std::borrow::Cow<'static, str>;

/// Something the proxy counts that no audit record or span says.
#[derive(Clone, Debug, PartialEq)]
pub enum Measure {
    /// A question put to the user about a call (held until answered).
    AskOpened,
    /// A question answered or given up: how, and how long it waited.
    AskClosed {
        /// `accepted`, `declined`, `cancelled`, `unconfirmed`, `timed out`,
        /// `unasked`.
        outcome: &'static str,
        /// From the question to its end.
        wait: Duration,
    },
    /// The server failed a request: `exited`, `timeout`, `unreachable`.
    UpstreamError {
        /// Its `error.type`.
        kind: &'static str,
    },
    /// A new server was started in place of one that ended.
    UpstreamRestart,
    /// Tools left out of a listing the host is shown.
    Withheld {
        /// What withheld them: `pin` or `trust`.
        by: &'static str,
        /// How many.
        tools: u64,
    },
    /// A server message that belongs to no live request of the host it
    /// would reach (a cancelled request's progress, a notification of the
    /// shared 2026-07-28 session no request owns): dropped, never passed
    /// to another host.
    Unrouted {
        /// What it was: `progress` or `notification`.
        kind: &'static str,
    },
}

/// One audit record: its members as the audit line names them and in its
/// order (null values included), and apart from them its time and the
/// span it belongs to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields {
    /// When it happened (the audit line's `time`).
    pub time: Option<SystemTime>,
    /// The request's trace and server span (`traceId`, `spanId`).
    pub span: Option<(u128, u64)>,
    /// The other members, in order.
    pub members: Vec<(Key, Value)>,
}

impl Fields {
    /// An audit line as written (a JSON object), its `time`, `traceId` and
    /// `spanId` read into their places. Anything else than an object has
    /// no members.
    pub fn of_value(record: Value) -> Fields {
        let Value::Object(map) = record else {
            return Fields::default();
        };
        let mut fields = Fields {
            members: Vec::with_capacity(map.len()),
            ..Fields::default()
        };
        let (mut trace, mut span) = (None, None);
        for (key, value) in map {
            // The time and the span's ids are never members, read or not.
            let text = value.as_str();
            match key.as_str() {
                "time" => fields.time = text.and_then(parse_rfc3339),
                "traceId" => trace = text.and_then(|id| u128::from_str_radix(id, 16).ok()),
                "spanId" => span = text.and_then(|id| u64::from_str_radix(id, 16).ok()),
                _ => fields.members.push((Key::Owned(key), value)),
            }
        }
        fields.span = trace.zip(span);
        fields
    }

    /// The member `name`'s value.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.members
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
    }
}

/// The audit line's time (`2026-11-26T15:41:39.123Z`).
fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let (date, time) = text.strip_suffix('Z')?.split_once('T')?;
    let mut date = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (date.next()??, date.next()??, date.next()??);
    let (hms, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let mut hms = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (hms.next()??, hms.next()??, hms.next()??);
    // The fraction's first nine digits, padded with zeros: nanoseconds.
    let digits = fraction.as_bytes();
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let nanos = (0..9).fold(0u32, |n, i| {
        n * 10 + u32::from(digits.get(i).map_or(0, |d| d - b'0'))
    });
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
}

/// A host request's spans, as the proxy's session describes them: the
/// server span from reading the request to its answer, and, when the
/// request was forwarded, the client span of what went upstream.
///
/// It holds the request's facts, not its attributes: the session takes
/// them as they are on the request's path, and the telemetry worker writes
/// out the span's name and attributes ([`SpanRecord::name`],
/// [`SpanRecord::attributes`]) off it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanRecord {
    /// The request's method (`mcp.method.name`).
    pub method: Key,
    /// The tool it names (`gen_ai.tool.name`), if any.
    pub tool: Option<String>,
    /// The request's JSON-RPC id (`jsonrpc.request.id`, as text).
    pub request_id: Value,
    /// What every span of the session carries (`network.transport`,
    /// `mcp.session.id`, `mcp.protocol.version`, …), shared by them.
    pub session: Arc<[(Key, Value)]>,
    /// What this request's spans carry besides (a question's outcome and
    /// wait).
    pub extra: Vec<(Key, Value)>,
    /// The trace.
    pub trace_id: u128,
    /// The server span's id.
    pub span_id: u64,
    /// The host's span, when the request named one.
    pub parent: Option<u64>,
    /// Whether the trace is recorded (the host's flag, else on).
    pub sampled: bool,
    /// When the proxy read the request.
    pub start: SystemTime,
    /// When it was answered.
    pub end: SystemTime,
    /// The client span, when the request was forwarded.
    pub client: Option<ClientSpan>,
    /// `error.type`, when the request failed.
    pub error: Option<String>,
}

impl SpanRecord {
    /// `{method} {tool}` (`tools/call manage_files`), or the method.
    pub fn name(&self) -> String {
        match &self.tool {
            Some(tool) => format!("{} {tool}", self.method),
            None => self.method.to_string(),
        }
    }

    /// What both spans carry, in this order: the method, the request's
    /// id, the session's, the tool and (for a `tools/call`) the operation,
    /// then the request's own. Null values are left out when they are
    /// exported; the project's own (`mcp_resolve.*`) go on the server span
    /// only.
    pub fn attributes(&self) -> Vec<(Key, Value)> {
        let mut all = Vec::with_capacity(self.session.len() + self.extra.len() + 4);
        all.push((
            Key::Borrowed("mcp.method.name"),
            Value::from(self.method.as_ref()),
        ));
        all.push((
            Key::Borrowed("jsonrpc.request.id"),
            Value::from(match &self.request_id {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
        ));
        all.extend(self.session.iter().cloned());
        if let Some(tool) = &self.tool {
            all.push((
                Key::Borrowed("gen_ai.tool.name"),
                Value::from(tool.as_str()),
            ));
            if self.method == "tools/call" {
                all.push((
                    Key::Borrowed("gen_ai.operation.name"),
                    Value::from("execute_tool"),
                ));
            }
        }
        all.extend(self.extra.iter().cloned());
        all
    }
}

/// The client span of a forwarded request (child of its server span).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientSpan {
    /// Its id (the one the forwarded request's `traceparent` carried).
    pub span_id: u64,
    /// When the request was sent (after a question, later than the server
    /// span's start).
    pub start: SystemTime,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn audit_times_convert() {
        let t = parse_rfc3339("2026-11-26T15:41:39.123Z").unwrap();
        let secs = t.duration_since(SystemTime::UNIX_EPOCH).unwrap();
        assert_eq!(secs.as_secs(), 1_795_707_699);
        assert_eq!(secs.subsec_millis(), 123);
        assert!(parse_rfc3339("not a time").is_none());
    }

    /// A written audit line is read back into the fields it was made of.
    #[test]
    fn an_audit_line_is_read_into_its_fields() {
        let line = json!({"time": "2026-11-26T15:41:39.123Z", "event": "call", "tool": "t",
            "rule": null, "traceId": "0af7651916cd43dd8448eb211c80319c",
            "spanId": "b7ad6b7169203331"});
        let fields = Fields::of_value(line);
        assert_eq!(fields.time, parse_rfc3339("2026-11-26T15:41:39.123Z"));
        assert_eq!(
            fields.span,
            Some((0x0af7651916cd43dd8448eb211c80319c, 0xb7ad6b7169203331))
        );
        // In the line's order (serde_json's map order: sorted here, as
        // written with its `preserve_order`).
        let mut names: Vec<&str> = fields.members.iter().map(|(k, _)| k.as_ref()).collect();
        names.sort_unstable();
        assert_eq!(names, ["event", "rule", "tool"]);
        assert_eq!(fields.get("tool"), Some(&json!("t")));
        // A span id without its trace, or one that is not hex: no span.
        let half = Fields::of_value(json!({"spanId": "b7ad6b7169203331"}));
        assert_eq!(half.span, None);
        let bad = Fields::of_value(json!({"traceId": "x", "spanId": "y", "time": 7}));
        assert_eq!((bad.span, bad.time), (None, None));
        assert!(bad.members.is_empty());
        assert_eq!(Fields::of_value(json!([1])), Fields::default());
    }
}
