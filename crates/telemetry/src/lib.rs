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

use opentelemetry::KeyValue;
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use serde_json::Value;

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

    /// Sends what is queued and stops, waiting [`SHUTDOWN_TIMEOUT`] at the
    /// most for each signal (a dead collector costs the exit that, not a
    /// hang). Returns why, for each signal that could not be sent.
    pub fn shutdown(&self) -> Vec<String> {
        let mut failed = Vec::new();
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
