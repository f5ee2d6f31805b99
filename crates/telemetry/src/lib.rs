//! OpenTelemetry for mcp-resolve: what the proxy audits, exported over OTLP.
//!
//! The proxy's audit records (one per `tools/call` and per resolution, with
//! the variant, the resolved hints, the required scopes, the policy's
//! decision and the deciding policies, the outcome) become OpenTelemetry
//! **log records** with the same fields as attributes, and **metrics**
//! (decisions by decision and outcome; the server's answer time). Export is
//! OTLP over HTTP/protobuf with the official crates, batched on the SDK's
//! own threads: a record is queued, never sent on a request's path, and a
//! collector that is down, slow or refusing never delays MCP traffic (the
//! queue is bounded; what it drops, the SDK counts).
//!
//! Configuration is the standard one: `OTEL_EXPORTER_OTLP_ENDPOINT` (or the
//! per-signal `…_LOGS_ENDPOINT`, `…_METRICS_ENDPOINT`), `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_BLRP_*`, `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_SDK_DISABLED`, or
//! the proxy's `--otlp ENDPOINT`. Without either, telemetry is off and
//! nothing of it runs.
//!
//! Architecture invariant: this crate knows nothing of sessions, transports
//! or policy; it is given records and exports them.
#![deny(missing_docs)]

use std::time::{Duration, SystemTime};

use std::cell::Cell;

use opentelemetry::KeyValue;
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId,
    TraceState, Tracer as _, TracerProvider as _,
};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SdkTracer, SdkTracerProvider};
use serde_json::Value;

/// A request's W3C trace context (`traceparent`: version, trace id, parent
/// span id, flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace.
    pub trace_id: u128,
    /// The span the request comes from.
    pub span_id: u64,
    /// Whether the caller records the trace.
    pub sampled: bool,
}

impl TraceParent {
    /// Reads `00-<32 hex>-<16 hex>-<2 hex>` (a later version's first four
    /// fields too); `None` for anything else, or all-zero ids.
    pub fn parse(text: &str) -> Option<TraceParent> {
        let mut parts = text.trim().split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let hex = |s: &str, n: usize| {
            s.len() == n
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if !hex(version, 2) || version == "ff" || (version == "00" && parts.next().is_some()) {
            return None;
        }
        if !hex(trace, 32) || !hex(span, 16) || !hex(flags, 2) {
            return None;
        }
        let trace_id = u128::from_str_radix(trace, 16).ok()?;
        let span_id = u64::from_str_radix(span, 16).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        (trace_id != 0 && span_id != 0).then_some(TraceParent {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
        })
    }

    /// The `traceparent` text of this context.
    pub fn header(&self) -> String {
        format!(
            "00-{:032x}-{:016x}-{:02x}",
            self.trace_id,
            self.span_id,
            u8::from(self.sampled)
        )
    }
}

/// Which side of a request a span is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A request the proxy received from the host.
    Server,
    /// A request the proxy sent to the server.
    Client,
}

/// A finished span, as the proxy's session describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanRecord {
    /// `{method} {target}` (`tools/call manage_files`).
    pub name: String,
    /// Server or client.
    pub kind: Kind,
    /// Its trace.
    pub trace_id: u128,
    /// Its id (the one a client span's `traceparent` carried upstream).
    pub span_id: u64,
    /// Its parent in the trace, if any, and whether that parent is another
    /// process's (the host's).
    pub parent: Option<(u64, bool)>,
    /// Whether the trace is recorded (the host's flag, else on).
    pub sampled: bool,
    /// When it started and ended.
    pub start: SystemTime,
    /// When it ended.
    pub end: SystemTime,
    /// Its attributes (null values left out).
    pub attributes: Vec<(String, Value)>,
    /// `error.type`, when the request failed.
    pub error: Option<String>,
}

thread_local! {
    /// The ids the next span built on this thread gets.
    static NEXT: Cell<Option<(u128, u64)>> = const { Cell::new(None) };
}

