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
//!
//! Without the default feature `export`, the crate is the facts alone
//! ([`Fields`], [`SpanRecord`], [`Measure`], [`TraceParent`]): plain data,
//! no OpenTelemetry crate, for code (the proxy's core) that describes what
//! happened and leaves the export to others.
#![deny(missing_docs)]
// No library function over 100 lines (clippy.toml); each exception says why
// it reads better whole. Tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod context;
#[cfg(feature = "export")]
mod export;
mod facts;

pub use context::{TraceParent, span_id_hex, trace_id_hex};
#[cfg(feature = "export")]
pub use export::*;
pub use facts::{ClientSpan, Fields, Key, Measure, NAMESPACE, SpanRecord};
