//! Audit records as the session gives them: a call's record is kept as
//! what it is made of (the judgement, the outcome, the times) and written
//! out as JSON only where it is kept — with telemetry alone, on the
//! telemetry worker, so that a forwarded call's answer does not wait for
//! its audit record to be built.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};

use mcp_resolve_host::time::rfc3339;
use mcp_resolve_policy::Principal;
use mcp_resolve_telemetry::{Fields, Key, span_id_hex, trace_id_hex};
use serde_json::{Map, Value};

use mcp_resolve_runtime::{Resolution, RpcError};

use crate::judge::{Judged, StepUp};

/// One audit record (`docs/proxy.md` lists its fields).
#[derive(Clone, Debug)]
pub enum Record {
    /// A record already written out.
    Built(Value),
    /// A `tools/call`'s record, written out when it is kept.
    Call(Box<CallRecord>),
    /// The record of a resolution the proxy answered, written out when it
    /// is kept.
    Resolve(Box<ResolveRecord>),
}

/// What a resolution's audit record says, before it is written out.
#[derive(Clone, Debug)]
pub struct ResolveRecord {
    at: SystemTime,
    tool: String,
    /// The resolution, or the error the proxy answered instead.
    outcome: Result<Resolution, RpcError>,
    arguments: Option<Value>,
    /// The request's trace and server span, when it was traced.
    span: Option<(u128, u64)>,
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
    pub fn call(
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

    /// The record of a resolution of `tool` the proxy answered at `at`.
    pub fn resolve(
        at: SystemTime,
        tool: &str,
        resolution: Result<&Resolution, &RpcError>,
        arguments: Option<&Value>,
    ) -> Record {
        Record::Resolve(Box::new(ResolveRecord {
            at,
            tool: tool.to_string(),
            outcome: resolution.cloned().map_err(Clone::clone),
            arguments: arguments.cloned(),
            span: None,
        }))
    }

    /// Names the request's trace and server span (`traceId`, `spanId`), so
    /// that its log record is linked to the span.
    pub fn link(&mut self, trace_id: u128, span_id: u64) {
        match self {
            Record::Built(Value::Object(record)) => {
                record.insert("traceId".into(), trace_id_hex(trace_id).into());
                record.insert("spanId".into(), span_id_hex(span_id).into());
            }
            Record::Built(_) => {}
            Record::Call(call) => call.span = Some((trace_id, span_id)),
            Record::Resolve(resolve) => resolve.span = Some((trace_id, span_id)),
        }
    }

    /// The record as JSON.
    pub fn value(&self) -> Value {
        match self {
            Record::Built(value) => value.clone(),
            Record::Call(call) => written(call.at, call.fields()),
            Record::Resolve(resolve) => written(resolve.at, resolve.fields()),
        }
    }

    /// The record as the telemetry worker takes it.
    pub fn into_fields(self) -> Fields {
        match self {
            Record::Built(value) => Fields::of_value(value),
            Record::Call(call) => call.fields(),
            Record::Resolve(resolve) => resolve.fields(),
        }
    }

    /// The record as JSON, taken.
    pub fn into_value(self) -> Value {
        match self {
            Record::Built(value) => value,
            Record::Call(call) => written(call.at, call.fields()),
            Record::Resolve(resolve) => written(resolve.at, resolve.fields()),
        }
    }
}

/// Why a call (or a resolution) was refused before its judgement was
/// kept: what its audit record says besides the time, the event and the
/// tool.
#[derive(Debug)]
pub enum Refusal<'a> {
    /// The pin does not allow the tool (`"outcome": "not pinned"`), and why.
    NotPinned(&'a str),
    /// The server's declaration of the tool is not trusted (`"outcome":
    /// "not trusted"`), and why.
    NotTrusted(&'a str),
    /// The arguments fail the rules' `inputSchema`, or no tool is named
    /// (`"outcome": "invalid"`): the error answered, and the arguments when
    /// the audit log keeps them.
    Invalid {
        /// The error the host was answered.
        error: &'a RpcError,
        /// The call's arguments (`--audit-arguments`).
        arguments: Option<Value>,
    },
    /// The bearer token lacks scopes the call's resolution needs
    /// (`"outcome": "insufficient scope"`).
    InsufficientScope {
        /// The variant the call resolved to.
        variant: Option<&'a str>,
        /// The scopes it lacks.
        missing: &'a BTreeSet<String>,
        /// Who presented the token.
        principal: &'a Principal,
    },
}

impl Record {
    /// The record of a step-up (`--auth-issuer`: `"outcome": "insufficient
    /// scope"`) at `at`, for the token of `principal`.
    pub fn stepped_up(at: SystemTime, up: &StepUp, principal: &Principal) -> Record {
        Record::refused(
            at,
            up.event,
            Some(&up.tool),
            Refusal::InsufficientScope {
                variant: up.variant.as_deref(),
                missing: &up.missing,
                principal,
            },
        )
    }

    /// The record of a `tools/call` (`event` "call") or a resolution
    /// (`event` "resolve") of `tool` refused at `at`, for `refusal`.
    pub fn refused(
        at: SystemTime,
        event: &'static str,
        tool: Option<&str>,
        refusal: Refusal<'_>,
    ) -> Record {
        let mut map = Map::with_capacity(8);
        map.insert("time".into(), Value::String(rfc3339(at)));
        map.insert("event".into(), Value::from(event));
        map.insert("tool".into(), tool.map_or(Value::Null, Value::from));
        let mut member = |name: &str, value: Value| {
            map.insert(name.into(), value);
        };
        match refusal {
            Refusal::NotPinned(why) => {
                member("outcome", Value::from("not pinned"));
                member("reason", Value::from(why));
            }
            Refusal::NotTrusted(why) => {
                member("outcome", Value::from("not trusted"));
                member("reason", Value::from(why));
            }
            Refusal::Invalid { error, arguments } => {
                member("outcome", Value::from("invalid"));
                let mut object = Map::with_capacity(2);
                object.insert("code".into(), Value::from(error.code));
                object.insert("message".into(), Value::String(error.message.clone()));
                member("error", Value::Object(object));
                if let Some(arguments) = arguments {
                    member("arguments", arguments);
                }
            }
            Refusal::InsufficientScope {
                variant,
                missing,
                principal,
            } => {
                member("variant", variant.map_or(Value::Null, Value::from));
                member("outcome", Value::from("insufficient scope"));
                member("missing", missing.iter().map(String::as_str).collect());
                let mut who = Map::with_capacity(2);
                who.insert("sub".into(), text(&principal.sub));
                who.insert("client_id".into(), text(&principal.client_id));
                member("principal", Value::Object(who));
            }
        }
        Record::Built(Value::Object(map))
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
    /// The record's members in the order of `docs/proxy.md`, its time and
    /// span apart: what the telemetry worker takes (no map built, no time
    /// or id written as text).
    fn fields(&self) -> Fields {
        let judged = &self.judged;
        let upstream = self.latency.map_or(Value::Null, |l| {
            Value::from((l.as_secs_f64() * 1e6).round() / 1e3)
        });
        let mut members: Vec<(Key, Value)> = Vec::with_capacity(14);
        let mut member =
            |name: &'static str, value: Value| members.push((Key::Borrowed(name), value));
        member("event", Value::from("call"));
        member("tool", Value::String(judged.tool.clone()));
        member("variant", text(&judged.variant));
        member("annotations", judged.annotations.complete_json());
        member("requiredScopes", list(&judged.scopes));
        member("described", Value::Bool(judged.described));
        member("decision", Value::from(judged.decision.as_str()));
        member("rule", text(&judged.rule));
        member("policies", list(&judged.policies));
        member("outcome", Value::from(self.outcome));
        member("upstreamMs", upstream);
        if let Some(arguments) = &self.arguments {
            member("arguments", arguments.clone());
        }
        if let Some(principal) = &judged.principal {
            let mut who = Map::with_capacity(2);
            who.insert("sub".into(), text(&principal.sub));
            who.insert("client_id".into(), text(&principal.client_id));
            member("principal", Value::Object(who));
        }
        Fields {
            time: Some(self.at),
            span: self.span,
            members,
        }
    }
}

impl ResolveRecord {
    /// The record's members in the order of `docs/proxy.md`, its time and
    /// span apart.
    fn fields(&self) -> Fields {
        let mut members: Vec<(Key, Value)> = Vec::with_capacity(6);
        let mut member =
            |name: &'static str, value: Value| members.push((Key::Borrowed(name), value));
        member("event", Value::from("resolve"));
        member("tool", Value::String(self.tool.clone()));
        match &self.outcome {
            Ok(resolution) => {
                member("variant", text(&resolution.variant));
                member("annotations", resolution.annotations.complete_json());
                member("requiredScopes", list(&resolution.required_scopes));
            }
            Err(error) => {
                let mut object = Map::with_capacity(2);
                object.insert("code".into(), Value::from(error.code));
                object.insert("message".into(), Value::String(error.message.clone()));
                member("error", Value::Object(object));
            }
        }
        if let Some(arguments) = &self.arguments {
            member("arguments", arguments.clone());
        }
        Fields {
            time: Some(self.at),
            span: self.span,
            members,
        }
    }
}

/// A text member: the string, or null.
fn text(value: &Option<String>) -> Value {
    value.clone().map_or(Value::Null, Value::String)
}

/// A list of strings as a JSON array.
fn list(items: &[String]) -> Value {
    Value::Array(items.iter().cloned().map(Value::String).collect())
}

/// A record as JSON: `time` first, then its members in order, the span's
/// ids last; each value made as it is (no serializer in between).
fn written(at: SystemTime, fields: Fields) -> Value {
    let mut map = Map::with_capacity(fields.members.len() + 3);
    map.insert("time".into(), Value::String(rfc3339(at)));
    for (name, value) in fields.members {
        map.insert(name.into_owned(), value);
    }
    if let Some((trace_id, span_id)) = fields.span {
        map.insert("traceId".into(), trace_id_hex(trace_id).into());
        map.insert("spanId".into(), span_id_hex(span_id).into());
    }
    Value::Object(map)
}

impl Judged {
    /// The audit record of the call at `at`; `outcome` says what became
    /// of it.
    pub fn record(
        &self,
        at: SystemTime,
        outcome: &'static str,
        arguments: Option<&Value>,
    ) -> Record {
        Record::call(self.clone(), at, outcome, None, arguments.cloned())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use mcp_resolve_policy::Decision;
    use serde_json::json;

    /// The record as it was first written, with `json!`: the record made
    /// member by member must equal it, member order included.
    fn reference(call: &CallRecord) -> Value {
        let judged = &call.judged;
        let mut record = json!({
            "time": rfc3339(call.at),
            "event": "call",
            "tool": judged.tool,
            "variant": judged.variant,
            "annotations": judged.annotations.complete_json(),
            "requiredScopes": judged.scopes,
            "described": judged.described,
            "decision": judged.decision.as_str(),
            "rule": judged.rule,
            "policies": judged.policies,
            "outcome": call.outcome,
            "upstreamMs": call.latency.map(|l| (l.as_secs_f64() * 1e6).round() / 1e3),
        });
        let map = record.as_object_mut().unwrap();
        if let Some(arguments) = &call.arguments {
            map.insert("arguments".into(), arguments.clone());
        }
        if let Some(principal) = &judged.principal {
            map.insert(
                "principal".into(),
                json!({"sub": principal.sub, "client_id": principal.client_id}),
            );
        }
        if let Some((trace_id, span_id)) = call.span {
            map.insert("traceId".into(), format!("{trace_id:032x}").into());
            map.insert("spanId".into(), format!("{span_id:016x}").into());
        }
        record
    }

    fn judged(full: bool) -> Judged {
        Judged {
            tool: "manage_files".into(),
            variant: full.then(|| "read".into()),
            annotations: mcp_resolve_runtime::Annotations::default(),
            scopes: if full {
                vec!["files:read".into(), "x".into()]
            } else {
                vec![]
            },
            decision: if full { Decision::Ask } else { Decision::Allow },
            rule: full.then(|| "p1, p2".into()),
            policies: if full {
                vec!["p1".into(), "p2".into()]
            } else {
                vec![]
            },
            reason: None,
            described: full,
            regate: None,
            principal: full.then(|| mcp_resolve_policy::Principal {
                sub: Some("alice".into()),
                client_id: None,
                scopes: Default::default(),
            }),
        }
    }

    #[test]
    fn a_calls_record_is_written_as_json_would_write_it() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_200_000_123);
        for full in [false, true] {
            let mut record = Record::call(
                judged(full),
                at,
                if full { "accepted" } else { "forwarded" },
                full.then(|| Duration::from_micros(1_234_567)),
                full.then(|| json!({"path": "a", "n": [1, {"b": null}]})),
            );
            let Record::Call(call) = &record else {
                panic!()
            };
            let expected = reference(call);
            assert_eq!(record.value().to_string(), expected.to_string());
            record.link(0x0af7651916cd43dd8448eb211c80319c, 0x00f067aa0ba902b7);
            let Record::Call(call) = &record else {
                panic!()
            };
            assert_eq!(record.value().to_string(), reference(call).to_string());
            assert_eq!(record.clone().into_value(), record.value());
            // The telemetry worker is given what the written line says
            // (its time to the millisecond it is written with).
            let read = Fields::of_value(record.value());
            let fields = record.clone().into_fields();
            assert_eq!(read.members, fields.members);
            assert_eq!(read.span, fields.span);
            assert_eq!((read.time, fields.time), (Some(at), Some(at)));
        }
        // A record already written out is linked in place.
        let mut built = Record::from(json!({"event": "resolve"}));
        built.link(1, 2);
        assert_eq!(
            built.value(),
            json!({"event": "resolve", "traceId": format!("{:032x}", 1), "spanId": format!("{:016x}", 2)})
        );
    }

    /// The resolution's record as it was first written, with `json!`.
    fn resolve_reference(
        at: SystemTime,
        tool: &str,
        resolution: Result<&Resolution, &RpcError>,
        arguments: Option<&Value>,
    ) -> Value {
        let mut record = match resolution {
            Ok(resolution) => json!({
                "time": rfc3339(at),
                "event": "resolve",
                "tool": tool,
                "variant": resolution.variant,
                "annotations": resolution.annotations.complete_json(),
                "requiredScopes": resolution.required_scopes,
            }),
            Err(error) => json!({
                "time": rfc3339(at),
                "event": "resolve",
                "tool": tool,
                "error": {"code": error.code, "message": error.message},
            }),
        };
        if let (Some(arguments), Value::Object(map)) = (arguments, &mut record) {
            map.insert("arguments".into(), arguments.clone());
        }
        record
    }

    #[test]
    fn a_resolutions_record_is_written_as_json_would_write_it() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_200_000_456);
        let resolution = Resolution {
            tool: "manage_files".into(),
            variant: Some("read".into()),
            annotations: judged(true).annotations.clone(),
            required_scopes: vec!["files:read".into()],
        };
        let unmatched = Resolution {
            variant: None,
            required_scopes: Vec::new(),
            ..resolution.clone()
        };
        let error = RpcError::new(-32602, "no such tool", None);
        let arguments = json!({"path": "a"});
        for outcome in [Ok(&resolution), Ok(&unmatched), Err(&error)] {
            for arguments in [None, Some(&arguments)] {
                let mut record = Record::resolve(at, "manage_files", outcome, arguments);
                let mut expected = resolve_reference(at, "manage_files", outcome, arguments);
                assert_eq!(record.value().to_string(), expected.to_string());
                record.link(1, 2);
                if let Value::Object(map) = &mut expected {
                    map.insert("traceId".into(), format!("{:032x}", 1).into());
                    map.insert("spanId".into(), format!("{:016x}", 2).into());
                }
                assert_eq!(record.value().to_string(), expected.to_string());
                assert_eq!(record.clone().into_value(), record.value());
                let read = Fields::of_value(record.value());
                let fields = record.into_fields();
                assert_eq!(read.members, fields.members);
                assert_eq!((read.span, fields.span), (Some((1, 2)), Some((1, 2))));
            }
        }
    }