/// Gives a span the ids the session chose for it (set just before it is
/// built, on the same thread), else random ones.
#[derive(Debug)]
struct ChosenIds;

impl IdGenerator for ChosenIds {
    fn new_trace_id(&self) -> TraceId {
        NEXT.with(|next| next.get()).map_or_else(
            || RandomIdGenerator::default().new_trace_id(),
            |(t, _)| TraceId::from(t),
        )
    }

    fn new_span_id(&self) -> SpanId {
        NEXT.with(|next| next.get()).map_or_else(
            || RandomIdGenerator::default().new_span_id(),
            |(_, s)| SpanId::from(s),
        )
    }
}

/// The project's attribute namespace.
pub const NAMESPACE: &str = "mcp_resolve";

/// The service name when `OTEL_SERVICE_NAME` says none.
pub const SERVICE_NAME: &str = "mcp-resolve-proxy";

/// How long, at the most, the proxy waits at exit for what is queued to be
/// sent.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// An exporter could not be built (a malformed endpoint or header).
    #[error("cannot export OpenTelemetry {signal}: {message}")]
    Exporter {
        /// `logs` or `metrics`.
        signal: &'static str,
        /// The exporter's words.
        message: String,
    },
}

/// Where telemetry goes, once set up.
pub struct Telemetry {
    traces: SdkTracerProvider,
    tracer: SdkTracer,
    logs: SdkLoggerProvider,
    metrics: SdkMeterProvider,
    logger: SdkLogger,
    decisions: Counter<u64>,
    upstream: Histogram<f64>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").finish_non_exhaustive()
    }
}

/// Whether the environment names an OTLP endpoint for logs or metrics.
fn endpoint_in_environment(env: &dyn Fn(&str) -> Option<String>) -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    ]
    .iter()
    .any(|name| env(name).is_some_and(|v| !v.trim().is_empty()))
}

