//! The proxy as a host's guard: every `tools/call` is judged before it is
//! forwarded — its arguments validated against the rules' `inputSchema`,
//! its variant, resolved annotations and scopes put to the policy — and
//! every call and resolution can be written to an audit log.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use mcp_resolve_runtime::{Annotations, RpcError};
use serde_json::{Map, Value};

use crate::policy::SessionFacts;
use crate::policy::cedar::Engine;
use crate::record::Record;
use crate::rules::ProxyRules;

pub use mcp_resolve_proxy_core::judge::{self, Judged, POLICY_REFUSED};

/// How long, by default, a call the policy asks about waits for the user
/// (`--ask-timeout`), in seconds.
pub const DEFAULT_ASK_TIMEOUT_SECS: u64 = 300;

/// The guard's settings.
#[derive(Debug)]
pub struct Guard {
    /// The per-call policy (Cedar, or a YAML policy's translation);
    /// `None`: every valid call is forwarded.
    pub policy: Option<Engine>,
    /// How long a call the policy asks about waits for the user's answer.
    pub ask_timeout: Duration,
    /// Where audit lines go.
    pub audit: Option<Audit>,
    /// Whether audit lines carry the calls' arguments.
    pub audit_arguments: bool,
    /// The signature the host pinned: tools the server lists that it does
    /// not allow are withheld.
    pub pin: Option<mcp_resolve_host::Signature>,
    /// SEP-3140: the proxy signs the declarations it lists
    /// (`--sign-key`, `--server-uri`).
    pub declare: Option<crate::declare::Declarer>,
    /// SEP-3140: the server's signed declarations are verified, and what
    /// fails is withheld (`--trust`).
    pub verify: Option<crate::trust::Verifier>,
    /// OpenTelemetry (`--otlp`, `OTEL_*`): every audit record is also
    /// exported, as a log record and metrics.
    pub telemetry: Option<mcp_resolve_telemetry::Telemetry>,
    /// The keys 2026-07-28 questions' request states are sealed with
    /// (`--state-key-file`; else one random key of this process's).
    pub state: crate::state::StateKeys,
    /// The request states already used (each is used once).
    pub spent: crate::state::Spent,
}

impl Default for Guard {
    fn default() -> Guard {
        Guard {
            policy: None,
            ask_timeout: Duration::from_secs(DEFAULT_ASK_TIMEOUT_SECS),
            audit: None,
            audit_arguments: false,
            pin: None,
            declare: None,
            verify: None,
            telemetry: None,
            state: crate::state::random_keys(),
            spent: crate::state::Spent::default(),
        }
    }
}

/// What the pin found in the server's listings of one session.
#[derive(Default)]
pub(crate) struct PinState {
    /// Each tool as the server first listed it.
    baseline: HashMap<String, Value>,
    /// Tools withheld from the host, and why.
    pub(crate) withheld: HashMap<String, String>,
}

