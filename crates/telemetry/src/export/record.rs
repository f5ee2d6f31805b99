//! Audit records as the worker takes them ([`Fields`]) and makes them log
//! records with their metrics.
//!
//! A record comes as its members in the audit line's order, with its time
//! and span apart: the proxy's call records are written out as such on the
//! worker, so that no map is built (and hashed) and no time or id is
//! written as text only to be read back.

use std::time::SystemTime;

use opentelemetry::KeyValue;
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, Severity};
use opentelemetry::trace::{SpanId, TraceFlags, TraceId};
use serde_json::Value;

use super::{Sdk, keys};
use crate::Fields;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_is_no_value() {
        assert!(any_value(Value::Null).is_none());
    }
}
