//! The proxy as a host's guard: what it holds a session's listings and
//! calls to — the rules' `inputSchema`s and the policy ([`crate::judge`]),
//! a pinned signature ([`crate::pinned`]), SEP-3140 declarations it signs
//! ([`crate::declare`]) or verifies ([`crate::trust`]) — and the keys of
//! 2026-07-28 questions' sealed states ([`crate::state`]). Where records
//! go (an audit log, telemetry) is the proxy crate's: the session is told
//! whether they are wanted, and hands them out as effects.

use std::collections::HashMap;
use std::time::Duration;

use mcp_resolve_policy::cedar::Engine;
use mcp_resolve_policy::{Principal, SessionFacts};
use mcp_resolve_runtime::{Annotations, RpcError};
use serde_json::Value;

use crate::declare::Declarer;
use crate::judge::{self, Judged};
use crate::pinned::{self, Baselines, PinState};
use crate::rules::ProxyRules;
use crate::state::{Spent, StateKeys};
use crate::trust::Verifier;

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
    /// Whether audit records carry the calls' arguments.
    pub audit_arguments: bool,
    /// The signature the host pinned: tools the server lists that it does
    /// not allow are withheld.
    pub pin: Option<mcp_resolve_host::Signature>,
    /// SEP-3140: the proxy signs the declarations it lists
    /// (`--sign-key`, `--server-uri`).
    pub declare: Option<Declarer>,
    /// SEP-3140: the server's signed declarations are verified, and what
    /// fails is withheld (`--trust`).
    pub verify: Option<Verifier>,
    /// The keys 2026-07-28 questions' request states are sealed with.
    pub state: StateKeys,
    /// The request states already used (each is used once).
    pub spent: Spent,
}

impl Guard {
    /// A guard that judges nothing (no policy, pin or declarations), with
    /// the default ask timeout, sealing request states with `state`.
    pub fn new(state: StateKeys) -> Guard {
        Guard {
            policy: None,
            ask_timeout: Duration::from_secs(DEFAULT_ASK_TIMEOUT_SECS),
            audit_arguments: false,
            pin: None,
            declare: None,
            verify: None,
            state,
            spent: Spent::default(),
        }
    }

    /// Holds a `tools/list` result to the pin, if there is one
    /// ([`pinned::check_listing`]): `raw` is the server's, `result` the
    /// one the host would see; `shared`, each tool as the server behind
    /// any instance first listed it (several instances sharing a store).
    pub fn check_listing(
        &self,
        state: &mut PinState,
        raw: &Value,
        result: &mut Value,
        shared: Option<&Baselines>,
        notes: &mut Vec<String>,
    ) {
        if let Some(pin) = &self.pin {
            pinned::check_listing(pin, state, raw, result, shared, notes);
        }
    }

    /// Why a call to `tool` is refused under the pin, if it is
    /// ([`pinned::unpinned`]).
    pub fn unpinned(&self, state: &PinState, tool: &str) -> Option<String> {
        pinned::unpinned(self.pin.as_ref()?, state, tool)
    }

    /// Whether the guard judges calls (a pin or a policy) or declares
    /// tools, so that the server's tool list must be followed as it
    /// changes.
    pub fn watches(&self) -> bool {
        self.pin.is_some()
            || self.policy.is_some()
            || self.declare.is_some()
            || self.verify.is_some()
    }

    /// Whether the arguments of the call `params` to `tool` pass the rules'
    /// `inputSchema` ([`judge::accepts`]).
    pub fn accepts(&self, rules: &ProxyRules, tool: &str, params: Option<&Value>) -> bool {
        judge::accepts(rules, tool, params)
    }

    /// Judges a `tools/call` by the guard's policy ([`judge::judge`]).
    pub fn judge(
        &self,
        rules: &ProxyRules,
        listed: &HashMap<String, Annotations>,
        params: Option<&Value>,
        principal: Option<&Principal>,
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