/// Whether telemetry is to be on: `--otlp`, or an endpoint in the
/// environment, and not `OTEL_SDK_DISABLED=true`.
pub fn wanted(otlp: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> bool {
    let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    !disabled && (otlp.is_some() || endpoint_in_environment(env))
}

/// `--otlp`'s base URL with a signal's path (`/v1/logs`), as OTLP/HTTP
/// appends it to `OTEL_EXPORTER_OTLP_ENDPOINT`.
fn signal_url(base: &str, path: &str) -> String {
    format!("{}/{path}", base.trim_end_matches('/'))
}

impl Telemetry {
    /// Telemetry as `--otlp` (a base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// is) and the `OTEL_*` variables ask; `None` when they ask for none.
    pub fn from_env(otlp: Option<&str>) -> Result<Option<Telemetry>, TelemetryError> {
        let env = |name: &str| std::env::var(name).ok();
        if !wanted(otlp, &env) {
            return Ok(None);
        }
        let mut resource = Resource::builder();
        if env("OTEL_SERVICE_NAME").is_none()
            && !env("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|a| a.contains("service.name="))
        {
            resource = resource.with_service_name(SERVICE_NAME);
        }
        let resource = resource.build();

        let mut logs = opentelemetry_otlp::LogExporter::builder().with_http();
        if let Some(base) = otlp {
            logs = logs.with_endpoint(signal_url(base, "v1/logs"));
        }
        let logs = logs
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| TelemetryError::Exporter {
                signal: "logs",
                message: e.to_string(),
            })?;
        let mut spans = opentelemetry_otlp::SpanExporter::builder().with_http();
        if let Some(base) = otlp {
            spans = spans.with_endpoint(signal_url(base, "v1/traces"));
        }
        let spans = spans
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| TelemetryError::Exporter {
                signal: "traces",
                message: e.to_string(),
            })?;
        let mut metrics = opentelemetry_otlp::MetricExporter::builder().with_http();
        if let Some(base) = otlp {
            metrics = metrics.with_endpoint(signal_url(base, "v1/metrics"));
        }
        let metrics = metrics
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| TelemetryError::Exporter {
                signal: "metrics",
                message: e.to_string(),
            })?;
        let traces = SdkTracerProvider::builder()
            .with_resource(resource.clone())
            .with_id_generator(ChosenIds)
            .with_batch_exporter(spans)
            .build();
        let tracer = traces.tracer(SERVICE_NAME);
        let logs = SdkLoggerProvider::builder()
            .with_resource(resource.clone())
            .with_batch_exporter(logs)
            .build();
        let metrics = SdkMeterProvider::builder()
            .with_resource(resource)
            .with_periodic_exporter(metrics)
            .build();
        let logger = logs.logger(SERVICE_NAME);
        let meter = metrics.meter(SERVICE_NAME);
        let decisions = meter
            .u64_counter("mcp_resolve.decisions")
            .with_description("Calls and resolutions the proxy judged, by decision and outcome")
            .with_unit("{call}")
            .build();
        let upstream = meter
            .f64_histogram("mcp_resolve.upstream.duration")
            .with_description("How long the server took to answer a forwarded tools/call")
            .with_unit("s")
            .build();
        Ok(Some(Telemetry {
            traces,
            tracer,
            logs,
            metrics,
            logger,
            decisions,
            upstream,
        }))
    }

    /// Exports one audit record: a log record, and its metrics. Only
    /// queues; never blocks on the collector.
    pub fn record(&self, record: &Value) {
        let Some(fields) = record.as_object() else {
            return;
        };
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
        if let Some(time) = fields
            .get("time")
            .and_then(Value::as_str)
            .and_then(parse_rfc3339)
        {
            log.set_timestamp(time);
        }
        log.set_observed_timestamp(SystemTime::now());
        let method = match event {
            "resolve" => "tools/resolve",
            _ => "tools/call",
        };
        log.add_attribute("mcp.method.name", method);
        for (key, value) in fields {
            let name = match key.as_str() {
                "tool" => "gen_ai.tool.name".to_string(),
                "time" => continue,
                other => format!("{NAMESPACE}.{}", snake(other)),
            };
            if let Some(value) = any_value(value) {
                log.add_attribute(name, value);
            }
        }
        self.logger.emit(log);

        let text = |k: &str| {
            fields
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("none")
                .to_string()
        };
        self.decisions.add(
            1,
            &[
                KeyValue::new("mcp.method.name", method),
                KeyValue::new(format!("{NAMESPACE}.decision"), text("decision")),
                KeyValue::new(format!("{NAMESPACE}.outcome"), text("outcome")),
            ],
        );
        if let Some(ms) = fields.get("upstreamMs").and_then(Value::as_f64) {
            self.upstream
                .record(ms / 1e3, &[KeyValue::new("gen_ai.tool.name", text("tool"))]);
        }
    }

    /// Exports one finished span, with the ids the session gave it (the
    /// SDK's sampler decides on the parent's flag). Only queues.
    pub fn span(&self, record: &SpanRecord) {
        let mut builder = self
            .tracer
            .span_builder(record.name.clone())
            .with_kind(match record.kind {
                Kind::Server => SpanKind::Server,
                Kind::Client => SpanKind::Client,
            })
            .with_start_time(record.start);
        let mut attributes: Vec<KeyValue> = Vec::with_capacity(record.attributes.len() + 1);
        for (key, value) in &record.attributes {
            let value = match value {
                Value::Bool(b) => opentelemetry::Value::Bool(*b),
                Value::Number(n) => match n.as_i64() {
                    Some(i) => opentelemetry::Value::I64(i),
                    None => opentelemetry::Value::F64(n.as_f64().unwrap_or(0.0)),
                },
                Value::String(s) => opentelemetry::Value::String(s.clone().into()),
                Value::Null => continue,
                other => opentelemetry::Value::String(other.to_string().into()),
            };
            attributes.push(KeyValue::new(key.clone(), value));
        }
        if let Some(error) = &record.error {
            attributes.push(KeyValue::new("error.type", error.clone()));
        }
        builder = builder.with_attributes(attributes);
        let flags = if record.sampled {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        let parent = match record.parent {
            Some((span, remote)) => {
                opentelemetry::Context::new().with_remote_span_context(SpanContext::new(
                    TraceId::from(record.trace_id),
                    SpanId::from(span),
                    flags,
                    remote,
                    TraceState::default(),
                ))
            }
            None => opentelemetry::Context::new(),
        };
        NEXT.with(|next| next.set(Some((record.trace_id, record.span_id))));
        let mut span = self.tracer.build_with_context(builder, &parent);
        NEXT.with(|next| next.set(None));
        if let Some(error) = &record.error {
            span.set_status(Status::error(error.clone()));
        }
        span.end_with_timestamp(record.end);
    }

    /// Sends what is queued and stops, waiting [`SHUTDOWN_TIMEOUT`] at the
    /// most for each signal (a dead collector costs the exit that, not a
    /// hang). Returns why, for each signal that could not be sent.
    pub fn shutdown(&self) -> Vec<String> {
        let mut failed = Vec::new();
        if let Err(e) = self.traces.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
            failed.push(format!("traces: {e}"));
        }
        if let Err(e) = self.logs.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
            failed.push(format!("logs: {e}"));
        }
        if let Err(e) = self.metrics.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
            failed.push(format!("metrics: {e}"));
        }
        failed
    }
}

