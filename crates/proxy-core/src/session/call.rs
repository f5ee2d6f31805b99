//! The decision for a `tools/call`, as one step with one result: the pin
//! (is the tool allowed at all?), the arguments (does the rules'
//! `inputSchema` accept them?), the resolution (variant, annotations,
//! scopes), the policy (allow, deny, ask), and for `ask` how the user is
//! asked (a held call in a legacy session, an `input_required` answer and
//! its ticket in a 2026-07-28 request, or a refusal when the host cannot be
//! asked).

use serde_json::{Value, json};

use mcp_resolve_runtime::RpcError;

use super::{CallAudit, Clock, Session};
use crate::consent::{self, Retry};
use crate::judge::{Judged, POLICY_REFUSED};
use crate::quick::QuickCall;
use crate::record::{Record, Refusal};
use mcp_resolve_policy::Decision;
use mcp_resolve_protocol::splice;

/// The request `_meta` key of the client's name and version (protocol
/// 2026-07-28, where no `initialize` says it).
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// What becomes of a `tools/call` from the host.
pub(super) enum Step {
    /// Refused before it reaches the server: the error the host gets, and
    /// the audit record.
    Refuse {
        error: RpcError,
        record: Option<Record>,
    },
    /// Arguments the rules' `inputSchema` refuses: answered with this tool
    /// result (JSON text) with `isError: true`, as MCP 2025-11-25 has a
    /// server answer them (SEP-1303: the model reads the error and can
    /// correct the call), and audited; never forwarded.
    Invalid { result: String, record: Record },
    /// A 2026-07-28 request the user must be asked about: answered with
    /// this `input_required` result (JSON text), audited as `asked`.
    Asked { result: String, record: Record },
    /// A legacy session's call the user must be asked about: held while
    /// the proxy's `elicitation/create` is out.
    Hold {
        judged: Judged,
        arguments: Option<Value>,
    },
    /// Forwarded to the server, as written or as `rewritten` (an accepted
    /// retry without the proxy's question and state); `call`: what its
    /// audit line needs, when anything records one.
    Forward {
        call: Option<CallAudit>,
        consent: Option<(String, Value)>,
        rewritten: Option<String>,
    },
}

