//! Asking the user about a call the policy marks `ask`.
//!
//! - In a legacy session (`initialize`), the proxy sends the host an
//!   `elicitation/create` request and holds the call until the answer
//!   ([`ask_request`]).
//! - In a 2026-07-28 request, servers no longer send requests of their own:
//!   the proxy answers the call with an `input_required` result whose one
//!   input request is the question, and a `requestState` sealed by the
//!   proxy ([`crate::state`]): any instance holding the key checks the
//!   retry, none keeps the question in memory. The host asks the user and
//!   retries the same call with the answer and the state; the proxy
//!   forwards the retry on an accept, without its own answer and state.
//!   When the server itself then answers `input_required` (a question of its
//!   own), the proxy seals the server's state inside a state of its own, so
//!   the host's next retry is not asked about again and reaches the server
//!   with the server's state.
//!
//! A state is bound to the tool and the arguments it was issued for, is
//! used once ([`crate::state::Spent`]), and expires with `--ask-timeout`.

use std::collections::HashMap;
use std::time::Duration;

use mcp_resolve_protocol::{META_PROTOCOL_VERSION, client_capabilities};
use serde_json::{Map, Value, json};

use crate::judge::Judged;
use crate::state::{Claim, PREFIX, SealError, Spent, StateKeys, Ticket, arguments_digest};

/// The key of the proxy's question in `inputRequests` / `inputResponses`.
pub const CONFIRM: &str = "mcp-resolve/confirm";
/// The ids of the proxy's `elicitation/create` requests begin so.
pub const ASK_PREFIX: &str = "mcp-resolve-ask-";
/// Why an `ask` call is refused to a host that cannot be asked.
pub const NO_ELICITATION: &str = "needs the user's consent, and the host did not declare elicitation to ask for it: use a host that answers elicitation, or allow the call in the policy";
/// Why an `ask` call is refused when its question cannot be sealed.
pub const NO_STATE: &str = "needs the user's consent, and the proxy could not seal the question's state (no randomness from the system)";
/// The question a state is about once the user accepted and the server
/// asked its own.
const SERVER_QUESTION: &str = "server";

/// The question put to the user about a call: the `elicitation/create`
/// params (a confirmation with nothing to fill in).
pub fn question(judged: &Judged) -> Value {
    let hints: Vec<String> = judged
        .annotations
        .iter()
        .map(|(hint, value)| format!("{hint}: {value}"))
        .collect();
    let mut message = format!(
        "Allow the call to {}? Its annotations: {}.",
        judged.describe(),
        hints.join(", ")
    );
    if !judged.scopes.is_empty() {
        message.push_str(&format!(
            " It needs the scopes {}.",
            judged.scopes.join(", ")
        ));
    }
    message.push_str(&format!(" ({} asks before calls like this.)", judged.by()));
    if let Some(why) = &judged.regate {
        message = format!(
            "`{}`'s signed declaration changed materially since this session verified it ({why}). {message}",
            judged.tool
        );
    }
    json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": {}},
    })
}

/// The `elicitation/create` request that asks the user about a call in a
/// legacy session.
pub fn ask_request(id: &str, judged: &Judged) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "elicitation/create",
        "params": question(judged),
    })
    .to_string()
}

/// Whether a request is a 2026-07-28 one (its `_meta` names that version
/// or a later one).
pub fn is_stateless(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .is_some_and(mcp_resolve_protocol::is_stateless_version)
}

/// Whether the host can be asked: it declared elicitation in the
/// request's client capabilities, or at `initialize`.
pub fn may_elicit(params: Option<&Value>, session: Option<&Value>) -> bool {
    client_capabilities(params, session).is_some_and(|caps| caps.get("elicitation").is_some())
}

/// What became of a `tools/call` that may be a retry.
#[derive(Debug, PartialEq)]
pub enum Retry {
    /// Not an answer to the proxy's question: ask it.
    Fresh,
    /// Accepted: forward the call with these params.
    Forward(Value),
    /// Refused, with the audit outcome and the reason.
    Refuse(&'static str, &'static str),
}

/// The states of 2026-07-28 questions: sealed with the guard's keys,
/// spent in its set.
pub struct Tickets<'g> {
    /// The keys states are sealed and opened with.
    pub keys: &'g StateKeys,
    /// The states spent in this process.
    pub spent: &'g Spent,
    /// What the store several instances share said of the states of the
    /// message being handled (`--redis`); `None`: one instance.
    pub claims: Option<&'g HashMap<String, Claim>>,
    /// How long a state lives (`--ask-timeout`).
    pub ttl: Duration,
}