/// `camelCase` as `snake_case` (`requiredScopes` → `required_scopes`).
fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A JSON value as an attribute value (`None` for null).
fn any_value(value: &Value) -> Option<AnyValue> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => AnyValue::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => AnyValue::Int(i),
            None => AnyValue::Double(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => AnyValue::String(s.clone().into()),
        Value::Array(items) => {
            AnyValue::ListAny(Box::new(items.iter().filter_map(any_value).collect()))
        }
        Value::Object(map) => AnyValue::Map(Box::new(
            map.iter()
                .filter_map(|(k, v)| Some((k.clone().into(), any_value(v)?)))
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
    let nanos: u32 = format!("{fraction:0<9}").get(..9)?.parse().ok()?;
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

    #[test]
    fn off_unless_asked_and_not_disabled() {
        let none = |_: &str| None;
        assert!(!wanted(None, &none));
        assert!(wanted(Some("http://127.0.0.1:4318"), &none));
        let endpoint =
            |n: &str| (n == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "http://c:4318".to_string());
        assert!(wanted(None, &endpoint));
        let disabled = |n: &str| match n {
            "OTEL_SDK_DISABLED" => Some("true".to_string()),
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://c:4318".to_string()),
            _ => None,
        };
        assert!(!wanted(Some("http://x"), &disabled));
        let blank = |n: &str| (n == "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT").then(|| " ".to_string());
        assert!(!wanted(None, &blank));
    }

    #[test]
    fn traceparents_are_read_and_written_as_w3c_says() {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let parent = TraceParent::parse(text).unwrap();
        assert_eq!(parent.trace_id, 0x4bf92f3577b34da6a3ce929d0e0e4736);
        assert_eq!(parent.span_id, 0x00f067aa0ba902b7);
        assert!(parent.sampled);
        assert_eq!(parent.header(), text);
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert!(TraceParent::parse(bad).is_none(), "{bad}");
        }
        // A later version: its first four fields.
        assert!(
            TraceParent::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-x")
                .is_some()
        );
    }

    #[test]
    fn audit_times_and_names_convert() {
        let t = parse_rfc3339("2026-11-26T15:41:39.123Z").unwrap();
        let secs = t.duration_since(SystemTime::UNIX_EPOCH).unwrap();
        assert_eq!(secs.as_secs(), 1_795_707_699);
        assert_eq!(secs.subsec_millis(), 123);
        assert!(parse_rfc3339("not a time").is_none());
        assert_eq!(snake("requiredScopes"), "required_scopes");
        assert_eq!(
            signal_url("http://h:4318/", "v1/logs"),
            "http://h:4318/v1/logs"
        );
        assert!(any_value(&Value::Null).is_none());
    }
}