impl Session<'_> {
    /// The refusal of a call to `tool` that the pin does not allow or whose
    /// declaration is not trusted, if it is one.
    fn unpinned_or_untrusted(&self, tool: &str, clock: Clock) -> Option<Step> {
        let (why, pinned) = match self.guard.unpinned(&self.pins, tool) {
            Some(why) => (why, true),
            None => (self.untrusted(tool)?, false),
        };
        let (option, member, refusal) = if pinned {
            ("--pin", "pinned", Refusal::NotPinned(&why))
        } else {
            ("--trust", "trusted", Refusal::NotTrusted(&why))
        };
        let error = RpcError::new(
            POLICY_REFUSED,
            format!("{why} (mcp-resolve proxy {option})"),
            Some(json!({"tool": tool, member: false})),
        );
        Some(Step::Refuse {
            error,
            record: Some(Record::refused(clock.wall, "call", Some(tool), refusal)),
        })
    }

    /// The first stage of every `tools/call`'s decision, whether its params
    /// were parsed or read on their text: a refusal before any judgement
    /// (the pin, `--trust`), or the call forwarded as written when nothing
    /// would read its judgement (no policy decides it, nothing records it,
    /// its declaration stands) and `accepts` (the rules' `inputSchema` on
    /// its arguments) says yes. `None`: it is judged. Both paths start
    /// here, so neither can skip a refusal the other makes.
    fn before_judgement(
        &self,
        tool: &str,
        accepts: impl FnOnce() -> bool,
        clock: Clock,
    ) -> Option<Step> {
        if let Some(refused) = self.unpinned_or_untrusted(tool, clock) {
            return Some(refused);
        }
        (self.unobserved(tool) && accepts()).then_some(Step::Forward {
            call: None,
            consent: None,
            rewritten: None,
        })
    }

    /// Decides the `tools/call` `text` whose params are `params`.
    pub(super) fn decide_call(&mut self, text: &str, params: Option<&Value>, clock: Clock) -> Step {
        let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        // Arguments the rules' schema refuses are judged below, for the
        // error.
        if let Some(tool) = tool
            && let Some(step) =
                self.before_judgement(tool, || self.guard.accepts(self.rules, tool, params), clock)
        {
            return step;
        }
        let arguments = self
            .guard
            .audit_arguments
            .then(|| params.and_then(|p| p.get("arguments")).cloned())
            .flatten();
        // What the policy is told of the session (only a policy reads it).
        let facts = self.guard.policy.is_some().then(|| self.facts_of(params));
        let judged = match self.guard.judge(
            self.rules,
            &self.listed,
            params,
            self.principal.as_ref(),
            facts.as_ref(),
        ) {
            Ok(judged) => judged,
            Err(error) => {
                // Arguments the rules' schema refuses (or no tool name):
                // never forwarded, and audited as such.
                let record = Record::refused(
                    clock.wall,
                    "call",
                    tool,
                    Refusal::Invalid {
                        error: &error,
                        arguments,
                    },
                );
                if tool.is_none() {
                    // No tool to have called: a protocol error.
                    return Step::Refuse {
                        error,
                        record: Some(record),
                    };
                }
                return Step::Invalid {
                    result: tool_error(&error),
                    record,
                };
            }
        };
        let may_elicit = || consent::may_elicit(params, self.session_caps.as_ref());
        let mut judged = judged;
        if let Some(why) = self.verification.regate(&judged.tool) {
            // A materially changed declaration: the user is asked first,
            // whatever the policy says.
            judged.regate = Some(why.to_owned());
            if judged.decision != Decision::Deny {
                judged.decision = Decision::Ask;
            }
            if consent::is_stateless(params) {
                return refused(judged, clock, "refused", consent::NO_ELICITATION, arguments);
            }
        }
        match judged.decision {
            Decision::Allow => Step::Forward {
                call: Some(CallAudit {
                    judged,
                    started: clock.now,
                    arguments,
                    outcome: "forwarded",
                }),
                consent: None,
                rewritten: None,
            },
            Decision::Deny => refused(judged, clock, "denied", "is denied", arguments),
            // A 2026-07-28 request: the question is the answer, and the
            // retry carries the user's.
            Decision::Ask if consent::is_stateless(params) => {
                let may_elicit = may_elicit();
                self.stateless_ask(text, params, judged, arguments, may_elicit, clock)
            }
            Decision::Ask if may_elicit() => Step::Hold { judged, arguments },
            Decision::Ask => refused(judged, clock, "refused", consent::NO_ELICITATION, arguments),
        }
    }

    /// Whether a `tools/call`'s params may be read on their text
    /// ([`QuickCall`]): only a call nothing would judge can go on without
    /// them parsed, and none can without a policy and a record.
    pub(super) fn reads_calls_on_text(&self) -> bool {
        self.guard.policy.is_none() && !self.records
    }

    /// [`Session::decide_call`] for a call whose params were read on their
    /// text (`call`), where it can be decided so: its first stage
    /// ([`Session::before_judgement`]), with the rules' `inputSchema`
    /// checked on the arguments' text. `None`: it is decided the whole way.
    pub(super) fn decide_call_on_text(&self, call: &QuickCall<'_>, clock: Clock) -> Option<Step> {
        self.before_judgement(call.name.as_ref(), || self.rules.accepts_text(call), clock)
    }

    /// Whether nothing would read the judgement of a call to `tool`: no
    /// policy, no audit log or telemetry, and no changed declaration to ask
    /// about. Such a call is allowed whatever it resolves to.
    fn unobserved(&self, tool: &str) -> bool {
        self.guard.policy.is_none() && !self.records && self.verification.regate(tool).is_none()
    }

    /// What the session knows of the host that sends `params`: a
    /// 2026-07-28 request says it in its own `_meta`, an older session said
    /// it at `initialize`.
    fn facts_of(&self, params: Option<&Value>) -> mcp_resolve_policy::SessionFacts {
        let meta = params.and_then(|p| p.get("_meta"));
        let said = |key: &str, pointer: &str| {
            meta.and_then(|m| m.get(key))
                .and_then(|v| v.pointer(pointer))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        mcp_resolve_policy::SessionFacts {
            protocol_version: said(mcp_resolve_protocol::META_PROTOCOL_VERSION, "")
                .or_else(|| self.facts.protocol_version.clone()),
            client_name: said(META_CLIENT_INFO, "/name").or_else(|| self.facts.client_name.clone()),
        }
    }

    /// `ask` in a 2026-07-28 request: a retry that answers the proxy's
    /// question goes on (or is refused), a fresh call is asked about.
    fn stateless_ask(
        &mut self,
        text: &str,
        params: Option<&Value>,
        judged: Judged,
        arguments: Option<Value>,
        may_elicit: bool,
        clock: Clock,
    ) -> Step {
        let params = params.cloned().unwrap_or_default();
        let called = params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let now = super::unix_seconds(clock);
        match self.tickets().retry(now, &params, &judged.tool, &called) {
            Retry::Forward(forward) => Step::Forward {
                rewritten: Some(with_params(text, &forward)),
                consent: Some((judged.tool.clone(), called)),
                call: Some(CallAudit {
                    judged,
                    started: clock.now,
                    arguments,
                    outcome: "accepted",
                }),
            },
            Retry::Refuse(outcome, why) => refused(judged, clock, outcome, why, arguments),
            Retry::Fresh if may_elicit => match self.tickets().ask(now, &judged, &called) {
                Some(result) => {
                    let record = Record::call(judged, clock.wall, "asked", None, arguments);
                    Step::Asked { result, record }
                }
                None => refused(judged, clock, "refused", consent::NO_STATE, arguments),
            },
            Retry::Fresh => refused(judged, clock, "refused", consent::NO_ELICITATION, arguments),
        }
    }
}

/// A call the policy (or the user) refuses: `outcome` for the audit line,
/// `why` for the error.
fn refused(
    judged: Judged,
    clock: Clock,
    outcome: &'static str,
    why: &str,
    arguments: Option<Value>,
) -> Step {
    Step::Refuse {
        error: judged.refusal(why),
        record: Some(Record::call(judged, clock.wall, outcome, None, arguments)),
    }
}

/// A tool result with `isError: true` saying why the arguments were refused
/// (the validator's findings, when it gave them), as JSON text.
fn tool_error(error: &RpcError) -> String {
    let mut text = format!("invalid arguments: {}", error.message);
    if let Some(data) = &error.data {
        text.push('\n');
        text.push_str(&data.to_string());
    }
    json!({"content": [{"type": "text", "text": text}], "isError": true}).to_string()
}

/// The request `text` with its `params` replaced: the new params spliced
/// in where the old ones were written, the rest of the message untouched.
fn with_params(text: &str, params: &Value) -> String {
    let params = params.to_string();
    mcp_resolve_protocol::Envelope::of(text)
        .and_then(|message| message.params)
        .and_then(|old| splice(text, old.get(), &params))
        .unwrap_or_else(|| text.to_string())
}