impl Tickets<'_> {
    fn issue(
        &self,
        now: u64,
        tool: &str,
        arguments: &Value,
        question: &str,
        server_state: Option<Value>,
    ) -> Result<String, SealError> {
        let ticket = Ticket {
            id: self.keys.new_id()?,
            tool: tool.to_string(),
            arguments: arguments_digest(arguments),
            question: question.to_string(),
            expires: now.saturating_add(self.ttl.as_secs()),
            server_state,
        };
        self.keys.seal(&ticket)
    }

    /// The `input_required` result that asks the user about a call (JSON
    /// text), with its sealed state; `None` when no state can be sealed
    /// (the call is then refused: fail closed).
    pub fn ask(&self, now: u64, judged: &Judged, arguments: &Value) -> Option<String> {
        let state = self
            .issue(now, &judged.tool, arguments, CONFIRM, None)
            .ok()?;
        Some(
            json!({
                "resultType": "input_required",
                "inputRequests": {
                    CONFIRM: {"method": "elicitation/create", "params": question(judged)},
                },
                "requestState": state,
            })
            .to_string(),
        )
    }

    /// Reads a call's `requestState` and `inputResponses` at `now`: whether
    /// it answers (or continues) a question the proxy asked about this very
    /// call. A state is used once.
    pub fn retry(&self, now: u64, params: &Value, tool: &str, arguments: &Value) -> Retry {
        let answer = params.get("inputResponses").and_then(|r| r.get(CONFIRM));
        let state = params
            .get("requestState")
            .and_then(Value::as_str)
            .filter(|s| s.starts_with(PREFIX));
        let Some(state) = state else {
            return match answer {
                None => Retry::Fresh,
                Some(_) => Retry::Refuse(
                    "unconfirmed",
                    "carries an answer to a question that is unknown or expired (call again to be asked)",
                ),
            };
        };
        let ticket = match self.keys.open(state, now) {
            Ok(ticket) => ticket,
            Err(why) => {
                let (outcome, reason) = why.outcome();
                return Retry::Refuse(outcome, reason);
            }
        };
        if ticket.tool != tool || ticket.arguments != arguments_digest(arguments) {
            return Retry::Refuse(
                "unconfirmed",
                "carries the answer to a question about another call",
            );
        }
        let replayed = Retry::Refuse(
            "replayed",
            "carries a request state that was used already (call again to be asked)",
        );
        if let Some(claims) = self.claims {
            match claims.get(&ticket.id) {
                Some(Claim::Claimed) => {}
                Some(Claim::Spent) => return replayed,
                // Not claimed, or the store did not answer: fail closed.
                Some(Claim::Unavailable(_)) | None => {
                    return Retry::Refuse(
                        "unavailable",
                        "cannot be checked now: the store the proxy's instances share (--redis) did not answer (call again)",
                    );
                }
            }
        }
        if !self.spent.spend(&ticket.id, ticket.expires, now) {
            return replayed;
        }
        let mut params = params.clone();
        let Some(map) = params.as_object_mut() else {
            return Retry::Fresh;
        };
        if ticket.question == SERVER_QUESTION {
            // The server's own question goes on: its state goes back.
            match ticket.server_state {
                Some(state) => map.insert("requestState".into(), state),
                None => map.remove("requestState"),
            };
            return Retry::Forward(params);
        }
        let action = answer.and_then(|a| a.get("action")).and_then(Value::as_str);
        match action {
            Some("accept") => {
                map.remove("requestState");
                if let Some(Value::Object(responses)) = map.get_mut("inputResponses") {
                    responses.remove(CONFIRM);
                    if responses.is_empty() {
                        map.remove("inputResponses");
                    }
                }
                Retry::Forward(params)
            }
            Some("decline") => Retry::Refuse("declined", "was declined by the user"),
            Some("cancel") => Retry::Refuse("cancelled", "was cancelled by the user"),
            None if answer.is_none() => Retry::Fresh,
            _ => Retry::Refuse(
                "unconfirmed",
                "was not confirmed (the answer to the question is not accept, decline or cancel)",
            ),
        }
    }

    /// The server answered an accepted call with `input_required`: its
    /// `requestState` is sealed inside one of the proxy's, which the result
    /// carries instead. `false` when `result` is a final one.
    pub fn carry(
        &self,
        now: u64,
        tool: &str,
        arguments: &Value,
        result: &mut Map<String, Value>,
    ) -> bool {
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return false;
        }
        let state = result.remove("requestState");
        // No state sealed: the host's retry carries none, and is asked
        // about again (fail closed).
        if let Ok(token) = self.issue(now, tool, arguments, SERVER_QUESTION, state) {
            result.insert("requestState".into(), Value::String(token));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::tests::counter;
    use mcp_resolve_policy::Decision;
    use mcp_resolve_protocol::META_CLIENT_CAPABILITIES;
    use mcp_resolve_runtime::Annotations;

    /// One time for every step: a state lives `ttl` from it.
    fn now() -> u64 {
        1_800_000_000
    }

    fn judged() -> Judged {
        Judged {
            tool: "manage_files".into(),
            variant: Some("delete".into()),
            annotations: Annotations::defaults(),
            scopes: vec!["files:write".into()],
            decision: Decision::Ask,
            rule: Some("ask-destructive".into()),
            policies: vec!["ask-destructive".into()],
            reason: None,
            described: true,
            regate: None,
            principal: None,
        }
    }

    /// The guard's keys and spent set, leaked for the test's length.
    fn tickets_with(ttl: Duration) -> Tickets<'static> {
        tickets(ttl)
    }

    /// Tickets with a key of their own (as each proxy process has).
    fn tickets(ttl: Duration) -> Tickets<'static> {
        let mut key = [0u8; 32];
        counter(&mut key).unwrap();
        Tickets {
            keys: Box::leak(Box::new(StateKeys::new(&[key], counter))),
            spent: Box::leak(Box::default()),
            claims: None,
            ttl,
        }
    }

    fn state_of(result: &str) -> String {
        let result: Value = mcp_resolve_protocol::json::from_str(result).unwrap();
        result["requestState"].as_str().unwrap().to_string()
    }

    #[test]
    fn an_accepted_answer_forwards_the_call_without_the_proxys_answer() {
        let tickets = tickets(Duration::from_secs(60));
        let arguments = json!({"path": "a", "action": "delete"});
        let asked: Value = mcp_resolve_protocol::json::from_str(
            &tickets.ask(now(), &judged(), &arguments).unwrap(),
        )
        .unwrap();
        assert_eq!(asked["resultType"], "input_required");
        let message = asked["inputRequests"][CONFIRM]["params"]["message"]
            .as_str()
            .unwrap();
        assert!(
            message.contains("`manage_files` (variant `delete`)"),
            "{message}"
        );
        assert!(
            message.contains("files:write") && message.contains("ask-destructive"),
            "{message}"
        );
        let state = asked["requestState"].as_str().unwrap();
        let params = json!({
            "name": "manage_files", "arguments": arguments, "requestState": state,
            "inputResponses": {CONFIRM: {"action": "accept", "content": {}}, "other": {"action": "accept"}},
        });
        let Retry::Forward(forwarded) = tickets.retry(now(), &params, "manage_files", &arguments)
        else {
            panic!("not forwarded");
        };
        assert_eq!(
            forwarded,
            json!({"name": "manage_files", "arguments": arguments, "inputResponses": {"other": {"action": "accept"}}})
        );
        // A state is used once.
        assert_eq!(
            tickets.retry(now(), &params, "manage_files", &arguments),
            Retry::Refuse(
                "replayed",
                "carries a request state that was used already (call again to be asked)"
            )
        );
        // By any instance holding the key: a retry replayed to another
        // instance is refused there by the shared spent set (Redis), not
        // by the state.
        let other = Tickets {
            keys: tickets.keys,
            spent: Box::leak(Box::default()),
            claims: None,
            ttl: tickets.ttl,
        };
        assert!(matches!(
            other.retry(now(), &params, "manage_files", &arguments),
            Retry::Forward(_)
        ));
    }

    #[test]
    fn declines_cancels_other_calls_and_missing_answers() {
        let tickets = tickets(Duration::from_secs(60));
        let arguments = json!({"path": "a", "action": "delete"});
        let answer = |tickets: &Tickets, action: Value, arguments: &Value| {
            let state = state_of(
                &tickets
                    .ask(now(), &judged(), &json!({"path": "a", "action": "delete"}))
                    .unwrap(),
            );
            let params = json!({"requestState": state, "inputResponses": {CONFIRM: action}});
            tickets.retry(now(), &params, "manage_files", arguments)
        };
        assert_eq!(
            answer(&tickets, json!({"action": "decline"}), &arguments),
            Retry::Refuse("declined", "was declined by the user")
        );
        assert_eq!(
            answer(&tickets, json!({"action": "cancel"}), &arguments),
            Retry::Refuse("cancelled", "was cancelled by the user")
        );
        assert!(matches!(
            answer(&tickets, json!({"action": "maybe"}), &arguments),
            Retry::Refuse("unconfirmed", _)
        ));
        assert_eq!(
            answer(
                &tickets,
                json!({"action": "accept"}),
                &json!({"path": "b", "action": "delete"})
            ),
            Retry::Refuse(
                "unconfirmed",
                "carries the answer to a question about another call"
            )
        );
        assert_eq!(
            tickets.retry(
                now(),
                &json!({"requestState": "the server's"}),
                "manage_files",
                &arguments
            ),
            Retry::Fresh
        );
    }

    #[test]
    fn an_expired_ticket_is_not_honoured() {
        let tickets = tickets(Duration::ZERO);
        let arguments = json!({});
        let state = state_of(&tickets.ask(now(), &judged(), &arguments).unwrap());
        let params =
            json!({"requestState": state, "inputResponses": {CONFIRM: {"action": "accept"}}});
        assert!(matches!(
            tickets.retry(now(), &params, "manage_files", &arguments),
            Retry::Refuse("expired", _)
        ));
        // A state changed by the host, or sealed by a proxy with other keys.
        let tickets = tickets_with(Duration::from_secs(60));
        let state = state_of(&tickets.ask(now(), &judged(), &arguments).unwrap());
        let mut bytes = state.into_bytes();
        let last = bytes.len() - 1;
        bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
        let params = json!({"requestState": String::from_utf8(bytes).unwrap(),
                            "inputResponses": {CONFIRM: {"action": "accept"}}});
        assert!(matches!(
            tickets.retry(now(), &params, "manage_files", &arguments),
            Retry::Refuse("tampered", _)
        ));
        let foreign = tickets_with(Duration::from_secs(60));
        let state = state_of(&foreign.ask(now(), &judged(), &arguments).unwrap());
        let params =
            json!({"requestState": state, "inputResponses": {CONFIRM: {"action": "accept"}}});
        assert!(matches!(
            tickets.retry(now(), &params, "manage_files", &arguments),
            Retry::Refuse("foreign", _)
        ));
    }

    #[test]
    fn the_servers_own_question_goes_on_with_its_state() {
        let tickets = tickets(Duration::from_secs(60));
        let arguments = json!({"x": 1});
        let mut result = json!({"resultType": "input_required", "requestState": "server-state",
                                "inputRequests": {"q": {}}});
        assert!(tickets.carry(now(), "t", &arguments, result.as_object_mut().unwrap()));
        let ours = result["requestState"].as_str().unwrap().to_string();
        assert_ne!(ours, "server-state");
        let params = json!({"name": "t", "requestState": ours, "inputResponses": {"q": {"action": "accept"}}});
        assert_eq!(
            tickets.retry(now(), &params, "t", &arguments),
            Retry::Forward(
                json!({"name": "t", "requestState": "server-state", "inputResponses": {"q": {"action": "accept"}}})
            )
        );
        let mut done = json!({"resultType": "complete", "content": []});
        assert!(!tickets.carry(now(), "t", &arguments, done.as_object_mut().unwrap()));
    }

    #[test]
    fn the_host_may_be_asked_per_request_or_per_session() {
        let per_request = json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {"elicitation": {}}}});
        assert!(is_stateless(Some(&per_request)));
        assert!(may_elicit(Some(&per_request), None));
        assert!(!may_elicit(
            Some(&json!({"_meta": {META_CLIENT_CAPABILITIES: {}}})),
            Some(&json!({"elicitation": {}}))
        ));
        assert!(may_elicit(
            Some(&json!({})),
            Some(&json!({"elicitation": {}}))
        ));
        assert!(!is_stateless(Some(&json!({}))));
    }
}
