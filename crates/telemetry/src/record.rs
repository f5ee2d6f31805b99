//! Audit records as the worker takes them ([`Fields`]) and makes them log
//! records with their metrics.
//!
//! A record comes as its members in the audit line's order, with its time
//! and span apart: the proxy's call records are written out as such on the
//! worker, so that no map is built (and hashed) and no time or id is
//! written as text only to be read back.

use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, Severity};
use opentelemetry::trace::{SpanId, TraceFlags, TraceId};
use serde_json::Value;

use crate::{Key, Sdk, keys};

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

impl Sdk {
    /// Exports one audit record: a log record (its values moved into it),
    /// and its metrics. Only queues; never blocks on the collector.
    pub(crate) fn record(&self, fields: Fields) {
        let event = fields
            .get("event")
            .and_then(Value::as_str)
            .unwrap_or("audit");
        let mut log = self.logger.create_log_record();
        log.set_event_name(match event {
            "call" => "mcp_resolve.call",
            "resolve" => "mcp_resolve.resolve",
            _ => "mcp_resolve.audit",
        });
        log.set_severity_number(Severity::Info);
        log.set_severity_text("INFO");
        log.set_body(AnyValue::from(event.to_string()));
        if let Some(time) = fields.time {
            log.set_timestamp(time);
        }
        log.set_observed_timestamp(SystemTime::now());
        let method = match event {
            "resolve" => "tools/resolve",
            _ => "tools/call",
        };
        log.add_attribute("mcp.method.name", method);
        // Linked to the span of the request it is about.
        if let Some((trace, span)) = fields.span {
            log.set_trace_context(
                TraceId::from(trace),
                SpanId::from(span),
                Some(TraceFlags::SAMPLED),
            );
        }
        // What the metrics need, before the values move into the log.
        let text = |k: &str| {
            fields
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("none")
                .to_string()
        };
        let decisions = [
            KeyValue::new("mcp.method.name", method),
            KeyValue::new(keys::field("decision"), text("decision")),
            KeyValue::new(keys::field("outcome"), text("outcome")),
        ];
        for (key, value) in fields.members {
            let name = match key.as_ref() {
                "tool" => opentelemetry::Key::from_static_str("gen_ai.tool.name"),
                other => keys::field(other),
            };
            if let Some(value) = any_value(value) {
                log.add_attribute(name, value);
            }
        }
        if self.log_gate.admit() {
            self.logger.emit(log);
        }
        self.instruments.decisions.add(1, &decisions);
    }
}

/// A JSON value as a log attribute's value, taken (`None` for null).
fn any_value(value: Value) -> Option<AnyValue> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => AnyValue::Boolean(b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => AnyValue::Int(i),
            None => AnyValue::Double(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => AnyValue::String(s.into()),
        Value::Array(items) => {
            AnyValue::ListAny(Box::new(items.into_iter().filter_map(any_value).collect()))
        }
        Value::Object(map) => AnyValue::Map(Box::new(
            map.into_iter()
                .filter_map(|(k, v)| Some((k.into(), any_value(v)?)))
                .collect(),
        )),
    })
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
        assert!(any_value(Value::Null).is_none());
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
