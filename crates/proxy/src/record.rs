//! Audit records as the session gives them: a call's record is kept as
//! what it is made of (the judgement, the outcome, the times) and written
//! out as JSON only where it is kept — with telemetry alone, on the
//! telemetry worker, so that a forwarded call's answer does not wait for
//! its audit record to be built.

use std::time::{Duration, SystemTime};

use mcp_resolve_host::time::rfc3339;
use serde_json::{Value, json};

use crate::guard::Judged;

/// One audit record (`docs/proxy.md` lists its fields).
#[derive(Clone, Debug)]
pub enum Record {
    /// A record already written out.
    Built(Value),
    /// A `tools/call`'s record, written out when it is kept.
    Call(Box<CallRecord>),
}

/// What a `tools/call`'s audit record says, before it is written out.
#[derive(Clone, Debug)]
pub struct CallRecord {
    judged: Judged,
    at: SystemTime,
    outcome: &'static str,
    latency: Option<Duration>,
    arguments: Option<Value>,
    /// The request's trace and server span, when it was traced.
    span: Option<(u128, u64)>,
}

impl Record {
    /// The record of the call `judged` at `at`: `outcome` says what became
    /// of it, `latency` how long the server took to answer it.
    pub(crate) fn call(
        judged: Judged,
        at: SystemTime,
        outcome: &'static str,
        latency: Option<Duration>,
        arguments: Option<Value>,
    ) -> Record {
        Record::Call(Box::new(CallRecord {
            judged,
            at,
            outcome,
            latency,
            arguments,
            span: None,
        }))
    }

    /// Names the request's trace and server span (`traceId`, `spanId`), so
    /// that its log record is linked to the span.
    pub(crate) fn link(&mut self, trace_id: u128, span_id: u64) {
        match self {
            Record::Built(Value::Object(record)) => {
                record.insert("traceId".into(), format!("{trace_id:032x}").into());
                record.insert("spanId".into(), format!("{span_id:016x}").into());
            }
            Record::Built(_) => {}
            Record::Call(call) => call.span = Some((trace_id, span_id)),
        }
    }

    /// The record as JSON.
    pub fn value(&self) -> Value {
        match self {
            Record::Built(value) => value.clone(),
            Record::Call(call) => call.value(),
        }
    }

    /// The record as JSON, taken.
    pub fn into_value(self) -> Value {
        match self {
            Record::Built(value) => value,
            Record::Call(call) => call.value(),
        }
    }
}

impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        self.value() == other.value()
    }
}

impl From<Value> for Record {
    fn from(value: Value) -> Record {
        Record::Built(value)
    }
}

impl CallRecord {
    fn value(&self) -> Value {
        let judged = &self.judged;
        let mut record = json!({
            "time": rfc3339(self.at),
            "event": "call",
            "tool": judged.tool,
            "variant": judged.variant,
            "annotations": judged.annotations.complete_json(),
            "requiredScopes": judged.scopes,
            "described": judged.described,
            "decision": judged.decision.as_str(),
            "rule": judged.rule,
            "policies": judged.policies,
            "outcome": self.outcome,
            "upstreamMs": self.latency.map(|l| (l.as_secs_f64() * 1e6).round() / 1e3),
        });
        let Value::Object(map) = &mut record else {
            return record;
        };
        if let Some(arguments) = &self.arguments {
            map.insert("arguments".into(), arguments.clone());
        }
        if let Some(principal) = &judged.principal {
            map.insert(
                "principal".into(),
                json!({"sub": principal.sub, "client_id": principal.client_id}),
            );
        }
        if let Some((trace_id, span_id)) = self.span {
            map.insert("traceId".into(), format!("{trace_id:032x}").into());
            map.insert("spanId".into(), format!("{span_id:016x}").into());
        }
        record
    }
}
