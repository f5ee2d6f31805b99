//! The exporter (feature `export`, on by default): records, spans and
//! measures handed to a worker thread of their own, made the OpenTelemetry
//! SDK's objects there and exported over OTLP/HTTP.

mod gate;
mod keys;
mod record;
mod spans;

use std::cell::Cell;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub use gate::Say;
use gate::{Gate, Gated};

use crate::{Fields, Measure, NAMESPACE, SpanRecord};

use opentelemetry::KeyValue;
use opentelemetry::logs::LoggerProvider as _;
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _, UpDownCounter};
use opentelemetry::trace::{SpanId, TraceId, TracerProvider as _};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator, SdkTracer, SdkTracerProvider};
use serde_json::Value;

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

/// Where telemetry goes, once set up: records, spans and measures go into
/// a bounded queue (a full one drops, counts and says so once) that a
/// worker thread of their own empties every [`DESK_INTERVAL`], building the
/// SDK's objects and queueing them for export. On a request's path, only
/// the hand-over: no lock, and no thread is woken.
pub struct Telemetry {
    jobs: SyncSender<Job>,
    worker: Mutex<Option<JoinHandle<()>>>,
    thread: std::thread::Thread,
    sdk: Arc<Sdk>,
    job_gate: Arc<Gate>,
}

/// What the worker is given.
enum Job {
    Record(Value),
    /// A record written out on the worker.
    Later(Box<dyn FnOnce() -> Fields + Send>),
    Span(Box<SpanRecord>),
    Measure(Measure),
    /// Answered once everything before it was handed to the SDK.
    Flush(SyncSender<()>),
    Stop,
}

/// How often the worker empties its queue.
pub const DESK_INTERVAL: Duration = Duration::from_millis(100);

/// How many records, spans and measures may wait for the worker.
const JOBS: usize = 8_192;

/// The SDK's providers and instruments, used by the worker.
struct Sdk {
    traces: SdkTracerProvider,
    tracer: SdkTracer,
    logs: SdkLoggerProvider,
    metrics: SdkMeterProvider,
    logger: SdkLogger,
    span_gate: Arc<Gate>,
    log_gate: Arc<Gate>,
    instruments: Instruments,
}

/// The metrics, by the conventions' names where they have one.
struct Instruments {
    decisions: Counter<u64>,
    server_duration: Histogram<f64>,
    client_duration: Histogram<f64>,
    asks_pending: UpDownCounter<i64>,
    ask_duration: Histogram<f64>,
    upstream_errors: Counter<u64>,
    upstream_restarts: Counter<u64>,
    withheld: Counter<u64>,
    unrouted: Counter<u64>,
}

/// The span attributes a request's duration is recorded by (low
/// cardinality: no ids).
const DURATION_ATTRIBUTES: &[&str] = &[
    "mcp.method.name",
    "gen_ai.tool.name",
    "gen_ai.operation.name",
    "mcp.protocol.version",
    "network.transport",
    "network.protocol.name",
    "mcp_resolve.decision",
    "mcp_resolve.outcome",
];

/// The buckets of a request's duration (s): from the proxy's own answers
/// (tens of µs) to a slow tool (a minute).
const DURATION_BUCKETS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

impl std::fmt::Debug for Sdk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sdk").finish_non_exhaustive()
    }
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
    /// What cannot be exported (a full queue, a collector that is down)
    /// is said once through `say`, and counted.
    pub fn from_env(otlp: Option<&str>, say: Say) -> Result<Option<Telemetry>, TelemetryError> {
        let Some(sdk) = Sdk::from_env(otlp, say)? else {
            return Ok(None);
        };
        let sdk = Arc::new(sdk);
        let (jobs, queue) = std::sync::mpsc::sync_channel::<Job>(JOBS);
        let worker_sdk = Arc::clone(&sdk);
        let worker = std::thread::Builder::new()
            .name("mcp-resolve-telemetry".into())
            .spawn(move || work(&queue, &worker_sdk))
            .map_err(|e| TelemetryError::Exporter {
                signal: "any signal",
                message: format!("cannot start its thread: {e}"),
            })?;
        Ok(Some(Telemetry {
            jobs,
            thread: worker.thread().clone(),
            worker: Mutex::new(Some(worker)),
            sdk,
            job_gate: Gate::new("telemetry", JOBS, say),
        }))
    }

    fn hand_over(&self, job: Job) {
        if let Err(TrySendError::Full(_)) = self.jobs.try_send(job) {
            self.job_gate.refuse();
        }
    }

    /// Asks the worker for `job` now (a flush, the stop).
    fn ask(&self, job: Job) -> bool {
        let sent = self.jobs.send(job).is_ok();
        self.thread.unpark();
        sent
    }

    /// Exports one audit record: a log record linked to its span
    /// (`traceId`, `spanId`), and the decisions counter.
    pub fn record(&self, record: Value) {
        self.hand_over(Job::Record(record));
    }

    /// As [`Telemetry::record`], with the record written out by `build`
    /// on the worker: what it costs is spent off the caller's path.
    pub fn record_later(&self, build: Box<dyn FnOnce() -> Fields + Send>) {
        self.hand_over(Job::Later(build));
    }

    /// Exports a request's spans (see [`SpanRecord`]), and records their
    /// durations (`mcp.server.operation.duration`,
    /// `mcp.client.operation.duration`).
    pub fn span(&self, span: Box<SpanRecord>) {
        self.hand_over(Job::Span(span));
    }

    /// Counts something no audit record or span says.
    pub fn measure(&self, measure: Measure) {
        self.hand_over(Job::Measure(measure));
    }

    /// Waits until everything given so far was handed to the SDK's batch
    /// queues (not sent: that is the exporters' own pace).
    pub fn flush(&self) {
        let (done, wait) = std::sync::mpsc::sync_channel(1);
        if self.ask(Job::Flush(done)) {
            let _ = wait.recv();
        }
    }

    /// Sends what is queued and stops, waiting [`SHUTDOWN_TIMEOUT`] at the
    /// most for each signal (a dead collector costs the exit that, not a
    /// hang). Returns why, for each signal that could not be sent, and what
    /// was lost over the run.
    pub fn shutdown(&self) -> Vec<String> {
        // The worker only queues (never waits on the collector): it is
        // done with what it was given at once.
        if self.ask(Job::Stop)
            && let Ok(mut worker) = self.worker.lock()
            && let Some(worker) = worker.take()
        {
            let _ = worker.join();
        }
        let mut failed = self.sdk.shutdown();
        failed.extend(self.job_gate.losses());
        failed
    }
}