    /// A refusal's record, as its text reads in the audit log (members in
    /// their order), for each refusal.
    #[test]
    fn refusals_are_recorded_in_one_shape_each() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let text = |record: Record| record.into_value().to_string();
        assert_eq!(
            text(Record::refused(
                at,
                "call",
                Some("rm"),
                Refusal::NotPinned("`rm` is not in the pinned signature")
            )),
            r#"{"time":"2027-01-15T08:00:00.000Z","event":"call","tool":"rm","outcome":"not pinned","reason":"`rm` is not in the pinned signature"}"#
        );
        assert_eq!(
            text(Record::refused(
                at,
                "call",
                Some("rm"),
                Refusal::NotTrusted("unsigned")
            )),
            r#"{"time":"2027-01-15T08:00:00.000Z","event":"call","tool":"rm","outcome":"not trusted","reason":"unsigned"}"#
        );
        let error = RpcError::invalid_params("params.name must be a string (the tool name)");
        assert_eq!(
            text(Record::refused(
                at,
                "call",
                None,
                Refusal::Invalid {
                    error: &error,
                    arguments: Some(json!({"a": 1}))
                }
            )),
            r#"{"time":"2027-01-15T08:00:00.000Z","event":"call","tool":null,"outcome":"invalid","error":{"code":-32602,"message":"params.name must be a string (the tool name)"},"arguments":{"a":1}}"#
        );
        assert_eq!(
            text(Record::refused(
                at,
                "call",
                Some("rm"),
                Refusal::Invalid {
                    error: &error,
                    arguments: None
                }
            )),
            r#"{"time":"2027-01-15T08:00:00.000Z","event":"call","tool":"rm","outcome":"invalid","error":{"code":-32602,"message":"params.name must be a string (the tool name)"}}"#
        );
        let principal = Principal {
            sub: Some("alice".into()),
            client_id: None,
            scopes: BTreeSet::new(),
        };
        let missing = BTreeSet::from(["files:write".to_string(), "admin".to_string()]);
        assert_eq!(
            text(Record::refused(
                at,
                "resolve",
                Some("manage_files"),
                Refusal::InsufficientScope {
                    variant: Some("overwrite"),
                    missing: &missing,
                    principal: &principal
                }
            )),
            r#"{"time":"2027-01-15T08:00:00.000Z","event":"resolve","tool":"manage_files","variant":"overwrite","outcome":"insufficient scope","missing":["admin","files:write"],"principal":{"sub":"alice","client_id":null}}"#
        );
        // A step-up's record is that refusal's.
        let up = StepUp {
            event: "resolve",
            tool: "manage_files".into(),
            variant: Some("overwrite".into()),
            missing: missing.clone(),
        };
        assert_eq!(
            text(Record::stepped_up(at, &up, &principal)),
            r#"{"time":"2027-01-15T08:00:00.000Z","event":"resolve","tool":"manage_files","variant":"overwrite","outcome":"insufficient scope","missing":["admin","files:write"],"principal":{"sub":"alice","client_id":null}}"#
        );
    }
}
