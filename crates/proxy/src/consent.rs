//! Asking the user about a call the policy marks `ask`.
//!
//! - In a legacy session (`initialize`), the proxy sends the host an
//!   `elicitation/create` request and holds the call until the answer
//!   ([`ask_request`]).
//! - In a 2026-07-28 request, servers no longer send requests of their own:
//!   the proxy answers the call with an `input_required` result whose one
//!   input request is the question, and an opaque `requestState` naming a
//!   ticket ([`Tickets`]). The host asks the user and retries the same call
//!   with the answer and the state; the proxy forwards the retry on an
//!   accept, without its own answer and state. When the server itself then
//!   answers `input_required` (a question of its own), the proxy wraps the
//!   server's state in a ticket of its own, so the host's next retry is not
//!   asked about again and reaches the server with the server's state.
//!
//! A ticket is bound to the tool and the arguments it was issued for, is
//! used once, and expires with `--ask-timeout`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mcp_resolve_runtime::protocol::{META_PROTOCOL_VERSION, client_capabilities};
use serde_json::{Map, Value, json};

use crate::guard::Judged;

/// The key of the proxy's question in `inputRequests` / `inputResponses`.
pub(crate) const CONFIRM: &str = "mcp-resolve/confirm";
/// The ids of the proxy's `elicitation/create` requests begin so.
pub(crate) const ASK_PREFIX: &str = "mcp-resolve-ask-";
/// Why an `ask` call is refused to a host that cannot be asked.
pub(crate) const NO_ELICITATION: &str =
    "needs the user's consent, and the host did not declare elicitation to ask for it";
/// The most tickets outstanding at once; past it the one closest to
/// expiring is dropped.
const MOST_TICKETS: usize = 4096;

/// The question put to the user about a call: the `elicitation/create`
/// params (a confirmation with nothing to fill in).
pub(crate) fn question(judged: &Judged) -> Value {
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
pub(crate) fn ask_request(id: &str, judged: &Judged) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "elicitation/create",
        "params": question(judged),
    })
    .to_string()
}

/// Whether a request is a 2026-07-28 one (its `_meta` names the version).
pub(crate) fn is_stateless(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_some()
}

/// Whether the host can be asked: it declared elicitation in the
/// request's client capabilities, or at `initialize`.
pub(crate) fn may_elicit(params: Option<&Value>, session: Option<&Value>) -> bool {
    client_capabilities(params, session).is_some_and(|caps| caps.get("elicitation").is_some())
}

/// One question asked, or one accepted call going on.
struct Ticket {
    tool: String,
    arguments: Value,
    /// `None`: asked, not answered yet. `Some(state)`: accepted, and the
    /// server asked a question of its own; `state` is the server's
    /// `requestState`, restored on the retry.
    accepted: Option<Option<Value>>,
    expires: Instant,
}

/// What became of a `tools/call` that may be a retry.
#[derive(Debug, PartialEq)]
pub(crate) enum Retry {
    /// Not an answer to the proxy's question: ask it.
    Fresh,
    /// Accepted: forward the call with these params.
    Forward(Value),
    /// Refused, with the audit outcome and the reason.
    Refuse(&'static str, &'static str),
}

/// Where a session's ticket names come from: unguessable ones in the proxy
/// ([`random_tokens`]), a counter in tests.
pub type Tokens = Box<dyn FnMut() -> String + Send>;

/// Ticket names from the operating system's randomness (UUID v4).
pub fn random_tokens() -> Tokens {
    Box::new(|| uuid::Uuid::new_v4().simple().to_string())
}

/// The tickets of a session.
pub(crate) struct Tickets {
    map: HashMap<String, Ticket>,
    ttl: Duration,
    tokens: Tokens,
}

impl Tickets {
    pub(crate) fn new(ttl: Duration, tokens: Tokens) -> Tickets {
        Tickets {
            map: HashMap::new(),
            ttl,
            tokens,
        }
    }

    fn issue(
        &mut self,
        now: Instant,
        tool: &str,
        arguments: &Value,
        accepted: Option<Option<Value>>,
    ) -> String {
        self.map.retain(|_, t| t.expires > now);
        if self.map.len() >= MOST_TICKETS
            && let Some(oldest) = self
                .map
                .iter()
                .min_by_key(|(_, t)| t.expires)
                .map(|(k, _)| k.clone())
        {
            self.map.remove(&oldest);
        }
        let token = format!("mcp-resolve:{}", (self.tokens)());
        self.map.insert(
            token.clone(),
            Ticket {
                tool: tool.to_string(),
                arguments: arguments.clone(),
                accepted,
                expires: now + self.ttl,
            },
        );
        token
    }

    /// The `input_required` result that asks the user about a call (JSON
    /// text), with a new ticket for it.
    pub(crate) fn ask(&mut self, now: Instant, judged: &Judged, arguments: &Value) -> String {
        let token = self.issue(now, &judged.tool, arguments, None);
        json!({
            "resultType": "input_required",
            "inputRequests": {
                CONFIRM: {"method": "elicitation/create", "params": question(judged)},
            },
            "requestState": token,
        })
        .to_string()
    }