/// The worker: empties the queue every [`DESK_INTERVAL`], or at once when
/// a flush or the stop is asked, until the stop (or every sender is gone).
fn work(queue: &Receiver<Job>, sdk: &Sdk) {
    // The decision of the last audit record that named its span: the
    // span's own record comes just before it.
    let mut decided: Option<(u64, Vec<KeyValue>)> = None;
    loop {
        loop {
            match queue.try_recv() {
                Ok(Job::Record(record)) => decided = sdk.keep(Fields::of_value(record)),
                Ok(Job::Later(build)) => decided = sdk.keep(build()),
                Ok(Job::Span(span)) => {
                    let decision = decided
                        .take_if(|(id, _)| *id == span.span_id)
                        .map(|(_, d)| d);
                    sdk.span(&span, decision.as_deref().unwrap_or_default());
                }
                Ok(Job::Measure(measure)) => sdk.measure(&measure),
                Ok(Job::Flush(done)) => {
                    let _ = done.send(());
                }
                Ok(Job::Stop) | Err(TryRecvError::Disconnected) => return,
                Err(TryRecvError::Empty) => break,
            }
        }
        std::thread::park_timeout(DESK_INTERVAL);
    }
}

impl Sdk {
    /// Exports one audit record ([`Sdk::record`]), and gives the decision
    /// its span takes, when it names one.
    fn keep(&self, record: Fields) -> Option<(u64, Vec<KeyValue>)> {
        let decision = spans::decision(&record);
        self.record(record);
        decision
    }

