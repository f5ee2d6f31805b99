//! What the hosts of `tests/it/in_hosts/` declare at `initialize` or per
//! request (read off their first message to a server), and what each does
//! that the proxy must handle.

use serde_json::json;

use super::*;

/// Gemini CLI 0.61: roots, and no elicitation.
#[test]
fn gemini_cli_cannot_be_asked_and_is_told_how_to_allow_the_call() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"roots": {"listChanged": true}}));
    let out = h.host(&call(1, "delete"));
    let answers = host_lines(&out);
    assert_eq!(answers[0]["error"]["code"], -32001);
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("use a host that answers elicitation, or allow the call in the policy"),
        "{message}"
    );
    assert_eq!(audits(&out)[0]["outcome"], "refused");
}

/// opencode 1.18: `roots` only, so no elicitation; and once a call's
/// answer is in, it cancels the call (`AbortError`).
#[test]
fn opencode_cannot_be_asked_and_its_late_cancellations_change_nothing() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"roots": {}}));
    let cancel = |id: u64| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": id, "reason": "AbortError: The operation was aborted."}})
        .to_string()
    };
    // Refused: the host is told how to allow the call.
    let out = h.host(&call(2, "delete"));
    let answers = host_lines(&out);
    assert_eq!(answers[0]["error"]["code"], -32001);
    assert_eq!(audits(&out)[0]["outcome"], "refused");
    // Its cancellation goes on as the host wrote it (a server ignores a
    // cancellation of a request it does not have), and nothing comes
    // back.
    let out = h.host(&cancel(2));
    assert_eq!(out, vec![Effect::Server(cancel(2))]);
    // Forwarded and answered: the late cancellation goes on as the
    // host wrote it (the server may ignore it), and nothing comes back.
    let out = h.host(&call(3, "read"));
    assert_eq!(sole_request(&out)["id"], 3);
    let answer = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#;
    assert_eq!(host_lines(&h.server(answer))[0]["id"], 3);
    let out = h.host(&cancel(3));
    assert_eq!(out, vec![Effect::Server(cancel(3))]);
}

/// Codex CLI 0.171: elicitation in its form and URL modes, and an
/// experimental capability of its own; `codex exec` declines.
#[test]
fn codex_is_asked_and_its_decline_refuses_the_call() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"experimental": {"codex/auth-change": {}},
                        "elicitation": {"form": {}, "url": {}}}));
    let asked = host_lines(&h.host(&call(1, "delete")));
    assert_eq!(asked[0]["method"], "elicitation/create");
    let decline = json!({"jsonrpc": "2.0", "id": asked[0]["id"], "result": {"action": "decline"}});
    let out = h.host(&decline.to_string());
    let answers = host_lines(&out);
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["error"]["code"], -32001);
    assert_eq!(audits(&out)[0]["outcome"], "declined");
}

/// Claude Code 2.1: 2026-07-28 requests whose `_meta` declares
/// elicitation (form and URL); in print mode its retry cancels.
#[test]
fn claude_code_gets_a_stateless_question_and_its_cancel_refuses_the_call() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
                      "io.modelcontextprotocol/clientCapabilities": {
                          "roots": {"listChanged": true},
                          "elicitation": {"form": {}, "url": {}}}});
    let arguments = json!({"path": "a", "action": "delete"});
    let first = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": arguments, "_meta": meta}});
    let answers = host_lines(&h.host(&first.to_string()));
    assert_eq!(answers[0]["result"]["resultType"], "input_required");
    let state = answers[0]["result"]["requestState"].as_str().unwrap();
    let retry = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": arguments, "_meta": meta,
                   "requestState": state,
                   "inputResponses": {"mcp-resolve/confirm": {"action": "cancel"}}}});
    let out = h.host(&retry.to_string());
    let answers = host_lines(&out);
    assert_eq!(answers[0]["error"]["code"], -32001);
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("was cancelled by the user"), "{message}");
    assert_eq!(audits(&out)[0]["outcome"], "cancelled");
}