    /// Reads a call's `requestState` and `inputResponses`: whether it
    /// answers (or continues) a question the proxy asked about this very
    /// call. A ticket is used once.
    pub(crate) fn retry(
        &mut self,
        now: Instant,
        params: &Value,
        tool: &str,
        arguments: &Value,
    ) -> Retry {
        let answer = params.get("inputResponses").and_then(|r| r.get(CONFIRM));
        let ticket = params
            .get("requestState")
            .and_then(Value::as_str)
            .and_then(|state| self.map.remove(state))
            .filter(|t| t.expires > now);
        let Some(ticket) = ticket else {
            return match answer {
                None => Retry::Fresh,
                Some(_) => Retry::Refuse(
                    "unconfirmed",
                    "carries an answer to a question that is unknown or expired (call again to be asked)",
                ),
            };
        };
        if ticket.tool != tool || ticket.arguments != *arguments {
            return Retry::Refuse(
                "unconfirmed",
                "carries the answer to a question about another call",
            );
        }
        let mut params = params.clone();
        let Some(map) = params.as_object_mut() else {
            return Retry::Fresh;
        };
        match ticket.accepted {
            // The server's own question goes on: its state goes back.
            Some(state) => {
                match state {
                    Some(state) => map.insert("requestState".into(), state),
                    None => map.remove("requestState"),
                };
                Retry::Forward(params)
            }
            None => {
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
        }
    }

    /// The server answered an accepted call with `input_required`: its
    /// `requestState` is kept in a ticket, and the result carries the
    /// ticket instead. `false` when `result` is a final one.
    pub(crate) fn carry(
        &mut self,
        now: Instant,
        tool: &str,
        arguments: &Value,
        result: &mut Map<String, Value>,
    ) -> bool {
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return false;
        }
        let state = result.remove("requestState");
        let token = self.issue(now, tool, arguments, Some(state));
        result.insert("requestState".into(), Value::String(token));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Decision;
    use mcp_resolve_runtime::Annotations;
    use mcp_resolve_runtime::protocol::META_CLIENT_CAPABILITIES;
    use std::sync::LazyLock;

    /// One instant for every step: a ticket lives `ttl` from it.
    fn now() -> Instant {
        static NOW: LazyLock<Instant> = LazyLock::new(Instant::now);
        *NOW
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

    fn tickets(ttl: Duration) -> Tickets {
        let mut n = 0;
        Tickets::new(
            ttl,
            Box::new(move || {
                n += 1;
                format!("t{n}")
            }),
        )
    }

    fn state_of(result: &str) -> String {
        let result: Value = serde_json::from_str(result).unwrap();
        result["requestState"].as_str().unwrap().to_string()
    }

    #[test]
    fn an_accepted_answer_forwards_the_call_without_the_proxys_answer() {
        let mut tickets = tickets(Duration::from_secs(60));
        let arguments = json!({"path": "a", "action": "delete"});
        let asked: Value =
            serde_json::from_str(&tickets.ask(now(), &judged(), &arguments)).unwrap();
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
        // A ticket is used once.
        assert_eq!(
            tickets.retry(now(), &params, "manage_files", &arguments),
            Retry::Refuse(
                "unconfirmed",
                "carries an answer to a question that is unknown or expired (call again to be asked)"
            )
        );
    }

    #[test]
    fn declines_cancels_other_calls_and_missing_answers() {
        let mut tickets = tickets(Duration::from_secs(60));
        let arguments = json!({"path": "a", "action": "delete"});
        let answer = |tickets: &mut Tickets, action: Value, arguments: &Value| {
            let state =
                state_of(&tickets.ask(now(), &judged(), &json!({"path": "a", "action": "delete"})));
            let params = json!({"requestState": state, "inputResponses": {CONFIRM: action}});
            tickets.retry(now(), &params, "manage_files", arguments)
        };
        assert_eq!(
            answer(&mut tickets, json!({"action": "decline"}), &arguments),
            Retry::Refuse("declined", "was declined by the user")
        );
        assert_eq!(
            answer(&mut tickets, json!({"action": "cancel"}), &arguments),
            Retry::Refuse("cancelled", "was cancelled by the user")
        );
        assert!(matches!(
            answer(&mut tickets, json!({"action": "maybe"}), &arguments),
            Retry::Refuse("unconfirmed", _)
        ));
        assert_eq!(
            answer(
                &mut tickets,
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
        let mut tickets = tickets(Duration::ZERO);
        let arguments = json!({});
        let state = state_of(&tickets.ask(now(), &judged(), &arguments));
        let params =
            json!({"requestState": state, "inputResponses": {CONFIRM: {"action": "accept"}}});
        assert!(matches!(
            tickets.retry(now(), &params, "manage_files", &arguments),
            Retry::Refuse("unconfirmed", _)
        ));
    }

    #[test]
    fn the_servers_own_question_goes_on_with_its_state() {
        let mut tickets = tickets(Duration::from_secs(60));
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