    /// The SDK as [`Telemetry::from_env`] sets it up.
    #[expect(
        clippy::too_many_lines,
        reason = "each OTEL_* variable read and checked where the SDK piece it configures is built"
    )]
    fn from_env(otlp: Option<&str>, say: Say) -> Result<Option<Sdk>, TelemetryError> {
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
        let span_gate = Gate::new(
            "traces",
            gate::queue_size("OTEL_BSP_MAX_QUEUE_SIZE", &env),
            say,
        );
        let log_gate = Gate::new(
            "logs",
            gate::queue_size("OTEL_BLRP_MAX_QUEUE_SIZE", &env),
            say,
        );
        let traces = SdkTracerProvider::builder()
            .with_resource(resource.clone())
            .with_id_generator(ChosenIds)
            .with_batch_exporter(Gated {
                inner: spans,
                gate: Arc::clone(&span_gate),
            })
            .build();
        let tracer = traces.tracer(SERVICE_NAME);
        let logs = SdkLoggerProvider::builder()
            .with_resource(resource.clone())
            .with_batch_exporter(Gated {
                inner: logs,
                gate: Arc::clone(&log_gate),
            })
            .build();
        let metrics = SdkMeterProvider::builder()
            .with_resource(resource)
            .with_periodic_exporter(metrics)
            .build();
        let logger = logs.logger(SERVICE_NAME);
        let meter = metrics.meter(SERVICE_NAME);
        let duration = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_description(description)
                .with_unit("s")
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build()
        };
        // What the queues dropped and the collector did not accept, read
        // at each export.
        let gates = [Arc::clone(&span_gate), Arc::clone(&log_gate)];
        let lost = gates.clone();
        let _dropped = meter
            .u64_observable_counter("mcp_resolve.telemetry.dropped")
            .with_description("Spans and log records dropped because their queue was full")
            .with_unit("{item}")
            .with_callback(move |observer| {
                for gate in &gates {
                    observer.observe(gate.dropped(), &[KeyValue::new("signal", gate.signal)]);
                }
            })
            .build();
        let _failed = meter
            .u64_observable_counter("mcp_resolve.telemetry.failed")
            .with_description("Spans and log records the collector did not accept")
            .with_unit("{item}")
            .with_callback(move |observer| {
                for gate in &lost {
                    observer.observe(gate.failed(), &[KeyValue::new("signal", gate.signal)]);
                }
            })
            .build();
        let instruments = Instruments {
            decisions: meter
                .u64_counter("mcp_resolve.decisions")
                .with_description("Calls and resolutions the proxy judged, by decision and outcome")
                .with_unit("{call}")
                .build(),
            server_duration: duration(
                "mcp.server.operation.duration",
                "A host's request, from the proxy reading it to its answer",
            ),
            client_duration: duration(
                "mcp.client.operation.duration",
                "A request the proxy forwarded, from sending it to the server's answer",
            ),
            asks_pending: meter
                .i64_up_down_counter("mcp_resolve.asks.pending")
                .with_description("Questions to the user the proxy holds a call for")
                .with_unit("{question}")
                .build(),
            ask_duration: meter
                .f64_histogram("mcp_resolve.ask.duration")
                .with_description("How long the user took to answer a question, by outcome")
                .with_unit("s")
                .with_boundaries(vec![0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0])
                .build(),
            upstream_errors: meter
                .u64_counter("mcp_resolve.upstream.errors")
                .with_description(
                    "Requests the server failed: it exited, timed out, or could not be reached",
                )
                .with_unit("{error}")
                .build(),
            upstream_restarts: meter
                .u64_counter("mcp_resolve.upstream.restarts")
                .with_description("Servers started in place of one that ended")
                .with_unit("{restart}")
                .build(),
            withheld: meter
                .u64_counter("mcp_resolve.tools.withheld")
                .with_description(
                    "Tools left out of a listing the host is shown, by what withheld them",
                )
                .with_unit("{tool}")
                .build(),
            unrouted: meter
                .u64_counter("mcp_resolve.messages.unrouted")
                .with_description(
                    "Server messages dropped because they belong to no live request of the host they would reach",
                )
                .with_unit("{message}")
                .build(),
        };
        Ok(Some(Sdk {
            traces,
            tracer,
            logs,
            metrics,
            logger,
            span_gate,
            log_gate,
            instruments,
        }))
    }

    /// Counts something no audit record or span says.
    fn measure(&self, measure: &Measure) {
        let m = &self.instruments;
        match measure {
            Measure::AskOpened => m.asks_pending.add(1, &[]),
            Measure::AskClosed { outcome, wait } => {
                m.asks_pending.add(-1, &[]);
                m.ask_duration.record(
                    wait.as_secs_f64(),
                    &[KeyValue::new(format!("{NAMESPACE}.ask.outcome"), *outcome)],
                );
            }
            Measure::UpstreamError { kind } => {
                m.upstream_errors
                    .add(1, &[KeyValue::new("error.type", *kind)]);
            }
            Measure::UpstreamRestart => m.upstream_restarts.add(1, &[]),
            Measure::Withheld { by, tools } => m.withheld.add(
                *tools,
                &[KeyValue::new(format!("{NAMESPACE}.withheld_by"), *by)],
            ),
            Measure::Unrouted { kind } => m.unrouted.add(
                1,
                &[KeyValue::new(format!("{NAMESPACE}.message.kind"), *kind)],
            ),
        }
    }

    /// Sends what is queued and stops, waiting [`SHUTDOWN_TIMEOUT`] at the
    /// most for each signal (a dead collector costs the exit that, not a
    /// hang). Returns why, for each signal that could not be sent.
    fn shutdown(&self) -> Vec<String> {
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
        // What was lost over the whole run, the last batches included.
        failed.extend(self.span_gate.losses());
        failed.extend(self.log_gate.losses());
        failed
    }
}

/// `camelCase` as `snake_case` (`requiredScopes` → `required_scopes`).
pub(crate) fn snake(name: &str) -> String {
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

/// A JSON value as a span or metric attribute's value (`None` for null;
/// arrays and objects as their JSON text).
fn scalar(value: &Value) -> Option<opentelemetry::Value> {
    Some(match value {
        Value::Bool(b) => opentelemetry::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => opentelemetry::Value::I64(i),
            None => opentelemetry::Value::F64(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => opentelemetry::Value::String(s.clone().into()),
        Value::Null => return None,
        other => opentelemetry::Value::String(other.to_string().into()),
    })
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
        assert_eq!(snake("requiredScopes"), "required_scopes");
        assert_eq!(
            signal_url("http://h:4318/", "v1/logs"),
            "http://h:4318/v1/logs"
        );
    }
}