impl Guard {
    /// Checks a `tools/list` result: `raw` is the server's, `result` the
    /// one the host would see (the rules' annotations and markers applied).
    /// A tool that is not pinned, that the pinned signature disagrees with,
    /// or that changed since the server first listed it in this session is
    /// removed from `result` and remembered as withheld, with why (a line
    /// for the log each, in `notes`).
    ///
    /// `shared`: with several instances (`--redis`), each tool as the
    /// server behind any instance first listed it — or why the store could
    /// not say, and every tool is withheld (fail closed).
    pub(crate) fn check_listing(
        &self,
        state: &mut PinState,
        raw: &Value,
        result: &mut Value,
        shared: Option<&crate::shared::Baselines>,
        notes: &mut Vec<String>,
    ) {
        let Some(pin) = &self.pin else {
            return;
        };
        let raw_tools: HashMap<&str, &Value> = raw
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| Some((t.get("name")?.as_str()?, t)))
            .collect();
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return;
        };
        tools.retain(|tool| {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                return false;
            };
            let mut why = Vec::new();
            if let Some(raw) = raw_tools.get(name) {
                let first = match shared {
                    Some(Ok(first)) => first.get(name).or_else(|| state.baseline.get(name)),
                    Some(Err(unchecked)) => {
                        why.push(format!(
                            "it cannot be checked against the first listing the instances share: {unchecked}"
                        ));
                        state.baseline.get(name)
                    }
                    None => state.baseline.get(name),
                };
                match first {
                    None => {
                        state.baseline.insert(name.to_string(), (*raw).clone());
                    }
                    Some(first) if first != *raw => {
                        why.push(format!(
                            "the server changed it since it first listed it ({})",
                            changed_members(first, raw)
                        ));
                    }
                    Some(_) => {
                        state
                            .baseline
                            .entry(name.to_string())
                            .or_insert_with(|| (*raw).clone());
                    }
                }
            }
            if let Err(violations) = pin.verify_tools_list(&Value::Array(vec![tool.clone()])) {
                why.extend(violations.0.iter().map(|v| v.message.clone()));
            }
            if why.is_empty() {
                state.withheld.remove(name);
                true
            } else {
                let why = why.join("; ");
                notes.push(format!("`{name}` is withheld from the host: {why}"));
                state.withheld.insert(name.to_string(), why);
                false
            }
        });
    }

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

    /// Whether the guard judges calls (a pin or a policy) or declares
    /// tools, so that the server's tool list must be followed as it
    /// changes.
    pub(crate) fn watches(&self) -> bool {
        self.pin.is_some()
            || self.policy.is_some()
            || self.declare.is_some()
            || self.verify.is_some()
    }

    /// Why a call to `tool` is refused under the pin, if it is.
    pub(crate) fn unpinned(&self, state: &PinState, tool: &str) -> Option<String> {
        let pin = self.pin.as_ref()?;
        if let Some(why) = state.withheld.get(tool) {
            return Some(format!("`{tool}` is withheld: {why}"));
        }
        pin.tool(tool)
            .is_none()
            .then(|| format!("`{tool}` is not in the pinned signature"))
    }
}

/// The members of two tool objects that differ, named.
fn changed_members(first: &Value, now: &Value) -> String {
    let empty = Map::new();
    let (a, b) = (
        first.as_object().unwrap_or(&empty),
        now.as_object().unwrap_or(&empty),
    );
    let mut names: Vec<&str> = a
        .keys()
        .chain(b.keys())
        .map(String::as_str)
        .filter(|k| a.get(*k) != b.get(*k))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Guard {
    /// Whether the arguments of the call `params` to `tool` pass the rules'
    /// `inputSchema` ([`mcp_resolve_proxy_core::judge::accepts`]).
    pub(crate) fn accepts(&self, rules: &ProxyRules, tool: &str, params: Option<&Value>) -> bool {
        judge::accepts(rules, tool, params)
    }

    /// Judges a `tools/call` by the guard's policy
    /// ([`mcp_resolve_proxy_core::judge::judge`]).
    pub(crate) fn judge(
        &self,
        rules: &ProxyRules,
        listed: &HashMap<String, Annotations>,
        params: Option<&Value>,
        principal: Option<&crate::auth::Principal>,
        session: Option<&SessionFacts>,
    ) -> Result<Judged, RpcError> {
        judge::judge(
            self.policy.as_ref(),
            rules,
            listed,
            params,
            principal,
            session,
        )
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

    /// A log that keeps nothing (the session's tests: records are effects
    /// there, and the guard only needs to keep a log).
    #[cfg(test)]
    pub(crate) fn sink() -> Audit {
        Audit {
            out: Mutex::new(Box::new(std::io::sink())),
        }
    }

    /// Writes one record.
    pub(crate) fn write(&self, record: &Value) {
        let mut line = record.to_string();
        line.push('\n');
        if let Ok(mut out) = self.out.lock() {
            let written = out.write_all(line.as_bytes()).and_then(|()| out.flush());
            if let Err(e) = written {
                crate::relay::log(&format!("cannot write the audit log: {e}"));
            }
        }
    }
}
