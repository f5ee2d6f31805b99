//! Asking the user through the host: a legacy host asked by elicitation, a
//! question nobody answers, a host that cannot be asked, a call cancelled
//! while its question is open, and a 2026-07-28 question answered with a
//! sealed state.

use super::*;

#[test]
fn a_legacy_host_is_asked_and_its_answer_decides() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"elicitation": {}}));
    // Reads are allowed outright.
    assert_eq!(
        h.host(&call(1, "read")),
        vec![Effect::Server(call(1, "read"))]
    );
    // A delete is held while the user is asked.
    let out = h.host(&call(2, "delete"));
    let asked = host_lines(&out);
    assert_eq!(asked.len(), 1, "{out:?}");
    assert_eq!(asked[0]["method"], "elicitation/create");
    let question = asked[0]["id"].clone();
    // Accepted: the call goes on as the host wrote it.
    let accept = json!({"jsonrpc": "2.0", "id": question, "result": {"action": "accept"}});
    assert_eq!(
        h.host(&accept.to_string()),
        vec![Effect::Server(call(2, "delete"))]
    );
    let out = h.server(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#);
    assert_eq!(audits(&out)[0]["outcome"], "accepted");
    // Declined: refused with the policy's error.
    let asked = host_lines(&h.host(&call(3, "delete")));
    let decline = json!({"jsonrpc": "2.0", "id": asked[0]["id"], "result": {"action": "decline"}});
    let out = h.host(&decline.to_string());
    let answers = host_lines(&out);
    assert_eq!(answers[0]["id"], 3);
    assert_eq!(answers[0]["error"]["code"], -32001);
    assert_eq!(audits(&out)[0]["outcome"], "declined");
}

#[test]
fn a_question_nobody_answers_is_withdrawn() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"elicitation": {}}));
    let asked = host_lines(&h.host(&call(4, "delete")));
    assert_eq!(
        h.session.next_deadline(),
        Some(h.clock.now().now + ASK_TIMEOUT)
    );
    let out = h.tick(ASK_TIMEOUT);
    let lines = host_lines(&out);
    assert_eq!(lines[0]["method"], "notifications/cancelled");
    assert_eq!(lines[0]["params"]["requestId"], asked[0]["id"]);
    assert_eq!(lines[1]["id"], 4);
    assert_eq!(lines[1]["error"]["code"], -32001);
    assert_eq!(audits(&out)[0]["outcome"], "timed out");
    // The late answer is dropped, with a note.
    let late = json!({"jsonrpc": "2.0", "id": asked[0]["id"], "result": {"action": "accept"}});
    let out = h.host(&late.to_string());
    assert!(matches!(&out[..], [Effect::Log(_)]), "{out:?}");
}

#[test]
fn a_host_that_cannot_be_asked_is_refused() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({}));
    let out = h.host(&call(1, "delete"));
    let answers = host_lines(&out);
    assert_eq!(answers[0]["error"]["code"], -32001);
    assert_eq!(audits(&out)[0]["outcome"], "refused");
}

#[test]
fn a_call_the_host_cancels_while_its_question_is_open_is_withdrawn_and_never_forwarded() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"elicitation": {}}));
    let asked = host_lines(&h.host(&call(1, "delete")));
    assert_eq!(asked[0]["method"], "elicitation/create");
    let question = asked[0]["id"].clone();
    // The host gives up on the call (its user pressed Esc, or it timed out).
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1, "reason": "the user cancelled"}});
    let out = h.host(&cancel.to_string());
    assert!(
        !out.iter().any(|e| matches!(e, Effect::Server(_))),
        "{out:?}"
    );
    // The question is withdrawn in the host, the call audited so, and no
    // answer is sent for the cancelled request.
    let told = host_lines(&out);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["method"], "notifications/cancelled");
    assert_eq!(told[0]["params"]["requestId"], question);
    assert_eq!(audits(&out)[0]["outcome"], "withdrawn");
    // An answer that comes anyway runs nothing.
    let accept = json!({"jsonrpc": "2.0", "id": question, "result": {"action": "accept"}});
    let out = h.host(&accept.to_string());
    assert!(matches!(&out[..], [Effect::Log(_)]), "{out:?}");
}

#[test]
fn a_stateless_question_is_answered_with_a_sealed_state_and_the_retry_forwarded() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let arguments = json!({"path": "a", "action": "delete"});
    let first = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": arguments, "_meta": meta}});
    let answers = host_lines(&h.host(&first.to_string()));
    assert_eq!(answers[0]["result"]["resultType"], "input_required");
    let state = answers[0]["result"]["requestState"].as_str().unwrap();
    assert!(state.starts_with(crate::state::PREFIX), "{state}");
    let retry = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": arguments, "_meta": meta,
                   "requestState": state,
                   "inputResponses": {"mcp-resolve/confirm": {"action": "accept"}}}});
    // The retry is checked by another session of the same guard (another
    // instance with the same key is the same): nothing of the question is
    // kept by the session that asked it.
    let mut other = Harness::new(&rules, &guard, None);
    let out = other.host(&retry.to_string());
    let [Effect::Server(forwarded)] = &out[..] else {
        panic!("{out:?}")
    };
    let forwarded: Value = mcp_resolve_protocol::json::from_str(forwarded).unwrap();
    assert_eq!(forwarded["id"], 2);
    assert!(forwarded["params"].get("requestState").is_none());
    assert!(forwarded["params"].get("inputResponses").is_none());
    assert_eq!(forwarded["params"]["_meta"], meta);
    // The state was used once: replayed, it is refused and audited.
    let out = h.host(&retry.to_string());
    assert_eq!(host_lines(&out)[0]["error"]["code"], -32001);
    assert_eq!(audits(&out)[0]["outcome"], "replayed");
}

#[test]
fn a_cancelled_call_is_audited_as_withdrawn() {
    let rules = rules(Dialect::Extension);
    let guard = audited();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({}));
    h.host(&call(1, "read"));
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let out = h.host(cancel);
    assert_eq!(audits(&out)[0]["outcome"], "withdrawn");
    assert!(out.contains(&Effect::Server(cancel.into())));
}
