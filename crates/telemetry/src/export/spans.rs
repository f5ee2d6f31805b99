//! A host request's spans: what the session says of them ([`SpanRecord`]),
//! and how the worker makes them the SDK's — the server span, the client
//! span of what went upstream, the decision joined from the request's audit
//! record, and their durations in the MCP conventions' histograms.

use std::time::SystemTime;

use opentelemetry::KeyValue;
use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId,
    TraceState, Tracer as _,
};
use serde_json::Value;

use super::{DURATION_ATTRIBUTES, NEXT, Sdk, scalar};
use crate::{Fields, NAMESPACE, SpanRecord};

/// What the audit record `record` says the proxy decided, as the server
/// span's attributes, with the span it names (its `traceId` and `spanId`);
/// `None` for a record that names no span.
pub(crate) fn decision(record: &Fields) -> Option<(u64, Vec<KeyValue>)> {
    /// The scalar fields, in the order their attributes are written.
    const SCALARS: [(&str, &str); 6] = [
        ("variant", "mcp_resolve.variant"),
        ("decision", "mcp_resolve.decision"),
        ("rule", "mcp_resolve.rule"),
        ("described", "mcp_resolve.described"),
        ("outcome", "mcp_resolve.outcome"),
        ("reason", "mcp_resolve.reason"),
    ];
    // One pass over the record's fields (no lookup per field).
    let (_, span) = record.span?;
    let mut scalars = [None; SCALARS.len()];
    let (mut scopes, mut policies, mut hints) = (None, None, None);
    for (key, value) in &record.members {
        match key.as_ref() {
            "requiredScopes" => scopes = value.as_array(),
            "policies" => policies = value.as_array(),
            "annotations" => hints = value.as_object(),
            other => {
                if let Some(i) = SCALARS.iter().position(|(field, _)| *field == other) {
                    scalars[i] = Some(value);
                }
            }
        }
    }
    let mut into = Vec::with_capacity(16);
    for ((_, name), value) in SCALARS.iter().zip(scalars) {
        if let Some(value) = value.and_then(scalar) {
            into.push(KeyValue::new(*name, value));
        }
    }
    let joined = |items: &Vec<Value>, separator: &str| {
        items
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(separator)
    };
    if let Some(scopes) = scopes {
        into.push(KeyValue::new(
            "mcp_resolve.required_scopes",
            joined(scopes, " "),
        ));
    }
    if let Some(policies) = policies {
        into.push(KeyValue::new(
            "mcp_resolve.policies",
            joined(policies, ", "),
        ));
    }
    for (hint, value) in hints.into_iter().flatten() {
        if let Some(value) = scalar(value) {
            into.push(KeyValue::new(super::keys::hint(hint), value));
        }
    }
    Some((span, into))
}

impl Sdk {
    /// Exports a request's spans with the ids the session gave them (the
    /// SDK's sampler decides on the parent's flag), `decision` on the
    /// server span, and records their durations
    /// (`mcp.server.operation.duration`, `mcp.client.operation.duration`).
    /// Only queues.
    pub(crate) fn span(&self, record: &SpanRecord, decision: &[KeyValue]) {
        let shared: Vec<KeyValue> = record
            .attributes()
            .into_iter()
            .filter_map(|(k, v)| Some(KeyValue::new(opentelemetry::Key::from(k), scalar(&v)?)))
            .collect();
        let error = record
            .error
            .as_ref()
            .map(|e| KeyValue::new("error.type", e.clone()));
        // The durations, by the low-cardinality attributes.
        let mut by: Vec<KeyValue> = shared
            .iter()
            .chain(decision)
            .filter(|kv| DURATION_ATTRIBUTES.contains(&kv.key.as_str()))
            .cloned()
            .chain(error.clone())
            .collect();
        let seconds = |from: SystemTime| {
            record
                .end
                .duration_since(from)
                .unwrap_or_default()
                .as_secs_f64()
        };
        self.instruments
            .server_duration
            .record(seconds(record.start), &by);
        if let Some(client) = &record.client {
            by.retain(|kv| !kv.key.as_str().starts_with(NAMESPACE));
            self.instruments
                .client_duration
                .record(seconds(client.start), &by);
        }

        let flags = if record.sampled {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        let context = |span: u64, remote: bool| {
            opentelemetry::Context::new().with_remote_span_context(SpanContext::new(
                TraceId::from(record.trace_id),
                SpanId::from(span),
                flags,
                remote,
                TraceState::default(),
            ))
        };
        let server_attributes: Vec<KeyValue> = shared
            .iter()
            .chain(decision)
            .cloned()
            .chain(error.clone())
            .collect();
        let parent = record
            .parent
            .map_or_else(opentelemetry::Context::new, |p| context(p, true));
        self.export_span(
            record,
            SpanKind::Server,
            record.span_id,
            record.start,
            server_attributes,
            &parent,
        );
        if let Some(client) = &record.client {
            let attributes: Vec<KeyValue> = shared
                .into_iter()
                .filter(|kv| !kv.key.as_str().starts_with(NAMESPACE))
                .chain(error)
                .collect();
            self.export_span(
                record,
                SpanKind::Client,
                client.span_id,
                client.start,
                attributes,
                &context(record.span_id, false),
            );
        }
    }

    /// One span of `record` into the SDK's batch queue, if it fits.
    fn export_span(
        &self,
        record: &SpanRecord,
        kind: SpanKind,
        span_id: u64,
        start: SystemTime,
        attributes: Vec<KeyValue>,
        parent: &opentelemetry::Context,
    ) {
        if !self.span_gate.admit() {
            return;
        }
        let builder = self
            .tracer
            .span_builder(record.name())
            .with_kind(kind)
            .with_start_time(start)
            .with_attributes(attributes);
        NEXT.with(|next| next.set(Some((record.trace_id, span_id))));
        let mut span = self.tracer.build_with_context(builder, parent);
        NEXT.with(|next| next.set(None));
        if !span.is_recording() {
            // Not sampled: nothing is queued.
            self.span_gate.release();
            return;
        }
        if let Some(error) = &record.error {
            span.set_status(Status::error(error.clone()));
        }
        span.end_with_timestamp(record.end);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_decision_is_read_from_the_record_that_names_its_span() {
        let record = json!({"event": "call", "traceId": "000000000000000000000000000000b2",
            "spanId": "00000000000000a1", "variant": "read",
            "decision": "allow", "rule": null, "requiredScopes": ["a", "b"],
            "policies": ["reads"], "annotations": {"readOnlyHint": true}, "outcome": "forwarded"});
        let (span, attributes) = decision(&Fields::of_value(record)).unwrap();
        assert_eq!(span, 0xa1);
        let names: Vec<&str> = attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(
            names,
            [
                "mcp_resolve.variant",
                "mcp_resolve.decision",
                "mcp_resolve.outcome",
                "mcp_resolve.required_scopes",
                "mcp_resolve.policies",
                "mcp_resolve.hint.readOnlyHint"
            ]
        );
        assert_eq!(attributes[3].value.as_str(), "a b");
        assert!(
            decision(&Fields::of_value(
                json!({"event": "call", "variant": "read"})
            ))
            .is_none()
        );
    }
}
