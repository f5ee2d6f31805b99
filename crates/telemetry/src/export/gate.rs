//! The bound in front of each batch queue, and what the exporters could not
//! send: a span or log record is queued only while fewer than the queue's
//! size wait for export; past it, it is dropped and counted, and the first
//! drop is said once. An export that fails (the collector down, slow or
//! refusing) is counted and said once too, never retried on a request's
//! path.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// Where the gate says what it says (the proxy's stderr).
pub type Say = fn(&str);

/// One signal's bound and counts.
#[derive(Debug)]
pub(crate) struct Gate {
    pub(crate) signal: &'static str,
    bound: usize,
    queued: AtomicUsize,
    dropped: AtomicU64,
    failed: AtomicU64,
    said_drop: AtomicBool,
    said_failure: AtomicBool,
    say: Say,
}

impl Gate {
    /// A gate for `signal` whose queue holds `bound` items.
    pub(crate) fn new(signal: &'static str, bound: usize, say: Say) -> Arc<Gate> {
        Arc::new(Gate {
            signal,
            bound: bound.max(1),
            queued: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            said_drop: AtomicBool::new(false),
            said_failure: AtomicBool::new(false),
            say,
        })
    }

    /// Whether one more item may be queued (counted as queued if so; as
    /// dropped if not).
    pub(crate) fn admit(&self) -> bool {
        let admitted = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.bound).then_some(n + 1)
            })
            .is_ok();
        if !admitted {
            self.refuse();
        }
        admitted
    }

    /// An item refused before it was queued (its queue is full).
    pub(crate) fn refuse(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        if !self.said_drop.swap(true, Ordering::Relaxed) {
            (self.say)(&format!(
                "telemetry: the {} queue is full ({} waiting); what does not fit is dropped and counted, and said again only at exit",
                self.signal, self.bound
            ));
        }
    }

    /// An admitted item that will not reach the exporter after all (a span
    /// the sampler did not record).
    pub(crate) fn release(&self) {
        let _ = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// `n` items left the queue for the exporter, which said `result`.
    fn exported(&self, n: usize, result: &OTelSdkResult) {
        let _ = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                Some(q.saturating_sub(n))
            });
        if let Err(e) = result {
            self.failed.fetch_add(n as u64, Ordering::Relaxed);
            if !self.said_failure.swap(true, Ordering::Relaxed) {
                (self.say)(&format!(
                    "telemetry: cannot export {} to the collector: {e}; further failures are counted, and said again only at exit",
                    self.signal
                ));
            }
        }
    }

    /// What was lost, for the exit: `None` when nothing was.
    pub(crate) fn losses(&self) -> Option<String> {
        let (dropped, failed) = (
            self.dropped.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
        );
        (dropped + failed > 0).then(|| {
            format!(
                "{}: {dropped} dropped (queue full), {failed} not accepted by the collector",
                self.signal
            )
        })
    }

    /// Items dropped at the queue so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Items the exporter could not send so far.
    pub(crate) fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }
}

/// An exporter that tells its gate what left the queue.
#[derive(Debug)]
pub(crate) struct Gated<E> {
    pub(crate) inner: E,
    pub(crate) gate: Arc<Gate>,
}

impl<E: SpanExporter> SpanExporter for Gated<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len();
        let result = self.inner.export(batch).await;
        self.gate.exported(n, &result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: LogExporter> LogExporter for Gated<E> {
    async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
        let n = batch.iter().count();
        let result = self.inner.export(batch).await;
        self.gate.exported(n, &result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The size of a batch queue as the SDK reads it from `variable`.
pub(crate) fn queue_size(variable: &str, env: &dyn Fn(&str) -> Option<String>) -> usize {
    env(variable)
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(2_048)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_sdk::error::OTelSdkError;

    fn quiet(_: &str) {}

    #[test]
    fn the_bound_drops_and_counts_and_export_frees_it() {
        let gate = Gate::new("traces", 2, quiet);
        assert!(gate.admit());
        assert!(gate.admit());
        assert!(!gate.admit());
        assert_eq!(gate.dropped(), 1);
        gate.exported(2, &Ok(()));
        assert!(gate.admit());
        gate.release();
        assert!(gate.admit());
        gate.exported(2, &Err(OTelSdkError::InternalFailure("down".into())));
        assert_eq!(gate.failed(), 2);
        assert_eq!(
            gate.losses().as_deref(),
            Some("traces: 1 dropped (queue full), 2 not accepted by the collector")
        );
        assert!(Gate::new("logs", 1, quiet).losses().is_none());
    }

    #[test]
    fn queue_sizes_are_read_as_the_sdk_reads_them() {
        let env = |v: &str| (v == "Q").then(|| "16".to_string());
        assert_eq!(queue_size("Q", &env), 16);
        assert_eq!(queue_size("R", &env), 2_048);
        let zero = |_: &str| Some("0".to_string());
        assert_eq!(queue_size("Q", &zero), 2_048);
    }
}
