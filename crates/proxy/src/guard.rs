//! The proxy as a host's guard: the core's [`Guard`] holds every listing
//! and call to the rules, the pin, the policy and the declarations; the
//! proxy crate owns where records go ([`Sinks`]: the audit log opened with
//! `std::fs`, and the telemetry exporter).

use std::io::Write;
use std::sync::Mutex;

use serde_json::Value;

use crate::record::Record;

pub use mcp_resolve_proxy_core::guard::{DEFAULT_ASK_TIMEOUT_SECS, Guard};
pub use mcp_resolve_proxy_core::judge::{self, Judged, POLICY_REFUSED};
pub use mcp_resolve_proxy_core::pinned::PinState;

/// A guard that judges nothing, sealing request states with a random key
/// of this process's (`--state-key-file` gives keys instead).
pub fn unkeyed() -> Guard {
    Guard::new(crate::state::random_keys())
}

/// Where audit records go: the audit log and telemetry's exporter (which
/// also takes the session's spans and measures).
#[derive(Debug, Default)]
pub struct Sinks {
    /// Where audit lines go.
    pub audit: Option<Audit>,
    /// OpenTelemetry (`--otlp`, `OTEL_*`): every audit record is also
    /// exported, as a log record and metrics.
    pub telemetry: Option<mcp_resolve_telemetry::Telemetry>,
}

impl Sinks {
    /// Whether audit records are wanted: an audit log, or telemetry.
    pub fn records(&self) -> bool {
        self.audit.is_some() || self.telemetry.is_some()
    }

    /// Writes an audit record where it is wanted: the audit log and
    /// telemetry (which only queues it).
    /// With telemetry alone, a call's record is written out on the
    /// telemetry worker, off the request path.
    pub fn keep(&self, record: impl Into<Record>) {
        match (&self.audit, &self.telemetry) {
            (None, None) => {}
            (None, Some(telemetry)) => match record.into() {
                Record::Built(value) => telemetry.record(value),
                call => telemetry.record_later(Box::new(move || call.into_fields())),
            },
            (audit, telemetry) => {
                let record = record.into().into_value();
                if let Some(audit) = audit {
                    audit.write(&record);
                }
                if let Some(telemetry) = telemetry {
                    telemetry.record(record);
                }
            }
        }
    }
}

/// An audit log: one JSON line per record, each written whole with one
/// write and flushed before the next (so lines never interleave and none
/// waits in a buffer when the proxy stops).
pub struct Audit {
    out: Mutex<Box<dyn Write + Send>>,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit").finish_non_exhaustive()
    }
}

impl Audit {
    /// The log at `path` (appended to), or standard error for `-`.
    pub fn open(path: &std::path::Path) -> std::io::Result<Audit> {
        let out: Box<dyn Write + Send> = if path.as_os_str() == "-" {
            Box::new(std::io::stderr())
        } else {
            Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            )
        };
        Ok(Audit {
            out: Mutex::new(out),
        })
    }

    /// Writes one record.
    pub(crate) fn write(&self, record: &Value) {
        let mut line = record.to_string();
        line.push('\n');
        if let Ok(mut out) = self.out.lock() {
            let written = out.write_all(line.as_bytes()).and_then(|()| out.flush());
            if let Err(e) = written {
                crate::log(&format!("cannot write the audit log: {e}"));
            }
        }
    }
}
